const marker = Symbol.for('actorloop.error.MiddlewareError');

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
export class MiddlewareError extends Error {
  override readonly name = 'MiddlewareError';
  /** Position of the offending middleware in the `middleware` option. */
  readonly index: number;
  readonly [marker] = true;

  constructor(index: number, message: string) {
    super(`middleware[${index}]: ${message}`);
    this.index = index;
  }

  /** True for a MiddlewareError, also one from another copy of this package. */
  static isInstance(error: unknown): error is MiddlewareError {
    return typeof error === 'object' && error !== null && marker in error;
  }
}
