import { Observable } from 'rxjs';
import type { ConversationEmittedEvent } from '../../machines/names/types.js';
import { checkSource } from '../check-source.js';
import { type ConversationSource, isActorLike } from '../conversation-source.js';
import { observeActor } from '../observe-actor.js';
import { watchFeed } from '../watch-feed.js';

/**
 * The type of an event a conversation emits.
 *
 * @example
 * ```ts
 * const watched: ConversationEmittedType[] = ['tool.call', 'tool.result'];
 * ```
 */
export type ConversationEmittedType = ConversationEmittedEvent['type'];

/**
 * The events a run emits (`text.delta`, `tool.result`, …): every one, or only those of the types
 * given, typed by them. Completes when the run reaches its final state (after the events of the
 * final step) or the actor is stopped; a subscriber that joins late gets the events from then on.
 * Unsubscribing never stops the run. On a feed (a host conversation: `events$(hostFeed(host, id),
 * 'tool.result')`) it follows the conversation across runs and does not complete.
 *
 * @example
 * ```ts
 * import { events$ } from 'actorloop/rx';
 * import { filter } from 'rxjs';
 *
 * events$(actor, 'tool.result')
 *   .pipe(filter((event) => event.isError)) // event: ToolResultEvent
 *   .subscribe((event) => console.warn(`${event.name} failed: ${event.result}`));
 * ```
 */
export function events$(source: ConversationSource): Observable<ConversationEmittedEvent>;
export function events$<TType extends ConversationEmittedType>(
  source: ConversationSource,
  ...types: [TType, ...TType[]]
): Observable<Extract<ConversationEmittedEvent, { type: TType }>>;
export function events$(source: ConversationSource, ...types: ConversationEmittedType[]): Observable<ConversationEmittedEvent> {
  checkSource(source, 'events$', types);
  if (!isActorLike(source)) {
    return new Observable((subscriber) =>
      watchFeed(source, { types, event: (event) => subscriber.next(event), error: (error) => subscriber.error(error) }),
    );
  }
  return new Observable((subscriber) =>
    observeActor(source, {
      types,
      onEvent: (event) => subscriber.next(event),
      onEnd: ({ status, error }) => (status === 'error' ? subscriber.error(error) : subscriber.complete()),
    }),
  );
}
