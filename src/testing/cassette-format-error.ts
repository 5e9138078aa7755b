import { ActorloopError } from '../errors/actorloop-error.js';

/**
 * A cassette file that cannot be replayed: not JSON, or a field of the recorded format missing or
 * of the wrong type. `file` is the cassette's path and `field` the JSON path of the problem
 * (`interactions[2].response.status`), both also in the message, so a hand-edited or truncated
 * cassette is found at once.
 *
 * @example
 * ```ts
 * try {
 *   replayTraffic({ dir: 'test/cassettes', name: 'weather' });
 * } catch (error) {
 *   if (CassetteFormatError.isInstance(error)) console.error(error.file, error.field);
 * }
 * ```
 */
export class CassetteFormatError extends ActorloopError {
  static override readonly errorName = 'CassetteFormatError';
  /** The cassette file. */
  readonly file: string;
  /** Where in it: a JSON path such as `interactions[0].response.body`, or `''` for the whole file. */
  readonly field: string;

  constructor(file: string, field: string, problem: string, options?: { cause?: unknown }) {
    super(`Cassette ${file}${field === '' ? '' : ` field ${field}`}: ${problem}`, options);
    this.file = file;
    this.field = field;
  }
}
