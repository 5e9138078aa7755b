const marker = Symbol.for('actorloop.error.RunStoppedError');

/**
 * `output$` fails with this when the actor was stopped (`actor.stop()`) before its run reached a
 * final state: there is no `RunOutput` to give. A run that ends on its own always has one.
 *
 * @example
 * ```ts
 * output$(actor).subscribe({ error: (error) => RunStoppedError.isInstance(error) && console.warn('stopped early') });
 * ```
 */
export class RunStoppedError extends Error {
  override readonly name = 'RunStoppedError';
  readonly [marker] = true;

  constructor() {
    super('the conversation actor was stopped before its run reached a final state, so there is no RunOutput');
  }

  /** True for a RunStoppedError, also one from another copy of this package. */
  static isInstance(error: unknown): error is RunStoppedError {
    return typeof error === 'object' && error !== null && marker in error;
  }
}
