const marker = Symbol.for('actorloop.error.HostClosedError');

/**
 * The host was closed: `send`, `get`, `result` and `recover` after `close()` reject with it, and so
 * does a `result` still waiting when the host closes (the run stays stored and resumes at the next
 * `recover()`).
 *
 * @example
 * ```ts
 * await host.close();
 * await host.get('c-42').catch((error) => HostClosedError.isInstance(error)); // true
 * ```
 */
export class HostClosedError extends Error {
  override readonly name = 'HostClosedError';
  readonly [marker] = true;

  constructor(what: string) {
    super(`the conversation host is closed: ${what}`);
  }

  /** True for a HostClosedError, also one from another copy of this package. */
  static isInstance(error: unknown): error is HostClosedError {
    return typeof error === 'object' && error !== null && marker in error;
  }
}
