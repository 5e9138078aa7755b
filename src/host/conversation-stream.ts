import type { ConversationEmittedEvent, ConversationStateValue, RunOutput } from '../machines/hostable.js';
import type { ConversationStatus } from './conversation-status.js';

/**
 * A state change as a conversation's stream carries it: where the run is, and the run's output
 * (without the history) on the change that ends it. The history itself is not streamed:
 * `host.get(id)` has it.
 *
 * @example
 * ```ts
 * host.follow('c-42', { next: ({ event }) => event.type === 'state' && console.log(event.status) });
 * ```
 */
export type StreamStateEvent = {
  type: 'state';
  value: ConversationStateValue;
  status: ConversationStatus;
  output?: Omit<RunOutput, 'messages'>;
};

/**
 * What a conversation's stream carries: every event its runs emit (text deltas included) and
 * every state change.
 *
 * @example
 * ```ts
 * const text = (event: ConversationStreamEvent) => (event.type === 'text.delta' ? event.delta : '');
 * ```
 */
export type ConversationStreamEvent = ConversationEmittedEvent | StreamStateEvent;

/**
 * One event of a conversation's stream with its id. Ids are the same in every process that serves
 * the conversation and grow through the conversation's life: `"<revision>.<n>.<tag>"`, the n-th event
 * of the write of stored revision `<revision>`, `<tag>` naming the process's run that emitted it (a
 * run that stopped before its write landed gave out ids the store never kept; the tag tells them
 * apart). A reader that kept the last id it saw continues after it (`follow(id, observer, { after })`,
 * SSE's `Last-Event-ID`).
 *
 * @example
 * ```ts
 * let lastEventId: string | undefined;
 * host.follow('c-42', { next: (item: ConversationStreamItem) => { lastEventId = item.id; } });
 * ```
 */
export type ConversationStreamItem = { id: string; event: ConversationStreamEvent };

/**
 * Where `host.follow` starts:
 * - `after`: the id of the last event the reader saw; it gets every event after it (stored ones
 *   first, then live ones), across processes and restarts, as long as the store keeps them.
 * - `from: 'run'`: the run in progress (or the last run, when none is) from its first event.
 * - neither: from now on (`host.get` gives where the conversation stands).
 *
 * @example
 * ```ts
 * const stop = host.follow('c-42', { next: send }, { after: request.headers.get('last-event-id') ?? undefined });
 * ```
 */
export type FollowOptions = { after?: string; from?: 'now' | 'run' };

/**
 * Receives a followed conversation's events. `error` is called at most once, when the stored
 * events cannot be read (the store failed) or the host closed; nothing follows it.
 *
 * @example
 * ```ts
 * const observer: StreamObserver = { next: ({ id, event }) => write(id, event), error: (error) => end(error) };
 * ```
 */
export type StreamObserver = {
  next: (item: ConversationStreamItem) => void;
  error?: (error: unknown) => void;
};

/**
 * Relays live stream events between hosts that share one store, so a reader may follow a
 * conversation from any of them (`postgresRelay` from `actorloop/postgres` uses LISTEN/NOTIFY).
 * Delivery is best effort: what a relay loses, the store has once the next write lands.
 *
 * @example
 * ```ts
 * const host = createConversationHost({ machine, store, relay: myRelay });
 * ```
 */
export interface ConversationRelay {
  /** Sends the events this host's runs emitted to the other hosts. Must not throw. */
  publish(conversationId: string, items: readonly ConversationStreamItem[]): void;
  /** Calls `listener` with the events other hosts published. Returns the function that stops it. */
  subscribe(listener: (conversationId: string, items: readonly ConversationStreamItem[]) => void): () => void;
  /** Stops relaying; called by `host.close()`. */
  close(): Promise<void>;
}

/** A stream id taken apart: `[revision, n, tag]`. */
export type StreamPosition = readonly [revision: number, n: number, tag: string];

/** Parses a stream id; `undefined` when it is not one. */
export function parseStreamId(id: string): StreamPosition | undefined {
  const match = /^(\d{1,15})\.(\d{1,15})\.([a-z0-9]{1,16})$/.exec(id);
  if (!match) return undefined;
  return [Number(match[1]), Number(match[2]), match[3] as string];
}

/** Orders stream positions by revision, then number (the tag does not order): negative when `a` comes first. */
export function compareStreamPositions(a: StreamPosition, b: StreamPosition): number {
  return a[0] - b[0] || a[1] - b[1];
}

/**
 * Whether `next` is news to a reader that last saw `last`: later in the stream, or the same write
 * emitted again by another run of the process (the one `last` came from stopped before its write).
 */
export function followsPosition(next: StreamPosition, last: StreamPosition | undefined): boolean {
  if (!last) return true;
  return compareStreamPositions(next, last) > 0 || (next[2] !== last[2] && next[0] >= last[0]);
}
