/**
 * Retry policy for provider requests. The machine retries, not the SDK, so every attempt is a
 * visible `retrying` state with a `request.retry` event; `retry: false` makes the first failure final.
 *
 * @example
 * ```ts
 * createConversationMachine({ provider, retry: { maxRetries: 5, initialDelayMs: 1_000, maxRetryAfterMs: 10_000 } });
 * ```
 */
export type RetryOptions = {
  /** Retries after the first attempt (so `maxRetries + 1` attempts at most). Default 2. */
  maxRetries?: number;
  /** Backoff before the first retry. Default 500 ms; doubles each retry. */
  initialDelayMs?: number;
  /** Backoff cap. Default 30 s. */
  maxDelayMs?: number;
  /** Randomise backoff (between half and all of it) so many clients do not retry in step. Default true. */
  jitter?: boolean;
  /**
   * The longest `retry-after` the run will wait for. A server asking for longer ends the run in
   * `error` instead of blocking it for minutes. Default 60 s.
   */
  maxRetryAfterMs?: number;
};

/**
 * Backoff before retry number `attempt` (1 = first retry): exponential from `initialDelayMs`,
 * capped at `maxDelayMs`, with "equal jitter" (between half and all of it) so clients that failed
 * together do not retry together. A server's `retry-after` replaces the computed backoff.
 */
export function retryDelay(
  attempt: number,
  retry: Required<RetryOptions>,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== null) return retryAfterMs;
  const exponential = Math.min(retry.maxDelayMs, retry.initialDelayMs * 2 ** Math.max(0, attempt - 1));
  if (!retry.jitter) return exponential;
  return Math.round(exponential / 2 + (random() * exponential) / 2);
}

/** Whether another attempt is allowed after `attempt` attempts failed with this error. */
export function canRetry(
  attempt: number,
  retry: Required<RetryOptions>,
  error: { retryable: boolean } | null,
  retryAfterMs: number | null,
): boolean {
  if (!error?.retryable) return false;
  if (attempt > retry.maxRetries) return false;
  return retryAfterMs === null || retryAfterMs <= retry.maxRetryAfterMs;
}

/** A wait as people read it: `250 ms`, `30 s`, `1.5 s`. */
function readable(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(3))} s`;
}

/**
 * Why a failure that would otherwise be retried is not, when the only reason is a `retry-after`
 * beyond `retry.maxRetryAfterMs`: the run's error would otherwise read as a plain 429 with retries
 * left, and nobody could tell that raising the cap is the fix.
 */
export function retryAfterCapNote(
  attempt: number,
  retry: Required<RetryOptions>,
  error: { retryable: boolean } | null,
  retryAfterMs: number | null,
): string | undefined {
  if (!error?.retryable || attempt > retry.maxRetries || retryAfterMs === null || retryAfterMs <= retry.maxRetryAfterMs) return undefined;
  return `retry-after ${readable(retryAfterMs)} exceeds retry.maxRetryAfterMs (${readable(retry.maxRetryAfterMs)}); not retried`;
}
