import type { ConversationContext } from '../names/types.js';

/**
 * A request attempt as it starts: nothing streamed, no response. Every way into `requesting` sets
 * it (the transitions, and the resume of a run restored mid-request); shared, since contexts are
 * never mutated.
 */
export const freshAttempt: Pick<ConversationContext, 'stream' | 'response'> = {
  stream: { partial: false, progressed: false, answerText: '', lastPartialJson: null },
  response: null,
};
