import type { ContextCompactedEvent, RunOutput, ToolCallEvent, ToolResultEvent } from '../machines/hostable.js';
import type { Message, UserMessage } from '../model/messages.js';
import type { ConversationLease, SaveOptions } from './conversation-lease.js';
import type { ConversationStatus } from './conversation-status.js';
import type { ConversationStreamItem } from './conversation-stream.js';
import type { StoredMedia } from './stored-media.js';

export type { ConversationStatus } from './conversation-status.js';

/**
 * One conversation as a store keeps it: the persisted snapshot of its current (or last) run as JSON
 * text, and what a store needs to list it and to refuse a stale write.
 *
 * @example
 * ```ts
 * const stored: StoredConversation | undefined = await store.load('c-42');
 * if (stored) console.log(stored.status, stored.revision, Buffer.byteLength(stored.snapshot));
 * ```
 */
export type StoredConversation = {
  id: string;
  /**
   * The schema version of `snapshot` (the host's `currentSchemaVersion` when it wrote it). A host
   * upgrades older ones when it loads them and refuses newer ones; stores keep it as given.
   * (Called `version` up to actorloop 0.1; a host still reads a record that has only `version`.)
   */
  schemaVersion: number;
  /** The id of the machine the snapshot belongs to. */
  machineId: string;
  status: ConversationStatus;
  /** `JSON.stringify(actor.getPersistedSnapshot())` of the run. Stores keep it verbatim. */
  snapshot: string;
  /** 1 for the first write, one more on each write after; `save` refuses any other number. */
  revision: number;
  /** The host that wrote it last (`ConversationHostOptions.hostId`). */
  owner: string;
  /** When it was written (epoch milliseconds). */
  updatedAt: number;
  /**
   * The snapshot's state value as JSON text (`'{"executingTools":"running"}'`), written by the
   * host so a store can list a conversation's steps without parsing snapshots. Optional: a record
   * without it (an older store, a hand-written one) is still read.
   */
  state?: string;
};

/**
 * What the event log records: the events a caller sent that the run took, every tool call and
 * its result, and how each run ended.
 *
 * @example
 * ```ts
 * const charges = (await store.readLog('c-42')).filter(({ event }) => event.type === 'tool.result' && event.name === 'charge');
 * ```
 */
export type ConversationLogEvent =
  | { type: 'user.message'; content: UserMessage['content'] }
  | { type: 'user.interrupt'; content: UserMessage['content'] }
  | { type: 'tool.approve'; toolCallId: string }
  | { type: 'tool.deny'; toolCallId: string; reason?: string }
  | { type: 'cancel'; reason?: string }
  | ToolCallEvent
  | ToolResultEvent
  | ContextCompactedLogEvent
  | RunEndedLogEvent;

/**
 * The oldest messages gave way to a summary (or were dropped): the log keeps them, so the
 * conversation's whole transcript stays readable after compaction.
 *
 * @example
 * ```ts
 * const earlier = (await store.readLog('c-42')).flatMap(({ event }) => (event.type === 'context.compacted' ? event.removed : []));
 * ```
 */
export type ContextCompactedLogEvent = ContextCompactedEvent & { removed: Message[] };

/**
 * A run ended: its `RunOutput` without the history (the snapshot holds that).
 *
 * @example
 * ```ts
 * const ended = (await store.readLog('c-42')).map(({ event }) => event).filter((event): event is RunEndedLogEvent => event.type === 'run.ended');
 * ```
 */
export type RunEndedLogEvent = { type: 'run.ended' } & Omit<RunOutput, 'messages'>;

/**
 * One event to append to a conversation's log, with the time it happened (epoch milliseconds).
 *
 * @example
 * ```ts
 * const append: LogAppend = { at: Date.now(), event: { type: 'user.message', content: 'Hi' } };
 * ```
 */
export type LogAppend = { at: number; event: ConversationLogEvent };

/**
 * A log entry as stored: `seq` grows with every entry a store writes (across conversations too),
 * so it orders a conversation's entries and lets a reader continue after the last one it saw.
 *
 * @example
 * ```ts
 * let seen = 0;
 * for (const entry of await store.readLog('c-42', { afterSeq: seen })) seen = entry.seq;
 * ```
 */
export type ConversationLogEntry = LogAppend & { seq: number };

/**
 * A conversation as `list` gives it: enough to pick what to load.
 *
 * @example
 * ```ts
 * const waiting: ConversationSummary[] = await store.list({ status: 'awaitingApproval' });
 * ```
 */
export type ConversationSummary = Pick<StoredConversation, 'id' | 'status' | 'revision' | 'owner' | 'updatedAt'>;

/**
 * What `list` selects: conversations in one of `status` (all when absent), ordered by id, at most
 * `limit` (default 1000) after the id `after` (for paging).
 *
 * @example
 * ```ts
 * const page = await store.list({ status: ['running'], after: lastId, limit: 100 });
 * ```
 */
export type ListOptions = {
  status?: ConversationStatus | readonly ConversationStatus[];
  after?: string;
  limit?: number;
};

/**
 * The stream items (text deltas, tool calls, state changes…) a run emitted since the previous write,
 * stored with the write that follows them, so any process can replay a conversation's stream
 * (`host.follow(id, observer, { after })`). `runStart` marks the first write of a run.
 *
 * @example
 * ```ts
 * await store.save(conversation, log, { items: [{ id: '3.1.k2x9', event: { type: 'text.delta', delta: 'Hi' } }] });
 * ```
 */
export type StreamAppend = { items: readonly ConversationStreamItem[]; runStart?: true };

/**
 * One write's stream items as stored: `seq` grows with every entry the store writes, like the log's.
 *
 * @example
 * ```ts
 * const text = (await store.readStream?.('c-42') ?? [])
 *   .flatMap(({ items }) => items)
 *   .map(({ event }) => (event.type === 'text.delta' ? event.delta : ''))
 *   .join('');
 * ```
 */
export type StoredStreamEntry = { seq: number; items: ConversationStreamItem[]; runStart?: true };

/**
 * One stored step of a conversation, as `readSteps` lists it: the write of revision `seq`, when it
 * was written, the status and the state (as JSON text) it stored. Its snapshot is `loadStep(id, seq)`.
 *
 * @example
 * ```ts
 * const steps: StoredStep[] = (await store.readSteps?.('c-42')) ?? [];
 * const waiting = steps.filter((step) => step.status === 'awaitingApproval').map((step) => step.seq);
 * ```
 */
export type StoredStep = { seq: number; at: number; status: ConversationStatus; state?: string };

/**
 * Where a conversation host keeps conversations: one snapshot per conversation and an
 * append-only event log. `memoryStore()` keeps them in the process, `sqliteStore({ path })` (from
 * `actorloop/sqlite`) in one SQLite file; any database fits behind these methods.
 *
 * What a store must guarantee:
 * - `save` is atomic and conditional: the snapshot and the log entries are written together or
 *   not at all, and only when the stored revision is `conversation.revision - 1` (no conversation
 *   at all for revision 1); otherwise it rejects with `ConversationConflictError` and writes nothing.
 *   A crash during a save leaves the previous snapshot readable.
 * - Snapshots are kept verbatim: a store never parses or rewrites them, so a bad one stays as it
 *   was for inspection.
 *
 * @example
 * ```ts
 * const store: ConversationStore = memoryStore();
 * const host = createConversationHost({ machine, store });
 * ```
 */
export interface ConversationStore {
  /** The stored conversation, or `undefined` when there is none with this id. */
  load(id: string): Promise<StoredConversation | undefined>;
  /**
   * Writes the conversation's snapshot and appends `log` to its event log, in one atomic step, if
   * the stored revision is the one before `conversation.revision`. A store that keeps streams
   * (`readStream`) writes `stream` in the same step. A store that hands out leases checks
   * `options.lease` in the same step too (`ConversationLeaseLostError` when it is no longer held).
   */
  save(conversation: StoredConversation, log?: readonly LogAppend[], stream?: StreamAppend, options?: SaveOptions): Promise<void>;
  /** The conversation's event log in order, after `afterSeq` (exclusive), at most `limit` entries. */
  readLog(id: string, options?: { afterSeq?: number; limit?: number }): Promise<ConversationLogEntry[]>;
  /**
   * Optional: the conversation's stored stream entries in order, after `afterSeq` (exclusive), at
   * most `limit`. A store without it keeps no streams: readers then replay from the host's memory only.
   * A store keeps the stream of the last two runs: a save whose stream has `runStart` drops the
   * entries before the previous `runStart` entry (in the same transaction).
   */
  readStream?(id: string, options?: { afterSeq?: number; limit?: number }): Promise<StoredStreamEntry[]>;
  /**
   * Optional: the conversation's stored steps (one per write: `seq` is the revision written) in
   * order, after `afterSeq` (exclusive), at most `limit`. A store without it keeps the current step
   * only: `host.history` then lists that one, and `host.fork` forks from it.
   */
  readSteps?(id: string, options?: { afterSeq?: number; limit?: number }): Promise<StoredStep[]>;
  /** Optional, with `readSteps`: the conversation as the write of revision `seq` stored it, or `undefined` when that step is not kept. */
  loadStep?(id: string, seq: number): Promise<StoredConversation | undefined>;
  /**
   * Optional, for stores shared by several host processes: the conversation's lease for `owner`,
   * for `ttlMs`, when no other owner holds a lease that has not lapsed; `undefined` when one does.
   * A host that finds this method applies events only to conversations whose lease it holds.
   */
  acquireLease?(id: string, owner: string, ttlMs: number): Promise<ConversationLease | undefined>;
  /** Optional: extends a lease by `ttlMs` from now; `undefined` when another holder took the conversation over. */
  renewLease?(lease: ConversationLease, ttlMs: number): Promise<ConversationLease | undefined>;
  /** Optional: gives a lease up so another host may take the conversation at once (nothing when it is no longer held). */
  releaseLease?(lease: ConversationLease): Promise<void>;
  /** Conversations by id (see {@link ListOptions}). */
  list(options?: ListOptions): Promise<ConversationSummary[]>;
  /** Removes the conversation and its log; `false` when there was none. */
  delete(id: string): Promise<boolean>;
  /**
   * Optional: the store keeps media once, by content (`sha256:…`). The host then writes snapshots,
   * steps, the log and stream entries with references (`{ type, ref, mediaType, bytes }`) and hands
   * the bytes over in `SaveOptions.media`; this reads a medium back (`data` is its base64). Media
   * no stored conversation refers to any more are deleted with the last one that did.
   */
  readMedia?(ref: string): Promise<StoredMedia | undefined>;
  /** Releases what the store holds (a file handle); the store is unusable after. */
  close(): Promise<void>;
}
