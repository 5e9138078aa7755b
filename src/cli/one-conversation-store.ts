import type { ConversationStore } from '../host/conversation-store.js';
import { statusFilter } from '../host/list-options.js';

/**
 * The store as a host that must take over one conversation sees it: `list` knows that conversation
 * only, so `host.recover()` resumes it and no other run of the file — not another interrupted
 * one, not one a live process is running. Every other method is the store's own.
 *
 * @example
 * ```ts
 * const host = createConversationHost({ machine, store: oneConversationStore(store, 'c1') });
 * const { resumed } = await host.recover(); // ['c1'] when c1 was in flight, [] otherwise
 * ```
 */
export function oneConversationStore(store: ConversationStore, id: string): ConversationStore {
  return {
    load: (conversationId) => store.load(conversationId),
    save: (conversation, log) => store.save(conversation, log),
    readLog: (conversationId, options) => store.readLog(conversationId, options),
    delete: (conversationId) => store.delete(conversationId),
    close: () => store.close(),
    async list(options = {}) {
      if (options.after !== undefined && options.after >= id) return [];
      const stored = await store.load(id);
      const statuses = statusFilter(options.status);
      if (!stored || (statuses && !statuses.has(stored.status))) return [];
      const { status, revision, owner, updatedAt } = stored;
      return [{ id, status, revision, owner, updatedAt }];
    },
  };
}
