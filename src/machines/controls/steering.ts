import type { Message } from '../../model/messages.js';
import { addUsage } from '../../model/usage.js';
import { addCost, type PriceTable } from '../policies/pricing.js';
import type { Effects } from '../names/effects.js';
import { freshAttempt } from '../rounds/fresh-attempt.js';
import { toolResultEvent } from '../rounds/round-results.js';
import { resultTexts, settleRemaining, toolMessage } from '../rounds/tool-round.js';
import type { ConversationContext, ConversationEmittedEvent, UserContent } from '../names/types.js';
import { appended } from '../../util/appended.js';

/** The result the calls of a round a `user.interrupt` abandoned get (a `cancelled` kind for traces). */
export const interruptedByUserText = resultTexts.cancelled('the user interrupted the run');

/** `steering: 'queue'`: a `user.message` during a run is kept for the next request boundary. */
export function messageQueued(context: Pick<ConversationContext, 'control'>, content: UserContent): Effects {
  const queued = [...context.control.queued, content];
  return {
    context: { control: { ...context.control, queued } },
    emitted: [{ type: 'user.message.queued', content, queued: queued.length }],
  };
}

/**
 * The queued messages join the history (after the round's tool results and any doom-loop notice)
 * and the input guardrails' index starts over for them.
 */
export function queuedTaken(context: Pick<ConversationContext, 'messages' | 'control'>): Partial<ConversationContext> {
  if (context.control.queued.length === 0) return {};
  const added: Message[] = context.control.queued.map((content) => ({ role: 'user', content }));
  return { messages: appended(context.messages, ...added), control: { ...context.control, queued: [], check: 0 } };
}

/**
 * A `user.interrupt`: what the run was doing is abandoned — a response in progress is dropped like a
 * retry's partial output, the calls of a round in progress get an error result each (so the history
 * stays valid) — and the message is queued first in line, so it joins the history at the request
 * boundary that follows at once (checked by the input guardrails like any user message).
 */
export function runInterrupted(context: ConversationContext, content: UserContent, state: string, prices: PriceTable | undefined): Effects {
  const emitted: ConversationEmittedEvent[] = [{ type: 'request.interrupted', state, discardPartial: context.stream.partial }];
  let messages = context.messages;
  // A response received but dropped was billed all the same: its tokens count apart, as a failed attempt's.
  const dropped = context.response;
  const billing = dropped
    ? {
        failedUsage: addUsage(context.billing.failedUsage, dropped.usage),
        cost:
          context.billing.cost && prices
            ? addCost(context.billing.cost, prices, dropped.model, dropped.usage, dropped.requestedModel)
            : context.billing.cost,
      }
    : context.billing;
  if (context.round) {
    const settled = settleRemaining(context.round, interruptedByUserText);
    messages = appended(messages, toolMessage(settled));
    settled.forEach((call, index) => {
      if (context.round?.[index]?.state !== 'settled') emitted.push(toolResultEvent(call));
    });
  }
  return {
    context: {
      messages,
      round: null,
      billing,
      control: { ...context.control, queued: [...context.control.queued, content], provider: 0 },
      attempt: 1,
      ...freshAttempt,
      doomLoop: { ...context.doomLoop, pendingNotice: null },
    },
    emitted,
  };
}

/**
 * The first queued message joins the history, the others wait: with input guardrails each message
 * is checked on its own in `checkingInput`, then the next one is taken (the guardrails read the
 * last user message).
 */
export function queuedMessageTaken(context: Pick<ConversationContext, 'messages' | 'control'>): Partial<ConversationContext> {
  const [first, ...rest] = context.control.queued;
  if (first === undefined) return {};
  return {
    messages: appended(context.messages, { role: 'user', content: first }),
    control: { ...context.control, queued: rest, check: 0 },
  };
}

/** A run that ends with messages still queued keeps them at the end of its history, so the next turn has them. */
export function queuedKept(context: Pick<ConversationContext, 'messages' | 'control'>): Partial<ConversationContext> {
  return context.control.queued.length === 0 ? {} : queuedTaken(context);
}
