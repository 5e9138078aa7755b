import type { ConversationContext } from '../names/types.js';

/** The end a run is marked with on entering a final state. */
export function outcomeMarked(outcome: ConversationContext['outcome'], status: 'done' | 'halted' | 'error'): Partial<ConversationContext> {
  if (status === 'halted') return { outcome: { ...outcome, status, reason: outcome.reason ?? 'cancelled' } };
  return { outcome: { ...outcome, status } };
}

/** A halt with its reason (and, for a tool's `HaltError`, the text it halted with). */
export function haltRecorded(outcome: ConversationContext['outcome'], reason: string, finalText?: string): Partial<ConversationContext> {
  return { outcome: { ...outcome, status: 'halted', reason, ...(finalText === undefined ? {} : { finalText }) } };
}
