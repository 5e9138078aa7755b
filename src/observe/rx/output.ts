import { Observable } from 'rxjs';
import type { RunOutput } from '../../machines/names/types.js';
import { checkSource } from '../check-source.js';
import { type ConversationActorLike, isActorLike, type SnapshotLike } from '../conversation-source.js';
import { observeActor } from '../observe-actor.js';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { RunStoppedError } from './run-stopped-error.js';

/**
 * The run's `RunOutput`, once, when it reaches its final state; then completes. A subscriber that
 * joins after the end gets it at once. Fails with {@link RunStoppedError} only when the actor is
 * stopped before the end. Unsubscribing never stops the run.
 *
 * For a host conversation, `host.result(id)` is the promise of the same output (`from(host.result(id))`).
 *
 * @example
 * ```ts
 * import { output$ } from 'actorloop/rx';
 *
 * output$(actor).subscribe((output) => console.log(output.status, output.text));
 * ```
 */
export function output$<TOutput = RunOutput>(source: ConversationActorLike<SnapshotLike & { output?: TOutput }>): Observable<TOutput> {
  checkSource(source, 'output$');
  if (!isActorLike(source)) throw new InvalidOptionsError('output$(source)', 'a conversation actor (a feed has no single output)', source);
  return new Observable<TOutput>((subscriber) =>
    observeActor(source, {
      onEnd: ({ status, error, snapshot }) => {
        if (status === 'error') return subscriber.error(error);
        if (status !== 'done') return subscriber.error(new RunStoppedError());
        subscriber.next(snapshot.output as TOutput);
        subscriber.complete();
      },
    }),
  );
}
