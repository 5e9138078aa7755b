import { fromPromise } from 'xstate';
import { toProviderError } from '../model/errors/classify-error.js';
import { ProviderError } from '../model/errors/provider-error.js';
import { type ProviderErrorRecord, providerErrorFromRecord, providerErrorRecord } from '../model/errors/provider-error-record.js';
import type { Message } from '../model/messages.js';
import type { FinishReason, Provider, ProviderEvent, ProviderRequest } from '../model/provider.js';
import type { Usage } from '../model/usage.js';
import { strategyResultProblem, summaryRequest } from './compaction-messages.js';
import { type StepInfo, stepJournalOf } from './step-journal.js';

/**
 * What the summarize actor is given: the oldest messages, and who asks (the active agent of a
 * machine with handoffs makes the request with its provider). Plain JSON, like a provider call's.
 */
export type SummarizeInput = {
  messages: Message[];
  agent?: string;
  sessionData?: unknown;
  /** Which provider of the fallback list makes the request (absent: the first). */
  provider?: number;
};

/** What a summary request gave back. */
export type SummarizeOutput = {
  /** The summary: the response's text, reasoning left out. Check it with `summaryProblem` before use. */
  text: string;
  usage: Usage;
  /** The model that answered, as the response names it. */
  model?: string;
  /** Why the model stopped: `length` means the summary was cut at the token limit. */
  finishReason: FinishReason;
};

/**
 * How the summarize actor makes its request.
 *
 * @example
 * ```ts
 * const options: SummarizeOptions = { requestTimeoutMs: 60_000, maxTranscriptTokens: 50_000 };
 * ```
 */
export type SummarizeOptions = {
  /**
   * No event for this long ends the request as a retryable `timeout`, inside a journaled step only:
   * without a journal the machine's own timer bounds the request, as it does a provider call's.
   */
  requestTimeoutMs?: number;
  /** Keep the transcript of the oldest messages within about this many tokens (see `summaryRequest`). */
  maxTranscriptTokens?: number;
};

/** What a journaled summary request records: the summary, or the failure a replay must see again. */
type SummaryStepRecord = { output: SummarizeOutput } | { error: ProviderErrorRecord };

/**
 * The journal step of a summary request. A summary is a provider request and is counted as one: a
 * journal that allows a number of requests per invocation (Restate's) counts it among them.
 */
const summaryStep: StepInfo = { kind: 'request' };

type Finish = Extract<ProviderEvent, { type: 'finish' }>;

/**
 * Makes the summary request and reads the answer: the text of the final response (the streamed
 * text when the response carries none), its usage and model. A stream that ends without its final
 * response is a retryable `incomplete_stream`, as it is for a provider call.
 */
async function summarize(provider: Provider, request: Omit<ProviderRequest, 'signal'>, signal: AbortSignal): Promise<SummarizeOutput> {
  let streamed = '';
  let finish: Finish | undefined;
  for await (const event of provider.stream({ ...request, signal })) {
    // A provider that ignores its signal is left to itself: nobody wants its answer any more.
    if (signal.aborted) throw signal.reason;
    if (event.type === 'text.delta') streamed += event.delta;
    else if (event.type === 'finish') finish = event;
  }
  if (!finish) {
    throw new ProviderError('the provider stream ended without a final response', { code: 'incomplete_stream', retryable: true });
  }
  let text = '';
  for (const part of finish.content) if (part.type === 'text') text += part.text;
  return {
    text: text === '' ? streamed : text,
    usage: finish.usage,
    ...(finish.model === undefined ? {} : { model: finish.model }),
    finishReason: finish.finishReason,
  };
}

/**
 * The summary request as the action of a journaled step: its failure is recorded rather than thrown,
 * and its timeout decided here, so a replay gets the same outcome as the run did.
 */
async function recordSummary(
  provider: Provider,
  request: Omit<ProviderRequest, 'signal'>,
  requestTimeoutMs: number | undefined,
  signal: AbortSignal,
): Promise<SummaryStepRecord> {
  const controller = new AbortController();
  const stop = () => controller.abort(signal.reason);
  signal.addEventListener('abort', stop, { once: true });
  if (signal.aborted) stop();
  let timedOut: ProviderError | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Every event re-arms the timer: a long summary that keeps streaming has not stalled.
  const watched: Provider = {
    name: provider.name,
    async *stream(streamRequest) {
      const arm = () => {
        if (requestTimeoutMs === undefined) return;
        if (timer !== undefined) clearTimeout(timer);
        timer = setTimeout(() => {
          timedOut = new ProviderError(`no response from the provider for ${requestTimeoutMs} ms`, { code: 'timeout', retryable: true });
          controller.abort(timedOut);
        }, requestTimeoutMs);
      };
      arm();
      for await (const event of provider.stream(streamRequest)) {
        arm();
        yield event;
      }
    },
  };
  try {
    return { output: await summarize(watched, request, controller.signal) };
  } catch (thrown) {
    return { error: providerErrorRecord(timedOut ?? toProviderError(thrown)) };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    signal.removeEventListener('abort', stop);
  }
}

/**
 * The actor logic of a summary request: it asks the provider to summarize the oldest messages
 * (`summaryRequest`: a system prompt and a transcript, no tools) and resolves with the text, the
 * usage and the model. Stopping the actor (cancel, a timeout, leaving the state) aborts the
 * request's signal, so the HTTP connection closes. What the request throws becomes a classified
 * `ProviderError`, so the machine retries it under the same policy as any request. When a step
 * journal is set on the actor system, the request is one journaled step and a replay gets the
 * recorded summary (or failure) instead of asking again.
 *
 * @example
 * ```ts
 * const summarizeLogic = createSummarizeLogic((agent, index) => profileOf(agent, index).provider, { requestTimeoutMs: 60_000 });
 * const actor = createActor(summarizeLogic, { input: { messages: plan.oldest } }).start();
 * const { text, usage } = await toPromise(actor);
 * ```
 */
export function createSummarizeLogic(
  providerOf: (agent: string | undefined, provider: number) => Provider,
  options: SummarizeOptions = {},
) {
  return fromPromise<SummarizeOutput, SummarizeInput>(async ({ input, signal, system }) => {
    const provider = providerOf(input.agent, input.provider ?? 0);
    const request: Omit<ProviderRequest, 'signal'> = {
      ...summaryRequest(input.messages, options.maxTranscriptTokens === undefined ? {} : { maxTokens: options.maxTranscriptTokens }),
      tools: [],
      ...(input.sessionData === undefined ? {} : { sessionData: input.sessionData }),
    };
    const journal = stepJournalOf(system);
    if (!journal) {
      try {
        return await summarize(provider, request, signal);
      } catch (thrown) {
        throw toProviderError(thrown);
      }
    }
    const outcome = await journal.step<SummaryStepRecord>(
      summaryStep,
      (stepSignal) => recordSummary(provider, request, options.requestTimeoutMs, stepSignal),
      signal,
    );
    if (outcome.status === 'interrupted') {
      // A new attempt is a new step, recorded in its turn: asking again outside the journal would not replay.
      throw new ProviderError('the summary request of an earlier attempt did not finish', { code: 'incomplete_stream', retryable: true });
    }
    if ('error' in outcome.value) throw providerErrorFromRecord(outcome.value.error);
    return outcome.value.output;
  });
}

/**
 * A compaction strategy of the user's: it gets the oldest messages and returns the messages that
 * replace them, sync or async. `signal` aborts when the run no longer wants the result (cancel).
 *
 * @example
 * ```ts
 * const keepUserMessages: CompactionStrategy = (oldest) => oldest.filter((message) => message.role === 'user');
 * ```
 */
export type CompactionStrategy = (oldest: Message[], context: { signal: AbortSignal }) => Message[] | Promise<Message[]>;

/** What the strategy actor is given: the oldest messages. */
export type StrategyInput = { messages: Message[] };

/** The messages that replace the oldest ones. */
export type StrategyOutput = { messages: Message[] };

/**
 * The actor logic that runs a user's compaction strategy. What it returns is checked
 * (`strategyResultProblem`): well-formed messages, every tool call with its results. A result that
 * is not (a `TypeError` naming the problem), or what a strategy throws, is the actor's error: not a
 * provider failure to retry, since the same function would fail the same way. Stopping the actor
 * aborts the strategy's `signal`.
 *
 * @example
 * ```ts
 * const strategyLogic = createStrategyLogic(async (oldest, { signal }) => [
 *   { role: 'user', content: await mySummarizer(oldest, signal) },
 * ]);
 * ```
 */
export function createStrategyLogic(strategy: CompactionStrategy) {
  return fromPromise<StrategyOutput, StrategyInput>(async ({ input, signal }) => {
    const result: unknown = await strategy(input.messages, { signal });
    const problem = strategyResultProblem(result);
    if (problem !== undefined) throw new TypeError(`context.strategy: ${problem}`);
    return { messages: result as Message[] };
  });
}
