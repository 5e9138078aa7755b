/**
 * One property run of the long-conversation controls (DESIGN §12) under random faults: a random
 * mix of a context window (summarize, drop or a strategy; the summary failing, empty or hanging;
 * the provider answering "context length exceeded"), budgets (tokens crossed mid-round, a time
 * limit firing mid-request or mid-tool), guardrails (passing, tripping, throwing, returning garbage,
 * hanging past their timeout), steering (`queue` or `reject`, messages sent at random moments),
 * `user.interrupt` at a random moment, and fallback chains (2–3 providers failing retryably or
 * fatally), over scripted models in the process (`handlerProvider`). Afterwards the guarantees of
 * DESIGN §3 are checked: the run ends in done, halted or error; nothing escapes; the history answers
 * each call once, in order; every message the user sent and the run took is in it exactly once; no
 * request started over the token budget; fallback only after retries on a retryable error. Shared
 * by `test/controls-properties.test.ts` and `npm run test:soak` (`--controls-runs`).
 *
 * @example
 * ```ts
 * const [controlsCase] = fc.sample(controlsCaseArb, { seed: 1, numRuns: 1 });
 * const report = await runControlsCase(controlsCase!);
 * report.violations; // [] when every property held
 * ```
 */
import fc from 'fast-check';
import { createActor, toPromise } from 'xstate';
import { createConversationMachine } from '../../src/machines/chart/conversation.js';
import type { ConversationOptions } from '../../src/machines/chart/options.js';
import type { ConversationEmittedEvent, RunOutput } from '../../src/machines/names/types.js';
import type { Message } from '../../src/model/messages.js';
import type { Provider } from '../../src/model/provider.js';
import { type HandlerRequest, handlerProvider } from '../../src/providers/handler/handler-provider.js';
import { defineTool, type Tool } from '../../src/tools/define-tool.js';
import type { Guardrail } from '../../src/tools/guardrail.js';
import { historyProblems } from './property-run.js';
import { turnChunks } from './scripted-model.js';

type Turn =
  | { kind: 'text' }
  | { kind: 'calls'; n: number; hang: boolean }
  | { kind: 'fail'; status: 503 | 401 | 400 }
  | { kind: 'tooLong' }
  | { kind: 'slow' };
type GuardrailKind = 'pass' | 'trip' | 'throw' | 'garbage' | 'hang' | 'hangDeaf';

export type ControlsCase = {
  /** Each provider's answers, in order (then text); the first is the primary. */
  providers: Turn[][];
  maxRetries: number;
  maxToolIterations: number;
  context: null | { keepLast: number; strategy: 'summarize' | 'drop' | 'fn' | 'fnThrows'; summary: 'ok' | 'empty' | 'fail' };
  budget: null | { maxTotalTokens?: number; maxDurationMs?: number };
  guardrails: { input: GuardrailKind[]; output: GuardrailKind[] };
  steering: 'queue' | 'reject';
  /** `user.message`s sent after this many emitted events each. */
  messagesAfter: number[];
  /** A `user.interrupt` after this many emitted events. */
  interruptAfter: number | null;
  /** Earlier history (turns of question and answer) the run starts from. */
  earlierTurns: number;
};

const turnArb: fc.Arbitrary<Turn> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'text' as const }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('calls' as const), n: fc.integer({ min: 1, max: 2 }), hang: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('fail' as const),
      status: fc.constantFrom(503 as const, 503 as const, 401 as const, 400 as const),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'tooLong' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'slow' as const }) },
);
const guardrailKindArb = fc.constantFrom<GuardrailKind>('pass', 'pass', 'pass', 'trip', 'throw', 'garbage', 'hang', 'hangDeaf');

export const controlsCaseArb: fc.Arbitrary<ControlsCase> = fc.record({
  providers: fc.array(fc.array(turnArb, { maxLength: 6 }), { minLength: 1, maxLength: 3 }),
  maxRetries: fc.integer({ min: 0, max: 2 }),
  maxToolIterations: fc.integer({ min: 0, max: 3 }),
  context: fc.option(
    fc.record({
      keepLast: fc.integer({ min: 0, max: 4 }),
      strategy: fc.constantFrom('summarize' as const, 'summarize' as const, 'drop' as const, 'fn' as const, 'fnThrows' as const),
      summary: fc.constantFrom('ok' as const, 'ok' as const, 'empty' as const, 'fail' as const),
    }),
    { nil: null },
  ),
  budget: fc.option(
    fc.record({ maxTotalTokens: fc.integer({ min: 10, max: 80 }), maxDurationMs: fc.integer({ min: 20, max: 400 }) }, { requiredKeys: [] }),
    { nil: null },
  ),
  guardrails: fc.record({ input: fc.array(guardrailKindArb, { maxLength: 2 }), output: fc.array(guardrailKindArb, { maxLength: 2 }) }),
  steering: fc.constantFrom('queue' as const, 'reject' as const),
  messagesAfter: fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 2 }),
  interruptAfter: fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }),
  earlierTurns: fc.integer({ min: 0, max: 4 }),
});

export type ControlsReport = { output: RunOutput | undefined; violations: string[] };

const usage = { prompt: 10, completion: 5 };

/** Waits for `ms` or until `signal` aborts, whichever comes first. */
const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

function scriptedProvider(
  name: string,
  turns: Turn[],
  state: { requests: number; summaries: number },
  summary: 'ok' | 'empty' | 'fail',
): Provider {
  let next = 0;
  let serial = 0;
  return {
    ...handlerProvider(async function* (request: HandlerRequest) {
      state.requests++;
      // A summary request (the compaction's): its own script, so the turns stay the run's.
      if (String(request.messages[0]?.content ?? '').startsWith('You summarize the earlier part')) {
        state.summaries++;
        if (summary === 'fail') throw Object.assign(new Error('summary unavailable'), { status: 503 });
        yield* turnChunks({ text: summary === 'empty' ? ' ' : 'the summary of what came before', usage });
        return;
      }
      const turn = turns[next++] ?? { kind: 'text' };
      if (turn.kind === 'fail') throw Object.assign(new Error(`status ${turn.status}`), { status: turn.status });
      if (turn.kind === 'tooLong') {
        throw Object.assign(new Error("This model's maximum context length is 8192 tokens"), {
          status: 400,
          error: { code: 'context_length_exceeded', type: 'invalid_request_error' },
        });
      }
      if (turn.kind === 'slow') await pause(60, request.signal);
      if (request.signal.aborted) throw request.signal.reason;
      if (turn.kind === 'calls') {
        const calls = Array.from({ length: turn.n }, (_, index) => ({
          id: `${name}_${++serial}`,
          name: turn.hang && index === 0 ? 'hang' : 'ok',
          args: {},
        }));
        yield* turnChunks({ toolCalls: calls });
        return;
      }
      yield* turnChunks({ text: `answer from ${name}`, usage });
    }),
    name,
    model: `${name}-model`,
  };
}

function guardrail(kind: GuardrailKind, index: number): Guardrail {
  return {
    name: `${kind}-${index}`,
    timeoutMs: 40,
    check: (_text, { signal }) => {
      switch (kind) {
        case 'pass':
          return { tripped: false };
        case 'trip':
          return { tripped: true, reason: 'not allowed' };
        case 'throw':
          throw new Error('classifier down');
        case 'garbage':
          return 'yes' as never;
        case 'hang':
          return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
        case 'hangDeaf':
          return new Promise((resolve) => setTimeout(() => resolve({ tripped: false }), 80));
      }
    },
  };
}

const tools: Array<Tool<never, unknown>> = [
  defineTool({ name: 'ok', description: 'ok', parameters: { type: 'object', properties: {} }, execute: () => 'done' }),
  defineTool({
    name: 'hang',
    description: 'hangs until stopped',
    parameters: { type: 'object', properties: {} },
    execute: (_args, { signal }) =>
      new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
  }),
] as unknown as Array<Tool<never, unknown>>;

const escaped: unknown[] = [];
let listening = false;
function listen(): void {
  if (listening) return;
  listening = true;
  process.on('unhandledRejection', (reason) => escaped.push(reason));
}

/** Runs one case and checks the properties. */
export async function runControlsCase(controlsCase: ControlsCase, options: { watchdogMs?: number } = {}): Promise<ControlsReport> {
  listen();
  const violations: string[] = [];
  const state = { requests: 0, summaries: 0 };
  const summary = controlsCase.context?.summary ?? 'ok';
  const providers = controlsCase.providers.map((turns, index) => scriptedProvider(`p${index}`, turns, state, summary));
  const context = controlsCase.context;
  const machineOptions: ConversationOptions = {
    provider: providers,
    tools,
    maxToolIterations: controlsCase.maxToolIterations,
    retry: { maxRetries: controlsCase.maxRetries, initialDelayMs: 1, maxDelayMs: 3, jitter: false },
    toolTimeoutMs: 150,
    requestTimeoutMs: 500,
    steering: controlsCase.steering,
    guardrails: { input: controlsCase.guardrails.input.map(guardrail), output: controlsCase.guardrails.output.map(guardrail) },
    ...(controlsCase.budget ? { budget: controlsCase.budget } : {}),
    ...(context
      ? {
          context: {
            maxInputTokens: 60 + context.keepLast * 5,
            keepLast: context.keepLast,
            strategy:
              context.strategy === 'fn'
                ? (oldest: Message[]) => [{ role: 'user' as const, content: `(${oldest.length} earlier messages)` }]
                : context.strategy === 'fnThrows'
                  ? () => {
                      throw new Error('strategy broke');
                    }
                  : context.strategy,
          },
        }
      : {}),
  };
  const earlier: Message[] = Array.from({ length: controlsCase.earlierTurns }, (_, index) => [
    { role: 'user' as const, content: `earlier question ${index} ${'about the sea '.repeat(4)}` },
    { role: 'assistant' as const, content: [{ type: 'text' as const, text: `earlier answer ${index} ${'about the tides '.repeat(4)}` }] },
  ]).flat();
  const machine = createConversationMachine(machineOptions);
  const actor = createActor(machine, { input: { messages: earlier } });
  const events: ConversationEmittedEvent[] = [];
  const sent: string[] = [];
  let interruptSent: string | undefined;
  let count = 0;
  actor.on('*', (event) => {
    events.push(event);
    count++;
    for (const [index, after] of controlsCase.messagesAfter.entries()) {
      if (count === after + 1 && actor.getSnapshot().status === 'active') {
        const content = `also ${index}`;
        sent.push(content);
        queueMicrotask(() => actor.send({ type: 'user.message', content }));
      }
    }
    if (controlsCase.interruptAfter !== null && count === controlsCase.interruptAfter + 1 && actor.getSnapshot().status === 'active') {
      interruptSent = 'change of plan';
      const content = interruptSent;
      queueMicrotask(() => actor.send({ type: 'user.interrupt', content }));
    }
  });
  actor.start();
  actor.send({ type: 'user.message', content: 'the question' });
  let output: RunOutput | undefined;
  const watchdog = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), options.watchdogMs ?? 5_000).unref());
  output = await Promise.race([toPromise(actor), watchdog]);
  if (!output) {
    violations.push(`the run did not end within the watchdog (state ${JSON.stringify(actor.getSnapshot().value)})`);
    actor.stop();
    return { output, violations };
  }
  // Late settlements (a deaf guardrail, a tool ignoring its signal) land after the run: give them a turn.
  await new Promise((resolve) => setTimeout(resolve, 100));
  if (!['done', 'halted', 'error'].includes(output.status)) violations.push(`ended ${output.status}`);
  for (const problem of historyProblems(output.messages)) violations.push(problem);
  // Every tool call of the history got exactly one tool.result event (a response an interrupt or a
  // retry dropped had its calls announced, never run: `discardPartial` tells a display so).
  const calls = output.messages.flatMap((message) =>
    message.role === 'assistant' ? message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : [])) : [],
  );
  const results = events.flatMap((event) => (event.type === 'tool.result' ? [event.toolCallId] : []));
  for (const id of new Set(calls)) {
    const times = results.filter((result) => result === id).length;
    if (times !== 1) violations.push(`tool call ${id} got ${times} tool.result events`);
  }
  // The user's messages: each taken one (queued or the interrupt) is in the history exactly once;
  // a rejected one is not in it.
  const userTexts = output.messages.flatMap((message) =>
    message.role === 'user' && typeof message.content === 'string' ? [message.content] : [],
  );
  const queued = new Set(events.flatMap((event) => (event.type === 'user.message.queued' ? [String(event.content)] : [])));
  for (const content of sent) {
    const times = userTexts.filter((text) => text === content).length;
    const expected = queued.has(content) ? 1 : 0;
    // A queued message the run took may have been compacted away (summarized or dropped) afterwards.
    const compactedAway = queued.has(content) && times === 0 && events.some((event) => event.type === 'context.compacted');
    if (times !== expected && !compactedAway)
      violations.push(`user message "${content}" is in the history ${times} times (expected ${expected})`);
    if (controlsCase.steering === 'reject' && queued.has(content))
      violations.push(`user message "${content}" was queued with steering: 'reject'`);
  }
  if (interruptSent !== undefined) {
    const times = userTexts.filter((text) => text === interruptSent).length;
    const tookIt = events.some(
      (event) => event.type === 'request.interrupted' || (event.type === 'user.message.queued' && event.content === interruptSent),
    );
    const compactedAway = times === 0 && events.some((event) => event.type === 'context.compacted');
    if (tookIt && times !== 1 && !compactedAway) violations.push(`the interrupt is in the history ${times} times`);
  }
  // No request starts at or over the token budget (failed attempts count).
  const limit = controlsCase.budget?.maxTotalTokens;
  if (limit !== undefined) {
    let spent = 0;
    for (const event of events) {
      if (event.type === 'request.started' && spent >= limit) violations.push(`a request started with ${spent} tokens spent of ${limit}`);
      if (event.type === 'usage') spent = event.total.totalTokens;
    }
  }
  // Fallback: only after the retries, never after a fatal error; never past the list.
  const fallbacks = events.filter((event) => event.type === 'provider.fallback');
  for (const fallback of fallbacks) {
    if (fallback.type === 'provider.fallback' && !fallback.error.retryable)
      violations.push(`fell back after a fatal error (${fallback.error.code})`);
  }
  if (output.status === 'halted' && output.reason === 'budget' && !output.budget)
    violations.push('halted on a budget without output.budget');
  if (output.status === 'halted' && output.reason === 'guardrail' && !output.guardrail)
    violations.push('halted on a guardrail without output.guardrail');
  if (escaped.length > 0) violations.push(`escaped: ${escaped.splice(0).map(String).join('; ')}`);
  return { output, violations };
}
