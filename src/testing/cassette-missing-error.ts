import { ActorloopError } from '../errors/actorloop-error.js';

/**
 * `replayTraffic` in mode `'replay'` (the default) found no cassette file. Thrown when the replaying
 * `fetch` is created, before any request: record the cassette first (`recordTraffic`, or
 * `replayTraffic` with `mode: 'auto'` once with a real key), then commit it.
 *
 * @example
 * ```ts
 * try {
 *   replayTraffic({ dir: 'test/cassettes', name: 'weather' });
 * } catch (error) {
 *   if (CassetteMissingError.isInstance(error)) console.error(`record ${error.file} first`);
 * }
 * ```
 */
export class CassetteMissingError extends ActorloopError {
  static override readonly errorName = 'CassetteMissingError';
  /** The cassette file that does not exist. */
  readonly file: string;

  constructor(file: string) {
    super(
      `Cassette ${file} does not exist: record it once against the real provider (recordTraffic, or replayTraffic with mode: 'auto'), then commit it`,
    );
    this.file = file;
  }
}
