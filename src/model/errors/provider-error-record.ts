import type { Usage } from '../usage.js';
import { ProviderError, type ProviderErrorCode } from './provider-error.js';

/**
 * A `ProviderError` as plain JSON, for a journal that records a failed request: what the
 * conversation machine reads from the error, and the name of what caused it (a run's `error.name`).
 */
export type ProviderErrorRecord = {
  message: string;
  code: ProviderErrorCode;
  retryable: boolean;
  status?: number;
  retryAfterMs?: number;
  usage?: Usage;
  model?: string;
  /** The class name of the error behind it, when it is not plain `Error`. */
  causeName?: string;
};

/**
 * The record of a provider error.
 *
 * @example
 * ```ts
 * const record = providerErrorRecord(new ProviderError('overloaded', { code: 'overloaded', retryable: true, status: 529 }));
 * ```
 */
export function providerErrorRecord(error: ProviderError): ProviderErrorRecord {
  const cause = error.cause;
  return {
    message: error.message,
    code: error.code,
    retryable: error.retryable,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    ...(error.usage === undefined ? {} : { usage: error.usage }),
    ...(error.model === undefined ? {} : { model: error.model }),
    ...(cause instanceof Error && cause.name !== 'Error' ? { causeName: cause.name } : {}),
  };
}

/**
 * The provider error a record describes: the machine classifies it, prices it and names it the
 * same as the error that was recorded.
 *
 * @example
 * ```ts
 * const error = providerErrorFromRecord({ message: 'overloaded', code: 'overloaded', retryable: true, status: 529 });
 * ```
 */
export function providerErrorFromRecord(record: ProviderErrorRecord): ProviderError {
  const cause = record.causeName === undefined ? undefined : Object.assign(new Error(record.message), { name: record.causeName });
  return new ProviderError(record.message, {
    code: record.code,
    retryable: record.retryable,
    ...(record.status === undefined ? {} : { status: record.status }),
    ...(record.retryAfterMs === undefined ? {} : { retryAfterMs: record.retryAfterMs }),
    ...(record.usage === undefined ? {} : { usage: record.usage }),
    ...(record.model === undefined ? {} : { model: record.model }),
    ...(cause === undefined ? {} : { cause }),
  });
}
