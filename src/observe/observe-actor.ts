import type { ConversationEmittedEvent } from '../machines/names/types.js';
import type { ConversationActorLike, SnapshotLike, Unsubscribable } from './conversation-source.js';

/**
 * How an observed actor ended: it reached a final state (`done`, its `output` on `snapshot`), failed
 * (`error`, with the error) or was stopped before its end (`stopped`).
 *
 * @example
 * ```ts
 * const outputOf = (end: ActorEnd<ConversationSnapshot>) => (end.status === 'done' ? end.snapshot.output : undefined);
 * ```
 */
export type ActorEnd<TSnapshot extends SnapshotLike = SnapshotLike> = {
  status: Exclude<SnapshotLike['status'], 'active'>;
  /** The actor's snapshot when it ended. */
  snapshot: TSnapshot;
  /** Set when `status` is `error`. */
  error?: unknown;
};

/**
 * What {@link observeActor} tells. Every callback is optional.
 *
 * @example
 * ```ts
 * const observer: ActorObserver<ConversationSnapshot> = { onEvent: (event) => log(event.type), onEnd: ({ status }) => log(status) };
 * ```
 */
export type ActorObserver<TSnapshot extends SnapshotLike = SnapshotLike> = {
  /** The current snapshot first, then each new one (the same snapshot object is not repeated). */
  onSnapshot?: (snapshot: TSnapshot) => void;
  /** Emitted events: all of them, or only those of `types`. */
  onEvent?: (event: ConversationEmittedEvent) => void;
  types?: readonly ConversationEmittedEvent['type'][];
  /** Once, when the actor ends — at once when it had already ended. */
  onEnd?: (end: ActorEnd<TSnapshot>) => void;
};

/**
 * The one way the observers (`actorloop/rx`, tracing, callbacks, the live viewer) watch a
 * conversation actor: its emitted events, its snapshots and its end, told exactly once — also for
 * an actor that had already ended (or was stopped before it started) when observed, which
 * `subscribe` alone would never report. The function returned removes every listener this call
 * added, and only those; it never stops the actor, and after it nothing more is told.
 *
 * @example
 * ```ts
 * const detach = observeActor(actor, {
 *   onEvent: (event) => console.log(event.type),
 *   onEnd: ({ status, snapshot }) => console.log(status, snapshot.output),
 * });
 * ```
 */
export function observeActor<TSnapshot extends SnapshotLike>(
  actor: ConversationActorLike<TSnapshot>,
  observer: ActorObserver<TSnapshot>,
): () => void {
  let ended = false;
  const listeners: Unsubscribable[] = [];
  const detach = () => {
    for (const listener of listeners.splice(0)) listener.unsubscribe();
  };
  const finish = (snapshot: TSnapshot, failed?: { error: unknown }) => {
    if (ended) return;
    ended = true;
    detach();
    if (failed || snapshot.status === 'error') {
      observer.onEnd?.({ status: 'error', snapshot, error: failed ? failed.error : snapshot.error });
      return;
    }
    // An actor-like that completes its observers while still `active` did not reach a final state.
    observer.onEnd?.({ status: snapshot.status === 'active' ? 'stopped' : snapshot.status, snapshot });
  };
  let last = actor.getSnapshot();
  observer.onSnapshot?.(last);
  if (last.status !== 'active') {
    finish(last);
    return () => undefined;
  }
  if (observer.onEvent) {
    const handler = observer.onEvent;
    if (!observer.types || observer.types.length === 0) listeners.push(actor.on('*', handler));
    else for (const type of new Set(observer.types)) listeners.push(actor.on(type, handler));
  }
  const subscription = actor.subscribe({
    next: (snapshot) => {
      if (snapshot !== last) {
        last = snapshot;
        observer.onSnapshot?.(snapshot);
      }
    },
    error: (error) => finish(actor.getSnapshot(), { error }),
    // XState completes observers when the actor reaches a final state or is stopped.
    complete: () => finish(actor.getSnapshot()),
  });
  if (ended) subscription.unsubscribe();
  else listeners.push(subscription);
  // Subscribing to an actor that was stopped before it started does not complete the observer.
  const now = actor.getSnapshot();
  if (now.status !== 'active') finish(now);
  return () => {
    ended = true;
    detach();
  };
}
