import { toProviderError } from '../model/errors/classify-error.js';
import { ProviderError } from '../model/errors/provider-error.js';
import { type ProviderErrorRecord, providerErrorRecord } from '../model/errors/provider-error-record.js';
import type { Provider, ProviderEvent, ProviderRequest } from '../model/provider.js';
import { invalidProviderEvent, providerEventProblem } from '../model/provider-event-problem.js';
import type { StepJournal } from './step-journal.js';

/**
 * What a journaled provider request records: the events of the response in order (adjacent deltas
 * of one kind joined) and, when the request failed, the error — so a replay gives the machine the
 * same deltas, response and failure as the request did.
 */
export type RequestStepRecord = { events: ProviderEvent[]; error?: ProviderErrorRecord };

type Delta = Exclude<ProviderEvent, { type: 'finish' }>;

/** Appends a delta, joined to the last one when both are of one kind (and of one tool call). */
export function appendDelta(events: ProviderEvent[], delta: Delta): void {
  const last = events.at(-1);
  if (last?.type === 'text.delta' && delta.type === 'text.delta') {
    events[events.length - 1] = { type: 'text.delta', delta: last.delta + delta.delta };
  } else if (last?.type === 'reasoning.delta' && delta.type === 'reasoning.delta') {
    events[events.length - 1] = { type: 'reasoning.delta', delta: last.delta + delta.delta };
  } else if (last?.type === 'tool.call.delta' && delta.type === 'tool.call.delta' && last.toolCallId === delta.toolCallId) {
    const name = last.name ?? delta.name;
    events[events.length - 1] = {
      type: 'tool.call.delta',
      toolCallId: last.toolCallId,
      ...(name === undefined ? {} : { name }),
      argsDelta: last.argsDelta + delta.argsDelta,
    };
  } else {
    events.push(delta);
  }
}

/**
 * Makes one provider request and records how it went, as the action of a journaled step. The
 * request's timeout — no event for `requestTimeoutMs` — is decided here rather than by the machine's
 * timer, so a replay sees the same outcome. Deltas go to the journal's live listener as they arrive.
 */
export async function recordRequest(
  provider: Provider,
  request: Omit<ProviderRequest, 'signal'>,
  requestTimeoutMs: number,
  journal: StepJournal,
  signal: AbortSignal,
): Promise<RequestStepRecord> {
  const controller = new AbortController();
  const stop = () => controller.abort(signal.reason);
  signal.addEventListener('abort', stop, { once: true });
  if (signal.aborted) stop();
  const events: ProviderEvent[] = [];
  let timedOut: ProviderError | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = new ProviderError(`no response from the provider for ${requestTimeoutMs} ms`, { code: 'timeout', retryable: true });
      controller.abort(timedOut);
    }, requestTimeoutMs);
  };
  try {
    arm();
    for await (const event of provider.stream({ ...request, signal: controller.signal })) {
      if (controller.signal.aborted) break;
      arm();
      const problem = providerEventProblem(event);
      if (problem) throw invalidProviderEvent(problem);
      if (event.type === 'finish') events.push(event);
      else appendDelta(events, event);
      if (event.type !== 'finish') journal.streamed?.(event);
    }
    if (timedOut) return { events, error: providerErrorRecord(timedOut) };
    if (controller.signal.aborted) return { events, error: providerErrorRecord(toProviderError(controller.signal.reason)) };
    return { events };
  } catch (thrown) {
    return { events, error: providerErrorRecord(timedOut ?? toProviderError(thrown)) };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    signal.removeEventListener('abort', stop);
  }
}
