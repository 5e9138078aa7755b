/**
 * One property-test run: a random case (wire, tools, options, fault plan, cancel and approval
 * decisions, and now and then the long-conversation `controls` of DESIGN §12: guardrails, budgets,
 * steering, interrupts, a fallback list over one or more fault servers sharing the plan) played
 * through the real SDK providers, or `aiSdkProvider` over real AI SDK provider packages, against a
 * {@link startFaultServer}, and every guarantee of docs/behaviour.md (and of §12 for the controls)
 * checked afterwards. Shared by `test/properties.test.ts` (a fast sample
 * under vitest) and `test/soak.ts` (thousands of runs). Cases are plain JSON, so a failing one can
 * be printed, pasted into a regression test and replayed with {@link runCase}.
 *
 * @example
 * ```ts
 * const [example] = fc.sample(runCaseArb, { seed: 1, numRuns: 1 });
 * const report = await runCase(example!);
 * report.violations; // [] when every property held
 * ```
 */
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import fc from 'fast-check';
import { createActor, toPromise } from 'xstate';
import { createConversationMachine } from '../../src/machines/chart/conversation.js';
import type { ConversationOptions } from '../../src/machines/chart/options.js';
import type { ConversationEmittedEvent, RunOutput } from '../../src/machines/names/types.js';
import { resultTexts } from '../../src/machines/rounds/tool-round.js';
import { budgetResultText } from '../../src/machines/controls/budget-halt.js';
import { interruptedByUserText } from '../../src/machines/controls/steering.js';
import { textOfParts } from '../../src/machines/rounds/response-commit.js';
import type { Provider } from '../../src/model/provider.js';
import { findMessagesProblem, type Message, userContentText } from '../../src/model/messages.js';
import { serializeResult } from '../../src/util/serialize-result.js';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { aiSdkProvider } from '../../src/providers/ai-sdk/index.js';
import { anthropicProvider } from '../../src/providers/anthropic/index.js';
import { toAnthropicMessages } from '../../src/providers/anthropic/to-anthropic-messages.js';
import { openaiProvider } from '../../src/providers/openai/index.js';
import { toOpenAIMessages } from '../../src/providers/openai-wire/to-openai-messages.js';
import type { OpenAIChatMessage } from '../../src/providers/openai-wire/chat-types.js';
import { toResponsesInput } from '../../src/providers/openai-responses/to-responses-input.js';
import type Anthropic from '@anthropic-ai/sdk';
import { defineTool, type Tool } from '../../src/tools/define-tool.js';
import { toolContent } from '../../src/tools/tool-content.js';

/** A 1×1 PNG, the image the `media` tool returns. */
const pixelPng = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
import type { Guardrail, GuardrailVerdict } from '../../src/tools/guardrail.js';
import { HaltError } from '../../src/tools/halt-error.js';
import {
  encryptedOf,
  startFaultServer,
  type CallSpec,
  type FaultServer,
  type FaultStep,
  type RequestLog,
  type Wire,
} from './fault-server.js';
// Loaded up front: the providers import their SDK on first use, and a cold import can take longer
// than the short request timeouts used here, which would turn the first runs into timeouts.
import 'openai';
import '@anthropic-ai/sdk';

// The SDKs log every unparsable SSE line to the console; the faults here produce thousands.
process.env.OPENAI_LOG = 'off';
process.env.ANTHROPIC_LOG = 'off';

export const toolKinds = [
  'ok',
  'okObject',
  'slowOk',
  'throwError',
  'throwSync',
  'throwValue',
  'hang',
  'hangHonours',
  'abortRejects',
  'bigint',
  'cycle',
  'huge',
  'halt',
  'approval',
  'approvalFn',
  'media',
] as const;
export type ToolKind = (typeof toolKinds)[number];

export type CaseOptions = {
  maxToolIterations: number;
  retry: false | { maxRetries: number; initialDelayMs: number; maxDelayMs: number; jitter: boolean };
  maxConcurrentTools?: number;
  toolTimeoutMs: number;
  requestTimeoutMs: number;
  doomLoop: false | { threshold: number };
  maxToolResultBytes?: number;
  maxToolArgsBytes?: number;
};

export type Decision = 'approve' | 'deny' | 'cancel' | 'bogus-then-approve';

/**
 * `aiSdkProvider` over a real AI SDK provider package's chat model: `@ai-sdk/openai-compatible`'s
 * (`createOpenAICompatible(…).chatModel(…)`) or `@ai-sdk/openai`'s (`createOpenAI(…).chat(…)`), speaking
 * Chat Completions to the same fault server as `'openai'`, always streamed (the adapter calls `doStream`).
 */
export const aiSdkWires = ['ai-sdk-compatible', 'ai-sdk-openai'] as const;
export type AiSdkWire = (typeof aiSdkWires)[number];
/** Which client a case's provider is: a native provider over its wire, or the adapter ({@link aiSdkWires}). */
export type RunWire = Wire | AiSdkWire;
export const runWires: readonly RunWire[] = ['openai', 'anthropic', 'responses', ...aiSdkWires];
const isAiSdk = (wire: RunWire): wire is AiSdkWire => (aiSdkWires as readonly string[]).includes(wire);
/** The wire the fault server speaks to a provider of this kind. */
export const serverWire = (wire: RunWire): Wire => (isAiSdk(wire) ? 'openai' : wire);
/** Whether the provider streams: the adapter always does, whatever the case drew. */
export const streams = (wire: RunWire, stream: boolean): boolean => isAiSdk(wire) || stream;

export type RunCase = {
  wire: RunWire;
  /** Always true on the adapter's wires (it always streams). */
  stream: boolean;
  tools: ToolKind[];
  plan: FaultStep[];
  options: CaseOptions;
  system: boolean;
  /** Send `cancel` after this many emitted events, or after this many ms. */
  cancel: null | { afterEvents: number } | { afterMs: number };
  /** Answers to approval requests, in order (then approve). */
  approvals: Decision[];
  /** Send approvals and cancels from a timer instead of inside the event listener. */
  asyncDecisions: boolean;
  /**
   * Send a second `user.message` while the run is busy, after this many emitted events: turned away
   * (the default steering), or queued with `controls.steering: 'queue'`.
   */
  strayMessageAfterEvents: number | null;
  /** Long-conversation controls (DESIGN §12). Absent in cases written before them, which run as they did. */
  controls?: RunControls;
};

/** What a guardrail does on the check it misbehaves on (`GuardrailSpec.at`); every other check passes. */
export const guardrailBehaviours = ['pass', 'trip', 'throw', 'garbage', 'hang', 'hangHonours'] as const;
export type GuardrailBehaviour = (typeof guardrailBehaviours)[number];

export type GuardrailSpec = {
  /** `hang` outlives its `timeoutMs` ignoring its signal; `hangHonours` rejects once its signal aborts. */
  behaviour: GuardrailBehaviour;
  /** Which of this guardrail's checks (0 = its first) behaves so. */
  at: number;
  /** Answer from a later macrotask instead of at once. */
  async: boolean;
};

/** One extra provider of a fallback list. */
export type FallbackSpec = {
  wire: RunWire;
  stream: boolean;
  /** On a fault server of its own (always so when its wire is not the case's); every server shares the plan. */
  ownServer: boolean;
};

export type RunControls = {
  guardrails?: { input: GuardrailSpec[]; output: GuardrailSpec[]; timeoutMs: number };
  budget?: { maxTotalTokens?: number; maxDurationMs?: number };
  steering?: 'reject' | 'queue';
  /**
   * `user.interrupt` (an empty one must be rejected) after this many emitted events, or, with `on`,
   * at once on the ((afterEvents - 1) % 3 + 1)-th event of that type (aimed at a state: a request before or after
   * its first delta or its last chunk, a retry's backoff, a running tool, an approval, a guardrail).
   */
  interrupts?: Array<{ afterEvents: number; empty: boolean; on?: InterruptPoint }>;
  /** Providers after the case's own: `provider: [primary, ...fallback]`. */
  fallback?: FallbackSpec[];
};

export const interruptPoints = [
  'request.started',
  'text.delta',
  'usage',
  'request.retry',
  'tool.started',
  'tool.approval.requested',
  'guardrail.checked',
] as const;
export type InterruptPoint = (typeof interruptPoints)[number];

/** The text of the i-th interrupt of a case. */
export const interruptText = (index: number, empty: boolean) => (empty ? '  ' : `Interrupt ${index}: change course.`);
export const strayText = 'A stray message while busy.';
const firstMessage = 'Please use the tools.';

export type RunReport = {
  output: RunOutput | undefined;
  /** What the controls made happen, e.g. `provider.fallback`, `request.interrupted (executingTools)`, for the soak's summary. */
  notes: string[];
  violations: string[];
  /** Violations matching an engine bug already written down as an `it.fails` regression (see {@link knownBugNames}). */
  knownBugs: string[];
  /** What the last HTTP request got, e.g. to see which fault ended a run in `error`. */
  lastInjected: string[];
  injected: string[];
  requests: number;
  durationMs: number;
  executions: number;
};

/**
 * Engine bugs the properties found that are written down as `it.fails` regressions in
 * test/property-regressions.test.ts. Runs hitting exactly these are counted apart (and do not fail
 * the sample) until the engine is fixed; set `PROPERTY_STRICT=1` to count them as violations.
 */
export const knownBugNames: Record<string, string> = {
  // KB1 (fixed in 84ec67b, now a plain regression test): a call settled while planning got no
  // tool.result event when its response ended the run at the iteration cap or as a doom loop.
  // KB2 (fixed in 9952b67, now a plain regression test): on the Anthropic wire a broken transfer
  // (SSE data line not JSON; non-streamed body cut short or empty) ended the run in error
  // unknown/non-retryable with retries left, where the OpenAI provider retried it.
  // KB3 (fixed in a7901af, now a plain regression test): messages that joined the history at one
  // request boundary (two queued, or a queued one and an interrupt) were checked by the input
  // guardrails as one — only the last — so the others reached the model unchecked.
};
const strict = process.env.PROPERTY_STRICT === '1';

/** How long a hanging tool keeps its (bounded) timer, ignoring its signal. */
export const hangMs = 80;

// ---------------------------------------------------------------------------------------------
// Arbitraries

/** One step of a fault server's plan: an answer (text, tool calls, a repeated call) or a fault. */
export const stepArb: fc.Arbitrary<FaultStep> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('text' as const), thinking: fc.boolean() }) },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('tools' as const),
      calls: fc.array(
        fc.record({
          tool: fc.nat({ max: 7 }),
          args: fc.constantFrom<CallSpec['args']>('valid', 'valid', 'valid', 'valid', 'valid', 'invalidJson', 'badSchema', 'huge'),
          unknown: fc.constantFrom(false, false, false, false, false, false, false, true),
          n: fc.nat({ max: 9 }),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      thinking: fc.boolean(),
      text: fc.boolean(),
    }),
  },
  { weight: 3, arbitrary: fc.constant({ kind: 'repeat' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('empty' as const), body: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('rateLimit' as const),
      retryAfter: fc.option(
        fc.record({ header: fc.constantFrom('retry-after' as const, 'retry-after-ms' as const), ms: fc.integer({ min: 0, max: 25 }) }),
        { nil: null, freq: 5 },
      ),
      echoKey: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('status' as const),
      status: fc.constantFrom(500 as const, 502 as const, 503 as const, 529 as const, 500 as const, 401 as const, 400 as const),
      echoKey: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('inStreamError' as const), echoKey: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reset' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cut' as const), how: fc.constantFrom('destroy' as const, 'end' as const) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'malformed' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'stall' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('slow' as const),
      delayMs: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.constant(450)),
      reply: fc.constantFrom('text' as const, 'tools' as const),
    }),
  },
);

const optionsArb: fc.Arbitrary<CaseOptions> = fc.record(
  {
    maxToolIterations: fc.integer({ min: 0, max: 4 }),
    retry: fc.oneof(
      { weight: 1, arbitrary: fc.constant(false as const) },
      {
        weight: 5,
        arbitrary: fc.record({
          maxRetries: fc.integer({ min: 0, max: 3 }),
          initialDelayMs: fc.integer({ min: 0, max: 3 }),
          maxDelayMs: fc.integer({ min: 3, max: 8 }),
          jitter: fc.boolean(),
        }),
      },
    ),
    maxConcurrentTools: fc.integer({ min: 1, max: 3 }),
    toolTimeoutMs: fc.integer({ min: 10, max: 50 }),
    requestTimeoutMs: fc.integer({ min: 150, max: 400 }),
    doomLoop: fc.oneof(fc.constant(false as const), fc.record({ threshold: fc.integer({ min: 2, max: 3 }) })),
    maxToolResultBytes: fc.integer({ min: 256, max: 4096 }),
    maxToolArgsBytes: fc.integer({ min: 1024, max: 8192 }),
  },
  { requiredKeys: ['maxToolIterations', 'retry', 'toolTimeoutMs', 'requestTimeoutMs', 'doomLoop'] },
);

const guardrailSpecArb: fc.Arbitrary<GuardrailSpec> = fc.record({
  behaviour: fc.oneof(
    { weight: 8, arbitrary: fc.constant('pass' as const) },
    { weight: 3, arbitrary: fc.constant('trip' as const) },
    { weight: 1, arbitrary: fc.constant('throw' as const) },
    { weight: 1, arbitrary: fc.constant('garbage' as const) },
    { weight: 1, arbitrary: fc.constant('hang' as const) },
    { weight: 1, arbitrary: fc.constant('hangHonours' as const) },
  ),
  at: fc.integer({ min: 0, max: 2 }),
  async: fc.boolean(),
});

/** Each control is drawn now and then; a record with none is no controls at all. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: arbitrary });

export const runControlsArb: fc.Arbitrary<RunControls> = fc
  .record({
    guardrails: sometimes(
      fc.record({
        input: fc.array(guardrailSpecArb, { maxLength: 2 }),
        output: fc.array(guardrailSpecArb, { maxLength: 2 }),
        // Well under `hangMs`: a hanging check always outlives it.
        timeoutMs: fc.integer({ min: 5, max: 40 }),
      }),
    ),
    budget: sometimes(
      fc
        .record(
          {
            // A full answer reports 13 tokens: crossed after one to six of them.
            maxTotalTokens: fc.integer({ min: 1, max: 80 }),
            // Short enough now and then to fire mid-request or mid-tool.
            maxDurationMs: fc.oneof(fc.integer({ min: 5, max: 200 }), fc.integer({ min: 200, max: 1_500 })),
          },
          { requiredKeys: [] },
        )
        .filter((budget) => budget.maxTotalTokens !== undefined || budget.maxDurationMs !== undefined),
    ),
    steering: sometimes(fc.constantFrom('reject' as const, 'queue' as const, 'queue' as const)),
    interrupts: sometimes(
      fc.array(
        fc.record(
          {
            afterEvents: fc.integer({ min: 1, max: 40 }),
            empty: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
            // Weighted to the states a run passes quickly: a running tool round, an approval.
            on: fc.constantFrom<InterruptPoint>(
              ...interruptPoints,
              'tool.started',
              'tool.started',
              'tool.approval.requested',
              'tool.approval.requested',
            ),
          },
          { requiredKeys: ['afterEvents', 'empty'] },
        ),
        { minLength: 1, maxLength: 2 },
      ),
    ),
    fallback: sometimes(
      fc.array(
        fc
          .record({
            wire: fc.constantFrom<RunWire>(...runWires),
            stream: fc.boolean(),
            ownServer: fc.boolean(),
          })
          .map((entry) => ({ ...entry, stream: streams(entry.wire, entry.stream) })),
        { minLength: 1, maxLength: 2 },
      ),
    ),
  })
  .map((drawn) => {
    const controls: RunControls = {};
    for (const [key, value] of Object.entries(drawn)) if (value !== undefined) Object.assign(controls, { [key]: value });
    return controls;
  })
  .filter((controls) => Object.keys(controls).length > 0);

/** A whole random case: about half of them with controls. */
const baseCaseArb: fc.Arbitrary<RunCase> = fc.record({
  wire: fc.constantFrom<RunWire>(...runWires),
  stream: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  tools: fc.array(fc.constantFrom(...toolKinds), { minLength: 1, maxLength: 4 }),
  // Steps, and now and then a run of the same call (a doom loop in the making).
  plan: fc
    .array(
      fc.oneof(
        { weight: 6, arbitrary: stepArb.map((step) => [step]) },
        {
          weight: 1,
          arbitrary: fc.integer({ min: 2, max: 4 }).map((times) => Array.from({ length: times }, () => ({ kind: 'repeat' as const }))),
        },
      ),
      { maxLength: 8 },
    )
    .map((segments) => segments.flat().slice(0, 12)),
  options: optionsArb,
  system: fc.boolean(),
  cancel: fc.oneof(
    { weight: 4, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.record({ afterEvents: fc.integer({ min: 0, max: 40 }) }) },
    { weight: 1, arbitrary: fc.record({ afterMs: fc.integer({ min: 0, max: 150 }) }) },
  ),
  approvals: fc.array(fc.constantFrom<Decision>('approve', 'approve', 'deny', 'cancel', 'bogus-then-approve'), { maxLength: 4 }),
  asyncDecisions: fc.boolean(),
  strayMessageAfterEvents: fc.option(fc.integer({ min: 1, max: 30 }), { nil: null, freq: 3 }),
});

/** As drawn: `stream` not yet set for the adapter, which always streams. */
const drawnCaseArb: fc.Arbitrary<RunCase> = fc
  .tuple(baseCaseArb, fc.option(runControlsArb, { nil: null, freq: 2 }))
  .map(([base, controls]) => (controls === null ? base : { ...base, controls }));

export const runCaseArb: fc.Arbitrary<RunCase> = drawnCaseArb.map((value) => ({ ...value, stream: streams(value.wire, value.stream) }));

/** A case for one wire only, or for one of a few. */
export const runCaseArbFor = (...wires: [RunWire, ...RunWire[]]): fc.Arbitrary<RunCase> =>
  fc.tuple(drawnCaseArb, fc.constantFrom(...wires)).map(([value, wire]) => ({ ...value, wire, stream: streams(wire, value.stream) }));

// ---------------------------------------------------------------------------------------------
// Tools

type ToolState = {
  executions: Map<string, number>;
  /** Round (index of the assistant message) of each executed call id is resolved later from the history. */
  hangs: Set<Promise<unknown>>;
  threw: Set<string>;
  active: number;
  maxActive: number;
  /** Calls whose signal fired. */
  aborted: Set<string>;
  /** Calls whose `execute` settled by itself (returned, resolved, threw or rejected). */
  settled: Set<string>;
};

const parameters: Record<string, unknown> = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };

function makeTool(kind: ToolKind, index: number, state: ToolState): Tool {
  const name = `${kind}_${index}`;
  const count = (toolCallId: string) => state.executions.set(toolCallId, (state.executions.get(toolCallId) ?? 0) + 1);
  const track = <T>(promise: Promise<T>): Promise<T> => {
    state.hangs.add(promise);
    const forget = () => state.hangs.delete(promise);
    promise.then(forget, forget);
    return promise;
  };
  const base = { name, description: `A ${kind} tool`, parameters };
  const define = (
    execute: (args: { n: number }, context: { signal: AbortSignal; toolCallId: string }) => unknown,
    extra: { needsApproval?: boolean | ((args: { n: number }) => boolean) } = {},
  ) =>
    defineTool({
      ...base,
      ...(extra.needsApproval === undefined
        ? {}
        : {
            needsApproval:
              typeof extra.needsApproval === 'boolean'
                ? extra.needsApproval
                : (args: Record<string, unknown>) => (extra.needsApproval as (args: { n: number }) => boolean)(args as { n: number }),
          }),
      execute: (args: Record<string, unknown>, context) => {
        count(context.toolCallId);
        // Running = started, neither settled nor aborted (a tool that ignores its abort is no longer the machine's).
        state.active++;
        state.maxActive = Math.max(state.maxActive, state.active);
        let released = false;
        const release = () => {
          if (released) return;
          released = true;
          state.active--;
        };
        const settle = () => {
          state.settled.add(context.toolCallId);
          release();
        };
        context.signal.addEventListener(
          'abort',
          () => {
            state.aborted.add(context.toolCallId);
            release();
          },
          { once: true },
        );
        try {
          const value = execute(args as { n: number }, context);
          if (value instanceof Promise) value.then(settle, settle);
          else settle();
          return value;
        } catch (error) {
          settle();
          throw error;
        }
      },
    }) as unknown as Tool;

  switch (kind) {
    case 'ok':
      return define(({ n }) => `ok ${n * 2}`);
    case 'okObject':
      return define(async ({ n }) => ({ n, list: [1, 2, 3], nested: { at: index } }));
    case 'slowOk':
      return define(({ n }) => track(new Promise((resolve) => setTimeout(() => resolve(`slow ${n}`), 3))));
    case 'throwError':
      return define(async () => {
        throw new Error('tool failed on purpose');
      });
    case 'media':
      // Text and an image as parts; every third call's image is a file: URL, which makes its result an error.
      return define(({ n }) =>
        toolContent([
          { type: 'text', text: `picture ${n}` },
          { type: 'image', data: Math.abs(n) % 3 === 0 ? 'file:///etc/passwd' : pixelPng, mediaType: 'image/png' },
        ]),
      );
    case 'throwSync':
      return define(() => {
        throw new TypeError('sync failure');
      });
    case 'throwValue':
      return define(async ({ n }) => {
        const values: unknown[] = ['a string', 42, null, undefined, { code: n }, 10n, Symbol('s'), [1, 2]];
        throw values[n % values.length];
      });
    case 'hang':
      // Ignores its signal; the timer is bounded so the process can drain.
      return define(() => track(new Promise((resolve) => setTimeout(() => resolve('finished far too late'), hangMs))));
    case 'hangHonours':
      return define((_args, { signal }) =>
        track(
          new Promise((resolve) => {
            const timer = setTimeout(() => resolve('late'), hangMs);
            signal.addEventListener(
              'abort',
              () => {
                clearTimeout(timer);
                resolve('aborted');
              },
              { once: true },
            );
          }),
        ),
      );
    case 'abortRejects':
      // Rejects once aborted: a late rejection nobody else awaits.
      return define((_args, { signal }) => {
        const promise = new Promise((resolve, reject) => {
          const timer = setTimeout(() => resolve('not aborted'), hangMs);
          signal.addEventListener(
            'abort',
            () => {
              clearTimeout(timer);
              reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
            },
            { once: true },
          );
        });
        const settled = promise.then(
          () => undefined,
          () => undefined,
        );
        state.hangs.add(settled);
        void settled.then(() => state.hangs.delete(settled));
        return promise;
      });
    case 'bigint':
      return define(({ n }) => ({ big: 2n ** 70n + BigInt(n) }));
    case 'cycle':
      return define(({ n }) => {
        const value: Record<string, unknown> = { n };
        value.self = value;
        value.list = [value];
        return value;
      });
    case 'huge':
      return define(({ n }) => (n % 2 === 0 ? 'y'.repeat(200_000) : { rows: Array.from({ length: 20_000 }, (_, row) => row) }));
    case 'halt':
      return define(({ n }) => {
        state.threw.add(`halt ${n}`);
        throw new HaltError(`halted by tool ${n}`);
      });
    case 'approval':
      return define(({ n }) => `approved ${n}`, { needsApproval: true });
    case 'approvalFn':
      return define(({ n }) => `approved ${n}`, {
        needsApproval: ({ n }) => {
          if (n === 5) throw new Error('needsApproval failed');
          return n % 2 === 0;
        },
      });
  }
}

// ---------------------------------------------------------------------------------------------
// Guardrails

/** One check a guardrail was asked for, as it went. */
export type GuardrailCall = {
  phase: 'input' | 'output';
  name: string;
  /** Which of this guardrail's checks (0 = its first). */
  check: number;
  behaviour: GuardrailBehaviour;
  text: string;
  startedAt: number;
  /** When the check answered by itself (a verdict, garbage or a throw); unset while it hangs. */
  settledAt?: number;
  /** Its signal fired. */
  aborted: boolean;
  /** The reason a tripping check gave. */
  reason?: string;
};

/** What a `garbage` check returns (one picked by the text): none of it is a verdict. */
const garbageVerdicts: unknown[] = [null, { tripped: 'yes' }, 'ok', 42, undefined, { reason: 'no verdict' }];

function makeGuardrail(
  phase: 'input' | 'output',
  index: number,
  spec: GuardrailSpec,
  timeoutMs: number,
  calls: GuardrailCall[],
  hangs: Set<Promise<unknown>>,
): Guardrail {
  const name = `${phase}_${index}_${spec.behaviour}`;
  let checks = 0;
  return {
    name,
    timeoutMs,
    check: (text, { signal }) => {
      const check = checks++;
      const behaviour: GuardrailBehaviour = check === spec.at ? spec.behaviour : 'pass';
      const call: GuardrailCall = { phase, name, check, behaviour, text, startedAt: performance.now(), aborted: signal.aborted };
      calls.push(call);
      signal.addEventListener(
        'abort',
        () => {
          call.aborted = true;
        },
        { once: true },
      );
      const settled = () => {
        call.settledAt ??= performance.now();
      };
      if (behaviour === 'hang' || behaviour === 'hangHonours') {
        const hang = new Promise<GuardrailVerdict>((resolve, reject) => {
          const timer = setTimeout(() => resolve({ tripped: false }), hangMs);
          // An honouring check rejects once aborted: a late rejection nobody awaits any more.
          if (behaviour === 'hangHonours')
            signal.addEventListener(
              'abort',
              () => {
                clearTimeout(timer);
                reject(signal.reason instanceof Error ? signal.reason : new Error('guardrail aborted'));
              },
              { once: true },
            );
        });
        const quiet = hang.then(
          () => undefined,
          () => undefined,
        );
        hangs.add(quiet);
        void quiet.then(() => hangs.delete(quiet));
        return hang;
      }
      const answer = (): GuardrailVerdict => {
        settled();
        if (behaviour === 'throw') throw new Error(`${name} failed on purpose`);
        if (behaviour === 'garbage') return garbageVerdicts[(check + text.length) % garbageVerdicts.length] as GuardrailVerdict;
        if (behaviour === 'trip') {
          call.reason = `${name} trips on check ${check}`;
          return { tripped: true, reason: call.reason };
        }
        return { tripped: false };
      };
      if (!spec.async) return answer();
      return new Promise<GuardrailVerdict>((resolve, reject) =>
        setImmediate(() => {
          try {
            resolve(answer());
          } catch (error) {
            reject(error);
          }
        }),
      );
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Checks

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function safeJson(value: unknown): string {
  const seen = new WeakSet<object>();
  return (
    JSON.stringify(value, (_key, inner: unknown) => {
      if (typeof inner === 'bigint') return `${inner}n`;
      if (typeof inner === 'object' && inner !== null) {
        if (seen.has(inner)) return '[cycle]';
        seen.add(inner);
      }
      return inner;
    }) ?? ''
  );
}

/** Every tool call answered once, right after its message, in call order; tool messages nowhere else. */
export function historyProblems(messages: Message[]): string[] {
  const problems: string[] = [];
  const structural = findMessagesProblem(messages);
  if (structural) problems.push(`history malformed: ${structural}`);
  const seenCalls = new Set<string>();
  messages.forEach((message, index) => {
    if (message.role === 'assistant') {
      if (message.content.length === 0) problems.push(`message ${index}: empty assistant message`);
      const calls = message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : []));
      for (const id of calls) {
        if (seenCalls.has(id)) problems.push(`tool call id ${id} used twice`);
        seenCalls.add(id);
      }
      const next = messages[index + 1];
      if (calls.length === 0) {
        if (next?.role === 'tool') problems.push(`message ${index + 1}: tool results after an assistant message without calls`);
        return;
      }
      if (next?.role !== 'tool') {
        problems.push(`message ${index}: ${calls.length} tool call(s) without a tool message right after`);
        return;
      }
      const results = next.content.map((part) => part.toolCallId);
      if (JSON.stringify(results) !== JSON.stringify(calls))
        problems.push(
          `message ${index + 1}: results ${JSON.stringify(results)} do not answer calls ${JSON.stringify(calls)} one to one in order`,
        );
    }
    if (message.role === 'tool' && messages[index - 1]?.role !== 'assistant')
      problems.push(`message ${index}: tool message not right after an assistant message`);
  });
  return problems;
}

/** The history converted by the real OpenAI converter, checked as the API checks it. */
export function openaiRequestProblems(messages: Message[], system: string | undefined): string[] {
  const out = toOpenAIMessages(messages, system);
  const problems = openaiBodyProblems(out);
  if (messages.length > 0 && out.filter((message) => message.role !== 'system').length === 0) problems.push('openai request: no messages');
  return problems;
}

/** Chat Completions `messages` as the API checks them: every call answered by tool messages right after it, in order. */
export function openaiBodyProblems(out: OpenAIChatMessage[]): string[] {
  const problems: string[] = [];
  let pending: string[] = [];
  out.forEach((message, index) => {
    const where = `openai message ${index} (${message.role})`;
    if (message.role === 'tool') {
      const expected = pending.shift();
      if (expected === undefined) problems.push(`${where}: tool message answers no pending call`);
      else if (message.tool_call_id !== expected) problems.push(`${where}: answers ${message.tool_call_id}, expected ${expected}`);
      if (typeof message.content !== 'string') problems.push(`${where}: content is not a string`);
      return;
    }
    if (pending.length > 0) problems.push(`${where}: calls ${pending.join(', ')} not answered before it`);
    pending = [];
    if (message.role === 'assistant') {
      const calls = message.tool_calls ?? [];
      for (const call of calls) {
        if (typeof call.id !== 'string' || call.id === '') problems.push(`${where}: tool call without id`);
        if (typeof call.function.arguments !== 'string') problems.push(`${where}: arguments not a string`);
        if (typeof call.function.name !== 'string' || call.function.name === '') problems.push(`${where}: tool call without name`);
      }
      pending = calls.map((call) => call.id);
      if (calls.length === 0 && typeof message.content !== 'string') problems.push(`${where}: no content and no tool calls`);
    }
    if (message.role === 'user') {
      const text = typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
      if (text.trim() === '') problems.push(`${where}: empty user content`);
    }
  });
  if (pending.length > 0) problems.push(`openai: calls ${pending.join(', ')} never answered`);
  try {
    JSON.stringify(out);
  } catch (error) {
    problems.push(`openai request not serialisable: ${String(error)}`);
  }
  return problems;
}

/**
 * The history converted by the real Responses converter (stateless), checked as the API checks it;
 * and every encrypted reasoning item of the history that something followed goes back, in order.
 */
export function responsesRequestProblems(messages: Message[]): string[] {
  const { input } = toResponsesInput(messages, { stored: false });
  const problems = responsesBodyProblems(input, undefined);
  const expected = messages.flatMap((message) => {
    if (message.role !== 'assistant') return [];
    return message.content.flatMap((part, index) => {
      const encrypted =
        part.type === 'reasoning'
          ? (part.providerMetadata?.openai as { encryptedContent?: string } | undefined)?.encryptedContent
          : undefined;
      if (encrypted === undefined) return [];
      const followed = message.content
        .slice(index + 1)
        .some((later) => later.type === 'tool-call' || (later.type === 'text' && later.text !== ''));
      return followed ? [encrypted] : [];
    });
  });
  const sent = input.flatMap((item) =>
    'type' in item && item.type === 'reasoning' && item.encrypted_content ? [item.encrypted_content] : [],
  );
  if (JSON.stringify(sent) !== JSON.stringify(expected))
    problems.push('responses: encrypted reasoning of the history not sent back one to one in order');
  return problems;
}

/**
 * Responses `input` as the API checks it (stateless): every `function_call` answered by one
 * `function_call_output` after it; a reasoning item carries encrypted content the server sent and is
 * followed by the item that followed it (a call or an assistant message); no item refers to a stored one.
 */
export function responsesBodyProblems(input: unknown[], sentEncrypted: Set<string> | undefined): string[] {
  const problems: string[] = [];
  const open = new Set<string>();
  const answered = new Set<string>();
  input.forEach((raw, index) => {
    const where = `responses item ${index}`;
    if (!isRecord(raw)) {
      problems.push(`${where}: not an object`);
      return;
    }
    if (raw.id !== undefined) problems.push(`${where}: refers to a stored item (${String(raw.id)}) in a stateless request`);
    if (raw.type === 'function_call') {
      if (typeof raw.call_id !== 'string' || raw.call_id === '') problems.push(`${where}: call without call_id`);
      else if (open.has(raw.call_id) || answered.has(raw.call_id)) problems.push(`${where}: call_id ${raw.call_id} used twice`);
      else open.add(raw.call_id);
      if (typeof raw.arguments !== 'string') problems.push(`${where}: arguments not a string`);
      if (typeof raw.name !== 'string' || raw.name === '') problems.push(`${where}: call without name`);
    } else if (raw.type === 'function_call_output') {
      const id = String(raw.call_id);
      if (!open.has(id)) problems.push(`${where}: output for ${id}, which no earlier call is waiting for`);
      open.delete(id);
      answered.add(id);
      // Text, or (a toolContent result) a non-empty list of input_text, input_image and input_file items.
      const items = Array.isArray(raw.output) ? (raw.output as unknown[]) : undefined;
      if (typeof raw.output !== 'string' && (items === undefined || items.length === 0))
        problems.push(`${where}: output is neither a string nor a list of items`);
      for (const item of items ?? [])
        if (!isRecord(item) || !['input_text', 'input_image', 'input_file'].includes(String(item.type)))
          problems.push(`${where}: output item ${JSON.stringify(item).slice(0, 60)} is not input_text, input_image or input_file`);
    } else if (raw.type === 'reasoning') {
      if (typeof raw.encrypted_content !== 'string') problems.push(`${where}: reasoning without encrypted content`);
      else if (sentEncrypted && !sentEncrypted.has(raw.encrypted_content)) problems.push(`${where}: reasoning the server never sent`);
      const next = input[index + 1];
      const follows =
        isRecord(next) &&
        (next.type === 'function_call' || (next.role === 'assistant' && next.type === undefined) || next.type === 'message');
      if (!follows) problems.push(`${where}: reasoning without its following item`);
    } else if (raw.role === 'user' || raw.role === 'assistant' || raw.role === 'system') {
      const text = typeof raw.content === 'string' ? raw.content : JSON.stringify(raw.content);
      if (text.trim() === '' || text === '[]') problems.push(`${where}: empty ${String(raw.role)} content`);
    } else {
      problems.push(`${where}: unknown item ${JSON.stringify(raw).slice(0, 60)}`);
    }
  });
  if (open.size > 0) problems.push(`responses: calls ${[...open].join(', ')} never answered`);
  return problems;
}

/** The history converted by the real Anthropic converter, checked as the API checks it. */
export function anthropicRequestProblems(messages: Message[], system: string | undefined, sentThinking: Set<string>): string[] {
  const { messages: out, system: systemText } = toAnthropicMessages(messages, system);
  const problems: string[] = [];
  if (systemText !== undefined && systemText.trim() === '') problems.push('anthropic: empty system');
  if (messages.length > 0 && out.length === 0) problems.push('anthropic request: no messages');
  const { problems: bodyProblems, thinking: thinkingOut } = anthropicBodyProblems(out, sentThinking);
  problems.push(...bodyProblems);
  // Signed reasoning in the history goes out one to one, in order.
  const signed = messages.flatMap((message) =>
    message.role === 'assistant'
      ? message.content.flatMap((part) =>
          part.type === 'reasoning' && part.signature
            ? [`${part.text}\u0000${part.signature}`]
            : part.type === 'redacted-reasoning'
              ? [`redacted\u0000${part.data}`]
              : [],
        )
      : [],
  );
  if (JSON.stringify(signed) !== JSON.stringify(thinkingOut))
    problems.push('anthropic: thinking blocks of the history not sent back one to one in order');
  return problems;
}

/**
 * Messages API `messages` as the API checks them: user first, roles alternating, tool_result
 * blocks first in the user message right after their tool_use blocks, ids matching in order, no
 * empty content, thinking blocks byte-identical to ones the server sent. Also returns the thinking
 * blocks found, in order.
 */
export function anthropicBodyProblems(
  out: Anthropic.MessageParam[],
  sentThinking: Set<string>,
): { problems: string[]; thinking: string[] } {
  const problems: string[] = [];
  if (out[0] && out[0].role !== 'user') problems.push('anthropic: first message is not a user message');
  const seenToolUse = new Set<string>();
  const thinkingOut: string[] = [];
  out.forEach((message, index) => {
    const where = `anthropic message ${index} (${message.role})`;
    const previous = out[index - 1];
    if (previous && previous.role === message.role) problems.push(`${where}: same role as the message before (no alternation)`);
    if (typeof message.content === 'string') {
      if (message.content.trim() === '') problems.push(`${where}: empty string content`);
      if (
        previous?.role === 'assistant' &&
        previous.content !== undefined &&
        Array.isArray(previous.content) &&
        previous.content.some((block) => block.type === 'tool_use')
      ) {
        problems.push(`${where}: plain text right after tool_use blocks (results missing)`);
      }
      return;
    }
    if (message.content.length === 0) problems.push(`${where}: empty content array`);
    let resultsDone = false;
    const resultIds: string[] = [];
    for (const block of message.content) {
      if (block.type === 'text' && block.text.trim() === '') problems.push(`${where}: empty text block`);
      if (message.role === 'user') {
        if (block.type === 'tool_result') {
          if (resultsDone) problems.push(`${where}: tool_result after other blocks`);
          resultIds.push(block.tool_use_id);
          const content = block.content;
          if (
            content === undefined ||
            (typeof content === 'string' && content.trim() === '') ||
            (Array.isArray(content) && content.length === 0)
          ) {
            problems.push(`${where}: empty tool_result content`);
          }
          for (const inner of Array.isArray(content) ? content : []) {
            if (!['text', 'image', 'document'].includes(inner.type)) problems.push(`${where}: tool_result holds a ${inner.type} block`);
            if (inner.type === 'text' && inner.text.trim() === '') problems.push(`${where}: empty text block in a tool_result`);
          }
        } else resultsDone = true;
        if (!['text', 'tool_result'].includes(block.type)) problems.push(`${where}: unexpected user block ${block.type}`);
      } else {
        if (block.type === 'tool_use') {
          if (seenToolUse.has(block.id)) problems.push(`${where}: tool_use id ${block.id} repeated`);
          seenToolUse.add(block.id);
          if (!isRecord(block.input)) problems.push(`${where}: tool_use input is not an object`);
        }
        if (block.type === 'thinking') {
          thinkingOut.push(`${block.thinking}\u0000${block.signature}`);
          if (!sentThinking.has(`${block.thinking}\u0000${block.signature}`))
            problems.push(`${where}: thinking block not byte-identical to one the server sent`);
        }
        if (block.type === 'redacted_thinking') {
          thinkingOut.push(`redacted\u0000${block.data}`);
          if (!sentThinking.has(`redacted\u0000${block.data}`))
            problems.push(`${where}: redacted_thinking not byte-identical to one the server sent`);
        }
        if (block.type === 'tool_result') problems.push(`${where}: tool_result in an assistant message`);
      }
    }
    // The calls of the previous assistant message must be answered here, first, in order.
    const calls =
      previous?.role === 'assistant' && Array.isArray(previous.content)
        ? previous.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : []))
        : [];
    if (message.role === 'user' && JSON.stringify(calls) !== JSON.stringify(resultIds)) {
      problems.push(
        `${where}: tool_result ids ${JSON.stringify(resultIds)} do not answer the tool_use ids ${JSON.stringify(calls)} before it`,
      );
    }
  });
  const last = out.at(-1);
  if (last?.role === 'assistant' && Array.isArray(last.content) && last.content.some((block) => block.type === 'tool_use'))
    problems.push('anthropic: tool_use blocks never answered');
  return { problems, thinking: thinkingOut };
}

// ---------------------------------------------------------------------------------------------
// Escapes (unhandled rejections, uncaught exceptions) while runs are in flight

const escapes: unknown[] = [];
let listening = false;
/** Starts recording escapes for {@link takeEscapes} (once per process; {@link runCase} calls it). */
export function listenForEscapes(): void {
  if (listening) return;
  listening = true;
  process.on('unhandledRejection', (reason) => escapes.push(reason));
  process.on('uncaughtException', (error) => escapes.push(error));
}
/** Escapes seen since the last call (all runs in flight share them). */
export function takeEscapes(): unknown[] {
  return escapes.splice(0);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Active handles and requests by type, e.g. `{ Timeout: 3, TCPSocketWrap: 1 }`. */
export function activeResources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

/** Types whose count went up from `before` to `after`. */
export function resourceGrowth(before: Record<string, number>, after: Record<string, number>): string[] {
  return Object.entries(after).flatMap(([type, count]) => (count > (before[type] ?? 0) ? [`${type} +${count - (before[type] ?? 0)}`] : []));
}

/** Waits until every tracked hanging tool's bounded timer has fired, then for the resources to drain to `baseline`. */
export async function waitForDrain(baseline: Record<string, number>, timeoutMs = 2_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await new Promise((resolve) => setImmediate(resolve));
    const growth = resourceGrowth(baseline, activeResources());
    if (growth.length === 0 || Date.now() >= deadline) return growth;
    await sleep(5);
  }
}

/**
 * What a run left behind once it ended: resources beyond `baseline` that do not drain within a
 * second (when `checkResources`), and anything that escaped as an unhandled rejection or uncaught
 * exception (given a turn to surface).
 */
export async function leftBehind(baseline: Record<string, number>, checkResources: boolean): Promise<string[]> {
  const problems: string[] = [];
  if (checkResources) {
    const growth = await waitForDrain(baseline, 1_000);
    if (growth.length > 0) problems.push(`resources left behind: ${growth.join(', ')}`);
  }
  await new Promise((resolve) => setImmediate(resolve));
  const escaped = takeEscapes();
  if (escaped.length > 0)
    problems.push(
      `escaped the run: ${escaped.map((value) => (value instanceof Error ? `${value.name}: ${value.message}` : String(value))).join('; ')}`,
    );
  return problems;
}

// ---------------------------------------------------------------------------------------------

const finalStatuses = new Set(['done', 'halted', 'error']);
/** Faults docs/behaviour.md item 6 says are retried. */
const contractRetryable = (injected: string[]) =>
  injected.some((kind) =>
    /^429|^status 5\d\d|overloaded_error in stream|error chunk in stream|error event in stream|^reset$|stream cut \(connection dropped\)|stall|slow first byte/.test(
      kind,
    ),
  );
const brokenTransfer = (injected: string[]) =>
  injected.some((kind) => /malformed sse line|malformed json body|stream cut \(ended early\)|^empty body$/.test(kind));
const contractFatal = (injected: string[]) => injected.some((kind) => /^status 40[01]$/.test(kind));

export type RunCaseOptions = {
  /** Compare active handles before and after (only meaningful when runs go one at a time). */
  checkResources?: boolean;
  /** Give up on a run that has not finished after this long. */
  watchdogMs?: number;
};

/**
 * Plays one case and checks every property. Never throws for a property failure: violations are
 * returned, one line each.
 */
export async function runCase(testCase: RunCase, runOptions: RunCaseOptions = {}): Promise<RunReport> {
  listenForEscapes();
  const started = performance.now();
  const violations: string[] = [];
  const knownBugs: string[] = [];
  const notes: string[] = [];
  const apiKey = `sk-prop-${randomBytes(12).toString('hex')}`;
  const baseline = runOptions.checkResources ? activeResources() : {};
  takeEscapes();

  const controls: RunControls = testCase.controls ?? {};
  const toolState: ToolState = {
    executions: new Map(),
    hangs: new Set(),
    threw: new Set(),
    active: 0,
    maxActive: 0,
    aborted: new Set(),
    settled: new Set(),
  };
  const tools = testCase.tools.map((kind, index) => makeTool(kind, index, toolState));
  const toolNames = tools.map((tool) => tool.name);
  const guardrailCalls: GuardrailCall[] = [];
  const guardrailSpecs = controls.guardrails;
  const guardrails = guardrailSpecs && {
    input: guardrailSpecs.input.map((spec, index) =>
      makeGuardrail('input', index, spec, guardrailSpecs.timeoutMs, guardrailCalls, toolState.hangs),
    ),
    output: guardrailSpecs.output.map((spec, index) =>
      makeGuardrail('output', index, spec, guardrailSpecs.timeoutMs, guardrailCalls, toolState.hangs),
    ),
  };
  // The case's own provider, then its fallback list; each asks for a model of its own, so
  // `request.started` and `provider.fallback` say which one it was. The adapter and the native
  // Chat Completions provider speak one wire: they may share a server.
  const chain: Chain = [{ wire: testCase.wire, stream: testCase.stream, ownServer: false }, ...(controls.fallback ?? [])].map(
    (entry, position) => ({
      wire: entry.wire,
      stream: streams(entry.wire, entry.stream),
      ownServer: position > 0 && (entry.ownServer || serverWire(entry.wire) !== serverWire(testCase.wire)),
      model: modelFor(entry.wire, position),
    }),
  );
  let server: FaultServer | undefined;
  const servers: Array<{ server: FaultServer; wire: Wire }> = [];
  // Every server of the chain shares this log, so the plan is consumed in arrival order over all of them.
  const log: RequestLog[] = [];
  let output: RunOutput | undefined;
  const o = testCase.options;
  const maxAttempts = o.retry === false ? 1 : o.retry.maxRetries + 1;
  const system = testCase.system ? 'You are a property test. Be terse.' : undefined;

  try {
    const wire = serverWire(testCase.wire);
    server = await startFaultServer({ wire, plan: testCase.plan, toolNames, apiKey, stallMs: 2_000, log });
    servers.push({ server, wire });
    const providers: Provider[] = [];
    for (const entry of chain) {
      let target = server;
      if (entry.ownServer) {
        const entryWire = serverWire(entry.wire);
        target = await startFaultServer({ wire: entryWire, plan: testCase.plan, toolNames, apiKey, stallMs: 2_000, log });
        servers.push({ server: target, wire: entryWire });
      }
      providers.push(providerFor(entry.wire, target.baseURL, apiKey, entry.stream, entry.model));
    }
    const options: ConversationOptions = {
      provider: providers.length === 1 ? (providers[0] as Provider) : providers,
      tools: tools as unknown as ConversationOptions['tools'],
      maxToolIterations: o.maxToolIterations,
      retry: o.retry,
      toolTimeoutMs: o.toolTimeoutMs,
      requestTimeoutMs: o.requestTimeoutMs,
      doomLoop: o.doomLoop,
      ...(o.maxConcurrentTools === undefined ? {} : { maxConcurrentTools: o.maxConcurrentTools }),
      ...(o.maxToolResultBytes === undefined ? {} : { maxToolResultBytes: o.maxToolResultBytes }),
      ...(o.maxToolArgsBytes === undefined ? {} : { maxToolArgsBytes: o.maxToolArgsBytes }),
      ...(system === undefined ? {} : { system }),
      ...(guardrails === undefined ? {} : { guardrails }),
      ...(controls.budget === undefined ? {} : { budget: controls.budget }),
      ...(controls.steering === undefined ? {} : { steering: controls.steering }),
    };
    const machine = createConversationMachine(options);
    // XState calls emitted events' listeners after the step that emitted them, one after another: the
    // machine decided before any of them ran. An event's time leaves out what this harness's own
    // listeners (snapshot checks, a few ms on a loaded machine) spent earlier in the same step, or a
    // request decided in time would be seen past the deadline (issue 48, item 8).
    let root: unknown;
    let listenerWorkInStep = 0;
    const actor = createActor(machine, {
      input: { messages: [] },
      inspect: (inspection) => {
        if (inspection.type === '@xstate.event' && inspection.actorRef === root) listenerWorkInStep = 0;
      },
    });
    root = actor;

    const events: TimedEvent[] = [];
    const timers = new Set<ReturnType<typeof setTimeout>>();
    const later = (fn: () => void, ms = 0) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        fn();
      }, ms);
      timers.add(timer);
    };
    let cancelSentWhileActive = false;
    const sendCancel = (reason: string) => {
      if (actor.getSnapshot().status === 'active') cancelSentWhileActive = true;
      actor.send({ type: 'cancel', reason });
    };
    const decide = (fn: () => void) => (testCase.asyncDecisions ? later(fn) : fn());
    let approvalIndex = 0;
    const denied = new Set<string>();
    let eventCount = 0;
    let straySent = false;
    let strayWhileActive = false;
    // Inside the listener a send waits for the current step to end (the run may end with it); from a
    // timer it is taken at once, so a message sent then to an active run must be taken.
    let inListener = false;
    const takenAtOnce = () => !inListener && actor.getSnapshot().status === 'active';
    const interrupts: SentInterrupt[] = (controls.interrupts ?? []).map((spec, index) => ({
      afterEvents: spec.afterEvents,
      ...(spec.on === undefined ? {} : { on: spec.on }),
      seen: 0,
      content: interruptText(index, spec.empty),
      empty: spec.empty,
      sent: false,
      whileActive: false,
    }));

    actor.on('*', (event: ConversationEmittedEvent) => {
      const calledAt = performance.now();
      inListener = true;
      try {
        listen(event, calledAt - listenerWorkInStep);
      } finally {
        inListener = false;
        listenerWorkInStep += performance.now() - calledAt;
      }
    });
    const listen = (event: ConversationEmittedEvent, at: number) => {
      events.push({ ...event, at, requestsSoFar: log.length });
      eventCount++;
      if (event.type !== 'text.delta' && event.type !== 'tool.call.delta' && event.type !== 'reasoning.delta') {
        const persisted = safeJson(actor.getPersistedSnapshot());
        if (persisted.includes(apiKey)) violations.push(`persisted snapshot holds the API key after ${event.type}`);
        try {
          if (JSON.stringify(JSON.parse(persisted)) !== persisted)
            violations.push(`persisted snapshot is not plain JSON after ${event.type}`);
        } catch (error) {
          violations.push(`persisted snapshot is not JSON after ${event.type}: ${String(error)}`);
        }
      }
      if (event.type === 'tool.approval.requested') {
        const decision = testCase.approvals[approvalIndex++] ?? 'approve';
        decide(() => {
          if (decision === 'approve') actor.send({ type: 'tool.approve', toolCallId: event.toolCallId });
          else if (decision === 'deny') {
            denied.add(event.toolCallId);
            actor.send({ type: 'tool.deny', toolCallId: event.toolCallId, reason: 'property test says no' });
          } else if (decision === 'cancel') sendCancel('cancelled at approval');
          else {
            actor.send({ type: 'tool.approve', toolCallId: `${event.toolCallId}-bogus` });
            actor.send({ type: 'tool.approve', toolCallId: event.toolCallId });
          }
        });
      }
      if (testCase.strayMessageAfterEvents === eventCount)
        decide(() => {
          straySent = true;
          strayWhileActive = takenAtOnce();
          actor.send({ type: 'user.message', content: strayText });
        });
      for (const interrupt of interrupts) {
        const send = () => {
          interrupt.sent = true;
          interrupt.whileActive = takenAtOnce();
          actor.send({ type: 'user.interrupt', content: interrupt.content });
        };
        if (interrupt.on === undefined) {
          if (interrupt.afterEvents === eventCount) decide(send);
        } else if (interrupt.on === event.type && ++interrupt.seen === ((interrupt.afterEvents - 1) % 3) + 1) send();
      }
      if (testCase.cancel && 'afterEvents' in testCase.cancel && eventCount === testCase.cancel.afterEvents + 1) {
        decide(() => sendCancel('cancelled after events'));
      }
    };

    let watchdogFired = false;
    const watchdog = setTimeout(() => {
      watchdogFired = true;
      actor.stop();
    }, runOptions.watchdogMs ?? 20_000);

    let finishedAt: number | undefined;
    const finished = () => {
      finishedAt ??= performance.now();
    };
    actor.subscribe({ next: (snapshot) => snapshot.status !== 'active' && finished(), complete: finished, error: finished });
    // The longest the process stood still while the run went on: a loaded machine deschedules it for
    // milliseconds at a time, also between the engine's reading of the clock and a listener's. The
    // monitor's first tick only marks where it counts from, so it ticks before the run starts: a
    // stall in the run's first synchronous stretch (the message through to the first request) counts too.
    const stalls = monitorEventLoopDelay({ resolution: 1 });
    stalls.enable();
    await new Promise((resolve) => setTimeout(resolve, 3));
    actor.start();
    if (testCase.cancel && 'afterEvents' in testCase.cancel && testCase.cancel.afterEvents === 0)
      decide(() => sendCancel('cancelled at once'));
    if (testCase.cancel && 'afterMs' in testCase.cancel) later(() => sendCancel('cancelled after ms'), testCase.cancel.afterMs);
    const sentAt = performance.now();
    actor.send({ type: 'user.message', content: firstMessage });
    let endedAt = sentAt;
    // What was still running when the run ended (read before anything left over settles).
    let stillRunning: string[] = [];
    let checksStillRunning: GuardrailCall[] = [];
    try {
      output = await toPromise(actor);
      endedAt = performance.now();
      stillRunning = [...toolState.executions.keys()].filter((id) => !toolState.settled.has(id));
      checksStillRunning = guardrailCalls.filter((call) => call.settledAt === undefined);
    } catch (error) {
      violations.push(`toPromise rejected: ${String(error)}`);
    } finally {
      stalls.disable();
      clearTimeout(watchdog);
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    }
    const stallMs = stalls.max / 1e6;
    if (watchdogFired)
      violations.push(
        `the run did not finish within ${runOptions.watchdogMs ?? 20_000} ms (state ${JSON.stringify(actor.getSnapshot().value)})`,
      );

    const snapshot = actor.getSnapshot();
    if (snapshot.status !== 'done') violations.push(`actor status is ${snapshot.status}, not done`);
    if (Object.keys(snapshot.children).length > 0) violations.push(`children left running: ${Object.keys(snapshot.children).join(', ')}`);
    const finalPersisted = safeJson(actor.getPersistedSnapshot());
    if (finalPersisted.includes(apiKey)) violations.push('final persisted snapshot holds the API key');

    if (output) {
      if (!finalStatuses.has(output.status)) violations.push(`final status ${String(output.status)}`);
      const outputJson = safeJson(output);
      if (outputJson.includes(apiKey)) violations.push('output holds the API key');
      if (safeJson(events).includes(apiKey))
        violations.push(`an emitted event holds the API key: ${events.find((event) => safeJson(event).includes(apiKey))?.type}`);

      // docs/behaviour.md item 2: one result per call, in order; valid on both wires.
      violations.push(...historyProblems(output.messages));
      try {
        violations.push(...openaiRequestProblems(output.messages, system));
      } catch (error) {
        violations.push(`toOpenAIMessages threw: ${String(error)}`);
      }
      try {
        violations.push(...responsesRequestProblems(output.messages));
      } catch (error) {
        violations.push(`toResponsesInput threw: ${String(error)}`);
      }
      const sentThinking = new Set(
        log.flatMap((entry) =>
          entry.thinking.map((block) =>
            'thinking' in block ? `${block.thinking}\u0000${block.signature}` : `redacted\u0000${block.redacted}`,
          ),
        ),
      );
      try {
        violations.push(
          ...(chain.some((entry) => entry.wire === 'anthropic')
            ? anthropicRequestProblems(output.messages, system, sentThinking)
            : anthropicRequestProblems(
                output.messages,
                system,
                new Set(
                  output.messages.flatMap((message) =>
                    message.role === 'assistant'
                      ? message.content.flatMap((part) =>
                          part.type === 'reasoning' && part.signature ? [`${part.text}\u0000${part.signature}`] : [],
                        )
                      : [],
                  ),
                ),
              )),
        );
      } catch (error) {
        violations.push(`toAnthropicMessages threw: ${String(error)}`);
      }

      // tool.result events: exactly one per call of the history, agreeing with it.
      const calls = output.messages.flatMap((message) =>
        message.role === 'assistant' ? message.content.flatMap((part) => (part.type === 'tool-call' ? [part] : [])) : [],
      );
      const results = new Map(
        output.messages.flatMap((message) =>
          message.role === 'tool' ? message.content.map((part) => [part.toolCallId, part] as const) : [],
        ),
      );
      for (const call of calls) {
        const resultEvents = events.filter((event) => event.type === 'tool.result' && event.toolCallId === call.toolCallId);
        if (resultEvents.length !== 1)
          violations.push(`call ${call.toolCallId} (${call.toolName}) got ${resultEvents.length} tool.result events`);
        const result = results.get(call.toolCallId);
        const event = resultEvents[0];
        if (result && event?.type === 'tool.result') {
          if ((result.isError === true) !== event.isError)
            violations.push(`call ${call.toolCallId}: tool.result isError ${event.isError} but history ${result.isError === true}`);
          if (serializeResult(result.result) !== event.result)
            violations.push(`call ${call.toolCallId}: tool.result text differs from the history`);
        }
        if (denied.has(call.toolCallId) && toolState.executions.has(call.toolCallId))
          violations.push(`denied call ${call.toolCallId} was executed`);
        if (denied.has(call.toolCallId) && result && !(result.isError === true && String(result.result).startsWith('denied by user'))) {
          // A denial that raced a cancel, an interrupt or the time budget is settled by it; anything else must say denied.
          if (!String(result.result).startsWith('cancelled') && String(result.result) !== budgetText('maxDurationMs'))
            violations.push(`denied call ${call.toolCallId} has result ${JSON.stringify(result.result).slice(0, 80)}`);
        }
      }
      const byteCap = o.maxToolResultBytes ?? 100_000;
      for (const [id, part] of results) {
        const text = serializeResult(part.result);
        const marker = text.lastIndexOf('\n…[truncated:');
        const kept = marker >= 0 ? text.slice(0, marker) : text;
        if (Buffer.byteLength(kept, 'utf8') > byteCap)
          violations.push(`result of ${id} is ${Buffer.byteLength(kept, 'utf8')} bytes over the cap ${byteCap}`);
      }

      // Only the run's own user message and doom-loop notices are user messages; a message sent while
      // busy is turned away — unless it is queued (`steering: 'queue'`) or an interrupt (checked below).
      const userAllowed = new Set([firstMessage, ...interrupts.filter((sent) => !sent.empty).map((sent) => sent.content)]);
      if (controls.steering === 'queue') userAllowed.add(strayText);
      for (const message of output.messages) {
        if (message.role !== 'user') continue;
        const text = userText(message);
        if (!userAllowed.has(text) && !text.startsWith('Notice: you have repeated'))
          violations.push(`unexpected user message in the history: ${JSON.stringify(text).slice(0, 80)}`);
      }
      // Tool calls of a round run at most maxConcurrentTools at once.
      if (o.maxConcurrentTools !== undefined && toolState.maxActive > o.maxConcurrentTools)
        violations.push(`${toolState.maxActive} tools ran at once, maxConcurrentTools ${o.maxConcurrentTools}`);
      // docs/behaviour.md item 7: a tool that outlives its timeout gets the timeout result (or the run's cancel/halt result).
      for (const call of calls) {
        const kind = call.toolName.slice(0, call.toolName.lastIndexOf('_'));
        if (!['hang', 'hangHonours', 'abortRejects'].includes(kind) || !toolState.executions.has(call.toolCallId)) continue;
        const text = String(results.get(call.toolCallId)?.result ?? '');
        if (
          !/timed out after \d+ ms$/.test(text) &&
          !text.startsWith('cancelled') &&
          !text.startsWith('halted:') &&
          text !== budgetText('maxDurationMs')
        )
          violations.push(`${kind} call ${call.toolCallId} (timeout ${o.toolTimeoutMs} ms) got ${JSON.stringify(text).slice(0, 80)}`);
      }
      // docs/behaviour.md item 3: a HaltError's content as a result means the run ended tool_halt.
      if (
        [...results.values()].some((part) => part.isError !== true && /^halted by tool \d$/.test(String(part.result))) &&
        !(output.status === 'halted' && output.reason === 'tool_halt')
      ) {
        violations.push(`a HaltError result is in the history but the run ended ${output.status}/${output.reason ?? ''}`);
      }

      // docs/behaviour.md item 4: rounds and executions within the cap; every execution is a call of the history, once.
      if (output.iterations > o.maxToolIterations)
        violations.push(`iterations ${output.iterations} > maxToolIterations ${o.maxToolIterations}`);
      const callIds = new Set(calls.map((call) => call.toolCallId));
      const executedRounds = new Set<number>();
      for (const [id, times] of toolState.executions) {
        if (times !== 1) violations.push(`call ${id} executed ${times} times`);
        if (!callIds.has(id)) violations.push(`executed call ${id} is not in the history`);
        output.messages.forEach((message, index) => {
          if (message.role === 'assistant' && message.content.some((part) => part.type === 'tool-call' && part.toolCallId === id))
            executedRounds.add(index);
        });
        const result = results.get(id);
        if (
          result &&
          (result.result === resultTexts.iterationLimit ||
            result.result === resultTexts.doomLoop ||
            result.result === budgetText('maxTotalTokens'))
        )
          violations.push(`call ${id} executed although settled as not executed`);
      }
      if (executedRounds.size > o.maxToolIterations)
        violations.push(`${executedRounds.size} rounds executed tools, cap ${o.maxToolIterations}`);
      const executedTools = [...toolState.executions.keys()].length;
      if (executedTools > 0 && o.maxToolIterations === 0) violations.push('tools executed with maxToolIterations 0');

      // docs/behaviour.md items 3/4/5/8: reasons agree with what happened.
      if (output.status === 'halted' && output.reason === 'tool_halt' && !/^halted by tool \d$/.test(output.text))
        violations.push(`tool_halt with text ${JSON.stringify(output.text)}`);
      if (output.reason === 'doom_loop' && o.doomLoop === false) violations.push('doom_loop halt with doomLoop: false');
      if (output.reason === 'max_iterations' && output.iterations !== o.maxToolIterations)
        violations.push(`max_iterations halt after ${output.iterations} rounds, cap ${o.maxToolIterations}`);
      if (cancelSentWhileActive && !(output.status === 'halted' && output.reason === 'cancelled')) {
        violations.push(`cancel sent to an active run, yet it ended ${output.status}/${output.reason ?? ''}`);
      }
      if (output.status === 'halted' && output.reason === 'cancelled' && !cancelSentWhileActive)
        violations.push('halted/cancelled without a cancel');

      // docs/behaviour.md item 6: attempts per logical request, retry-after honoured.
      const startedEvents = events.filter((event) => event.type === 'request.started');
      let previous: { iteration: number; attempt: number } | undefined;
      for (const event of startedEvents) {
        if (event.type !== 'request.started') continue;
        if (event.attempt > maxAttempts)
          violations.push(`attempt ${event.attempt} of iteration ${event.iteration} > maxRetries + 1 = ${maxAttempts}`);
        const expected = previous && previous.iteration === event.iteration && event.attempt !== 1 ? previous.attempt + 1 : 1;
        if (event.attempt !== expected) violations.push(`request.started attempt ${event.attempt} after ${JSON.stringify(previous)}`);
        if (event.iteration > o.maxToolIterations) violations.push(`request for iteration ${event.iteration} > cap`);
        previous = { iteration: event.iteration, attempt: event.attempt };
      }
      if (log.length > startedEvents.length)
        violations.push(`${log.length} HTTP requests for ${startedEvents.length} request.started events`);
      // One plan step per attempt, over every server of a fallback list: the n-th HTTP request comes after the n-th request.started.
      for (const entry of log) {
        const before = startedEvents.filter((event) => event.at <= entry.arrivedAt).length;
        if (before < entry.index + 1) {
          violations.push(`HTTP request #${entry.index} (${entry.wire}) arrived after only ${before} request.started events`);
          break;
        }
      }
      events.forEach((event, position) => {
        if (event.type !== 'request.retry') return;
        // The failed attempt is the last request.started before this retry; its HTTP request is the one logged first after it.
        const startedBefore = events
          .slice(0, position)
          .filter((earlier) => earlier.type === 'request.started')
          .at(-1);
        if (!startedBefore) {
          violations.push('request.retry without a request.started before it');
          return;
        }
        if (startedBefore.type === 'request.started' && event.attempt !== startedBefore.attempt + 1)
          violations.push(`request.retry attempt ${event.attempt} after attempt ${startedBefore.attempt}`);
        if (event.attempt > maxAttempts) violations.push(`request.retry announces attempt ${event.attempt} > ${maxAttempts}`);
        const since = events.slice(events.lastIndexOf(startedBefore) + 1, position);
        const partial = since.some(
          (earlier) => earlier.type === 'text.delta' || earlier.type === 'reasoning.delta' || earlier.type === 'tool.call.delta',
        );
        if (event.discardPartial !== partial)
          violations.push(`request.retry discardPartial ${event.discardPartial} after ${partial ? 'partial output' : 'no output'}`);
        const request = log[startedBefore.requestsSoFar];
        if (event.error.status === 429 && request?.retryAfterMs !== undefined && request.index < event.requestsSoFar) {
          if (event.delayMs < request.retryAfterMs)
            violations.push(`retry after a 429 waited ${event.delayMs} ms < retry-after ${request.retryAfterMs} ms`);
          const next = log[request.index + 1];
          // The next request is the retry unless an interrupt abandoned the backoff for a new request (which does not wait).
          const upTo = events.findIndex((later, at) => at > position && later.type === 'request.started');
          const abandoned = events.slice(position + 1, upTo < 0 ? undefined : upTo).some((later) => later.type === 'request.interrupted');
          if (next && !abandoned && request.respondedAt !== undefined && next.arrivedAt - request.respondedAt < request.retryAfterMs - 1) {
            violations.push(
              `the retry arrived ${(next.arrivedAt - request.respondedAt).toFixed(1)} ms after a 429 asking for ${request.retryAfterMs} ms`,
            );
          }
        }
      });
      // A guardrail's error is no provider's: checked with the guardrails.
      if (output.status === 'error' && !cancelSentWhileActive && !output.error?.code?.startsWith('guardrail_')) {
        const lastStarted = startedEvents.at(-1);
        const lastRequest = lastStarted ? log[lastStarted.requestsSoFar] : undefined;
        const lastAttempt = lastStarted?.type === 'request.started' ? lastStarted.attempt : 0;
        const lastPosition = lastStarted?.type === 'request.started' ? positionOf(chain, lastStarted.model) : 0;
        const injected = lastRequest?.injected ?? [];
        if (output.error?.retryable === true && lastAttempt < maxAttempts)
          violations.push(`ended in error (${output.error.code}) with retries left: attempt ${lastAttempt} of ${maxAttempts}`);
        else if (output.error?.retryable === true && lastPosition < chain.length - 1)
          violations.push(
            `ended in error (${output.error.code}) with a provider left to fall back on: provider ${lastPosition + 1} of ${chain.length}`,
          );
        // A garbled or truncated answer is a broken transfer: retried like a dropped connection (the OpenAI provider does).
        if (output.error?.retryable === false && brokenTransfer(injected) && !contractFatal(injected) && lastAttempt < maxAttempts) {
          violations.push(
            `a broken transfer (${injected.join(', ')}) ended the run as non-retryable with retries left: ${output.error.code} ${output.error.message.slice(0, 120)}`,
          );
        }
        if (output.error?.retryable === false && contractRetryable(injected) && !contractFatal(injected)) {
          violations.push(
            `a fault docs/behaviour.md item 6 retries (${injected.join(', ')}) ended the run as non-retryable: ${output.error.code} ${output.error.message.slice(0, 120)}`,
          );
        }
      }

      // docs/behaviour.md item 8 and DESIGN §12: whatever ends the run or abandons a round (cancel, a
      // halt, an interrupt, the time budget, a timeout) stops what still runs, and its signal fires.
      for (const id of stillRunning)
        if (!toolState.aborted.has(id)) violations.push(`call ${id} was still running when the run ended, and its signal never fired`);
      for (const call of checksStillRunning)
        if (!call.aborted)
          violations.push(`guardrail ${call.name} (check ${call.check}) still ran when the run ended, and its signal never fired`);

      violations.push(
        ...controlProblems({
          testCase,
          controls,
          output,
          events,
          log,
          chain,
          maxAttempts,
          guardrailCalls,
          executed: new Set(toolState.executions.keys()),
          interrupts,
          straySent,
          strayWhileActive,
          cancelSentWhileActive,
          sentAt,
          stallMs,
          finishedAt: finishedAt ?? endedAt,
          endedAt,
          watchdogFired,
          notes,
          knownBugs,
        }),
      );
    }

    // Every request the provider really sent is valid for its wire (thinking blocks as the server sent them).
    const sentThinkingAll = new Set(
      log.flatMap((entry) =>
        entry.thinking.map((block) =>
          'thinking' in block ? `${block.thinking}\u0000${block.signature}` : `redacted\u0000${block.redacted}`,
        ),
      ),
    );
    const sentEncrypted = new Set(log.flatMap((entry) => entry.thinking.map(encryptedOf)));
    for (const [position, { server: target, wire }] of servers.entries()) {
      const sentForWire = wire === 'responses' ? sentEncrypted : sentThinkingAll;
      target.wire.requests.forEach((request, index) => {
        // Which provider of the chain sent it: its model says (the stream setting is that provider's).
        const model = isRecord(request.body) ? request.body.model : undefined;
        const stream = chain.find((entry) => entry.model === model)?.stream ?? testCase.stream;
        const label = position === 0 ? `request #${index}` : `${wire} server ${position} request #${index}`;
        violations.push(...bodyProblems(wire, request.body, sentForWire, stream).map((problem) => `${label}: ${problem}`));
      });
    }

    // The history starts the next turn on the other wire, through the real SDK.
    if (output && output.messages.length > 0 && violations.length === 0) {
      violations.push(...(await nextTurnOnOtherWire(testCase, output.messages, tools, apiKey, system)));
    }

    // Nothing left behind: connections, hanging tools' timers, our own timers.
    const open = await server.unreleased(2_000);
    if (open.length > 0)
      violations.push(
        `connections not released: requests ${open.map((entry) => `#${entry.index} (${entry.injected.join(', ')})`).join('; ')}`,
      );
    await Promise.race([Promise.allSettled([...toolState.hangs]), sleep(hangMs * 4)]);
  } catch (error) {
    violations.push(`the harness failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    await Promise.all(servers.map(({ server: target }) => target.close()));
  }
  violations.push(...(await leftBehind(baseline, runOptions.checkResources === true)));

  if (strict) violations.push(...knownBugs);
  return {
    output,
    notes,
    violations,
    knownBugs: [...new Set(knownBugs)],
    lastInjected: log.at(-1)?.injected ?? [],
    injected: log.flatMap((entry) => entry.injected),
    requests: log.length,
    durationMs: performance.now() - started,
    executions: toolState.executions.size,
  };
}

// ---------------------------------------------------------------------------------------------
// Long-conversation controls (DESIGN §12): budgets, guardrails, steering, interrupts, fallback

type TimedEvent = ConversationEmittedEvent & { at: number; requestsSoFar: number };
type SentInterrupt = {
  afterEvents: number;
  on?: InterruptPoint;
  seen: number;
  content: string;
  empty: boolean;
  sent: boolean;
  /** Sent from a timer to an active run: taken at once. */
  whileActive: boolean;
};
type Chain = Array<{ wire: RunWire; stream: boolean; ownServer: boolean; model: string }>;

const baseModels = {
  openai: 'gpt-4o-mini',
  anthropic: 'claude-haiku-4-5',
  responses: 'gpt-5-mini',
  'ai-sdk-compatible': 'gpt-4.1-mini',
  'ai-sdk-openai': 'gpt-4.1-nano',
} as const;
/** The model the provider at this position of a fallback list asks for: the wire's own first, then one per position. */
const modelFor = (wire: RunWire, position: number) => (position === 0 ? baseModels[wire] : `${baseModels[wire]}-fallback-${position}`);
/** The position in the chain of the provider that asks for `model` (-1: none). */
const positionOf = (chain: Chain, model: unknown) => chain.findIndex((entry) => entry.model === model);
/** The model of a `provider.fallback` label (`name:model`). */
const labelModel = (label: string) => label.slice(label.indexOf(':') + 1);
const budgetText = (limit: string) => budgetResultText({ limit: limit as 'maxTotalTokens' });
const userText = (message: Extract<Message, { role: 'user' }>) => userContentText(message.content);
const contentText = userContentText;
const isDelta = (event: TimedEvent) => event.type === 'text.delta' || event.type === 'reasoning.delta' || event.type === 'tool.call.delta';

type Observed = {
  testCase: RunCase;
  controls: RunControls;
  output: RunOutput;
  events: TimedEvent[];
  log: RequestLog[];
  chain: Chain;
  maxAttempts: number;
  guardrailCalls: GuardrailCall[];
  executed: Set<string>;
  interrupts: SentInterrupt[];
  straySent: boolean;
  strayWhileActive: boolean;
  cancelSentWhileActive: boolean;
  /** `performance.now()` as the run's message went in, as the actor reached its final state, and as its output came. */
  sentAt: number;
  finishedAt: number;
  endedAt: number;
  /** The process's longest stall during the run, in ms (`monitorEventLoopDelay`'s max). */
  stallMs: number;
  /** Where a check puts violations that match a bug of {@link knownBugNames}, to keep them apart. */
  knownBugs: string[];
  watchdogFired: boolean;
  notes: string[];
};

/**
 * The properties of DESIGN §12 over one run: how it may end given its controls, the budget kept,
 * guardrails checked in order and obeyed, queued and interrupting messages in the history once and
 * in place, abandoned attempts left out, fallback only when retries are spent on a retryable error.
 * Runs without controls are held to the same (most of it then says: none of this happened).
 */
function controlProblems(observed: Observed): string[] {
  const { controls, output, events } = observed;
  const problems: string[] = [];

  // Ends the controls make legal, and only those.
  const reasons = new Set(['max_iterations', 'tool_halt', 'doom_loop', 'cancelled']);
  if (controls.budget) reasons.add('budget');
  if (controls.guardrails) reasons.add('guardrail');
  if (output.status === 'halted' && !reasons.has(output.reason ?? ''))
    problems.push(`halted/${output.reason ?? ''}, which nothing in the case can cause`);
  if (output.status === 'error' && output.error?.code?.startsWith('guardrail_') && !controls.guardrails)
    problems.push(`ended in error ${output.error.code} without guardrails`);
  if (output.budget !== undefined && output.reason !== 'budget')
    problems.push(`output.budget on a run that ended ${output.status}/${output.reason ?? ''}`);
  if (output.guardrail !== undefined && output.reason !== 'guardrail')
    problems.push(`output.guardrail on a run that ended ${output.status}/${output.reason ?? ''}`);

  problems.push(...budgetProblems(observed));
  problems.push(...guardrailProblems(observed));
  problems.push(...steeringProblems(observed));
  problems.push(...fallbackProblems(observed));

  for (const event of events) {
    if (event.type === 'provider.fallback') observed.notes.push('provider.fallback');
    if (event.type === 'request.interrupted') observed.notes.push(`request.interrupted (${event.state})`);
    if (event.type === 'user.message.queued') observed.notes.push('user.message.queued');
  }
  if (output.reason === 'budget' && output.budget) observed.notes.push(`halted on ${output.budget.limit}`);
  if (output.reason === 'guardrail' && output.guardrail) observed.notes.push(`halted by a ${output.guardrail.phase} guardrail`);
  return problems;
}

function budgetProblems({ controls, output, events, endedAt, sentAt, stallMs, watchdogFired }: Observed): string[] {
  const problems: string[] = [];
  const budget = controls.budget;
  const toolResults = output.messages.flatMap((message) => (message.role === 'tool' ? message.content : []));
  for (const part of toolResults) {
    const text = String(part.result);
    if (!text.startsWith('not executed: the run reached its budget')) continue;
    if (output.reason !== 'budget' || text !== budgetText(output.budget?.limit ?? ''))
      problems.push(`call ${part.toolCallId} got ${JSON.stringify(text)} in a run that ended ${output.status}/${output.reason ?? ''}`);
  }
  if (output.status === 'halted' && output.reason === 'budget') {
    const reached = output.budget;
    const configured =
      reached?.limit === 'maxTotalTokens' ? budget?.maxTotalTokens : reached?.limit === 'maxDurationMs' ? budget?.maxDurationMs : undefined;
    if (!reached) problems.push('halted/budget without output.budget');
    else if (configured === undefined) problems.push(`halted on ${reached.limit}, which the case does not set`);
    else {
      if (reached.max !== configured) problems.push(`output.budget.max ${reached.max}, ${reached.limit} is ${configured}`);
      if (reached.limit === 'maxTotalTokens') {
        if (reached.used < reached.max) problems.push(`halted on maxTotalTokens with ${reached.used} of ${reached.max} used`);
        const counted = output.usage.totalTokens + (output.failedUsage?.totalTokens ?? 0);
        if (reached.used !== counted) problems.push(`output.budget.used ${reached.used}, but usage and failedUsage add up to ${counted}`);
      } else if (reached.used < reached.max - 1) problems.push(`halted on maxDurationMs after ${reached.used} of ${reached.max} ms`);
    }
  }

  // Every answered request's tokens are counted (committed or failed), unless the run ended before it could count them.
  const reported = events.reduce((sum, event) => sum + (event.type === 'request.finished' ? event.usage.totalTokens : 0), 0);
  const counted = output.usage.totalTokens + (output.failedUsage?.totalTokens ?? 0);
  const endedMidRequest = output.reason === 'cancelled' || (output.reason === 'budget' && output.budget?.limit === 'maxDurationMs');
  if (!endedMidRequest && !watchdogFired && reported > counted)
    problems.push(`the requests reported ${reported} tokens (request.finished), the run counted ${counted} (usage + failedUsage)`);

  if (budget?.maxTotalTokens !== undefined) {
    // What the requests reported is a floor of what the run has spent: nothing may start at or over it.
    const max = budget.maxTotalTokens;
    let floor = 0;
    for (const event of events) {
      if (event.type === 'request.started' && floor >= max) {
        problems.push(`a request started with ${floor} tokens reported, maxTotalTokens ${max}`);
        break;
      }
      if (event.type === 'tool.started' && floor >= max) {
        problems.push(`call ${event.toolCallId} started with ${floor} tokens reported, maxTotalTokens ${max}`);
        break;
      }
      if (event.type === 'request.finished') floor += event.usage.totalTokens;
    }
  }
  if (budget?.maxDurationMs !== undefined) {
    const max = budget.maxDurationMs;
    // The run's clock starts with its message (Date.now(), whole ms): no request starts once it is up. The
    // engine decides by its clock before the request; the listener reads this one after: a process
    // descheduled in between (a loaded machine) sees the request later by as long as it stood still.
    // An event's `at` already leaves out the harness's own listeners earlier in its step (runCase).
    const late = events.find((event) => event.type === 'request.started' && event.at - sentAt >= max + 3 + stallMs);
    if (late)
      problems.push(
        `a request started ${(late.at - sentAt).toFixed(1)} ms into the run, maxDurationMs ${max} (the process stood still ${stallMs.toFixed(1)} ms at most)`,
      );
    // Wherever the run is, the time limit ends it (with slack for a loaded event loop).
    if (!watchdogFired && endedAt - sentAt > max + 1_500)
      problems.push(`the run lasted ${(endedAt - sentAt).toFixed(0)} ms, maxDurationMs ${max}`);
  }
  return problems;
}

function guardrailProblems({
  controls,
  output,
  events,
  log,
  guardrailCalls: calls,
  finishedAt,
  interrupts,
  straySent,
}: Observed): string[] {
  const problems: string[] = [];
  const specs = controls.guardrails;
  const checked = events.filter((event) => event.type === 'guardrail.checked');
  if (!specs) {
    if (checked.length > 0) problems.push(`${checked.length} guardrail.checked events without guardrails`);
    return problems;
  }
  const lists = { input: specs.input, output: specs.output };
  const indexOf = (call: GuardrailCall) => Number(call.name.split('_')[1]);

  // One check at a time, each phase's list in order from its first; a check that does not pass is the run's last.
  calls.forEach((call, position) => {
    const previous = calls[position - 1];
    const expected =
      previous && previous.phase === call.phase && indexOf(previous) + 1 < lists[call.phase].length ? indexOf(previous) + 1 : 0;
    if (indexOf(call) !== expected)
      problems.push(
        `guardrail check ${position} is ${call.name}, expected ${call.phase} guardrail ${expected} after ${previous?.name ?? 'none'}`,
      );
    if (call.behaviour !== 'pass' && position !== calls.length - 1)
      problems.push(`the run went on after ${call.name} answered ${call.behaviour} (check ${position} of ${calls.length})`);
  });
  // One guardrail.checked per verdict, in order (a check that threw, answered garbage or was stopped has none).
  if (checked.length > calls.length || checked.length < calls.length - 1)
    problems.push(`${checked.length} guardrail.checked events for ${calls.length} checks`);
  checked.forEach((event, position) => {
    const call = calls[position];
    if (event.type !== 'guardrail.checked' || !call) return;
    if (event.name !== call.name || event.phase !== call.phase || event.tripped !== (call.behaviour === 'trip'))
      problems.push(`guardrail.checked #${position} ${JSON.stringify(event)} does not match check ${call.name} (${call.behaviour})`);
    else if (event.tripped && event.reason !== call.reason) problems.push(`guardrail.checked reason ${JSON.stringify(event.reason)}`);
  });

  // What each phase checks: a user message of the run; the final answer.
  const users = new Set(['Please use the tools.', ...interrupts.filter((sent) => !sent.empty).map((sent) => sent.content)]);
  if (straySent) users.add(strayText);
  const assistantTexts = new Set(
    output.messages.flatMap((message) => (message.role === 'assistant' ? [textOfParts(message.content)] : [])),
  );
  for (const call of calls) {
    if (call.phase === 'input' && !users.has(call.text)) problems.push(`input guardrail ${call.name} checked ${JSON.stringify(call.text)}`);
    if (call.phase === 'output' && call.text !== '' && !assistantTexts.has(call.text))
      problems.push(`output guardrail ${call.name} checked ${JSON.stringify(call.text)}, which is no answer of the history`);
  }
  if (calls[0] && specs.input.length > 0 && calls[0].text !== 'Please use the tools.')
    problems.push(`the first input check was of ${JSON.stringify(calls[0].text)}`);

  // No request before the run's message passed every input guardrail.
  if (specs.input.length > 0) {
    const first = calls.slice(0, specs.input.length);
    const passed = first.length === specs.input.length && first.every((call) => call.phase === 'input' && call.behaviour === 'pass');
    const firstStarted = events.find((event) => event.type === 'request.started');
    if (!passed && (log.length > 0 || firstStarted))
      problems.push(`${log.length} HTTP requests although the message did not pass the input guardrails`);
    const cleared = Math.max(...first.map((call) => call.settledAt ?? Number.POSITIVE_INFINITY));
    if (passed && firstStarted && firstStarted.at < cleared) problems.push('a request started before the input guardrails passed');
  }
  // Every user message a request was answered with passed every input guardrail (queued and interrupting ones too).
  if (specs.input.length > 0) {
    const passedAll = (text: string) =>
      specs.input.every((_spec, position) =>
        calls.some((call) => call.phase === 'input' && indexOf(call) === position && call.text === text && call.behaviour === 'pass'),
      );
    output.messages.forEach((message, index) => {
      if (message.role !== 'user') return;
      const text = userText(message);
      if (text.startsWith('Notice: you have repeated')) return;
      if (!output.messages.slice(index + 1).some((later) => later.role === 'assistant')) return;
      if (passedAll(text)) return;
      problems.push(`user message ${JSON.stringify(text)} was answered without passing the input guardrails`);
    });
  }

  // How the run ended agrees with the last check. Any check may time out when it answers later than
  // its timeoutMs (an async answer on a loaded event loop); a hanging one always does.
  const last = calls.at(-1);
  const hangs = (call: GuardrailCall) => call.behaviour === 'hang' || call.behaviour === 'hangHonours';
  // Whether the check had not answered when the run ended: an answer sets `settledAt` and reaches the
  // machine in the same macrotask, so no timeout can come between them.
  const late = (call: GuardrailCall) => call.settledAt === undefined || call.settledAt >= finishedAt;
  const endedOtherwise = output.status === 'halted' && (output.reason === 'cancelled' || output.reason === 'budget');
  const got = `${output.status}/${output.status === 'error' ? (output.error?.code ?? '') : (output.reason ?? '')}`;
  if (last && last.behaviour !== 'pass' && !endedOtherwise) {
    const expected = new Set([
      last.behaviour === 'trip' ? 'halted/guardrail' : hangs(last) ? 'error/guardrail_timeout' : 'error/guardrail_error',
    ]);
    if (late(last)) expected.add('error/guardrail_timeout');
    if (!expected.has(got)) problems.push(`${last.name} answered ${last.behaviour}, yet the run ended ${got}`);
  }
  if (output.reason === 'guardrail') {
    const tripped = output.guardrail;
    if (last?.behaviour !== 'trip')
      problems.push(`halted/guardrail, but the last check was ${last?.name ?? 'none'} (${last?.behaviour ?? ''})`);
    else if (!tripped || tripped.name !== last.name || tripped.phase !== last.phase || tripped.reason !== last.reason)
      problems.push(`output.guardrail ${JSON.stringify(tripped)} for ${last.name}: ${last.reason ?? ''}`);
    // An answer the output guardrails stopped stays in the history, and is the run's text.
    if (last?.phase === 'output' && last.behaviour === 'trip' && output.text !== last.text)
      problems.push(`halted by ${last.name} on ${JSON.stringify(last.text)}, output.text ${JSON.stringify(output.text)}`);
  }
  if (output.status === 'error' && output.error?.code === 'guardrail_error') {
    if (!last || (last.behaviour !== 'throw' && last.behaviour !== 'garbage'))
      problems.push(`guardrail_error, but the last check was ${last?.name ?? 'none'} (${last?.behaviour ?? ''})`);
    else if (!output.error.message.includes(`${last.phase} guardrail "${last.name}"`))
      problems.push(`guardrail_error message ${output.error.message}`);
  }
  if (output.status === 'error' && output.error?.code === 'guardrail_timeout') {
    if (!last || !late(last))
      problems.push(
        `guardrail_timeout, but the last check (${last?.name ?? 'none'}, ${last?.behaviour ?? ''}) had answered ${last?.settledAt === undefined ? '' : `${(finishedAt - last.settledAt).toFixed(1)} ms `}before the run ended`,
      );
    else if (!output.error.message.includes(`${last.phase} guardrail "${last.name}" did not answer within ${specs.timeoutMs} ms`))
      problems.push(`guardrail_timeout message ${output.error.message}`);
  }
  // A run done with output guardrails: its answer passed each of them, last.
  if (output.status === 'done' && specs.output.length > 0) {
    const round = calls.slice(-specs.output.length);
    if (
      round.length !== specs.output.length ||
      round.some(
        (call, position) => call.phase !== 'output' || indexOf(call) !== position || call.behaviour !== 'pass' || call.text !== output.text,
      )
    )
      problems.push(
        `done with ${specs.output.length} output guardrails, but the last checks were ${JSON.stringify(round.map((call) => [call.name, call.behaviour, call.text]))}`,
      );
  }
  return problems;
}

function steeringProblems({ controls, output, events, log, interrupts, executed, strayWhileActive }: Observed): string[] {
  const problems: string[] = [];
  const messages = output.messages;
  const positions = (text: string) =>
    messages.flatMap((message, index) => (message.role === 'user' && userText(message) === text ? [index] : []));
  /** A message that joined: answered (an assistant message after it) or, the run having ended short of it, at the end. */
  const placement = (label: string, index: number) => {
    const after = messages.slice(index + 1);
    // An empty final answer adds no message: the run is done with '' and the message is last.
    const answered = after.some((message) => message.role === 'assistant');
    if (output.status === 'done' && !answered && output.text !== '') problems.push(`${label} is not answered in a done run`);
    if (!answered && after.some((message) => message.role !== 'user'))
      problems.push(`${label} is neither answered nor at the end of the history`);
  };
  const queued = events.filter((event) => event.type === 'user.message.queued');
  const queuedText = (text: string) =>
    queued.filter((event) => event.type === 'user.message.queued' && contentText(event.content) === text).length;

  // The stray message: turned away by default, kept once with 'queue'.
  const strayAt = positions(strayText);
  if (controls.steering !== 'queue') {
    if (queuedText(strayText) > 0) problems.push(`the stray message was queued with steering ${controls.steering ?? 'default'}`);
  } else {
    const rejected = events.filter((event) => event.type === 'event.rejected' && event.eventType === 'user.message');
    if (rejected.length > 0)
      problems.push(
        `a valid user.message was rejected with steering 'queue': ${rejected[0]?.type === 'event.rejected' ? rejected[0].message : ''}`,
      );
    if (queuedText(strayText) > 1) problems.push(`the stray message was queued ${queuedText(strayText)} times`);
    if (queuedText(strayText) === 1 && strayAt.length !== 1)
      problems.push(`the queued stray message is ${strayAt.length} times in the history`);
    if (queuedText(strayText) === 0 && strayAt.length > 0) problems.push('the stray message is in the history without being queued');
    if (strayWhileActive && queuedText(strayText) === 0)
      problems.push("the stray message, sent to an active run with steering 'queue', was not queued");
  }
  if (strayAt.length === 1) placement('the queued stray message', strayAt[0] as number);

  // Interrupts: each valid one taken at most once (abandoning the attempt or round, or queued where nothing runs), and then in the history once.
  const valid = interrupts.filter((sent) => sent.sent && !sent.empty);
  const interrupted = events.filter((event) => event.type === 'request.interrupted');
  const taken = interrupted.length + valid.reduce((sum, sent) => sum + queuedText(sent.content), 0);
  if (taken > valid.length) problems.push(`${taken} interrupts taken, ${valid.length} valid ones sent`);
  const surely = valid.filter((sent) => sent.whileActive).length;
  if (taken < surely) problems.push(`${taken} interrupts taken, ${surely} sent to the active run from a timer`);
  // An empty one sent to an active run is rejected.
  const rejected = events.filter((event) => event.type === 'event.rejected' && event.eventType === 'user.interrupt').length;
  const empties = interrupts.filter((sent) => sent.sent && sent.empty);
  if (rejected > empties.length) problems.push(`${rejected} interrupts rejected, ${empties.length} empty ones sent`);
  if (rejected < empties.filter((sent) => sent.whileActive).length)
    problems.push('an empty interrupt sent to the active run was not rejected');
  let inHistory = 0;
  for (const sent of valid) {
    const at = positions(sent.content);
    if (at.length > 1) problems.push(`interrupt ${JSON.stringify(sent.content)} is ${at.length} times in the history`);
    if (at.length > 0) {
      inHistory++;
      placement(`interrupt ${JSON.stringify(sent.content)}`, at[0] as number);
    }
  }
  if (inHistory !== taken) problems.push(`${taken} interrupts taken, ${inHistory} in the history`);
  for (const sent of interrupts) {
    if (!sent.sent || !sent.empty) continue;
    if (positions(sent.content).length > 0) problems.push('an empty interrupt is in the history');
  }

  // Calls an interrupt abandoned: answered as cancelled by the user (never executed to a result of their own).
  const results = messages.flatMap((message) => (message.role === 'tool' ? message.content : []));
  const cancelledByUser = results.filter((part) => part.result === interruptedByUserText);
  if (
    cancelledByUser.length > 0 &&
    !interrupted.some((event) => event.type === 'request.interrupted' && event.state !== 'requesting' && event.state !== 'retrying')
  )
    problems.push(`${cancelledByUser.length} calls answered "${interruptedByUserText}" without an interrupt of their round`);
  for (const part of cancelledByUser) if (part.isError !== true) problems.push(`interrupted call ${part.toolCallId} not marked isError`);

  // An abandoned attempt leaves nothing in the history: not its text, not its calls; discardPartial says whether it had streamed.
  const assistantTexts = new Set(messages.flatMap((message) => (message.role === 'assistant' ? [textOfParts(message.content)] : [])));
  const callIds = new Set(
    messages.flatMap((message) =>
      message.role === 'assistant' ? message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : [])) : [],
    ),
  );
  events.forEach((event, position) => {
    if (event.type !== 'request.interrupted' || event.state !== 'requesting') return;
    const startedAt = events.slice(0, position).findLastIndex((earlier) => earlier.type === 'request.started');
    const started = events[startedAt];
    if (!started) {
      problems.push('request.interrupted in requesting without a request.started before it');
      return;
    }
    const partial = events.slice(startedAt + 1, position).some(isDelta);
    if (event.discardPartial !== partial)
      problems.push(`request.interrupted discardPartial ${event.discardPartial} after ${partial ? 'partial output' : 'no output'}`);
    for (const entry of log) {
      if (entry.arrivedAt <= started.at || entry.arrivedAt >= event.at) continue;
      if (entry.text !== '' && assistantTexts.has(entry.text))
        problems.push(`the text of interrupted request #${entry.index} (${JSON.stringify(entry.text)}) is in the history`);
      for (const id of entry.callIds) {
        if (callIds.has(id)) problems.push(`call ${id} of interrupted request #${entry.index} is in the history`);
        if (executed.has(id)) problems.push(`call ${id} of interrupted request #${entry.index} was executed`);
      }
    }
    const next = events.slice(position + 1).find((later) => later.type === 'request.started');
    if (next?.type === 'request.started' && next.attempt !== 1) problems.push(`the request after an interrupt is attempt ${next.attempt}`);
  });
  return problems;
}

function fallbackProblems({ chain, output, events, log, maxAttempts }: Observed): string[] {
  const problems: string[] = [];
  let perRequest = 0;
  let previous: { position: number; attempt: number } | undefined;
  let fellBackTo: number | undefined;
  events.forEach((event, index) => {
    if (event.type === 'request.started') {
      const position = positionOf(chain, event.model);
      if (position < 0) problems.push(`request.started by model ${event.model ?? '?'}, which no provider of the chain asks for`);
      // A request starts on the first provider; it moves on only by a fallback, to a first attempt there.
      if (position === 0 && event.attempt === 1) perRequest = 0;
      else if (fellBackTo !== undefined) {
        if (position !== fellBackTo || event.attempt !== 1)
          problems.push(
            `after a fallback to provider ${fellBackTo + 1}, request.started on provider ${position + 1}, attempt ${event.attempt}`,
          );
      } else if (position > 0 && !(previous && previous.position === position && previous.attempt === event.attempt - 1))
        problems.push(`request.started on provider ${position + 1} (attempt ${event.attempt}) without a fallback to it`);
      previous = { position, attempt: event.attempt };
      fellBackTo = undefined;
      return;
    }
    if (event.type === 'guardrail.checked') fellBackTo = undefined; // A message that joined makes a new request.
    if (event.type !== 'provider.fallback') return;
    perRequest++;
    if (perRequest > chain.length - 1) problems.push(`${perRequest} fallbacks in one request, ${chain.length} providers`);
    const from = positionOf(chain, labelModel(event.from));
    const to = positionOf(chain, labelModel(event.to));
    const startedAt = events.slice(0, index).findLastIndex((earlier) => earlier.type === 'request.started');
    const started = events[startedAt];
    if (started?.type !== 'request.started') {
      problems.push('provider.fallback without a request.started before it');
      return;
    }
    if (from !== positionOf(chain, started.model) || to !== from + 1)
      problems.push(`provider.fallback from ${event.from} to ${event.to} after a request to ${started.model ?? '?'}`);
    // Only when the retries are spent on a retryable error; never after a fatal one.
    if (started.attempt !== maxAttempts) problems.push(`fell back after attempt ${started.attempt} of ${maxAttempts}: retries left`);
    if (!event.error.retryable) problems.push(`fell back on a fatal error: ${event.error.code ?? ''} ${event.error.message.slice(0, 100)}`);
    const request = log[started.requestsSoFar];
    if (request && request.arrivedAt < event.at && contractFatal(request.injected))
      problems.push(`fell back after a fatal answer (${request.injected.join(', ')})`);
    const partial = events.slice(startedAt + 1, index).some(isDelta);
    if (event.discardPartial !== partial)
      problems.push(`provider.fallback discardPartial ${event.discardPartial} after ${partial ? 'partial output' : 'no output'}`);
    fellBackTo = to;
  });
  if (chain.length === 1 && events.some((event) => event.type === 'provider.fallback'))
    problems.push('provider.fallback with one provider');
  // A run ending on a fatal provider error did not fall back after it (a guardrail's error may come after a fallback, before its request).
  if (output.status === 'error' && output.error?.retryable === false && !output.error.code?.startsWith('guardrail_')) {
    const lastStarted = events.findLastIndex((event) => event.type === 'request.started');
    if (events.slice(lastStarted + 1).some((event) => event.type === 'provider.fallback'))
      problems.push('a fallback after the request that failed the run');
  }
  return problems;
}

/** The provider of a wire, pointed at a fault server. */
function providerFor(wire: RunWire, baseURL: string, apiKey: string, stream: boolean, model = modelFor(wire, 0)): Provider {
  switch (wire) {
    // The real provider packages over real HTTP; `includeUsage` asks for the usage chunk as the native provider does.
    case 'ai-sdk-compatible':
      return aiSdkProvider(createOpenAICompatible({ name: 'compatible', baseURL, apiKey, includeUsage: true }).chatModel(model));
    case 'ai-sdk-openai':
      return aiSdkProvider(createOpenAI({ baseURL, apiKey }).chat(model));
    case 'openai':
      return openaiProvider({ model, apiKey, baseURL, stream });
    case 'responses':
      return openaiProvider({ api: 'responses', model, apiKey, baseURL, stream });
    case 'anthropic':
      return anthropicProvider({ model, apiKey, baseURL, maxTokens: 1024, stream });
  }
}

/** Problems of a request body as received by the server; `sentThinking` is what the server sent (thinking blocks, encrypted reasoning). */
function bodyProblems(wire: Wire, body: unknown, sentThinking: Set<string>, stream: boolean): string[] {
  if (wire === 'responses') {
    if (!isRecord(body) || !Array.isArray(body.input)) return ['request body without input'];
    const problems = responsesBodyProblems(body.input, sentThinking);
    if ((body.stream === true) !== stream) problems.push(`stream ${String(body.stream)} sent, provider set to ${stream}`);
    if (body.store !== false) problems.push(`store ${String(body.store)} sent in the stateless mode`);
    return problems;
  }
  if (!isRecord(body) || !Array.isArray(body.messages)) return ['request body without messages'];
  const problems: string[] = [];
  if ((body.stream === true) !== stream) problems.push(`stream ${String(body.stream)} sent, provider set to ${stream}`);
  if (wire === 'openai') problems.push(...openaiBodyProblems(body.messages as OpenAIChatMessage[]));
  else {
    problems.push(...anthropicBodyProblems(body.messages as Anthropic.MessageParam[], sentThinking).problems);
    if (typeof body.system === 'string' && body.system.trim() === '') problems.push('empty system');
  }
  return problems;
}

async function nextTurnOnOtherWire(
  testCase: RunCase,
  messages: Message[],
  tools: Tool[],
  apiKey: string,
  system: string | undefined,
): Promise<string[]> {
  // Chat Completions and Responses histories go on to Anthropic, Anthropic's to Chat Completions.
  const wire: Wire = testCase.wire === 'anthropic' ? 'openai' : 'anthropic';
  const problems: string[] = [];
  const server = await startFaultServer({ wire, plan: [], toolNames: tools.map((tool) => tool.name), apiKey });
  try {
    const provider = providerFor(wire, server.baseURL, apiKey, testCase.stream);
    const machine = createConversationMachine({
      provider,
      tools: tools as unknown as ConversationOptions['tools'],
      retry: false,
      requestTimeoutMs: 5_000,
      ...(system === undefined ? {} : { system }),
    });
    const actor = createActor(machine, { input: { messages } }).start();
    actor.send({ type: 'user.message', content: 'Next turn.' });
    const next = await toPromise(actor);
    if (next.status !== 'done') problems.push(`next turn on ${wire} ended ${next.status}: ${next.error?.message ?? next.reason ?? ''}`);
    const body = server.wire.requests[0]?.body;
    if (body === undefined) problems.push(`next turn on ${wire}: no request sent`);
    else
      problems.push(
        ...bodyProblems(wire, body, new Set(), testCase.stream)
          .filter((problem) => !problem.includes('thinking'))
          .map((problem) => `next turn on ${wire}: ${problem}`),
      );
    problems.push(...historyProblems(next.messages).map((problem) => `next turn on ${wire}: ${problem}`));
    if (safeJson(next).includes(apiKey)) problems.push(`next turn on ${wire}: output holds the API key`);
  } finally {
    await server.close();
  }
  return problems;
}

/** A short description of a case, for logs. */
export function describeCase(testCase: RunCase): string {
  return JSON.stringify(testCase);
}
