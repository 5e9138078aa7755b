import { Observable, ReplaySubject, share } from 'rxjs';
import { checkSource } from '../check-source.js';
import type { ConversationSource } from '../conversation-source.js';
import { nextText } from '../text-so-far.js';
import { events$ } from './events.js';

const shared = new WeakMap<object, Observable<string>>();

/**
 * The text of the response being streamed so far: `''` at each new request (`request.started`)
 * and at a retry that throws away partial output (`request.retry` with `discardPartial`), then
 * longer with each `text.delta`. Completes when the run ends (on an actor).
 *
 * All subscribers of one source share one stream: a subscriber that joins mid-response gets the
 * text streamed so far at once, as long as another `text$` subscription of that source was open
 * before (otherwise it starts from `''` and sees what streams from then on). Unsubscribing never
 * stops the run.
 *
 * @example
 * ```ts
 * import { text$ } from 'actorloop/rx';
 *
 * text$(actor).subscribe((text) => render(text)); // '', 'The', 'The answer', 'The answer is 5', …
 * ```
 */
export function text$(source: ConversationSource): Observable<string> {
  checkSource(source, 'text$');
  let stream = shared.get(source);
  if (!stream) {
    stream = new Observable<string>((subscriber) => {
      let text = '';
      subscriber.next(text);
      return events$(source, 'request.started', 'request.retry', 'text.delta').subscribe({
        next: (event) => {
          const next = nextText(text, event);
          if (next === undefined) return;
          text = next;
          subscriber.next(text);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
    }).pipe(
      // After the run ended a late subscriber still gets the last text; when every subscriber has
      // left, the listeners go too.
      share({ connector: () => new ReplaySubject<string>(1), resetOnError: true, resetOnComplete: false, resetOnRefCountZero: true }),
    );
    shared.set(source, stream);
  }
  return stream;
}
