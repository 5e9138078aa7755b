import { isRecord } from '../../util/is-record.js';
import { classifySdkError } from './classify-sdk-error.js';
import type { Usage } from '../../model/usage.js';
import { mentionsContextLength } from '../../model/errors/context-length.js';
import { ProviderError, type ProviderErrorCode } from '../../model/errors/provider-error.js';

type Classification = { code: ProviderErrorCode; retryable: boolean };

/**
 * `code`s of a failed OpenAI Responses response (`response.failed`'s `response.error.code`, an
 * `error` event's code). Only the API's transient failures are worth retrying; the other codes it
 * documents (`invalid_prompt`, the image codes, `bio_policy`, …) are about the request itself.
 */
const failureCodes: Record<string, Classification> = {
  server_error: { code: 'server', retryable: true },
  rate_limit_exceeded: { code: 'rate_limit', retryable: true },
  vector_store_timeout: { code: 'timeout', retryable: true },
  // A spent quota is reported like a rate limit, yet waiting will not refill it.
  insufficient_quota: { code: 'rate_limit', retryable: false },
  // Only a shorter history helps; the same input overflows the window again.
  context_length_exceeded: { code: 'context_length', retryable: false },
};

/** Error `type`s of in-band error bodies, for failures that carry no known code. */
const failureTypes: Record<string, Classification> = {
  server_error: { code: 'server', retryable: true },
  api_error: { code: 'server', retryable: true },
  overloaded_error: { code: 'overloaded', retryable: true },
  rate_limit_error: { code: 'rate_limit', retryable: true },
  timeout_error: { code: 'timeout', retryable: true },
  service_unavailable: { code: 'server', retryable: true },
  insufficient_quota: { code: 'rate_limit', retryable: false },
  invalid_request_error: { code: 'bad_request', retryable: false },
  authentication_error: { code: 'authentication', retryable: false },
  permission_error: { code: 'permission', retryable: false },
  not_found_error: { code: 'not_found', retryable: false },
};

function classify(code: string | undefined, type: string | undefined, message: string): Classification {
  if (code !== undefined && code in failureCodes) return failureCodes[code] as Classification;
  // A compatible server may say it only in words, under a code or type of its own.
  if (mentionsContextLength(message)) return { code: 'context_length', retryable: false };
  if (type !== undefined && type in failureTypes) return failureTypes[type] as Classification;
  // Any other documented code names something wrong with the request.
  if (code !== undefined) return { code: 'bad_request', retryable: false };
  return { code: 'unknown', retryable: false };
}

/**
 * A failure the Responses API reported inside a response rather than as an HTTP status: the
 * `error` of a `response.failed` event (or of a non-streamed body with `status: "failed"`), or an
 * `error` event (`{type, code, message}`, flat or nested under `error`). Transient failures
 * (`server_error`, `rate_limit_exceeded`, …) are retryable; `context_length_exceeded` is
 * `context_length`; everything else fails the run.
 * `attempt` carries the usage and model the failed response reported, when it did.
 *
 * @example
 * ```ts
 * const error = classifyResponseFailure({ code: 'server_error', message: 'The server had an error' }, 'response.failed');
 * error.retryable; // true
 * ```
 */
export function classifyResponseFailure(
  failure: unknown,
  where: string,
  cause?: unknown,
  attempt: { usage?: Usage; model?: string } = {},
): ProviderError {
  const body = isRecord(failure) && isRecord(failure.error) ? failure.error : isRecord(failure) ? failure : {};
  const code = typeof body.code === 'string' && body.code !== '' ? body.code : undefined;
  const type = typeof body.type === 'string' && body.type !== 'error' ? body.type : undefined;
  const text = typeof body.message === 'string' && body.message !== '' ? body.message : 'no message given';
  const { code: errorCode, retryable } = classify(code, type, text);
  return new ProviderError(`${where}: ${text}${code === undefined ? '' : ` (${code})`}`, {
    code: errorCode,
    retryable,
    // The body itself, not the event around it: its message is where an echoed key would be redacted.
    cause: cause ?? body,
    // What the failed attempt cost is counted apart from the run's usage, not lost.
    ...(attempt.usage === undefined ? {} : { usage: attempt.usage }),
    ...(attempt.model === undefined ? {} : { model: attempt.model }),
  });
}

/**
 * Classifies what the `openai` SDK threw during a Responses request. The SDK throws on an `error`
 * event inside a 200 stream as an `APIError` without a status; that error's body is classified by
 * its code like any other in-band failure. Everything else goes through {@link classifySdkError}.
 *
 * @example
 * ```ts
 * try { await client.responses.create(body, { signal }); }
 * catch (error) { throw classifyResponsesSdkError(error, signal); }
 * ```
 */
export function classifyResponsesSdkError(error: unknown, signal: AbortSignal): ProviderError {
  if (!signal.aborted && !ProviderError.isInstance(error) && isRecord(error) && error.status === undefined && isRecord(error.error)) {
    return classifyResponseFailure(error.error, 'error event', error);
  }
  return classifySdkError(error, signal);
}
