import { ActorloopError } from '../../errors/actorloop-error.js';

/**
 * Why `host.send` did not apply an event: `rejected` — the run cannot take it now (a second
 * `user.message` during a run, an approval for a call that is not waiting, an empty message; the
 * same cases the machine answers with `event.rejected`); `busy` — the conversation is running in
 * another host, or was left running by a process that stopped and has not been recovered yet.
 */
export type EventRejectedCode = 'rejected' | 'busy';

/**
 * `host.send` did not apply the event; nothing was stored. `code` says why, the message says what
 * the run was doing.
 *
 * @example
 * ```ts
 * try {
 *   await host.send('c-42', { type: 'user.message', content: 'and now?' });
 * } catch (error) {
 *   if (EventRejectedError.isInstance(error) && error.code === 'rejected') console.warn(error.message); // still answering
 * }
 * ```
 */
export class EventRejectedError extends ActorloopError {
  static override readonly errorName = 'EventRejectedError';
  readonly code: EventRejectedCode;
  readonly conversationId: string;
  /** The type of the event that was not applied. */
  readonly eventType: string;

  constructor(options: { conversationId: string; eventType: string; code: EventRejectedCode; message: string }) {
    super(`conversation ${JSON.stringify(options.conversationId)}: ${options.message}`);
    this.code = options.code;
    this.conversationId = options.conversationId;
    this.eventType = options.eventType;
  }
}
