import { ActorloopError } from '../../errors/actorloop-error.js';

/**
 * No conversation with this id is stored: `host.result(id)`, or `host.send(id, event)` with an
 * event other than the `user.message` that starts a conversation.
 *
 * @example
 * ```ts
 * try {
 *   await host.result('c-404');
 * } catch (error) {
 *   if (ConversationNotFoundError.isInstance(error)) reply.status(404);
 * }
 * ```
 */
export class ConversationNotFoundError extends ActorloopError {
  static override readonly errorName = 'ConversationNotFoundError';
  readonly conversationId: string;

  constructor(conversationId: string, what: string) {
    super(`conversation ${JSON.stringify(conversationId)} does not exist: ${what}`);
    this.conversationId = conversationId;
  }
}
