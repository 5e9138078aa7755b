import { ActorloopError } from '../../errors/actorloop-error.js';

/**
 * A store refused a write because the conversation changed since it was read: another host wrote
 * it (or deleted it) in between. Stores throw it from `save`; the host that gets it lets go of its
 * copy of the run, whose stored state is the other host's.
 *
 * @example
 * ```ts
 * try {
 *   await host.send('c-42', { type: 'tool.approve', toolCallId });
 * } catch (error) {
 *   if (ConversationConflictError.isInstance(error)) console.warn('approved elsewhere first:', error.message);
 * }
 * ```
 */
export class ConversationConflictError extends ActorloopError {
  static override readonly errorName = 'ConversationConflictError';
  readonly conversationId: string;
  /** The revision the write was based on (0: the conversation was expected not to exist). */
  readonly expectedRevision: number;
  /** The revision found in the store (0: no such conversation). */
  readonly storedRevision: number;

  constructor(conversationId: string, expectedRevision: number, storedRevision: number) {
    super(
      `conversation ${JSON.stringify(conversationId)} was changed by another writer: expected revision ${expectedRevision}, ` +
        `the store has ${storedRevision === 0 ? 'no such conversation' : `revision ${storedRevision}`}`,
    );
    this.conversationId = conversationId;
    this.expectedRevision = expectedRevision;
    this.storedRevision = storedRevision;
  }
}
