import type { ConversationStatus } from '../host/conversation-store.js';
import type { WriteFailedEvent } from '../host/live-run.js';
import type { ConversationEmittedEvent, ConversationStateValue, RunOutput } from '../machines/names/types.js';
import type { Message } from '../model/messages.js';

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
 * Where a run or conversation stands, in the durable host's words: `idle` before the first message,
 * `running` while a run requests, retries or executes tools, `awaitingApproval` while calls wait
 * for `tool.approve` / `tool.deny`, then how the run ended (`done`, `halted`, `error`) — or
 * `stopped` for an actor stopped before its run ended.
 *
 * @example
 * ```ts
 * const waiting = (status: ObservedStatus) => status === 'awaitingApproval';
 * ```
 */
export type ObservedStatus = ConversationStatus | 'stopped';

/**
 * A state change: the machine's state value and the status, with the history when the source has
 * it at hand (a host always sends it) and the `RunOutput` on the change that ends a run. The
 * durable host's `{ type: 'state' }` events are of this shape, so are the state updates
 * `conversation$` makes of an actor's snapshots.
 *
 * @example
 * ```ts
 * const update: ConversationStateUpdate = { type: 'state', value: { requesting: 'waiting' }, status: 'running' };
 * ```
 */
export type ConversationStateUpdate = {
  type: 'state';
  value: ConversationStateValue;
  status: ObservedStatus;
  messages?: readonly Message[];
  output?: RunOutput;
};

/**
 * What a {@link ConversationFeed} pushes: every emitted event and every state change — and, from a
 * durable host, `write.failed` when the host could not store the run and stopped its copy.
 *
 * @example
 * ```ts
 * const print = (update: ConversationUpdate) => console.log(update.type === 'state' ? update.value : update.type);
 * ```
 */
export type ConversationUpdate = ConversationEmittedEvent | ConversationStateUpdate | WriteFailedEvent;

/**
 * A conversation that pushes its updates to a listener, the shape of the durable host's
 * `host.subscribe(id, listener)` (emitted events and `{ type: 'state', value, status, messages }`).
 * `hostFeed(host, id)` makes one of a host conversation that also starts with the conversation's
 * current state. A feed outlives a single run, so streams over a feed do not complete at a final
 * state.
 *
 * @example
 * ```ts
 * const feed: ConversationFeed = { subscribe: (listener) => host.subscribe('c-42', listener) };
 * events$(feed, 'tool.result').subscribe(console.log);
 * ```
 */
export type ConversationFeed = {
  /**
   * Starts delivering updates to `listener`; the function it returns stops delivery. A feed that
   * can fail (the conversation cannot be loaded) calls `error` once, and delivers nothing after.
   */
  subscribe(listener: (update: ConversationUpdate) => void, error?: (error: unknown) => void): () => void;
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
