const marker = Symbol.for('actorloop.error.ConversationNotFoundError');

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
export class ConversationNotFoundError extends Error {
  override readonly name = 'ConversationNotFoundError';
  readonly conversationId: string;
  readonly [marker] = true;

  constructor(conversationId: string, what: string) {
    super(`conversation ${JSON.stringify(conversationId)} does not exist: ${what}`);
    this.conversationId = conversationId;
  }

  /** True for a ConversationNotFoundError, also one from another copy of this package. */
  static isInstance(error: unknown): error is ConversationNotFoundError {
    return typeof error === 'object' && error !== null && marker in error;
  }
}
