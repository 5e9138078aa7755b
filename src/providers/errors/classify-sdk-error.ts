import { isRecord } from '../../util/is-record.js';
import { toProviderError } from '../../model/errors/classify-error.js';
import { ProviderError } from '../../model/errors/provider-error.js';

/**
 * Classifies what an official SDK threw during a request. Beyond {@link toProviderError}: an
 * aborted request is `aborted` whatever the SDK made of it, and a body or stream event that is
 * not JSON means the response was garbled or cut on the way (a proxy, a dropped connection) — a
 * broken transfer worth retrying, not a bad request.
 */
export function classifySdkError(error: unknown, signal: AbortSignal): ProviderError {
  if (signal.aborted && !ProviderError.isInstance(error)) {
    return new ProviderError('the request was aborted', { code: 'aborted', retryable: false, cause: error });
  }
  if (error instanceof SyntaxError) {
    return new ProviderError(`the response carried data that is not JSON: ${error.message}`, {
      code: 'incomplete_stream',
      retryable: true,
      cause: error,
    });
  }
  return toProviderError(error);
}

function redact(text: string, secret: string): string {
  return text.split(secret).join('[redacted]');
}

function mentions(error: ProviderError, secret: string): boolean {
  if (error.message.includes(secret)) return true;
  const cause: unknown = error.cause;
  if (!isRecord(cause)) return false;
  if (typeof cause.message === 'string' && cause.message.includes(secret)) return true;
  try {
    return JSON.stringify(cause.error ?? null).includes(secret);
  } catch {
    return false;
  }
}

/**
 * Removes an API key from an error and its SDK cause (message and parsed body), so a server that
 * echoes the key back cannot leak it into outputs, events or snapshots.
 */
export function redactSecret(error: ProviderError, secret: string | undefined): ProviderError {
  if (!secret || secret.length < 4 || !mentions(error, secret)) return error;
  const cause: unknown = error.cause;
  if (isRecord(cause)) {
    if (typeof cause.message === 'string') cause.message = redact(cause.message, secret);
    if ('error' in cause && cause.error !== undefined) {
      try {
        cause.error = JSON.parse(redact(JSON.stringify(cause.error), secret)) as unknown;
      } catch {
        cause.error = undefined;
      }
    }
  }
  return new ProviderError(redact(error.message, secret), {
    code: error.code,
    retryable: error.retryable,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    cause,
  });
}
