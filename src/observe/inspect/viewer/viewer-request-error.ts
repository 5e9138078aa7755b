import { ActorloopError } from '../../../errors/actorloop-error.js';

/**
 * A viewer request refused: answered as `application/problem+json` with this status, naming what
 * was wrong (`field`: the part of the request it is about).
 *
 * @example
 * ```ts
 * throw new ViewerRequestError(400, 'seq: expected an integer ≥ 0, got "x"', 'seq');
 * ```
 */
export class ViewerRequestError extends ActorloopError {
  static override readonly errorName = 'ViewerRequestError';
  readonly status: number;
  readonly field: string | undefined;
  readonly headers: Record<string, string>;

  constructor(status: number, detail: string, field?: string, headers: Record<string, string> = {}) {
    super(detail);
    this.status = status;
    this.field = field;
    this.headers = headers;
  }
}
