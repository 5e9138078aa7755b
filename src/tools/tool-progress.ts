import type { JsonValue } from '../model/json.js';
import { serializeResult } from '../util/serialize-result.js';

/** What an `execute` written as a generator returns: its yields are progress, its return the result. */
type ProgressIterator = AsyncIterator<unknown, unknown> | Iterator<unknown, unknown>;

/**
 * Whether `execute` returned a generator (async or not): then each yield is progress and the
 * return value the result. Any other iterable (an array, a Map) is a result like any value.
 */
export function isProgressIterator(value: unknown): value is ProgressIterator {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<AsyncGenerator> & { [Symbol.iterator]?: unknown };
  if (typeof candidate.next !== 'function' || typeof candidate.return !== 'function' || typeof candidate.throw !== 'function') return false;
  return typeof candidate[Symbol.asyncIterator] === 'function' || typeof candidate[Symbol.iterator] === 'function';
}

/**
 * Runs a generator `execute` to its end: each yield goes to `report`, the return value is the
 * result. Once `stopped()` (the call timed out, was cancelled, or the run halted) the generator is
 * closed with `return()`, so its `finally` blocks run, and no further progress is reported.
 *
 * @example
 * ```ts
 * const result = await drainProgress(tool.execute(args, context), (data) => console.log('progress', data), () => signal.aborted);
 * ```
 */
export async function drainProgress(
  iterator: ProgressIterator,
  report: (data: JsonValue) => void,
  stopped: () => boolean,
): Promise<unknown> {
  for (;;) {
    const step = await iterator.next();
    if (step.done) return step.value;
    if (stopped()) {
      await iterator.return?.(undefined);
      return undefined;
    }
    report(progressData(step.value));
  }
}

/**
 * A yield as event data: JSON as it is (events are stored and streamed as JSON); anything JSON
 * cannot hold (bigint, a cycle, a Map) in the readable form a result would take.
 *
 * @example
 * ```ts
 * progressData({ done: 3, of: 10 }); // { done: 3, of: 10 }
 * progressData(10n);                // '10'
 * ```
 */
export function progressData(value: unknown): JsonValue {
  if (value === undefined) return null;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  const text = serializeResult(value);
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}
