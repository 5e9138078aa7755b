import { isRecord } from '../../util/is-record.js';
import { reportsContextLength } from './context-length.js';
import { ProviderError, type ProviderErrorCode } from './provider-error.js';

/**
 * One classification for every provider: SDK error classes (by shape, so neither SDK has to be
 * installed), HTTP status, in-band error bodies and network error codes.
 */

const retryableNetworkCodes = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

/** Error `type`s of in-band error bodies that mean "try again later". */
const retryableErrorTypes: Record<string, ProviderErrorCode> = {
  overloaded_error: 'overloaded',
  rate_limit_error: 'rate_limit',
  api_error: 'server',
  server_error: 'server',
  timeout_error: 'timeout',
  service_unavailable: 'server',
};

/** Maps an HTTP status to its code and whether it is worth retrying. */
export function classifyStatus(status: number): { code: ProviderErrorCode; retryable: boolean } {
  if (status === 408) return { code: 'timeout', retryable: true };
  if (status === 409) return { code: 'conflict', retryable: true };
  if (status === 429) return { code: 'rate_limit', retryable: true };
  if (status === 529) return { code: 'overloaded', retryable: true };
  if (status >= 500) return { code: 'server', retryable: true };
  if (status === 401) return { code: 'authentication', retryable: false };
  if (status === 403) return { code: 'permission', retryable: false };
  if (status === 404) return { code: 'not_found', retryable: false };
  return { code: 'bad_request', retryable: false };
}

/** Reads a header from a `Headers` instance or a plain record, case-insensitively. */
function header(headers: unknown, name: string): string | undefined {
  if (!isRecord(headers)) return undefined;
  if (typeof headers.get === 'function') {
    const value: unknown = (headers.get as (key: string) => unknown).call(headers, name);
    return typeof value === 'string' ? value : undefined;
  }
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return typeof value === 'string' ? value : Array.isArray(value) ? String(value[0]) : undefined;
  }
  return undefined;
}

/**
 * Milliseconds a server asked us to wait: `retry-after-ms` first (OpenAI), then `retry-after` as
 * seconds or as an HTTP date.
 */
export function parseRetryAfter(headers: unknown, now: number = Date.now()): number | undefined {
  const milliseconds = header(headers, 'retry-after-ms');
  if (milliseconds !== undefined) {
    const value = Number.parseFloat(milliseconds);
    if (Number.isFinite(value) && value >= 0) return Math.ceil(value);
  }
  const retryAfter = header(headers, 'retry-after');
  if (retryAfter === undefined) return undefined;
  const seconds = Number(retryAfter.trim());
  if (retryAfter.trim() !== '' && Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
  const date = Date.parse(retryAfter);
  if (Number.isFinite(date)) return Math.max(0, date - now);
  return undefined;
}

function findNetworkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && isRecord(current); depth++) {
    if (typeof current.code === 'string' && retryableNetworkCodes.has(current.code)) return current.code;
    current = current.cause;
  }
  return undefined;
}

/** The `type` of an error body: `{error: {type}}` (Anthropic, OpenAI) or `{type}`. */
function errorBodyType(error: Record<string, unknown>): string | undefined {
  const body = error.error;
  if (!isRecord(body)) return typeof error.type === 'string' ? error.type : undefined;
  if (isRecord(body.error) && typeof body.error.type === 'string') return body.error.type;
  if (typeof body.type === 'string' && body.type !== 'error') return body.type;
  return typeof error.type === 'string' ? error.type : undefined;
}

/** A numeric status carried in an in-band error body (OpenRouter: `{error: {code: 400}}`). */
function errorBodyStatus(error: Record<string, unknown>): number | undefined {
  const body = error.error;
  if (isRecord(body) && typeof body.code === 'number' && body.code >= 100 && body.code < 600) return body.code;
  return undefined;
}

/** The string `code` of an error body (`{error: {code}}`) or of the error itself. */
function errorBodyCode(error: Record<string, unknown>): string | undefined {
  const body = error.error;
  if (isRecord(body) && typeof body.code === 'string') return body.code;
  return typeof error.code === 'string' ? error.code : undefined;
}

/** Constructor names along the prototype chain, e.g. `RateLimitError`, `APIError`, `OpenAIError`. */
function classNames(error: object): Set<string> {
  const names = new Set<string>();
  let prototype: unknown = Object.getPrototypeOf(error);
  for (let depth = 0; depth < 8 && prototype !== null && prototype !== Object.prototype; depth++) {
    const owner = (prototype as { constructor?: { name?: unknown } }).constructor;
    if (typeof owner?.name === 'string' && owner.name !== '') names.add(owner.name);
    prototype = Object.getPrototypeOf(prototype);
  }
  return names;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'string') return error;
  if (isRecord(error) && typeof error.message === 'string') return error.message;
  try {
    return `non-Error value thrown: ${JSON.stringify(error)}`;
  } catch {
    return `non-Error value thrown: ${String(error)}`;
  }
}

/**
 * Classifies anything a provider threw into a {@link ProviderError}. A prompt longer than the
 * model's context window (OpenAI `context_length_exceeded`, Anthropic `prompt is too long`) is
 * `context_length` and never retried: the same request would overflow again.
 *
 * @example
 * ```ts
 * const error = toProviderError(Object.assign(new Error('slow down'), { status: 429 }));
 * error.retryable; // true
 * ```
 */
export function toProviderError(error: unknown): ProviderError {
  if (ProviderError.isInstance(error)) return error;
  const message = messageOf(error);
  if (!isRecord(error)) return new ProviderError(message, { code: 'unknown', retryable: false, cause: error });

  const name = typeof error.name === 'string' ? error.name : '';
  // The SDKs' error classes keep `name === 'Error'`; their class names tell them apart.
  const classes = classNames(error);
  if (name === 'AbortError' || classes.has('APIUserAbortError')) {
    return new ProviderError(message, { code: 'aborted', retryable: false, cause: error });
  }
  if (name === 'TimeoutError' || classes.has('APIConnectionTimeoutError')) {
    return new ProviderError(message, { code: 'timeout', retryable: true, cause: error });
  }

  const headers = error.headers;
  const retryAfterMs = parseRetryAfter(headers);
  const shouldRetry = header(headers, 'x-should-retry');
  const status = typeof error.status === 'number' && error.status >= 100 && error.status < 600 ? error.status : errorBodyStatus(error);
  const bodyType = errorBodyType(error);
  const options = (code: ProviderErrorCode, retryable: boolean) => ({
    code,
    retryable: shouldRetry === 'true' ? true : shouldRetry === 'false' ? false : retryable,
    ...(status === undefined ? {} : { status }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    cause: error,
  });

  const contextLength = reportsContextLength(error);
  // An error raised by the user's handler may say for itself whether it is worth retrying.
  if (typeof error.retryable === 'boolean') {
    const code = contextLength ? 'context_length' : status === undefined ? 'unknown' : classifyStatus(status).code;
    return new ProviderError(message, { ...options(code, error.retryable), retryable: error.retryable });
  }
  // The same prompt overflows the window again whatever a header says: only a shorter history helps.
  if (contextLength) return new ProviderError(message, { ...options('context_length', false), retryable: false });
  // A spent quota comes as a 429, yet waiting a few seconds will not refill it.
  if (bodyType === 'insufficient_quota' || errorBodyCode(error) === 'insufficient_quota') {
    return new ProviderError(message, options('rate_limit', false));
  }
  if (bodyType !== undefined && bodyType in retryableErrorTypes) {
    return new ProviderError(message, options(retryableErrorTypes[bodyType] ?? 'server', true));
  }
  if (status !== undefined) {
    const { code, retryable } = classifyStatus(status);
    return new ProviderError(message, options(code, retryable));
  }
  if (
    findNetworkCode(error) !== undefined ||
    classes.has('APIConnectionError') ||
    name === 'APIConnectionError' ||
    (name === 'TypeError' && (message === 'fetch failed' || message === 'terminated'))
  ) {
    return new ProviderError(message, options('network', true));
  }
  return new ProviderError(message, options('unknown', false));
}
