import { ActorloopError } from '../errors/actorloop-error.js';

/**
 * The command does not apply to the conversation as it is — `resume` of a run that is not
 * interrupted, `cancel` of a run that already ended, `run --id` on a conversation whose run is in
 * flight — and changed nothing. The command prints its one-line message and exits 3.
 *
 * @example
 * ```ts
 * throw new CommandRefusedError('conversation "c1" is done: there is nothing to resume');
 * ```
 */
export class CommandRefusedError extends ActorloopError {
  static override readonly errorName = 'CommandRefusedError';
}
