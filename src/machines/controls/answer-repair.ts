import type { ProviderDeltaEvent } from '../../actors/provider-call.js';
import { parsePartialJson } from '../../util/parse-partial-json.js';
import type { Effects } from '../names/effects.js';
import { repairPrompt, type ResolvedOutput } from '../policies/structured-output.js';
import type { ConversationContext, RunError } from '../names/types.js';
import { appended } from '../../util/appended.js';

/** The validated structured answer, kept for the output (never data that failed validation). */
export function objectRecorded(context: Pick<ConversationContext, 'response' | 'answer'>): Partial<ConversationContext> {
  const answer = context.response?.answer;
  return answer?.ok ? { answer: { ...context.answer, object: answer.object } } : {};
}

/** An invalid answer goes back to the model with what was wrong, announced by `output.repair`. */
export function repairStarted(context: ConversationContext, output: Pick<ResolvedOutput, 'name' | 'maxRepairs'> | undefined): Effects {
  const answer = context.response?.answer;
  if (!output || !answer || answer.ok) return {};
  const repair = context.answer.repairs + 1;
  return {
    context: {
      answer: { ...context.answer, repairs: repair },
      response: null,
      messages: appended(context.messages, { role: 'user', content: repairPrompt(answer.problem, output) }),
    },
    emitted: [{ type: 'output.repair', repair, maxRepairs: output.maxRepairs, problem: answer.problem }],
  };
}

/** The run's error when the answer is still invalid with no repair left. */
export function answerError(context: Pick<ConversationContext, 'response' | 'answer'>): RunError {
  const answer = context.response?.answer;
  const problem = answer && !answer.ok ? answer.problem : 'no valid answer';
  return {
    name: 'OutputValidationError',
    message: `the final answer did not match the output schema after ${context.answer.repairs} repair(s): ${problem}`,
    retryable: false,
    code: 'invalid_output',
  };
}

/**
 * The streamed answer so far, parsed best effort: an `object.delta` when the parsed object changed.
 * The stream is marked as moved either way.
 */
export function partialObjectStreamed(stream: ConversationContext['stream'], deltas: readonly ProviderDeltaEvent[]): Effects {
  let added = '';
  for (const delta of deltas) if (delta.type === 'text.delta') added += delta.delta;
  if (added === '') return {};
  const answerText = stream.answerText + added;
  const partial = parsePartialJson(answerText);
  const json = partial === undefined ? null : JSON.stringify(partial);
  const changed = json !== null && json !== stream.lastPartialJson;
  return {
    context: { stream: { ...stream, partial: true, progressed: true, answerText, ...(changed ? { lastPartialJson: json } : {}) } },
    ...(changed ? { emitted: [{ type: 'object.delta', object: partial }] } : {}),
  };
}
