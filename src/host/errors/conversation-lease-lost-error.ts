import { ActorloopError } from '../../errors/actorloop-error.js';

/**
 * A write was refused because the writer no longer holds the conversation's lease: another host
 * took it over after it lapsed (or the write carried no lease while another host holds one).
 * Nothing was written. The host that gets it lets go of its copy of the run (`write.failed`); the
 * lease's holder carries on from what is stored.
 *
 * @example
 * ```ts
 * host.subscribe('c-42', (event) => {
 *   if (event.type === 'write.failed' && event.error.name === 'ConversationLeaseLostError') console.warn('another host took over');
 * });
 * ```
 */
export class ConversationLeaseLostError extends ActorloopError {
  static override readonly errorName = 'ConversationLeaseLostError';
  readonly conversationId: string;
  /** The fencing token the refused write carried (`undefined`: it carried none). */
  readonly token: number | undefined;

  constructor(conversationId: string, token: number | undefined, detail: string) {
    super(
      `conversation ${JSON.stringify(conversationId)}: ${token === undefined ? 'a write without a lease' : `the lease (token ${token})`} ` +
        `was refused, nothing written: ${detail}`,
    );
    this.conversationId = conversationId;
    this.token = token;
  }
}
