import type { ConversationEmittedEvent } from '../machines/types.js';
import type { ConversationActorLike, SnapshotLike, Unsubscribable } from './conversation-source.js';

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
