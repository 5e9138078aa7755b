import { ActorloopError } from '../errors/actorloop-error.js';

/**
 * A dataset an eval cannot use: a JSONL line that is not JSON or not an item, an item without an
 * input, two items with one id. `line` is the 1-based line of a JSONL file (absent for an array:
 * `index` then says which item).
 *
 * @example
 * ```ts
 * try {
 *   await loadDataset('cases.jsonl');
 * } catch (error) {
 *   if (DatasetError.isInstance(error)) console.error(`cases.jsonl:${error.line}: ${error.message}`);
 * }
 * ```
 */
export class DatasetError extends ActorloopError {
  static override readonly errorName = 'DatasetError';
  readonly line: number | undefined;
  readonly index: number | undefined;

  constructor(message: string, where: { line?: number; index?: number; source?: string }, options?: { cause?: unknown }) {
    const at = where.line !== undefined ? `${where.source ?? 'dataset'} line ${where.line}` : `dataset[${where.index ?? '?'}]`;
    super(`${at}: ${message}`, options);
    this.line = where.line;
    this.index = where.index;
  }
}
