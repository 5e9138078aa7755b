import type {
  ConversationLogEntry,
  ConversationStore,
  ConversationSummary,
  ListOptions,
  LogAppend,
  StoredConversation,
  StoredStep,
  StoredStreamEntry,
  StreamAppend,
} from './conversation-store.js';
import { ConversationConflictError } from './errors/conversation-conflict-error.js';
import { listLimit, statusFilter } from './list-options.js';
import { memoryStoreOptions, pruneStepsBelow } from './step-retention.js';
import type { SaveOptions } from './conversation-lease.js';
import type { StoredMedia } from './stored-media.js';

/**
 * What {@link memoryStore} takes.
 *
 * @example
 * ```ts
 * const store = memoryStore({ keepSteps: 50 });
 * ```
 */
export type MemoryStoreOptions = {
  /**
   * How many of a conversation's latest steps (one per write) to keep for `host.history` and
   * `host.fork`. Default: all of them, for the life of the conversation. `1` keeps the current step only.
   */
  keepSteps?: number;
};

/**
 * A {@link ConversationStore} in this process's memory: for tests, examples and single-process
 * services that need no restart. It keeps the same guarantees as a durable store (conditional
 * atomic saves, verbatim snapshots, log entries copied in and out as JSON), so code moves to
 * `sqliteStore` unchanged. Everything is lost when the process ends.
 *
 * @example
 * ```ts
 * import { createConversationHost, memoryStore } from 'actorloop';
 *
 * const host = createConversationHost({ machine, store: memoryStore() });
 * await host.send('c-1', { type: 'user.message', content: 'Hi' });
 * ```
 */
export function memoryStore(options: MemoryStoreOptions = {}): ConversationStore {
  const { keepSteps } = memoryStoreOptions(options);
  const conversations = new Map<string, StoredConversation>();
  /** Every kept write: the current one shares its snapshot string with `conversations`, so it costs no copy. */
  const steps = new Map<string, StoredConversation[]>();
  /** Log entries as JSON text, so nothing a caller holds can change what was logged. */
  const logs = new Map<string, Array<{ seq: number; at: number; event: string }>>();
  /** Stream entries likewise, one per write that carried stream items. */
  const streams = new Map<string, Array<{ seq: number; runStart: boolean; items: string }>>();
  /** Media by reference, once each, and the references each conversation holds (steps and log included). */
  const media = new Map<string, StoredMedia & { data: string }>();
  const mediaOf = new Map<string, Set<string>>();
  let nextSeq = 1;
  let closed = false;
  const open = (what: string) => {
    if (closed) throw new Error(`memoryStore: ${what} after close()`);
  };

  return {
    async load(id) {
      open('load');
      const stored = conversations.get(id);
      return stored ? { ...stored } : undefined;
    },
    async save(conversation: StoredConversation, log: readonly LogAppend[] = [], stream?: StreamAppend, options: SaveOptions = {}) {
      open('save');
      const storedRevision = conversations.get(conversation.id)?.revision ?? 0;
      if (storedRevision !== conversation.revision - 1) {
        throw new ConversationConflictError(conversation.id, conversation.revision - 1, storedRevision);
      }
      // Checked before anything is written: a reference to bytes the store never had leaves no half-save behind.
      for (const item of options.media ?? []) {
        if (item.data === undefined && !media.has(item.ref))
          throw new Error(`memoryStore: save refers to media ${item.ref}, which it was never given`);
      }
      for (const item of options.media ?? []) {
        if (item.data !== undefined && !media.has(item.ref))
          media.set(item.ref, { ref: item.ref, mediaType: item.mediaType, bytes: item.bytes, data: item.data });
        const held = mediaOf.get(conversation.id) ?? new Set<string>();
        held.add(item.ref);
        mediaOf.set(conversation.id, held);
      }
      // Serialised before anything is written, so a log entry that is not JSON leaves no half-save behind.
      const entries = log.map(({ at, event }) => ({ seq: 0, at, event: JSON.stringify(event) }));
      const streamed =
        stream && stream.items.length > 0 ? { seq: 0, runStart: stream.runStart === true, items: JSON.stringify(stream.items) } : undefined;
      for (const entry of entries) entry.seq = nextSeq++;
      if (streamed) {
        streamed.seq = nextSeq++;
        const existing = streams.get(conversation.id) ?? [];
        // A new run: the stream of the run before it stays, older ones go.
        const previousRun = streamed.runStart ? existing.findLastIndex((entry) => entry.runStart) : -1;
        const kept = previousRun > 0 ? existing.slice(previousRun) : existing;
        kept.push(streamed);
        streams.set(conversation.id, kept);
      }
      const copy = { ...conversation };
      conversations.set(conversation.id, copy);
      const kept = steps.get(conversation.id) ?? [];
      kept.push(copy);
      steps.set(conversation.id, pruneStepsBelow(kept, copy.revision, keepSteps));
      if (entries.length > 0) {
        const existing = logs.get(conversation.id);
        if (existing) existing.push(...entries);
        else logs.set(conversation.id, entries);
      }
    },
    async readLog(id, options = {}): Promise<ConversationLogEntry[]> {
      open('readLog');
      const afterSeq = options.afterSeq ?? 0;
      const limit = listLimit(options.limit, 'readLog');
      const entries = (logs.get(id) ?? []).filter((entry) => entry.seq > afterSeq).slice(0, limit);
      return entries.map(({ seq, at, event }) => ({ seq, at, event: JSON.parse(event) as ConversationLogEntry['event'] }));
    },
    async readStream(id, options = {}): Promise<StoredStreamEntry[]> {
      open('readStream');
      const afterSeq = options.afterSeq ?? 0;
      const limit = listLimit(options.limit, 'readLog');
      const entries = (streams.get(id) ?? []).filter((entry) => entry.seq > afterSeq).slice(0, limit);
      return entries.map(({ seq, runStart, items }) => ({
        seq,
        items: JSON.parse(items) as StoredStreamEntry['items'],
        ...(runStart ? { runStart: true as const } : {}),
      }));
    },
    async readSteps(id, options = {}): Promise<StoredStep[]> {
      open('readSteps');
      const afterSeq = options.afterSeq ?? 0;
      const limit = listLimit(options.limit, 'readLog');
      return (steps.get(id) ?? [])
        .filter((step) => step.revision > afterSeq)
        .slice(0, limit)
        .map(({ revision, updatedAt, status, state }) => ({
          seq: revision,
          at: updatedAt,
          status,
          ...(state === undefined ? {} : { state }),
        }));
    },
    async loadStep(id, seq) {
      open('loadStep');
      const step = steps.get(id)?.find((kept) => kept.revision === seq);
      return step ? { ...step } : undefined;
    },
    async list(options: ListOptions = {}): Promise<ConversationSummary[]> {
      open('list');
      const statuses = statusFilter(options.status);
      const limit = listLimit(options.limit, 'list');
      const after = options.after;
      return [...conversations.values()]
        .filter((stored) => (statuses === undefined || statuses.has(stored.status)) && (after === undefined || stored.id > after))
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, limit)
        .map(({ id, status, revision, owner, updatedAt }) => ({ id, status, revision, owner, updatedAt }));
    },
    async readMedia(ref) {
      open('readMedia');
      const found = media.get(ref);
      return found ? { ...found } : undefined;
    },
    async delete(id) {
      open('delete');
      const held = mediaOf.get(id);
      mediaOf.delete(id);
      // A medium goes with the last conversation that refers to it.
      for (const ref of held ?? []) if (![...mediaOf.values()].some((refs) => refs.has(ref))) media.delete(ref);
      logs.delete(id);
      streams.delete(id);
      steps.delete(id);
      return conversations.delete(id);
    },
    async close() {
      closed = true;
    },
  };
}
