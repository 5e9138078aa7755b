import type { ConversationStore } from './conversation-store.js';
import {
  type ConversationRelay,
  type ConversationStreamItem,
  compareStreamPositions,
  type FollowOptions,
  followsPosition,
  parseStreamId,
  type StreamObserver,
  type StreamPosition,
} from './conversation-stream.js';

/** What the hub needs from its host. */
export type StreamHubOptions = {
  store: ConversationStore;
  relay: ConversationRelay | undefined;
  /** The stream items of the run held in memory that are not stored yet, and where that run started (when it started here). */
  unwritten: (id: string) => { items: readonly ConversationStreamItem[]; runStartId: string | undefined } | undefined;
  report: (error: unknown, id: string) => void;
};

/** Relayed items kept per conversation, for readers that connect to this host after they were relayed. */
const relayedPerConversation = 2_000;
/** Conversations whose relayed items are kept (the ones relayed to most recently). */
const relayedConversations = 1_000;
/** Log entries read at once while replaying from the store. */
const replayPage = 500;

type Position = StreamPosition | undefined;

/** One reader of a conversation's stream: replays from the store, then goes live, never twice the same event. */
class Follower {
  private replaying = true;
  private held: ConversationStreamItem[] = [];
  private last: Position;
  closed = false;

  constructor(
    private readonly observer: StreamObserver,
    private readonly onNextError: (error: unknown) => void,
  ) {}

  /** A live item: held while the replay runs, then delivered in order. */
  offer(item: ConversationStreamItem): void {
    if (this.closed) return;
    if (this.replaying) this.held.push(item);
    else this.deliver(item);
  }

  /** The replayed items, then what came live meanwhile. */
  replayed(items: readonly ConversationStreamItem[]): void {
    for (const item of items) this.deliver(item);
    this.replaying = false;
    const held = this.held;
    this.held = [];
    for (const item of held) this.deliver(item);
  }

  fail(error: unknown): void {
    if (this.closed) return;
    this.closed = true;
    this.held = [];
    try {
      this.observer.error?.(error);
    } catch (thrown) {
      this.onNextError(thrown);
    }
  }

  private deliver(item: ConversationStreamItem): void {
    if (this.closed) return;
    const position = parseStreamId(item.id);
    if (!position || !followsPosition(position, this.last)) return;
    this.last = position;
    try {
      this.observer.next(item);
    } catch (error) {
      this.onNextError(error);
    }
  }
}

/**
 * The host's conversation streams: it hands each run's items to the readers following that
 * conversation, replays stored ones to a reader that starts from a position, and trades live items
 * with other hosts through a relay.
 */
export class StreamHub {
  private readonly followers = new Map<string, Set<Follower>>();
  private readonly relayed = new Map<string, ConversationStreamItem[]>();
  private readonly outgoing = new Map<string, ConversationStreamItem[]>();
  private readonly stopRelay: (() => void) | undefined;

  constructor(private readonly options: StreamHubOptions) {
    this.stopRelay = options.relay?.subscribe((id, items) => this.onRelayed(id, items));
  }

  /** An item a run of this host emitted. */
  emitted(id: string, item: ConversationStreamItem): void {
    const following = this.followers.get(id);
    if (following) for (const follower of following) follower.offer(item);
    if (!this.options.relay) return;
    const batch = this.outgoing.get(id);
    if (batch) batch.push(item);
    else {
      this.outgoing.set(id, [item]);
      // One publish per conversation for everything a macrostep emitted.
      if (this.outgoing.size === 1) queueMicrotask(() => this.flushRelay());
    }
  }

  follow(id: string, observer: StreamObserver, options: { after: string | undefined; from: FollowOptions['from'] }): () => void {
    const follower = new Follower(observer, (error) => this.options.report(error, id));
    let following = this.followers.get(id);
    if (!following) {
      following = new Set();
      this.followers.set(id, following);
    }
    following.add(follower);
    const remove = () => {
      const current = this.followers.get(id);
      if (!current) return;
      current.delete(follower);
      if (current.size === 0) this.followers.delete(id);
    };
    const stop = () => {
      follower.closed = true;
      remove();
    };
    if (options.after === undefined && options.from !== 'run') follower.replayed([]);
    else {
      this.replay(id, options).then(
        (items) => follower.replayed(items),
        (error: unknown) => {
          remove();
          follower.fail(error);
        },
      );
    }
    return stop;
  }

  /** Ends every reader with `error` and stops relaying. */
  async close(error: unknown): Promise<void> {
    for (const following of this.followers.values()) for (const follower of following) follower.fail(error);
    this.followers.clear();
    this.stopRelay?.();
    this.flushRelay();
    await this.options.relay?.close();
  }

  /**
   * The items a reader missed: stored ones, then the run's unstored ones held here or relayed, each
   * once, in order. Memory is read before the store, so an item is in one or the other whatever
   * write lands in between.
   */
  private async replay(id: string, options: { after: string | undefined; from: FollowOptions['from'] }): Promise<ConversationStreamItem[]> {
    const live = this.options.unwritten(id);
    const inMemory = [...(this.relayed.get(id) ?? []), ...(live?.items ?? [])];
    const stored = await this.readStored(id);
    const all = dedupe([...stored.items, ...inMemory]);
    if (options.after !== undefined) {
      const after = parseStreamId(options.after);
      if (!after) return all;
      // An id the stream never kept (its run stopped before the write): the reader gets that write's events again.
      const known = all.some((item) => item.id === options.after);
      const from: StreamPosition = known ? after : [after[0], 0, after[2]];
      return all.filter((item) => compareStreamPositions(positionOf(item), from) > 0);
    }
    const runStart = live?.runStartId ?? stored.lastRunStart;
    if (runStart === undefined) return [];
    const start = parseStreamId(runStart);
    return start ? all.filter((item) => compareStreamPositions(positionOf(item), start) >= 0) : [];
  }

  private async readStored(id: string): Promise<{ items: ConversationStreamItem[]; lastRunStart: string | undefined }> {
    const items: ConversationStreamItem[] = [];
    let lastRunStart: string | undefined;
    const { store } = this.options;
    if (!store.readStream) return { items, lastRunStart };
    let afterSeq = 0;
    for (;;) {
      const entries = await store.readStream(id, { afterSeq, limit: replayPage });
      for (const entry of entries) {
        afterSeq = entry.seq;
        if (entry.runStart && entry.items[0]) lastRunStart = entry.items[0].id;
        items.push(...entry.items);
      }
      if (entries.length < replayPage) return { items, lastRunStart };
    }
  }

  private onRelayed(id: string, items: readonly ConversationStreamItem[]): void {
    let kept = this.relayed.get(id);
    if (kept) this.relayed.delete(id);
    const tag = items.at(-1)?.id.split('.')[2];
    // A new run of the conversation (another tag) makes what was relayed before it stale.
    if (!kept || kept.at(-1)?.id.split('.')[2] !== tag) kept = [];
    kept.push(...items);
    if (kept.length > relayedPerConversation) kept.splice(0, kept.length - relayedPerConversation);
    this.relayed.set(id, kept);
    if (this.relayed.size > relayedConversations) {
      const oldest = this.relayed.keys().next().value;
      if (oldest !== undefined) this.relayed.delete(oldest);
    }
    const following = this.followers.get(id);
    if (following) for (const follower of following) for (const item of items) follower.offer(item);
  }

  private flushRelay(): void {
    const relay = this.options.relay;
    if (!relay || this.outgoing.size === 0) return;
    const batches = [...this.outgoing];
    this.outgoing.clear();
    for (const [id, items] of batches) {
      try {
        relay.publish(id, items);
      } catch (error) {
        this.options.report(error, id);
      }
    }
  }
}

function positionOf(item: ConversationStreamItem): StreamPosition {
  return parseStreamId(item.id) ?? [0, 0, ''];
}

/** Each id once, in stream order. */
function dedupe(items: ConversationStreamItem[]): ConversationStreamItem[] {
  const byId = new Map<string, ConversationStreamItem>();
  for (const item of items) if (!byId.has(item.id)) byId.set(item.id, item);
  return [...byId.values()].sort((a, b) => compareStreamPositions(positionOf(a), positionOf(b)));
}
