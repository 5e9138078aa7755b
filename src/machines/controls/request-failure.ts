import { mediaFailureNamed } from '../../model/errors/media-failure.js';
import type { Message } from '../../model/messages.js';
import { toProviderError } from '../../model/errors/classify-error.js';
import { ProviderError } from '../../model/errors/provider-error.js';
import { addUsage } from '../../model/usage.js';
import { addCost, type PriceTable } from '../policies/pricing.js';
import { type RetryOptions, retryAfterCapNote, retryDelay } from '../policies/retry-policy.js';
import type { ConversationContext, RequestRetryEvent, RunError } from '../names/types.js';

/** The failure behind an event that ends a request attempt without a usable response. */
export function failureOf(
  event: { type: string; error?: unknown },
  requestTimeoutMs: number,
  messages?: readonly Message[],
): ProviderError {
  if (event.type.startsWith('xstate.error.actor.')) {
    const error = toProviderError(event.error);
    // A medium the provider could not fetch by URL: the run's error names the part it was.
    return messages ? mediaFailureNamed(error, messages) : error;
  }
  if (event.type.startsWith('xstate.after.')) {
    return new ProviderError(`no response from the provider for ${requestTimeoutMs} ms`, { code: 'timeout', retryable: true });
  }
  return new ProviderError('the provider stream ended without a final response', { code: 'incomplete_stream', retryable: true });
}

/** A provider error as plain JSON, named after its cause when the cause has a name of its own. */
export function runErrorOf(error: ProviderError): RunError {
  const cause = error.cause;
  const name = cause instanceof Error && cause.name !== 'Error' ? cause.name : error.name;
  return {
    name,
    message: error.message,
    ...(error.status === undefined ? {} : { status: error.status }),
    retryable: error.retryable,
    code: error.code,
  };
}

export type FailureSettings = { retry: Required<RetryOptions>; prices: PriceTable | undefined; model: string | undefined };

/**
 * A failed attempt: its error kept (with why a retry-after was not honoured), and the tokens it was
 * billed for counted apart from the run's.
 */
export function failureRecorded(
  context: ConversationContext,
  failure: ProviderError,
  settings: FailureSettings,
): Partial<ConversationContext> {
  const wasted = failure.usage ?? context.response?.usage;
  const model = failure.model ?? context.response?.model ?? settings.model;
  const lastError = runErrorOf(failure);
  const capNote = retryAfterCapNote(context.attempt, settings.retry, failure, failure.retryAfterMs ?? null);
  if (capNote !== undefined) lastError.message = `${lastError.message} — ${capNote}`;
  return {
    retry: { ...context.retry, lastError, lastRetryAfterMs: failure.retryAfterMs ?? null },
    ...(wasted
      ? {
          billing: {
            failedUsage: addUsage(context.billing.failedUsage, wasted),
            cost:
              context.billing.cost && settings.prices
                ? addCost(context.billing.cost, settings.prices, model, wasted, settings.model)
                : context.billing.cost,
          },
        }
      : {}),
  };
}

/** The backoff before the next attempt. */
export function retryScheduled(
  context: Pick<ConversationContext, 'attempt' | 'retry'>,
  retry: Required<RetryOptions>,
): Partial<ConversationContext> {
  return { retry: { ...context.retry, delayMs: retryDelay(context.attempt, retry, context.retry.lastRetryAfterMs) } };
}

/** The retry about to wait its backoff; the attempt's streamed output, if any, is to be discarded. */
export function retryEvent(context: Pick<ConversationContext, 'attempt' | 'retry' | 'stream'>): RequestRetryEvent {
  return {
    type: 'request.retry',
    attempt: context.attempt + 1,
    delayMs: context.retry.delayMs,
    error: context.retry.lastError ?? { name: 'ProviderError', message: 'unknown failure', retryable: true },
    discardPartial: context.stream.partial,
  };
}

/** The run's error, kept for the output. */
export function errorRecorded(context: Pick<ConversationContext, 'retry'>, lastError: RunError): Partial<ConversationContext> {
  return { retry: { ...context.retry, lastError } };
}

/** The error a run with a malformed input ends with. */
export function inputError(context: Pick<ConversationContext, 'inputProblem'>): RunError {
  return { name: 'InvalidInputError', message: context.inputProblem ?? 'invalid input', retryable: false, code: 'invalid_input' };
}
