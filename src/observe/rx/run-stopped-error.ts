import { ActorloopError } from '../../errors/actorloop-error.js';

/**
 * `output$` fails with this when the actor was stopped (`actor.stop()`) before its run reached a
 * final state: there is no `RunOutput` to give. A run that ends on its own always has one.
 *
 * @example
 * ```ts
 * output$(actor).subscribe({ error: (error) => RunStoppedError.isInstance(error) && console.warn('stopped early') });
 * ```
 */
export class RunStoppedError extends ActorloopError {
  static override readonly errorName = 'RunStoppedError';

  constructor() {
    super('the conversation actor was stopped before its run reached a final state, so there is no RunOutput');
  }
}
