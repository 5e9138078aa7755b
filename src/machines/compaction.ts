import { fromPromise } from 'xstate';
import type { Message } from '../model/messages.js';
import type { ResolvedOptions } from './options.js';
import type { ConversationContext } from './types.js';

/** What the compaction actor is given: the oldest messages, and who asks. */
export type CompactionInput = { messages: Message[]; agent?: string; sessionData?: unknown };

/** What a compaction gives back: the messages that replace the oldest ones. */
export type CompactionOutput = { messages: Message[] };

export function compactionInput(context: ConversationContext): CompactionInput {
  return { messages: context.messages.slice(0, 0) };
}

export function createCompactionLogic(_settings: ResolvedOptions) {
  return fromPromise<CompactionOutput, CompactionInput>(async () => ({ messages: [] }));
}
