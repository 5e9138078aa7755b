import { ActorloopError } from '../../errors/actorloop-error.js';

/**
 * A conversation with this id is already stored: `host.fork(id, { newId })` never writes over one.
 *
 * @example
 * ```ts
 * try {
 *   await host.fork('c-42', { seq: 3, newId: 'c-43' });
 * } catch (error) {
 *   if (ConversationExistsError.isInstance(error)) reply.status(409);
 * }
 * ```
 */
export class ConversationExistsError extends ActorloopError {
  static override readonly errorName = 'ConversationExistsError';
  readonly conversationId: string;

  constructor(conversationId: string, what: string) {
    super(`conversation ${JSON.stringify(conversationId)} already exists: ${what}`);
    this.conversationId = conversationId;
  }
}
