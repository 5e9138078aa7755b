import type { ConversationEmittedEvent, ConversationStateValue } from '../machines/types.js';
import type { Message } from '../providers/messages.js';

/**
 * What an actor's `subscribe` / `on` return.
 *
 * @example
 * ```ts
 * const subscription: Unsubscribable = actor.on('text.delta', print);
 * subscription.unsubscribe();
 * ```
 */
export type Unsubscribable = { unsubscribe(): void };

/**
 * The snapshot fields the observers read: where the actor stands and how it ended.
 *
 * @example
 * ```ts
 * const { status, output }: SnapshotLike = actor.getSnapshot();
 * ```
 */
export type SnapshotLike = { status: 'active' | 'done' | 'error' | 'stopped'; output?: unknown; error?: unknown };

/**
 * The observing side of a conversation actor: what `actorloop/rx` and the live viewer use. A
 * `ConversationActor` is one; so is anything shaped like it (a proxy, a test double, an adapter).
 *
 * @example
 * ```ts
 * const actor: ConversationActorLike<ConversationSnapshot> = createActor(machine, { input: {} }).start();
 * ```
 */
export type ConversationActorLike<TSnapshot extends SnapshotLike = SnapshotLike> = {
  getSnapshot(): TSnapshot;
  subscribe(observer: { next?: (snapshot: TSnapshot) => void; error?: (error: unknown) => void; complete?: () => void }): Unsubscribable;
  on(type: ConversationEmittedEvent['type'] | '*', handler: (event: ConversationEmittedEvent) => void): Unsubscribable;
};

/**
 * A state change pushed by a {@link ConversationFeed}: the machine's state value and the run's
 * status, with the history when the feed has it at hand.
 *
 * @example
 * ```ts
 * const update: ConversationStateUpdate = { type: 'state', value: { requesting: 'waiting' }, status: 'active' };
 * ```
 */
export type ConversationStateUpdate = {
  type: 'state';
  value: ConversationStateValue;
  /** `active` while the run goes on; how a run or conversation ended otherwise (e.g. `done`). */
  status: string;
  messages?: readonly Message[];
};

/**
 * What a {@link ConversationFeed} pushes: every emitted event and every state change.
 *
 * @example
 * ```ts
 * const print = (update: ConversationUpdate) => console.log(update.type === 'state' ? update.value : update.type);
 * ```
 */
export type ConversationUpdate = ConversationEmittedEvent | ConversationStateUpdate;

/**
 * A conversation that pushes its updates to a listener, the shape of the durable host's
 * `host.subscribe(id, listener)` (emitted events and `{ type: 'state', value, status }`), so a host
 * conversation is one line away: `{ subscribe: (listener) => host.subscribe(id, listener) }`.
 * A feed outlives a single run, so streams over a feed do not complete at a final state.
 *
 * @example
 * ```ts
 * const feed: ConversationFeed = { subscribe: (listener) => host.subscribe('c-42', listener) };
 * events$(feed, 'tool.result').subscribe(console.log);
 * ```
 */
export type ConversationFeed = {
  /** Starts delivering updates to `listener`; the function it returns stops delivery. */
  subscribe(listener: (update: ConversationUpdate) => void): () => void;
};

/**
 * A conversation to observe: an actor (one run: streams complete when it ends) or a feed.
 *
 * @example
 * ```ts
 * const sources: ConversationSource[] = [actor, { subscribe: (listener) => host.subscribe('c-42', listener) }];
 * ```
 */
export type ConversationSource = ConversationActorLike | ConversationFeed;

/** Whether a source is an actor (it has `getSnapshot` and `on`), not a feed. */
export function isActorLike(source: unknown): source is ConversationActorLike {
  return (
    typeof source === 'object' &&
    source !== null &&
    typeof (source as { getSnapshot?: unknown }).getSnapshot === 'function' &&
    typeof (source as { on?: unknown }).on === 'function' &&
    typeof (source as { subscribe?: unknown }).subscribe === 'function'
  );
}

/** Whether a source is a feed. */
export function isFeed(source: unknown): source is ConversationFeed {
  return typeof source === 'object' && source !== null && typeof (source as { subscribe?: unknown }).subscribe === 'function';
}
