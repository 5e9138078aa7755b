import { Observable } from 'rxjs';
import { checkSource } from '../check-source.js';
import {
  type ConversationActorLike,
  type ConversationFeed,
  type ConversationStateUpdate,
  isActorLike,
  type SnapshotLike,
} from '../conversation-source.js';
import { observeActor } from '../observe-actor.js';
import { watchFeed } from '../watch-feed.js';

/**
 * Where a run stands, as it moves: the current snapshot first (so a late subscriber starts from
 * now), then each new snapshot; completes when the run reaches its final state (`done`,
 * `halted`, `error`) or the actor is stopped. Unsubscribing never stops the run.
 *
 * On a feed (a host conversation: `state$(hostFeed(host, id))`), the `{ type: 'state', value,
 * status, messages }` updates instead — the conversation's current state first — without
 * completing: a conversation outlives its runs.
 *
 * @example
 * ```ts
 * import { state$ } from 'actorloop/rx';
 * import { map, distinctUntilChanged } from 'rxjs';
 *
 * state$(actor)
 *   .pipe(map((snapshot) => JSON.stringify(snapshot.value)), distinctUntilChanged())
 *   .subscribe((value) => console.log('now', value));
 * ```
 */
export function state$<TSnapshot extends SnapshotLike>(source: ConversationActorLike<TSnapshot>): Observable<TSnapshot>;
export function state$(source: ConversationFeed): Observable<ConversationStateUpdate>;
export function state$(source: ConversationActorLike | ConversationFeed): Observable<SnapshotLike | ConversationStateUpdate> {
  checkSource(source, 'state$');
  if (!isActorLike(source)) {
    return new Observable((subscriber) =>
      watchFeed(source, { state: (update) => subscriber.next(update), error: (error) => subscriber.error(error) }),
    );
  }
  return new Observable((subscriber) =>
    observeActor(source, {
      onSnapshot: (snapshot) => subscriber.next(snapshot),
      onEnd: ({ status, error }) => (status === 'error' ? subscriber.error(error) : subscriber.complete()),
    }),
  );
}
