import { fromEventObservable, type Observer, type Subscribable, type Subscription } from 'xstate';
import { toProviderError } from '../model/errors/classify-error.js';
import { ProviderError } from '../model/errors/provider-error.js';
import { providerErrorFromRecord } from '../model/errors/provider-error-record.js';
import type { Message } from '../model/messages.js';
import type { Provider, ProviderEvent, ProviderRequest, ToolDescription } from '../model/provider.js';
import { invalidProviderEvent, providerEventProblem } from '../model/provider-event-problem.js';
import { recordRequest, type RequestStepRecord } from './request-step.js';
import { stepJournalOf } from './step-journal.js';
import { faultInjectorOf } from './fault-injector.js';
import { withFields } from '../util/with-fields.js';
import { nextTask, type TaskHandle } from '../util/next-task.js';

/** What one provider request needs; plain JSON so a persisted snapshot can restart it. */
export type ProviderCallInput = {
  messages: Message[];
  sessionData?: unknown;
  /** The active agent of a machine with handoffs: its provider, system prompt and tools make the request. */
  agent?: string;
  /** Which provider of the fallback list makes the request (absent: the first). */
  provider?: number;
  /** The prompt cache key when `promptCache` names none: the conversation's id under a host. */
  cacheKey?: string;
};

/** What a request is made with (for a machine with handoffs, the active agent's). */
export type RequestProfile = { provider: Provider; tools: ToolDescription[]; system: string | undefined };

/** A streamed delta, handed to the machine as the provider produced it. */
export type ProviderDeltaEvent = Exclude<ProviderEvent, { type: 'finish' }>;

/** The events a provider call sends to its parent machine. */
export type ProviderCallEvent =
  | { type: 'provider.delta'; deltas: ProviderDeltaEvent[] }
  | ({ type: 'provider.finish' } & Omit<Extract<ProviderEvent, { type: 'finish' }>, 'type'>);

function toObserver<T>(
  observerOrNext: Observer<T> | ((value: T) => void),
  error?: (error: unknown) => void,
  complete?: () => void,
): Observer<T> {
  if (typeof observerOrNext === 'function') {
    return { next: observerOrNext, ...(error ? { error } : {}), ...(complete ? { complete } : {}) };
  }
  return observerOrNext;
}

/**
 * The actor logic for one provider request. It is an event observable: each delta and the final
 * response are sent to the parent machine as they arrive, an error becomes the actor's error, and
 * stopping the actor (cancel, timeout, leaving `requesting`) aborts the request's signal so the
 * HTTP connection closes. No rejection escapes: the stream is consumed inside one guarded task.
 * When a step journal is set on the actor system, the request is one journaled step: the machine
 * gets the recorded response (or failure) once the step is recorded, and `requestTimeoutMs` is
 * enforced inside the step (see `StepJournal`).
 */
export function createProviderCallLogic(
  profileOf: (agent: string | undefined, provider: number) => RequestProfile,
  /** What every request of the run carries: the structured answer it wants, the prompt caching it asks for. */
  shared: Pick<ProviderRequest, 'responseFormat' | 'promptCache'>,
  requestTimeoutMs: number,
) {
  return fromEventObservable<ProviderCallEvent, ProviderCallInput>(({ input, system: actorSystem, self }) => {
    const profile = profileOf(input.agent, input.provider ?? 0);
    const { tools, system } = profile;
    // A fault soak wraps the provider of each request; without one this is one WeakMap lookup.
    const injector = faultInjectorOf(actorSystem);
    const provider = injector ? injector.provider(profile.provider, self._parent ? { caller: self._parent.id } : {}) : profile.provider;
    const request: Omit<ProviderRequest, 'signal'> = {
      ...(system === undefined ? {} : { system }),
      messages: input.messages,
      tools,
      ...(input.sessionData === undefined ? {} : { sessionData: input.sessionData }),
      ...shared,
      ...(shared.promptCache && shared.promptCache.key === undefined && input.cacheKey !== undefined
        ? { promptCache: { ...shared.promptCache, key: input.cacheKey } }
        : {}),
    };
    const journal = stepJournalOf(actorSystem);
    const subscribable: Subscribable<ProviderCallEvent> = {
      subscribe(
        observerOrNext: Observer<ProviderCallEvent> | ((value: ProviderCallEvent) => void),
        error?: (error: unknown) => void,
        complete?: () => void,
      ): Subscription {
        const observer = toObserver(observerOrNext, error, complete);
        const controller = new AbortController();
        let closed = false;
        // Deltas parsed from one network read reach the machine as one event: a transition per
        // batch instead of per token keeps streaming cost close to the SDK's own parsing.
        let pending: ProviderDeltaEvent[] = [];
        let flushScheduled: TaskHandle | undefined;
        const flush = () => {
          flushScheduled?.cancel();
          flushScheduled = undefined;
          if (closed || pending.length === 0) return;
          const deltas = pending;
          pending = [];
          observer.next?.({ type: 'provider.delta', deltas });
        };
        void (async () => {
          try {
            if (journal) {
              const outcome = await journal.step<RequestStepRecord>(
                self._parent ? { kind: 'request', caller: self._parent.id } : { kind: 'request' },
                (stepSignal) => recordRequest(provider, request, requestTimeoutMs, journal, stepSignal),
                controller.signal,
              );
              if (outcome.status === 'done') replayRecord(outcome.value, observer, () => closed);
              return;
            }
            const stream = provider.stream(withFields(request, { signal: controller.signal }));
            for await (const event of stream) {
              if (closed) break;
              // A provider of the user's own may yield anything: what the machine cannot read fails the request.
              const problem = providerEventProblem(event);
              if (problem) throw invalidProviderEvent(problem);
              if (event.type === 'finish') {
                flush();
                // A listener of those deltas may have ended the run (a cancel): then nobody is left to tell.
                if (closed) break;
                const { type: _type, ...finish } = event;
                observer.next?.({ type: 'provider.finish', ...finish });
              } else {
                pending.push(event);
                flushScheduled ??= nextTask(flush);
              }
            }
            flush();
            if (!closed) observer.complete?.();
          } catch (thrown) {
            flush();
            if (!closed) observer.error?.(toProviderError(thrown));
          }
        })();
        return {
          unsubscribe() {
            if (closed) return;
            closed = true;
            flushScheduled?.cancel();
            controller.abort(new ProviderError('the request was stopped by the conversation', { code: 'aborted', retryable: false }));
          },
        };
      },
    };
    return subscribable;
  });
}

/** Hands a recorded request to the machine as the live request would have: deltas, the response, then its end. */
function replayRecord(record: RequestStepRecord, observer: Observer<ProviderCallEvent>, isClosed: () => boolean): void {
  let deltas: ProviderDeltaEvent[] = [];
  const flush = () => {
    if (deltas.length > 0 && !isClosed()) observer.next?.({ type: 'provider.delta', deltas });
    deltas = [];
  };
  for (const event of record.events) {
    if (event.type !== 'finish') {
      deltas.push(event);
      continue;
    }
    flush();
    // A listener of those deltas may have ended the run (a cancel): then nobody is left to tell.
    if (isClosed()) return;
    const { type: _type, ...finish } = event;
    observer.next?.({ type: 'provider.finish', ...finish });
  }
  flush();
  if (isClosed()) return;
  if (record.error) observer.error?.(providerErrorFromRecord(record.error));
  else observer.complete?.();
}
