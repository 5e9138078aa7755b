import type { ConversationContext, ConversationEmittedEvent } from './types.js';

/**
 * What an action does, as data: the context change and the events to emit, in order. Pure
 * functions return it so they can be tested without an actor; the action only applies it.
 */
export type Effects = {
  context?: Partial<ConversationContext>;
  emitted?: readonly ConversationEmittedEvent[];
};

/** No change, no event: shared, since effects are never mutated. */
export const noEffects: Effects = Object.freeze({});
