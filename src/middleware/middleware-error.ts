import { ActorloopError } from '../errors/actorloop-error.js';

/**
 * A request middleware broke its contract: it called `next` twice, or returned something other
 * than an async iterable of provider events. The attempt fails (not retried) and the run ends in
 * `error` naming the middleware; nothing is thrown out of the actor.
 *
 * @example
 * ```ts
 * if (output.status === 'error' && output.error?.name === 'MiddlewareError') console.error(output.error.message);
 * ```
 */
export class MiddlewareError extends ActorloopError {
  static override readonly errorName = 'MiddlewareError';
  /** Position of the offending middleware in the `middleware` option. */
  readonly index: number;

  constructor(index: number, message: string) {
    super(`middleware[${index}]: ${message}`);
    this.index = index;
  }
}
