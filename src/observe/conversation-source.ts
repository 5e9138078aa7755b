import type { ConversationEmittedEvent, ConversationStateValue } from '../machines/types.js';
import { InvalidOptionsError } from '../errors/invalid-options-error.js';
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

/** What a watcher is told. Every callback is optional. */
export type ActorWatcher<TSnapshot extends SnapshotLike> = {
  /** The current snapshot first, then each new one (the same snapshot object is not repeated). */
  snapshot?: (snapshot: TSnapshot) => void;
  /** Emitted events: all of them, or those of `types`. */
  event?: (event: ConversationEmittedEvent) => void;
  types?: readonly ConversationEmittedEvent['type'][];
  /** The actor reached a final state or was stopped (`error` set when it failed). */
  end?: (ending: { status: SnapshotLike['status']; error?: unknown }) => void;
};

/**
 * Watches an actor without ever stopping it: the function returned removes every listener this
 * call added (and only those). When the actor has already ended, `snapshot` and `end` are called
 * at once and nothing is left attached.
 */
export function watchActor<TSnapshot extends SnapshotLike>(
  actor: ConversationActorLike<TSnapshot>,
  watcher: ActorWatcher<TSnapshot>,
): () => void {
  let ended = false;
  const finish = (status: SnapshotLike['status'], error?: unknown) => {
    if (ended) return;
    ended = true;
    stop();
    watcher.end?.(error === undefined ? { status } : { status, error });
  };
  const listeners: Unsubscribable[] = [];
  const stop = () => {
    for (const listener of listeners.splice(0)) listener.unsubscribe();
  };
  let last = actor.getSnapshot();
  watcher.snapshot?.(last);
  if (last.status !== 'active') {
    finish(last.status, last.status === 'error' ? last.error : undefined);
    return () => undefined;
  }
  if (watcher.event) {
    const handler = watcher.event;
    if (!watcher.types || watcher.types.length === 0) listeners.push(actor.on('*', handler));
    else for (const type of new Set(watcher.types)) listeners.push(actor.on(type, handler));
  }
  const subscription = actor.subscribe({
    next: (snapshot) => {
      if (snapshot !== last) {
        last = snapshot;
        watcher.snapshot?.(snapshot);
      }
    },
    error: (error) => finish('error', error),
    // XState completes observers when the actor reaches a final state or is stopped.
    complete: () => finish(actor.getSnapshot().status),
  });
  if (ended) subscription.unsubscribe();
  else listeners.push(subscription);
  // Subscribing to an actor that was stopped before it started does not complete the observer.
  const now = actor.getSnapshot();
  if (now.status !== 'active') finish(now.status, now.status === 'error' ? now.error : undefined);
  return () => {
    ended = true;
    stop();
  };
}

/** Every type of event a conversation emits. */
export const emittedEventTypes = [
  'request.started',
  'text.delta',
  'reasoning.delta',
  'tool.call.delta',
  'tool.call',
  'tool.result',
  'tool.approval.requested',
  'request.retry',
  'usage',
  'doom_loop.detected',
  'event.rejected',
] as const satisfies readonly ConversationEmittedEvent['type'][];

// Fails to compile when an emitted event type is missing from the list above.
type MissingEmittedType = Exclude<ConversationEmittedEvent['type'], (typeof emittedEventTypes)[number]>;
const allEmittedTypesListed: MissingEmittedType extends never ? true : false = true;
void allEmittedTypesListed;

const knownTypes = new Set<string>(emittedEventTypes);

/**
 * The source and event types given to an observer, checked: a source that is neither an actor nor
 * a feed, or a type no conversation emits, is an `InvalidOptionsError` naming it.
 */
export function checkSource(source: unknown, what: string, types: readonly unknown[] = []): void {
  if (!isActorLike(source) && !isFeed(source)) {
    throw new InvalidOptionsError(`${what}(source)`, 'a conversation actor or a feed { subscribe(listener) }', source);
  }
  types.forEach((type, index) => {
    if (typeof type !== 'string' || !knownTypes.has(type)) {
      throw new InvalidOptionsError(`${what}(source, ...types)[${index}]`, `one of ${emittedEventTypes.join(', ')}`, type);
    }
  });
}

/** What a feed watcher is told. */
export type FeedWatcher = {
  state?: (update: ConversationStateUpdate) => void;
  event?: (event: ConversationEmittedEvent) => void;
  types?: readonly ConversationEmittedEvent['type'][];
};

/** Watches a feed: state updates and emitted events (all, or those of `types`) go to their callbacks. */
export function watchFeed(feed: ConversationFeed, watcher: FeedWatcher): () => void {
  const wanted = watcher.types && watcher.types.length > 0 ? new Set<string>(watcher.types) : undefined;
  return feed.subscribe((update) => {
    if (update.type === 'state') watcher.state?.(update);
    else if (!wanted || wanted.has(update.type)) watcher.event?.(update);
  });
}

/**
 * A snapshot in the host's vocabulary: `{ type: 'state', value, status, messages }`, where status
 * is `active` during the run and the run's own status (`done`, `halted`, `error`) at its end.
 */
export function stateUpdateOf(snapshot: SnapshotLike): ConversationStateUpdate {
  const { value, context, output } = snapshot as SnapshotLike & {
    value?: ConversationStateValue;
    context?: { messages?: Message[] };
    output?: { status?: string };
  };
  const status = snapshot.status === 'done' && typeof output?.status === 'string' ? output.status : snapshot.status;
  const messages = context?.messages;
  return { type: 'state', value: value ?? 'idle', status, ...(messages ? { messages } : {}) };
}
