import { ActorloopError } from '../../errors/actorloop-error.js';

/**
 * The conversation exists but has no stored step `seq`: it was never written, or the store no
 * longer keeps it (`keepSteps`). `host.get(id, { seq })` and `host.fork(id, { seq, newId })`.
 *
 * @example
 * ```ts
 * try {
 *   await host.fork('c-42', { seq: 99, newId: 'c-42-what-if' });
 * } catch (error) {
 *   if (ConversationStepNotFoundError.isInstance(error)) console.log(error.message, error.availableSeqs);
 * }
 * ```
 */
export class ConversationStepNotFoundError extends ActorloopError {
  static override readonly errorName = 'ConversationStepNotFoundError';
  readonly conversationId: string;
  readonly seq: number;
  /** The first and last step the store keeps (`[first, last]`), to say what would have been found. */
  readonly availableSeqs: readonly [number, number] | undefined;

  constructor(conversationId: string, seq: number, availableSeqs: readonly [number, number] | undefined) {
    super(
      `conversation ${JSON.stringify(conversationId)} has no stored step ${seq}` +
        (availableSeqs ? `: the store keeps steps ${availableSeqs[0]} to ${availableSeqs[1]} (see host.history)` : ''),
    );
    this.conversationId = conversationId;
    this.seq = seq;
    this.availableSeqs = availableSeqs;
  }
}
