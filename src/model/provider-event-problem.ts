import { isRecord } from '../util/is-record.js';
import { ProviderError } from './errors/provider-error.js';

const isCount = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0;

/** What is wrong with a part of a `finish` event's content, or `undefined` when nothing is. */
function contentPartProblem(part: unknown, index: number): string | undefined {
  if (!isRecord(part)) return `content[${index}] that is not an object`;
  switch (part.type) {
    case 'text':
    case 'reasoning':
      return typeof part.text === 'string' ? undefined : `content[${index}] (${part.type}) without a string text`;
    case 'redacted-reasoning':
      return typeof part.data === 'string' ? undefined : `content[${index}] (redacted-reasoning) without a string data`;
    case 'tool-call':
      return typeof part.toolCallId === 'string' && typeof part.toolName === 'string' && typeof part.argsText === 'string'
        ? undefined
        : `content[${index}] (tool-call) without string toolCallId, toolName and argsText`;
    default:
      return `content[${index}] of type ${JSON.stringify(part.type)}; expected text, reasoning, redacted-reasoning or tool-call`;
  }
}

/**
 * What is wrong with a response (`content`, `finishReason`, `usage`) as a `finish` event carries it,
 * whatever the object's own `type` (the machine's `provider.finish` carries the same fields).
 *
 * @example
 * ```ts
 * finishProblem({ content: [], finishReason: 'stop' }); // 'a finish event whose usage is not { inputTokens, outputTokens, totalTokens } (counts)'
 * ```
 */
export function finishProblem(finish: Record<string, unknown>): string | undefined {
  if (!Array.isArray(finish.content)) return 'a finish event whose content is not a list of parts';
  for (const [index, part] of finish.content.entries()) {
    const problem = contentPartProblem(part, index);
    if (problem) return `a finish event with ${problem}`;
  }
  if (typeof finish.finishReason !== 'string') return 'a finish event without a string finishReason';
  const { usage } = finish;
  if (!isRecord(usage) || !isCount(usage.inputTokens) || !isCount(usage.outputTokens) || !isCount(usage.totalTokens))
    return 'a finish event whose usage is not { inputTokens, outputTokens, totalTokens } (counts)';
  return undefined;
}

/**
 * What is wrong with an event a provider yielded, or `undefined` when it has the shape the
 * machine reads (`ProviderEvent`). Only the known event types are checked: a provider may yield
 * others, which the run passes on as they are.
 *
 * @example
 * ```ts
 * providerEventProblem({ type: 'finish' }); // 'a finish event whose content is not a list of parts'
 * providerEventProblem({ type: 'text.delta', delta: 'Hi' }); // undefined
 * ```
 */
export function providerEventProblem(event: unknown): string | undefined {
  if (!isRecord(event) || typeof event.type !== 'string') return `${JSON.stringify(event) ?? typeof event}, not an event { type, … }`;
  switch (event.type) {
    case 'text.delta':
    case 'reasoning.delta':
      return typeof event.delta === 'string' ? undefined : `a ${event.type} event without a string delta`;
    case 'tool.call.delta':
      return typeof event.toolCallId === 'string' &&
        typeof event.argsDelta === 'string' &&
        (event.name === undefined || typeof event.name === 'string')
        ? undefined
        : 'a tool.call.delta event without a string toolCallId and argsDelta';
    case 'finish':
      return finishProblem(event);
    default:
      return undefined;
  }
}

/**
 * The error a request fails with when its provider yields an event the machine cannot read: not
 * retried (the same provider would yield it again), and naming what was wrong.
 *
 * @example
 * ```ts
 * const problem = providerEventProblem(event);
 * if (problem) throw invalidProviderEvent(problem);
 * ```
 */
export function invalidProviderEvent(problem: string): ProviderError {
  return new ProviderError(`the provider yielded ${problem}`, { code: 'unknown', retryable: false });
}
