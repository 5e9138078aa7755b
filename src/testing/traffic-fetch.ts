import type { FetchFunction } from '../providers/transport/fetch-function.js';
import type { CassetteRequest } from './cassette.js';
import type { CassetteMismatchError } from './cassette-mismatch-error.js';

/**
 * The `fetch` that {@link recordTraffic} and {@link replayTraffic} return: pass it as a provider's
 * `fetch` option. Besides being called, it tells where its cassette is, what it received, and (when
 * recording) waits for the responses still streaming.
 *
 * @example
 * ```ts
 * const replay: TrafficFetch = replayTraffic({ dir: 'test/cassettes', name: 'weather' });
 * const provider = openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-replay', fetch: replay });
 * // … run the conversation …
 * expect(replay.remaining()).toBe(0);
 * ```
 */
export type TrafficFetch = FetchFunction & {
  /** The cassette file, `<dir>/<name>.json`, absolute. */
  readonly cassette: string;
  /** `record` when this fetch sends to the real provider and writes the cassette; `replay` when it answers from it. */
  readonly mode: 'record' | 'replay';
  /** The requests received so far, as the cassette records them (no host, no headers, secrets replaced). */
  readonly requests: readonly CassetteRequest[];
  /** Requests that the cassette could not answer (replay only), in order. */
  readonly mismatches: readonly CassetteMismatchError[];
  /** Interactions of the cassette not served yet (replay); 0 when recording. */
  remaining(): number;
  /**
   * Waits for the responses still being read and writes the cassette (recording); resolves at once
   * when replaying. Each interaction is written as soon as its body ends, so calling this is only
   * needed before reading the file while a stream may still be open.
   */
  flush(): Promise<void>;
};

/** A `fetch` with the members of {@link TrafficFetch}. */
export function trafficFetch(call: FetchFunction, members: Omit<TrafficFetch, keyof FetchFunction>): TrafficFetch {
  const bound: FetchFunction = (input, init) => call(input, init);
  for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(members))) Object.defineProperty(bound, key, descriptor);
  return bound as TrafficFetch;
}
