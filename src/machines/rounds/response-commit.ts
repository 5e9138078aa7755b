import type { ProviderCallEvent } from '../../actors/provider-call.js';
import type { Provider } from '../../model/provider.js';
import type { Tool } from '../../tools/define-tool.js';
import { addUsage } from '../../model/usage.js';
import { doomLoopNotice, findRepetition, maxDoomLoopPeriod, recentCallSignatures, signatureOfPart } from '../policies/doom-loop.js';
import type { Effects } from '../names/effects.js';
import { addCost, type PriceTable } from '../policies/pricing.js';
import { toolResultEvent } from './round-results.js';
import { checkAnswer, type ResolvedOutput } from '../policies/structured-output.js';
import { planResponse } from './tool-round.js';
import type { ConversationContext, ConversationEmittedEvent, DoomLoopVerdict, PendingResponse } from '../names/types.js';
import type { AssistantContentPart, Message } from '../../model/messages.js';
import { appended } from '../../util/appended.js';

export type FinishEvent = Extract<ProviderCallEvent, { type: 'provider.finish' }>;

/** The text parts of a response, joined. */
export function textOfParts(content: ReadonlyArray<{ type: string; text?: string }>): string {
  let text = '';
  for (const part of content) if (part.type === 'text' && part.text !== undefined) text += part.text;
  return text;
}

/**
 * The doom-loop verdict on a response's tool calls: the history's recent calls and these, checked
 * for a pattern repeated `threshold` times; the second time (after the notice) it halts.
 */
export function doomLoopVerdict(
  messages: Message[],
  content: AssistantContentPart[],
  threshold: number | false,
  noticed: boolean,
): DoomLoopVerdict {
  if (threshold === false) return { action: 'none' };
  const recent = recentCallSignatures(messages, threshold * maxDoomLoopPeriod);
  for (const part of content) if (part.type === 'tool-call') recent.push(signatureOfPart(part));
  const repetition = findRepetition(recent, threshold);
  if (!repetition) return { action: 'none' };
  return {
    action: noticed ? 'halt' : 'notice',
    notice: doomLoopNotice(repetition),
    pattern: repetition.pattern.map(({ name, args }) => ({ name, args })),
    repeats: repetition.repeats,
  };
}

/** What reading a response takes of the machine's resolved options (chart/options.ts), and the provider's model. */
export type ResponseSettings = {
  tools: ReadonlyMap<string, Tool>;
  maxToolArgsBytes: number;
  doomLoopThreshold: number | false;
  output: ResolvedOutput | undefined;
  maxAgentDepth?: number;
  provider: Pick<Provider, 'model'>;
};

/**
 * A finished response becomes the pending response (calls planned, doom loop and structured answer
 * checked), announced by `usage`, a `tool.call` per call and, last, `request.finished` — so a
 * listener has seen the response's tool calls when it learns the request is over.
 */
export function responseReceived(context: ConversationContext, finish: FinishEvent, settings: ResponseSettings): Effects {
  const { content, calls } = planResponse(finish.content, settings.tools, settings.maxToolArgsBytes, {
    depth: context.agents.depth,
    maxAgentDepth: settings.maxAgentDepth ?? Number.POSITIVE_INFINITY,
  });
  const doomLoop: DoomLoopVerdict =
    calls.length > 0
      ? doomLoopVerdict(context.messages, content, settings.doomLoopThreshold, context.doomLoop.noticed)
      : { action: 'none' };
  const model = finish.model ?? settings.provider.model;
  const answer =
    settings.output && calls.length === 0 ? checkAnswer(textOfParts(content), finish.finishReason, settings.output) : undefined;
  const response: PendingResponse = {
    content,
    finishReason: finish.finishReason,
    calls,
    doomLoop,
    usage: finish.usage,
    ...(model === undefined ? {} : { model }),
    ...(settings.provider.model !== undefined && settings.provider.model !== model ? { requestedModel: settings.provider.model } : {}),
    ...(answer === undefined ? {} : { answer }),
  };
  const emitted: ConversationEmittedEvent[] = [
    // The total as it will be once this response is committed (every answered request is).
    { type: 'usage', step: finish.usage, total: addUsage(context.usage, finish.usage) },
  ];
  for (const part of content) {
    if (part.type === 'tool-call') emitted.push({ type: 'tool.call', toolCallId: part.toolCallId, name: part.toolName, args: part.args });
  }
  emitted.push({
    type: 'request.finished',
    iteration: context.iterations,
    attempt: context.attempt,
    finishReason: finish.finishReason,
    usage: finish.usage,
    ...(model === undefined ? {} : { model }),
    ...(finish.responseId === undefined ? {} : { responseId: finish.responseId }),
  });
  // Most rounds end as the one before did: the outcome is then kept, not copied.
  const outcome =
    context.outcome.finishReason === finish.finishReason ? context.outcome : { ...context.outcome, finishReason: finish.finishReason };
  return { context: { response, outcome }, emitted };
}

/** The response joins the run: its usage (and cost) counted, its content appended to the history. */
export function committed(context: ConversationContext, prices: PriceTable | undefined): Partial<ConversationContext> {
  const response = context.response;
  if (!response) return {};
  // One literal, built once: its own fields first, so the spreads after them stay fast on Node 20.
  return {
    usage: addUsage(context.usage, response.usage),
    ...(context.billing.cost && prices
      ? {
          billing: {
            ...context.billing,
            cost: addCost(context.billing.cost, prices, response.model, response.usage, response.requestedModel),
          },
        }
      : {}),
    // The content array was built part by part, with room to grow; the history keeps an exact copy.
    ...(response.content.length === 0
      ? {}
      : { messages: appended(context.messages, { role: 'assistant', content: response.content.slice() }) }),
  };
}

/**
 * The run's text is the last response's, even when that response is empty: an earlier round's text
 * would read as an answer the model never gave.
 */
export function finalTextRecorded(context: Pick<ConversationContext, 'response' | 'outcome'>): Partial<ConversationContext> {
  let finalText = '';
  for (const part of context.response?.content ?? []) if (part.type === 'text') finalText += part.text;
  return { outcome: { ...context.outcome, finalText } };
}

/**
 * The response's calls become the round: the response is committed in the same context copy, a
 * doom-loop notice is kept for after the round's results, and calls settled while planning (unknown
 * tool, invalid arguments) are reported.
 */
export function roundStarted(context: ConversationContext, prices: PriceTable | undefined): Effects {
  const response = context.response;
  if (!response) return {};
  const doomLoop = response.doomLoop;
  const emitted: ConversationEmittedEvent[] = [];
  if (doomLoop.action === 'notice') {
    emitted.push({ type: 'doom_loop.detected', pattern: doomLoop.pattern, repeats: doomLoop.repeats, action: 'notice' });
  }
  for (const call of response.calls) if (call.state === 'settled' && call.result) emitted.push(toolResultEvent(call));
  // `committed` makes a new object each call: the round's fields go into it, not into a copy of it.
  return {
    context: Object.assign(committed(context, prices), {
      round: response.calls,
      response: null,
      iterations: context.iterations + 1,
      doomLoop: doomLoop.action === 'notice' ? { noticed: true, pendingNotice: doomLoop.notice } : quietDoomLoop(context.doomLoop),
    }),
    emitted,
  };
}

/** The doom-loop state of a round without a notice: the run's own when it already says so (no copy per round). */
function quietDoomLoop(current: ConversationContext['doomLoop']): ConversationContext['doomLoop'] {
  return current.noticed || current.pendingNotice !== null ? { noticed: false, pendingNotice: null } : current;
}
