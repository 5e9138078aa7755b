import { ActorloopError } from '../../errors/actorloop-error.js';

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
export class HostClosedError extends ActorloopError {
  static override readonly errorName = 'HostClosedError';

  constructor(what: string) {
    super(`the conversation host is closed: ${what}`);
  }
}
