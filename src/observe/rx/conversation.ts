import { Observable } from 'rxjs';
import { checkSource } from '../check-source.js';
import { type ConversationSource, type ConversationStateUpdate, type ConversationUpdate, isActorLike } from '../conversation-source.js';
import { stateUpdateOf } from '../state-update.js';
import { observeActor } from '../observe-actor.js';

/**
 * Everything about a conversation in one stream, in the host's vocabulary: each emitted event and
 * each state change as `{ type: 'state', value, status, messages }` (status `running`,
 * `awaitingApproval`, … then `done` / `halted` / `error` with the run's `output`), the current
 * state first. On an actor it completes when the run ends; on a host conversation
 * (`conversation$(hostFeed(host, id))`) it follows the conversation across runs, and adds
 * `write.failed` when the host could not store a run.
 *
 * @example
 * ```ts
 * import { conversation$ } from 'actorloop/rx';
 * import { filter } from 'rxjs';
 *
 * conversation$(actor)
 *   .pipe(filter((update) => update.type === 'state' || update.type === 'tool.result'))
 *   .subscribe((update) => log.push(update));
 * ```
 */
export function conversation$(source: ConversationSource): Observable<ConversationUpdate> {
  checkSource(source, 'conversation$');
  if (!isActorLike(source)) {
    return new Observable((subscriber) =>
      source.subscribe(
        (update) => subscriber.next(update),
        (error) => subscriber.error(error),
      ),
    );
  }
  return new Observable((subscriber) => {
    let last: ConversationStateUpdate | undefined;
    return observeActor(source, {
      onSnapshot: (snapshot) => {
        const update = stateUpdateOf(snapshot);
        if (last && last.value === update.value && last.status === update.status && last.messages === update.messages) return;
        last = update;
        subscriber.next(update);
      },
      onEvent: (event) => subscriber.next(event),
      onEnd: ({ status, error }) => (status === 'error' ? subscriber.error(error) : subscriber.complete()),
    });
  });
}
