import { ActorloopError } from '../errors/actorloop-error.js';

/**
 * One way a request differs from the recorded one: where (`body.messages[1].content`, `path`,
 * `query`, `method`), and both values as short JSON text (long strings cut around the first
 * differing character).
 *
 * @example
 * ```ts
 * const difference: CassetteDifference = { path: 'body.model', expected: '"gpt-4o-mini"', received: '"gpt-4o"' };
 * ```
 */
export type CassetteDifference = {
  /** Where the values differ: `method`, `path`, `query`, or `body` and a JSON path under it. */
  readonly path: string;
  /** The recorded value, as short JSON text; `(absent)` when the recording has none. */
  readonly expected: string;
  /** The value sent now, as short JSON text; `(absent)` when the request has none. */
  readonly received: string;
};

/**
 * A replayed request that the cassette cannot answer: it differs from the recorded request it is
 * served against (`reason: 'different'`, with `differences`), or the cassette has no interaction
 * left (`reason: 'exhausted'`). `request` is the 0-based number of the request; the message names
 * the cassette, the request, and the first differences as JSON paths with expected and received
 * values.
 *
 * Through a provider SDK the run ends `error` with this message: the replaying `fetch` answers such
 * a request with an HTTP 400 whose error body carries it (an SDK would turn a rejected `fetch` into
 * a retried "Connection error." and drop the message). With `onMismatch: 'reject'` the `fetch`
 * rejects with this error instead.
 *
 * @example
 * ```ts
 * const replay = replayTraffic({ dir: 'test/cassettes', name: 'weather', onMismatch: 'reject' });
 * try {
 *   await replay('https://api.openai.com/v1/chat/completions', { method: 'POST', body: '{"model":"gpt-4o"}' });
 * } catch (error) {
 *   if (CassetteMismatchError.isInstance(error)) console.error(error.differences);
 * }
 * ```
 */
export class CassetteMismatchError extends ActorloopError {
  static override readonly errorName = 'CassetteMismatchError';
  /** The cassette file. */
  readonly file: string;
  /** The request's 0-based number in this replay (the interaction it was served against). */
  readonly request: number;
  /** `different`: the request differs from the recorded one; `exhausted`: every interaction was served already. */
  readonly reason: 'different' | 'exhausted';
  /** The differences found (all of them; the message shows the first few). Empty when `exhausted`. */
  readonly differences: readonly CassetteDifference[];
  /**
   * Always false: the same request would differ again. `toProviderError` reads it, so a run whose
   * provider passes this error through (the AI SDK does) does not retry it.
   */
  readonly retryable = false;

  constructor(
    message: string,
    details: { file: string; request: number; reason: 'different' | 'exhausted'; differences?: readonly CassetteDifference[] },
  ) {
    super(message);
    this.file = details.file;
    this.request = details.request;
    this.reason = details.reason;
    this.differences = details.differences ?? [];
  }
}
