import type { ResolvedOptions } from './options.js';
import { untilEarliestDeadline } from '../rounds/round-results.js';
import type { ConversationContext } from '../names/types.js';

/** The conversation machine's delays, by the name the chart uses. */
export function conversationDelays(settings: Pick<ResolvedOptions, 'requestTimeoutMs' | 'guardrails'>) {
  const guardrailTimeout =
    (phase: 'input' | 'output') =>
    ({ context }: { context: ConversationContext }) =>
      settings.guardrails[phase][context.control.check]?.timeoutMs ?? 0;
  return {
    inputGuardrailTimeout: guardrailTimeout('input'),
    outputGuardrailTimeout: guardrailTimeout('output'),
    retryDelay: ({ context }: { context: ConversationContext }) => context.retry.delayMs,
    requestTimeout: settings.requestTimeoutMs,
    // Aims at the running call whose time is up first; `running` is re-entered whenever a call
    // starts or ends, so the timer always follows the earliest deadline.
    toolDeadline: ({ context }: { context: ConversationContext }) => untilEarliestDeadline(context.round, Date.now()),
  };
}
