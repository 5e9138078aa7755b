/**
 * Graph tests of the conversation machine.
 *
 * `xstate/graph` is the maintained home of the `@xstate/graph` API: since xstate 5.20 the graph and
 * model-based-testing utilities ship inside the `xstate` package itself
 * (`import { getShortestPaths } from 'xstate/graph'`), so no separate package is needed.
 *
 * Part 1 traverses the machine as pure logic: `getAdjacencyMap` / `getShortestPaths` /
 * `getSimplePaths` call `machine.transition` with a mock actor scope, so no actor runs and no delay
 * fires. We supply, as events, what the actors and the clock would send (`provider.finish`,
 * `xstate.done.actor.providerCall`, `xstate.error.actor.providerCall`, `xstate.after.*`, the tool
 * executions' `xstate.done.actor.toolCall-<iteration>-<index>` and `xstate.error.actor.…`), filtered to those the
 * current snapshot accepts (`snapshot.can(event)`). The snapshot key keeps the graph finite (usage,
 * streamed text and messages are left out; they do not steer transitions while the doom-loop check
 * is off, and where it is on, the tail of the tool-call history is part of the key).
 *
 * Part 2 drives real actors (`createActor(machine).start()` with a scripted `handlerProvider` and
 * scripted tools) along representative shortest paths of that graph, and checks that each reaches
 * the same final state with the same `iterations`, visiting the path's states in order, and that
 * `toPromise(actor)` resolves.
 */
import { describe, expect, it } from 'vitest';
import {
  createActor,
  createEmptyActor,
  getInitialSnapshot,
  initialTransition,
  toPromise,
  waitFor,
  type AnyStateNode,
  type EventObject,
  type SnapshotFrom,
} from 'xstate';
import { getAdjacencyMap, getShortestPaths, getStateNodes, type StatePath } from 'xstate/graph';
import { createConversationMachine } from '../src/machines/chart/conversation.js';
import { agentTool } from '../src/machines/agents/agent-tool.js';
import { defineAgent } from '../src/machines/agents/define-agent.js';
import { recentCallSignatures, maxDoomLoopPeriod } from '../src/machines/policies/doom-loop.js';
import type { ConversationOptions } from '../src/machines/chart/options.js';
import { resultTexts } from '../src/machines/rounds/tool-round.js';
import type { ConversationEvent } from '../src/machines/names/types.js';
import { ProviderError } from '../src/model/errors/provider-error.js';
import { handlerProvider, type HandlerRequest } from '../src/providers/handler/handler-provider.js';
import type { Message } from '../src/model/messages.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai-wire/chat-types.js';
import type { ProviderContentPart, Provider } from '../src/model/provider.js';
import { defineTool, type Tool } from '../src/tools/define-tool.js';
import { HaltError } from '../src/tools/halt-error.js';
import { turnChunks } from './support/scripted-model.js';

// ---------------------------------------------------------------------------------------------
// The machine under test

type Machine = ReturnType<typeof createConversationMachine>;
type Snapshot = SnapshotFrom<Machine>;
type Path = StatePath<Snapshot, ConversationEvent>;

/** What each tool does in a real run, by tool name, one entry per execution in order. */
type ToolBehaviour = 'ok' | 'halt' | 'fail' | 'hang';
type ToolScript = Map<string, ToolBehaviour[]>;

const waitForAbort = (signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });

function scriptedTools(script: ToolScript): Array<Tool<never, unknown>> {
  const make = (name: string, needsApproval: boolean) =>
    defineTool({
      name,
      description: `${name} (scripted)`,
      parameters: { type: 'object', properties: {} },
      needsApproval,
      execute: async (_args, { signal }) => {
        const behaviour = script.get(name)?.shift() ?? 'ok';
        if (behaviour === 'halt') throw new HaltError('stopped by tool');
        if (behaviour === 'fail') throw new Error('the tool threw');
        if (behaviour === 'hang') {
          await waitForAbort(signal);
          return 'aborted';
        }
        return 'ok';
      },
    }) as unknown as Tool<never, unknown>;
  return [make('lookup', false), make('guarded', true)];
}

/** A provider never called during pure traversal. */
const unusedProvider: Provider = {
  name: 'unused',
  // biome-ignore lint/correctness/useYield: a provider that must never be called
  async *stream() {
    throw new Error('pure traversal never runs the provider');
  },
};

const retry = { maxRetries: 2, jitter: false, initialDelayMs: 2, maxDelayMs: 8 } as const;

type GraphConfig = {
  name: string;
  maxToolIterations: number | undefined;
  /** Doom-loop detection on (default threshold 3) or off. */
  doomLoop: boolean;
  /** The `provider.finish` variants offered as events. */
  finishes: FinishName[];
  /** A structured `output` schema (`{ ok: boolean }`, 2 repairs at most). */
  output?: boolean;
  /** Agent tools `ask` (onChildFailure: 'halt') and `consult` (an error result). */
  agents?: boolean;
  /** Agents `a` and `b` handing off to each other, both with the scripted tools. */
  handoffs?: boolean;
  /**
   * Long conversations (DESIGN §12): guardrails (this many per phase), `steering`, a fallback
   * provider, a token and a time budget; `user.interrupt` is offered.
   */
  controls?: { guardrails: 0 | 1 | 2; steering: 'queue' | 'reject'; fallback: boolean; budget: boolean | 'time' };
  /** A context window (`keepLast: 1`): responses report prompts far over it, and the provider may say the prompt is too long. */
  compaction?: boolean;
};

/** The child conversation of the agent tools; pure traversal never starts it. */
const childMachine = createConversationMachine({ provider: { name: 'child', stream: () => (async function* () {})() } as never });
const agentTools = [
  agentTool(childMachine, { name: 'ask', onChildFailure: 'halt' }),
  agentTool(childMachine, { name: 'consult' }),
] as unknown as Array<Tool<never, unknown>>;

/** The structured answer the `output` config asks for; the `text` finish is not JSON, `json` is valid. */
const outputOption = { schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] }, maxRepairs: 2 };

const graphToolTimeoutMs = 86_400_000;

function machineOptions(
  config: GraphConfig,
  provider: Provider,
  script: ToolScript,
  extra: Partial<ConversationOptions> = {},
): ConversationOptions {
  const tools = [...scriptedTools(script), ...(config.agents ? agentTools : [])];
  return {
    provider,
    ...(config.handoffs
      ? { agents: [defineAgent({ name: 'a', handoffs: ['b'] }), defineAgent({ name: 'b', handoffs: ['a'] })], tools }
      : { tools }),
    ...(config.maxToolIterations === undefined ? {} : { maxToolIterations: config.maxToolIterations }),
    retry,
    ...(config.doomLoop ? {} : { doomLoop: false }),
    // Longer than any traversal: results reach snapshots built long before, and a result after its
    // call's deadline is a timeout (`resultOverdue`); the deadline itself is offered as an event.
    toolTimeoutMs: graphToolTimeoutMs,
    ...(config.output ? { output: outputOption } : {}),
    ...(config.controls ? controlOptions(config.controls, provider) : {}),
    ...(config.compaction ? { context: { maxInputTokens: 1_000, keepLast: 1 } } : {}),
    ...extra,
  };
}

/** A guardrail never called during pure traversal (its verdicts are offered as events). */
const graphGuardrail = (name: string) => ({ name, check: () => ({ tripped: false }), timeoutMs: 1_000 });

/** The §12 options of the `controls` config: 8 tokens is spent by the second response (5 tokens each). */
const controlBudget = { maxTotalTokens: 8, maxDurationMs: 86_400_000 };
function controlOptions(controls: NonNullable<GraphConfig['controls']>, provider: Provider): Partial<ConversationOptions> {
  const input = [graphGuardrail('topic'), graphGuardrail('language')].slice(0, controls.guardrails);
  const output = [graphGuardrail('pii'), graphGuardrail('tone')].slice(0, controls.guardrails);
  return {
    ...(controls.fallback ? { provider: [provider, { ...provider, name: 'fallback' }] } : {}),
    ...(controls.guardrails > 0 ? { guardrails: { input, output } } : {}),
    steering: controls.steering,
    ...(controls.budget === true ? { budget: controlBudget } : controls.budget === 'time' ? { budget: { maxDurationMs: 86_400_000 } } : {}),
  };
}

const capOf = (config: GraphConfig) => config.maxToolIterations ?? 10;

// ---------------------------------------------------------------------------------------------
// Events: what users, providers, tool executions and the clock send

const usage = { inputTokens: 3, outputTokens: 2, totalTokens: 5 };
const asEvent = (event: EventObject & Record<string, unknown>) => event as unknown as ConversationEvent;

type FinishName = 'text' | 'json' | 'approval' | 'normal' | 'unknown' | 'two' | 'agents' | 'handoff' | 'handoffAndTool';

const finishContent: Record<FinishName, ProviderContentPart[]> = {
  text: [{ type: 'text', text: 'the answer' }],
  json: [{ type: 'text', text: '{"ok":true}' }],
  approval: [{ type: 'tool-call', toolCallId: 'call_guarded', toolName: 'guarded', argsText: '{}' }],
  normal: [{ type: 'tool-call', toolCallId: 'call_lookup', toolName: 'lookup', argsText: '{}' }],
  unknown: [{ type: 'tool-call', toolCallId: 'call_nope', toolName: 'nope', argsText: '{}' }],
  two: [
    { type: 'tool-call', toolCallId: 'call_lookup', toolName: 'lookup', argsText: '{}' },
    { type: 'tool-call', toolCallId: 'call_guarded', toolName: 'guarded', argsText: '{}' },
  ],
  // Two agent calls: `ask` halts the parent when its child fails, `consult` gives an error result.
  agents: [
    { type: 'tool-call', toolCallId: 'call_ask', toolName: 'ask', argsText: '{"prompt":"a"}' },
    { type: 'tool-call', toolCallId: 'call_consult', toolName: 'consult', argsText: '{"prompt":"b"}' },
  ],
  // With agents `a` and `b`: a handoff alone, and one in a round with a tool that runs.
  handoff: [{ type: 'tool-call', toolCallId: 'call_transfer', toolName: 'transfer_to_b', argsText: '{}' }],
  handoffAndTool: [
    { type: 'tool-call', toolCallId: 'call_transfer', toolName: 'transfer_to_a', argsText: '{}' },
    { type: 'tool-call', toolCallId: 'call_lookup', toolName: 'lookup', argsText: '{}' },
  ],
};

const finishEvent = (name: FinishName, reported = usage) =>
  asEvent({
    type: 'provider.finish',
    content: finishContent[name],
    finishReason: name === 'text' || name === 'json' ? 'stop' : 'tool-calls',
    usage: reported,
    finish: name,
  });
/** A prompt the provider reports far over the compaction config's window. */
const overWindowUsage = { inputTokens: 50_000, outputTokens: 2, totalTokens: 50_002 };
const contextLengthError = asEvent({
  type: 'xstate.error.actor.providerCall',
  error: new ProviderError("This model's maximum context length is 8192 tokens", { code: 'context_length', retryable: false, status: 400 }),
});
const afterSummaryTimeout = asEvent({ type: 'xstate.after.requestTimeout.conversation.compacting.summarizing' });
/** What the compaction actor may give back or throw. */
const compactionEvents = [
  asEvent({ type: 'xstate.done.actor.compaction', output: { text: 'the summary', usage, finishReason: 'stop' } }),
  asEvent({ type: 'xstate.done.actor.compaction', output: { text: '  ', usage, finishReason: 'stop' } }),
  asEvent({ type: 'xstate.error.actor.compaction', error: Object.assign(new Error('unavailable'), { status: 503 }) }),
  asEvent({ type: 'xstate.error.actor.compaction', error: Object.assign(new Error('bad key'), { status: 401 }) }),
];

const providerDone = asEvent({ type: 'xstate.done.actor.providerCall', output: undefined });
/** The ids XState generates for delayed transitions: `xstate.after.<delay>.<state node id>`. */
const afterRetryDelay = asEvent({ type: 'xstate.after.retryDelay.conversation.retrying' });
const afterRequestTimeout = asEvent({ type: 'xstate.after.requestTimeout.conversation.requesting.waiting' });
const afterToolDeadline = asEvent({ type: 'xstate.after.toolDeadline.conversation.executingTools.running' });
const afterCompactionBackoff = asEvent({ type: 'xstate.after.retryDelay.conversation.compacting.backingOff' });
const userMessage = asEvent({ type: 'user.message', content: 'What is 2+3?' });
/** What a restored run sends itself on start. */
const runResume = asEvent({ type: 'run.resume' });
const emptyUserMessage = asEvent({ type: 'user.message', content: '   ' });
// Carries both the single-delta (`delta`) and the batched (`deltas`) shape of `provider.delta`.
const delta = asEvent({
  type: 'provider.delta',
  delta: { type: 'text.delta', delta: 'partial ' },
  deltas: [{ type: 'text.delta', delta: 'partial ' }],
});
const approve = asEvent({ type: 'tool.approve', toolCallId: 'call_guarded' });
const deny = asEvent({ type: 'tool.deny', toolCallId: 'call_guarded', reason: 'not now' });
const approveUnknown = asEvent({ type: 'tool.approve', toolCallId: 'call_missing' });
const denyUnknown = asEvent({ type: 'tool.deny', toolCallId: 'call_missing' });
const cancel = asEvent({ type: 'cancel', reason: 'user left' });
const interrupt = asEvent({ type: 'user.interrupt', content: 'Actually, use metric units.' });
const emptyInterrupt = asEvent({ type: 'user.interrupt', content: '' });
const budgetDeadline = asEvent({ type: 'budget.deadline' });
const afterInputGuardrailTimeout = asEvent({ type: 'xstate.after.inputGuardrailTimeout.conversation.checkingInput' });
const afterOutputGuardrailTimeout = asEvent({ type: 'xstate.after.outputGuardrailTimeout.conversation.checkingOutput' });
/** A guardrail check's verdicts and its crash, for the live `guardrailCheck` actor of this snapshot's phase. */
function guardrailEvents(snapshot: Snapshot): ConversationEvent[] {
  if (!('guardrailCheck' in snapshot.children)) return [];
  const phase = snapshot.matches('checkingOutput') ? 'output' : 'input';
  const name = (phase === 'input' ? ['topic', 'language'] : ['pii', 'tone'])[snapshot.context.control.check];
  return [
    asEvent({ type: 'xstate.done.actor.guardrailCheck', output: { name, phase, tripped: false, reason: '' } }),
    asEvent({ type: 'xstate.done.actor.guardrailCheck', output: { name, phase, tripped: true, reason: 'off topic' } }),
    asEvent({ type: 'xstate.error.actor.guardrailCheck', error: new Error('the guardrail threw') }),
  ];
}

type ProviderFailure = { label: string; error: unknown; retryable: boolean; code?: string };

const httpError = (status: number, message: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(message), { status, ...extra });

/**
 * Every provider error class of docs/behaviour.md item 6, with the verdict it asks for. `retryable`
 * here is the test's expectation, written down independently of the classifier.
 */
const providerFailures: ProviderFailure[] = [
  { label: '429 rate limit', error: httpError(429, 'rate limited'), retryable: true, code: 'rate_limit' },
  { label: '500 server error', error: httpError(500, 'internal error'), retryable: true, code: 'server' },
  { label: '503 unavailable', error: httpError(503, 'unavailable'), retryable: true, code: 'server' },
  { label: '529 overloaded', error: httpError(529, 'overloaded'), retryable: true, code: 'overloaded' },
  { label: '408 request timeout', error: httpError(408, 'request timeout'), retryable: true, code: 'timeout' },
  { label: '409 conflict', error: httpError(409, 'conflict'), retryable: true, code: 'conflict' },
  {
    label: 'Anthropic overloaded_error body',
    error: Object.assign(new Error('Overloaded'), { error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }),
    retryable: true,
    code: 'overloaded',
  },
  {
    label: 'network ECONNRESET',
    error: Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } }),
    retryable: true,
    code: 'network',
  },
  {
    label: 'timeout (TimeoutError)',
    error: Object.assign(new Error('The operation timed out'), { name: 'TimeoutError' }),
    retryable: true,
    code: 'timeout',
  },
  {
    label: 'incomplete stream',
    error: new ProviderError('the stream ended without a finish_reason', { code: 'incomplete_stream', retryable: true }),
    retryable: true,
    code: 'incomplete_stream',
  },
  { label: '400 bad request', error: httpError(400, 'bad request'), retryable: false, code: 'bad_request' },
  { label: '401 unauthorized', error: httpError(401, 'bad key'), retryable: false, code: 'authentication' },
  { label: '403 forbidden', error: httpError(403, 'forbidden'), retryable: false, code: 'permission' },
  { label: '404 not found', error: httpError(404, 'no such model'), retryable: false, code: 'not_found' },
  { label: '422 unprocessable', error: httpError(422, 'unprocessable'), retryable: false, code: 'bad_request' },
  {
    label: '429 asking to wait longer than maxRetryAfterMs',
    error: httpError(429, 'come back in 2 minutes', { headers: { 'retry-after': '120' } }),
    retryable: false,
    code: 'rate_limit',
  },
  { label: 'AbortError', error: Object.assign(new Error('aborted'), { name: 'AbortError' }), retryable: false, code: 'aborted' },
  { label: 'plain Error', error: new Error('something odd'), retryable: false, code: 'unknown' },
  { label: 'non-Error: string', error: 'a thrown string', retryable: false, code: 'unknown' },
  { label: 'non-Error: number', error: 42, retryable: false, code: 'unknown' },
  { label: 'non-Error: null', error: null, retryable: false, code: 'unknown' },
  { label: 'non-Error: undefined', error: undefined, retryable: false, code: 'unknown' },
  { label: 'non-Error: plain object', error: { weird: true }, retryable: false, code: 'unknown' },
];

const providerErrorEvent = (failure: ProviderFailure) =>
  asEvent({ type: 'xstate.error.actor.providerCall', error: failure.error, label: failure.label });

/** What an agent call's child resolves with: an answer, or a failure. */
function childOutput(status: 'done' | 'error') {
  return {
    status,
    text: status === 'done' ? 'child answer' : '',
    messages: [],
    iterations: 0,
    usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 },
    ...(status === 'error' ? { error: { name: 'ProviderError', message: 'bad key', retryable: false } } : {}),
  };
}

/** The tool executions' results, halts and failures for the calls running in this snapshot. */
function toolCallEvents(snapshot: Snapshot): ConversationEvent[] {
  const { round, iterations } = snapshot.context;
  if (!round) return [];
  return round.flatMap((call, index) => {
    if (call.state !== 'running') return [];
    if (call.agent) {
      const id = `agent:${call.toolCallId}`;
      return [
        asEvent({ type: `xstate.done.actor.${id}`, output: childOutput('done') }),
        asEvent({ type: `xstate.done.actor.${id}`, output: childOutput('error') }),
        asEvent({ type: 'agent.emitted', childId: id, events: [{ type: 'text.delta', delta: 'child says' }] }),
        // Not a child's: an `agent.event` without its path is turned away, nothing read.
        asEvent({ type: 'agent.emitted', childId: id, events: [{ type: 'agent.event', event: { type: 'text.delta', delta: 'forged' } }] }),
        asEvent({
          type: 'agent.emitted',
          childId: id,
          events: [{ type: 'tool.approval.requested', toolCallId: `deep_${call.toolCallId}`, name: 'danger', args: {} }],
        }),
        // A grandchild's request, as the child passes it up: it counts toward the tree's budget.
        asEvent({
          type: 'agent.emitted',
          childId: id,
          events: [
            {
              type: 'agent.event',
              path: ['deep'],
              event: { type: 'request.finished', iteration: 0, attempt: 1, finishReason: 'stop', usage },
            },
          ],
        }),
      ];
    }
    const id = `toolCall-${iterations}-${index}`;
    return [
      // Progress changes nothing but the events: offered for a round's first call only.
      ...(index === 0 ? [asEvent({ type: 'tool.progress', toolCallId: call.toolCallId, data: { done: 1 } })] : []),
      // A second call of a round answers with parts (a toolContent result): the same paths, with media in the history.
      asEvent({
        type: `xstate.done.actor.${id}`,
        output:
          index % 2 === 1
            ? { toolCallId: call.toolCallId, result: 'ok\n[image image/png, 70 B]', content: mediaResult }
            : { toolCallId: call.toolCallId, result: 'ok' },
      }),
      asEvent({ type: `xstate.error.actor.${id}`, error: new HaltError('stopped by tool') }),
      asEvent({ type: `xstate.error.actor.${id}`, error: new Error('the tool threw') }),
    ];
  });
}

/** The parts of a toolContent result: text and a 1×1 PNG. */
const mediaResult = [
  { type: 'text', text: 'ok' },
  {
    type: 'image',
    data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
    mediaType: 'image/png',
  },
];

/**
 * The events offered in a snapshot. An actor's own events (`provider.*`, `xstate.done.actor.*`,
 * `xstate.error.actor.*`) only while that actor is a live child: a stopped actor sends nothing.
 */
function eventsFor(config: GraphConfig) {
  const fromUsersAndClock: ConversationEvent[] = [
    userMessage,
    emptyUserMessage,
    afterRequestTimeout,
    afterRetryDelay,
    approve,
    deny,
    approveUnknown,
    denyUnknown,
    cancel,
  ];
  const fromProviderCall: ConversationEvent[] = [
    delta,
    // Sent under the request actor's names by someone else: turned away, nothing read.
    asEvent({ type: 'provider.delta', deltas: [{ type: 'text.delta' }] }),
    asEvent({ type: 'provider.finish', content: 'not a list', finishReason: 'stop', usage }),
    ...config.finishes.map((name) => finishEvent(name)),
    ...(config.compaction ? [...config.finishes.map((name) => finishEvent(name, overWindowUsage)), contextLengthError] : []),
    providerDone,
    ...providerFailures.map(providerErrorEvent),
  ];
  // With steering, one queued message at a time keeps the graph finite.
  const controls = (snapshot: Snapshot): ConversationEvent[] =>
    config.controls
      ? [
          ...(snapshot.context.control.queued.length === 0 ? [interrupt] : []),
          emptyInterrupt,
          ...(config.controls.budget ? [budgetDeadline] : []),
          afterInputGuardrailTimeout,
          afterOutputGuardrailTimeout,
          ...guardrailEvents(snapshot),
        ]
      : [];
  return (snapshot: Snapshot): ConversationEvent[] => [
    ...(config.controls && snapshot.context.control.queued.length > 0
      ? fromUsersAndClock.filter((event) => event !== userMessage)
      : fromUsersAndClock),
    ...controls(snapshot),
    // Approvals of calls deep in the tree, once a child asked for them.
    ...snapshot.context.agents.approvals.flatMap(({ toolCallId }) => [
      asEvent({ type: 'tool.approve', toolCallId }),
      asEvent({ type: 'tool.deny', toolCallId, reason: 'not now' }),
    ]),
    ...('providerCall' in snapshot.children ? fromProviderCall : []),
    ...('compaction' in snapshot.children ? [...compactionEvents, afterSummaryTimeout] : []),
    ...(config.compaction ? [afterCompactionBackoff] : []),
    ...toolCallEvents(snapshot),
    // Last, so that among equally short paths the ones where tools answer come first.
    afterToolDeadline,
  ];
}

/** Events serialised with errors spelled out, so two errors with the same own fields stay apart. */
function serializeEvent(event: ConversationEvent): string {
  return JSON.stringify(event, (_key, value: unknown) =>
    value instanceof Error ? { ...value, errorName: value.name, message: value.message } : value === undefined ? '(undefined)' : value,
  );
}

// ---------------------------------------------------------------------------------------------
// Snapshot key: what steers the machine's future

function stateKey(config: GraphConfig, { coarse = false } = {}) {
  return (snapshot: Snapshot): string => {
    const { context } = snapshot;
    const final = snapshot.status === 'done';
    if (final) {
      // A final state takes no event; what tells finals apart is their output. The error code of
      // an `error` final is set by the very transition into it, so a path can aim at one.
      return JSON.stringify({
        value: snapshot.value,
        iterations: context.iterations,
        reason: context.outcome.reason,
        ...(snapshot.value === 'error' ? { error: context.retry.lastError?.code ?? null } : {}),
        ...(config.controls ? { budget: context.control.budget?.limit, guardrail: context.control.guardrail?.phase } : {}),
      });
    }
    const requestingOrRetrying = snapshot.matches('requesting') || snapshot.matches('retrying');
    return JSON.stringify({
      value: snapshot.value,
      status: snapshot.status,
      iterations: context.iterations,
      // A field goes into the key only in the states that read it before overwriting it, which
      // keeps the graph small without merging states that behave differently: `attempt` steers
      // `requesting`/`retrying` and is reset to 1 when a round completes; `progressed` (whether
      // the stream made progress in the current request-timeout window, where the machine tracks
      // it) steers only that timeout and is reset on entering `requesting`. It is also left out of
      // the coarse key real runs are compared on: a real stream always makes progress.
      attempt: requestingOrRetrying ? context.attempt : undefined,
      progressed: coarse || !snapshot.matches('requesting') ? undefined : context.stream.progressed,
      response: context.response && {
        calls: context.response.calls.map((call) => `${call.toolName}:${call.state}`),
        doomLoop: context.response.doomLoop.action,
        answer: context.response.answer?.ok,
      },
      round: context.round?.map((call) => `${call.toolName}:${call.state}`) ?? null,
      children: Object.keys(snapshot.children).sort(),
      // The active agent decides which tools a response may call.
      agent: context.agents.active,
      approvals: context.agents.approvals.map((approval) => approval.toolCallId),
      reason: context.outcome.reason,
      doomLoopNoticed: context.doomLoop.noticed,
      // What steers the §12 controls: the provider of the list, queued messages, the guardrail being
      // checked, whether compaction ran for this request, and the tokens spent (the budget reads them).
      ...(config.compaction
        ? {
            compacted: context.control.compactedAt === context.messages.length,
            overWindow: (context.control.lastPrompt?.inputTokens ?? 0) > 1_000,
            compacting: context.control.compaction?.cause,
            attempt: context.attempt,
          }
        : {}),
      ...(config.controls
        ? {
            provider: context.control.provider,
            queued: context.control.queued.length,
            check: context.control.check,
            ...(config.controls.budget === true ? { tokens: context.usage.totalTokens } : {}),
            lastUser: context.messages.at(-1)?.role,
          }
        : {}),
      repairs: context.answer.repairs,
      pendingNotice: context.doomLoop.pendingNotice !== null,
      // The doom-loop verdict depends on the tail of the tool-call history.
      ...(config.doomLoop ? { tail: recentCallSignatures(context.messages, 3 * maxDoomLoopPeriod).map((call) => call.name) } : {}),
    });
  };
}

// ---------------------------------------------------------------------------------------------
// Traversal

type Graph = {
  config: GraphConfig;
  machine: Machine;
  key: (snapshot: Snapshot) => string;
  /** The key without what real streaming changes on its own (progress within a timeout window). */
  coarseKey: (snapshot: Snapshot) => string;
  /** Every reachable snapshot (one per key). */
  nodes: Map<string, Snapshot>;
  edges: Map<string, Array<{ serializedEvent: string; event: ConversationEvent; to: string; next: Snapshot }>>;
  traversalOptions: Parameters<typeof getShortestPaths<Machine>>[1];
};

const graphs = new Map<string, Graph>();

function buildGraph(config: GraphConfig): Graph {
  const cached = graphs.get(config.name);
  if (cached) return cached;
  const machine = createConversationMachine(machineOptions(config, unusedProvider, new Map()));
  const key = stateKey(config);
  const input = { messages: [] as Message[] };
  const traversalOptions = {
    input,
    events: eventsFor(config),
    filterEvents: (snapshot: Snapshot, event: ConversationEvent) => snapshot.can(event),
    serializeState: key,
    serializeEvent,
    stopWhen: (snapshot: Snapshot) => snapshot.status !== 'active',
    limit: Number(process.env.GRAPH_LIMIT ?? 500_000),
  };
  // The machine's emitted-event typing trips getAdjacencyMap's ActorLogic parameter; the logic is the machine itself.
  const adjacency = getAdjacencyMap<Snapshot, ConversationEvent, { messages: Message[] }>(machine as never, traversalOptions);
  const nodes = new Map<string, Snapshot>();
  const edges: Graph['edges'] = new Map();
  for (const [serialized, { state, transitions }] of Object.entries(adjacency)) {
    nodes.set(serialized, state);
    edges.set(
      serialized,
      (Object.entries(transitions) as Array<[string, { event: ConversationEvent; state: Snapshot }]>).map(
        ([serializedEvent, { event, state: next }]) => ({
          serializedEvent,
          event,
          to: key(next),
          next,
        }),
      ),
    );
  }
  const graph: Graph = { config, machine, key, coarseKey: stateKey(config, { coarse: true }), nodes, edges, traversalOptions };
  graphs.set(config.name, graph);
  return graph;
}

/**
 * One pure transition. Like `transition()` from 'xstate', but with one inert actor scope shared by
 * all calls (as `xstate/graph` does) instead of a new actor per call: the checks below take
 * tens of thousands of transitions.
 */
const inertScope = (() => {
  const self = createEmptyActor();
  return {
    self,
    logger: () => {},
    id: '',
    sessionId: 'graph',
    defer: () => {},
    system: self.system,
    stopChild: () => {},
    emit: () => {},
    actionExecutor: () => {},
  };
})();
function step(machine: Machine, snapshot: Snapshot, event: ConversationEvent): [Snapshot] {
  return [machine.transition(snapshot, event, inertScope as never)];
}

/** The snapshot persisted as JSON and restored on the machine's own restore path (as a new process would). */
function restored(machine: Machine, snapshot: Snapshot): Snapshot {
  const persisted: unknown = JSON.parse(JSON.stringify(machine.getPersistedSnapshot(snapshot)));
  return machine.restoreSnapshot(persisted as never, inertScope as never) as Snapshot;
}

/** The snapshot with its running calls' deadlines long past: a result now comes too late (`resultOverdue`). */
function pastDeadlines(machine: Machine, snapshot: Snapshot): Snapshot {
  const round = snapshot.context.round?.map((call) =>
    call.state === 'running' && call.deadline !== undefined ? { ...call, deadline: 0 } : call,
  );
  return machine.resolveState({ value: snapshot.value, context: { ...snapshot.context, round: round ?? null } }) as Snapshot;
}

const isFinal = (snapshot: Snapshot) => snapshot.status === 'done';
const stateValueOf = (snapshot: Snapshot) => (typeof snapshot.value === 'string' ? snapshot.value : JSON.stringify(snapshot.value));
const inState = (snapshot: Snapshot, state: string) => snapshot.matches(state as never);

/**
 * docs/behaviour.md item 2: every assistant message with tool calls is followed by one tool message holding
 * exactly one result per call, in call order; nothing else sits between them.
 */
function historyProblem(messages: Message[]): string | null {
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index];
    if (message?.role !== 'assistant') continue;
    const calls = message.content.filter((part) => part.type === 'tool-call').map((part) => part.toolCallId);
    if (calls.length === 0) continue;
    const next = messages[index + 1];
    if (next?.role !== 'tool')
      return `assistant message ${index} has tool calls ${calls.join(', ')} but message ${index + 1} is ${next?.role ?? 'missing'}`;
    const results = next.content.map((part) => part.toolCallId);
    if (JSON.stringify(results) !== JSON.stringify(calls)) return `tool calls ${calls.join(', ')} got results ${results.join(', ')}`;
  }
  for (const [index, message] of messages.entries()) {
    if (message.role === 'tool' && messages[index - 1]?.role !== 'assistant')
      return `tool message ${index} does not follow an assistant message`;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Configurations

const allFinishes: FinishName[] = ['text', 'approval', 'normal', 'unknown', 'two'];
const capConfigs: GraphConfig[] = [
  { name: 'cap 0', maxToolIterations: 0, doomLoop: false, finishes: allFinishes },
  { name: 'cap 1', maxToolIterations: 1, doomLoop: false, finishes: allFinishes },
  { name: 'cap 2', maxToolIterations: 2, doomLoop: false, finishes: allFinishes },
  { name: 'cap 3', maxToolIterations: 3, doomLoop: false, finishes: allFinishes },
  // Ten rounds of every response kind would be slow: the two-call response and the unknown tool
  // (a round of settled calls, like `normal` as far as the cap goes) are covered by caps 0-3.
  { name: 'default cap (10)', maxToolIterations: undefined, doomLoop: false, finishes: ['text', 'approval', 'normal'] },
];
/** Default options (doom-loop detection on): one repeating call, so the history tail stays finite. */
const doomLoopConfig: GraphConfig = {
  name: 'defaults with doom loop',
  maxToolIterations: undefined,
  doomLoop: true,
  finishes: ['text', 'normal'],
};
/** A structured answer: repairs are bounded like tool rounds. */
const outputConfig: GraphConfig = {
  name: 'structured output',
  maxToolIterations: 1,
  doomLoop: false,
  finishes: ['text', 'json', 'normal'],
  output: true,
};
/** Agent calls: children that answer or fail, a failure that halts the parent, events forwarded. */
const agentConfig: GraphConfig = {
  name: 'agent calls',
  maxToolIterations: 1,
  doomLoop: false,
  finishes: ['text', 'normal', 'agents'],
  agents: true,
};
/** Handoffs: a round with a transfer call hands the conversation on as it completes. */
const handoffConfig: GraphConfig = {
  name: 'handoffs',
  maxToolIterations: 2,
  doomLoop: false,
  finishes: ['text', 'handoff', 'handoffAndTool'],
  handoffs: true,
};
/** Long conversations: guardrails, steering, fallback, budgets and interrupts over one tool round. */
const controlsConfig: GraphConfig = {
  name: 'long-conversation controls',
  maxToolIterations: 1,
  doomLoop: false,
  finishes: ['text', 'approval', 'normal'],
  controls: { guardrails: 1, steering: 'queue', fallback: true, budget: true },
};
/** Agent calls under a tree budget, steering without guardrails. */
const controlledAgentsConfig: GraphConfig = {
  name: 'agent calls under a budget, steering',
  maxToolIterations: 1,
  doomLoop: false,
  finishes: ['text', 'agents'],
  agents: true,
  controls: { guardrails: 0, steering: 'queue', fallback: false, budget: true },
};
/** Two guardrails a phase, messages during a run rejected. */
const guardrailsConfig: GraphConfig = {
  name: 'two guardrails a phase',
  maxToolIterations: 0,
  doomLoop: false,
  finishes: ['text'],
  controls: { guardrails: 2, steering: 'reject', fallback: false, budget: false },
  // Compaction meets guardrails and rejected messages here.
  compaction: true,
};
/** A context window: compaction before a request over it, and after the provider's context-length error. */
const compactionConfig: GraphConfig = {
  name: 'context window',
  maxToolIterations: 1,
  doomLoop: false,
  finishes: ['text', 'normal'],
  compaction: true,
  controls: { guardrails: 0, steering: 'queue', fallback: false, budget: 'time' },
};
const allConfigs = [...capConfigs, doomLoopConfig, outputConfig, agentConfig, handoffConfig];

// ---------------------------------------------------------------------------------------------
// Part 1: properties of the whole graph

describe('conversation machine graph (xstate/graph, pure traversal)', { timeout: 120_000 }, () => {
  it('uses the delayed-event ids XState generates', () => {
    const { machine } = buildGraph(capConfigs[1]!);
    const delayed = getStateNodes(machine.root).flatMap((node: AnyStateNode) =>
      [...node.transitions.keys()].filter((type) => type.startsWith('xstate.after.')),
    );
    expect(delayed.sort()).toEqual(
      [
        afterRequestTimeout.type,
        afterRetryDelay.type,
        afterToolDeadline.type,
        afterInputGuardrailTimeout.type,
        afterOutputGuardrailTimeout.type,
        afterCompactionBackoff.type,
        afterSummaryTimeout.type,
      ].sort(),
    );
  });

  for (const config of allConfigs) {
    describe(config.name, () => {
      it('is finite and reaches done, halted and error', () => {
        const graph = buildGraph(config);
        const finals = [...graph.nodes.values()].filter(isFinal);
        expect(graph.nodes.size).toBeGreaterThan(10);
        expect(new Set(finals.map(stateValueOf))).toEqual(new Set(['done', 'halted', 'error']));
      });

      it('(a) a final state (done/halted/error) is reachable from every reachable state', () => {
        const graph = buildGraph(config);
        const reverse = new Map<string, string[]>();
        for (const [from, out] of graph.edges) for (const { to } of out) reverse.set(to, [...(reverse.get(to) ?? []), from]);
        const canFinish = new Set([...graph.nodes].filter(([, snapshot]) => isFinal(snapshot)).map(([key]) => key));
        const queue = [...canFinish];
        while (queue.length) {
          for (const from of reverse.get(queue.pop()!) ?? []) {
            if (!canFinish.has(from)) {
              canFinish.add(from);
              queue.push(from);
            }
          }
        }
        const stuck = [...graph.nodes.keys()].filter((key) => !canFinish.has(key));
        expect(stuck).toEqual([]);
      });

      it('final states are absorbing, resolve an output, and leave a valid history', () => {
        const graph = buildGraph(config);
        for (const snapshot of graph.nodes.values()) {
          if (!isFinal(snapshot)) continue;
          const output = snapshot.output!;
          expect(output.status).toBe(stateValueOf(snapshot));
          expect(output.iterations).toBe(snapshot.context.iterations);
          expect(historyProblem(output.messages), graph.key(snapshot)).toBeNull();
          for (const event of [cancel, providerDone]) {
            const [next] = step(graph.machine, snapshot, event);
            expect(next.value).toEqual(snapshot.value);
            expect(next.output?.status).toBe(output.status);
            expect(next.output?.reason).toBe(output.reason);
            expect(next.context.messages).toBe(snapshot.context.messages);
          }
        }
      });

      it(`(b) never executes more than ${capOf(config)} tool rounds; at the cap, more tool calls halt with max_iterations`, () => {
        const graph = buildGraph(config);
        const cap = capOf(config);
        let maxSeen = 0;
        let cappedResponses = 0;
        for (const [key, snapshot] of graph.nodes) {
          maxSeen = Math.max(maxSeen, snapshot.context.iterations);
          expect(snapshot.context.iterations, key).toBeLessThanOrEqual(cap);
          const { response } = snapshot.context;
          if (
            !isFinal(snapshot) &&
            inState(snapshot, 'requesting') &&
            snapshot.context.iterations === cap &&
            response &&
            response.calls.length > 0
          ) {
            cappedResponses++;
            const [next] = step(graph.machine, snapshot, providerDone);
            expect(next.value, key).toBe('halted');
            expect(next.output?.reason).toBe('max_iterations');
            expect(next.output?.iterations).toBe(cap);
            const last = next.context.messages.at(-1);
            expect(last?.role).toBe('tool');
            // Every call of that response gets the limit text, also one planning already rejected (unknown tool).
            const expectedTexts = response.calls.map(() => resultTexts.iterationLimit);
            expect(last?.role === 'tool' ? last.content.map((part) => part.result) : null).toEqual(expectedTexts);
            expect(last?.role === 'tool' && last.content.every((part) => part.isError)).toBe(true);
            expect(historyProblem(next.context.messages)).toBeNull();
          }
        }
        if (config.doomLoop) {
          // With one repeating call the doom loop ends the run before the cap.
          expect(maxSeen).toBeLessThan(cap);
        } else {
          expect(maxSeen).toBe(cap);
          expect(cappedResponses).toBeGreaterThan(0);
          expect([...graph.nodes.values()].some((s) => isFinal(s) && s.context.outcome.reason === 'max_iterations')).toBe(true);
        }
      });

      it('(c) every provider failure leads to retrying (attempts left) or error (exhausted, or fatal)', () => {
        const providerFailureEvents = providerFailures.map((failure) => {
          const event = providerErrorEvent(failure);
          return { ...failure, event, serialized: serializeEvent(event) };
        });
        const graph = buildGraph(config);
        const requesting = [...graph.nodes].filter(([, s]) => !isFinal(s) && inState(s, 'requesting'));
        expect(requesting.length).toBeGreaterThan(0);
        const attempts = new Set<number>();
        const resumed = new Set<number>();
        for (const [key, snapshot] of requesting) {
          const attemptsLeft = snapshot.context.attempt <= retry.maxRetries;
          attempts.add(snapshot.context.attempt);
          const failures: Array<{ label: string; event: ConversationEvent; serialized: string; retryable: boolean; code?: string }> = [
            ...providerFailureEvents,
          ];
          if (snapshot.context.stream.progressed) {
            // The stream made progress in this window: the timeout only opens a new window.
            const [next] = step(graph.machine, snapshot, afterRequestTimeout);
            expect(next.matches('requesting'), 'requestTimeout after progress').toBe(true);
            expect(next.context.attempt).toBe(snapshot.context.attempt);
          } else {
            failures.push({
              label: 'requestTimeout elapsed',
              event: afterRequestTimeout,
              serialized: serializeEvent(afterRequestTimeout),
              retryable: true,
              code: 'timeout',
            });
          }
          if (snapshot.context.response === null) {
            failures.push({
              label: 'stream done without a response',
              event: providerDone,
              serialized: serializeEvent(providerDone),
              retryable: true,
              code: 'incomplete_stream',
            });
          }
          for (const failure of failures) {
            // The traversed graph holds the edge (every failure is offered in every requesting state).
            const edge = graph.edges.get(key)?.find((candidate) => candidate.serializedEvent === failure.serialized);
            expect(edge, `${failure.label} is an edge of ${key}`).toBeDefined();
            const next = edge!.next;
            const expected = failure.retryable && attemptsLeft ? 'retrying' : 'error';
            expect(next.value, `${failure.label} at attempt ${snapshot.context.attempt}`).toBe(expected);
            expect(next.context.retry.lastError?.code, failure.label).toBe(failure.code);
            if (expected === 'error') {
              expect(next.output?.status).toBe('error');
              expect(next.output?.error?.code).toBe(failure.code);
            } else if (!resumed.has(snapshot.context.attempt)) {
              resumed.add(snapshot.context.attempt);
              // Retrying resumes requesting with the next attempt once the backoff elapses.
              const [after] = step(graph.machine, next, afterRetryDelay);
              expect(after.matches('requesting')).toBe(true);
              expect(after.context.attempt).toBe(snapshot.context.attempt + 1);
            }
          }
        }
        expect([...attempts].sort()).toEqual([1, 2, 3]);
      });

      it('(c) a tool that throws settles its call with an error result for the model; the run goes on', () => {
        const graph = buildGraph(config);
        let crashes = 0;
        for (const snapshot of graph.nodes.values()) {
          if (isFinal(snapshot) || !inState(snapshot, 'executingTools')) continue;
          const failures = toolCallEvents(snapshot).filter(
            (e) => e.type.startsWith('xstate.error.actor.') && !HaltError.isInstance((e as { error?: unknown }).error),
          );
          for (const event of failures) {
            crashes++;
            const index = Number(event.type.slice(event.type.lastIndexOf('-') + 1));
            const [next] = step(graph.machine, snapshot, event);
            expect(next.matches('executingTools') || next.matches('requesting'), stateValueOf(next)).toBe(true);
            if (next.matches('executingTools')) {
              expect(next.context.round?.[index]?.state).toBe('settled');
              expect(next.context.round?.[index]?.result?.isError).toBe(true);
            } else {
              // The round's results (a doom-loop notice may follow them).
              const results = next.context.messages.findLast((message) => message.role === 'tool');
              expect(results?.role === 'tool' && results.content[index]?.isError).toBe(true);
            }
          }
        }
        if (capOf(config) > 0) expect(crashes).toBeGreaterThan(0);
      });

      it('(d) every live child actor has an xstate.error.actor handler in the state that holds it', () => {
        const graph = buildGraph(config);
        const spawningStates = new Set<string>();
        for (const snapshot of graph.nodes.values()) {
          if (isFinal(snapshot)) continue;
          const invoked = new Set(snapshot._nodes.flatMap((node) => node.invoke.map((definition) => definition.id)));
          for (const id of Object.keys(snapshot.children)) {
            if (!invoked.has(id)) spawningStates.add(stateValueOf(snapshot));
            const crash = asEvent({ type: `xstate.error.actor.${id}`, error: new Error('crash') });
            expect(snapshot.can(crash), `${id} in ${stateValueOf(snapshot)}`).toBe(true);
          }
        }
        expect([...spawningStates]).toEqual(capOf(config) > 0 ? [JSON.stringify({ executingTools: 'running' })] : []);
      });

      it('stale or caller-forged actor events change nothing in any state that does not hold that actor', () => {
        const graph = buildGraph(config);
        const stale = [
          providerDone,
          providerErrorEvent(providerFailures[1]!),
          delta,
          finishEvent('normal'),
          asEvent({ type: 'xstate.done.actor.toolCall-99-0', output: { toolCallId: 'call_lookup', result: 'x' } }),
          asEvent({ type: 'xstate.error.actor.toolCall-99-0', error: new Error('stale crash') }),
          asEvent({ type: 'xstate.error.actor.toolCall-99-0', error: new HaltError('stale halt') }),
        ];
        for (const [key, snapshot] of graph.nodes) {
          if (isFinal(snapshot)) continue;
          for (const event of stale) {
            if (event.type.startsWith('provider') || event.type.endsWith('providerCall')) {
              if ('providerCall' in snapshot.children) continue; // a live provider call: real events
            }
            const [next] = step(graph.machine, snapshot, event);
            expect(graph.key(next), `${event.type} in ${key}`).toBe(key);
          }
        }
      });

      it('(f) a run restored from any reachable state resumes without running a call again (the tools are not idempotent)', () => {
        const graph = buildGraph(config);
        let resumedInRound = 0;
        for (const [key, snapshot] of graph.nodes) {
          if (isFinal(snapshot)) continue;
          const restoredRun = restored(graph.machine, snapshot);
          // Only the children of running agent calls are restored (they resume on their own); no tool execution is.
          const runningAgents = (snapshot.context.round ?? []).filter((call) => call.agent && call.state === 'running');
          expect(Object.keys(restoredRun.children).sort(), `children restored from ${key}`).toEqual(
            runningAgents.map((call) => `agent:${call.toolCallId}`).sort(),
          );
          const resumes = snapshot.matches('requesting') || snapshot.matches('executingTools');
          expect(restoredRun.context.restored !== undefined, key).toBe(resumes);
          if (!resumes) {
            expect(graph.key(restoredRun), key).toBe(key);
            continue;
          }
          const [next] = step(graph.machine, restoredRun, runResume);
          expect(next.context.restored, key).toBeUndefined();
          if (snapshot.matches('requesting')) {
            expect(next.value, key).toEqual({ requesting: 'waiting' });
            expect(Object.keys(next.children), key).toEqual(['providerCall']);
            expect(next.context.response, key).toBeNull();
            continue;
          }
          resumedInRound++;
          // An agent call's child is restored with the run and resumes: its call goes on running.
          for (const call of snapshot.context.round ?? []) {
            if (call.agent && call.state === 'running') {
              expect(next.context.round?.find((other) => other.toolCallId === call.toolCallId)?.state, key).toBe('running');
            }
          }
          const wasRunning = new Set(
            snapshot.context.round?.filter((call) => call.state === 'running' && !call.agent).map((call) => call.toolCallId),
          );
          // Every call that was running got the interrupted result, in the round or in the history it was committed to.
          const round = next.context.round ?? [];
          const committed = next.context.messages.flatMap((message) => (message.role === 'tool' ? message.content : []));
          for (const id of wasRunning) {
            const result = round.find((call) => call.toolCallId === id)?.result ?? committed.findLast((part) => part.toolCallId === id);
            expect(result, `${id} from ${key}`).toMatchObject({ result: resultTexts.interrupted, isError: true });
          }
          // Nothing that was running runs again; only calls that were queued start.
          const queued = new Set(snapshot.context.round?.filter((call) => call.state === 'queued').map((call) => call.toolCallId));
          for (const call of next.context.round ?? []) {
            if (call.state === 'running' && !call.agent) expect(queued.has(call.toolCallId), key).toBe(true);
          }
          expect(historyProblem(step(graph.machine, next, cancel)[0].context.messages), key).toBeNull();
        }
        if (capOf(config) > 0) expect(resumedInRound).toBeGreaterThan(0);
      });

      it('(e) cancel from every non-final state ends halted/cancelled with a valid history', () => {
        const graph = buildGraph(config);
        let checked = 0;
        for (const [key, snapshot] of graph.nodes) {
          if (isFinal(snapshot)) continue;
          checked++;
          const next = graph.edges.get(key)?.find((edge) => edge.event === cancel)?.next;
          if (!next) throw new Error(`no cancel edge from ${key}`);
          expect(next.value, key).toBe('halted');
          expect(next.output).toMatchObject({ status: 'halted', reason: 'cancelled', iterations: snapshot.context.iterations });
          expect(historyProblem(next.context.messages), key).toBeNull();
          expect(Object.keys(next.children), `children left running after cancel from ${key}`).toEqual([]);
        }
        expect(checked).toBe([...graph.nodes.values()].filter((s) => !isFinal(s)).length);
      });
    });
  }

  // Heavy (every edge of nine graphs, step by step): slow on a loaded two-core machine.
  it('together, the graphs take every transition of the machine definition', { timeout: 180_000 }, () => {
    /** A transition named by its source state, event and position among that event's transitions. */
    const nameOf = (transition: { source: AnyStateNode; eventType: string }, index: number) =>
      `${transition.source.id} ${transition.eventType || 'always'} #${index}`;
    const all = new Set<string>();
    const eventless: Array<{ name: string; source: AnyStateNode; targets: AnyStateNode[] }> = [];
    for (const node of getStateNodes(buildGraph(agentConfig).machine.root) as AnyStateNode[]) {
      for (const transitions of node.transitions.values())
        transitions.forEach((t, index) => {
          all.add(nameOf(t, index));
        });
      (node.always ?? []).forEach((t, index) => {
        all.add(nameOf(t, index));
        eventless.push({ name: nameOf(t, index), source: node, targets: [...(t.target ?? [])] });
      });
    }
    const covered = new Set<string>();
    // The small graphs suffice (the larger caps repeat the same transitions per round).
    for (const config of [
      capConfigs[1]!,
      capConfigs[2]!,
      doomLoopConfig,
      outputConfig,
      agentConfig,
      handoffConfig,
      controlsConfig,
      controlledAgentsConfig,
      guardrailsConfig,
      compactionConfig,
    ]) {
      const graph = buildGraph(config);
      for (const [key, edges] of graph.edges) {
        const snapshot = graph.nodes.get(key)!;
        for (const { event } of edges) {
          for (const taken of graph.machine.getTransitionData(snapshot, event)) {
            const siblings = taken.source.transitions.get(taken.eventType) ?? [];
            covered.add(nameOf(taken, siblings.indexOf(taken)));
          }
          // Eventless transitions fire inside the macrostep: look at consecutive microsteps.
          const microsteps = graph.machine.microstep(snapshot, event, inertScope as never);
          for (let index = 1; index < microsteps.length; index++) {
            const before = microsteps[index - 1]!;
            const after = microsteps[index]!;
            for (const candidate of eventless) {
              if (
                before._nodes.some((node) => node.id === candidate.source.id) &&
                candidate.targets.every((target) => after._nodes.some((node) => node.id === target.id))
              ) {
                covered.add(candidate.name);
              }
            }
          }
        }
      }
    }
    // `run.resume` is only ever taken by a restored run: restore every reachable snapshot.
    for (const config of [capConfigs[1]!, capConfigs[2]!, controlsConfig, compactionConfig]) {
      const graph = buildGraph(config);
      for (const snapshot of graph.nodes.values()) {
        if (isFinal(snapshot)) continue;
        for (const taken of graph.machine.getTransitionData(restored(graph.machine, snapshot), runResume)) {
          covered.add(nameOf(taken, (taken.source.transitions.get(taken.eventType) ?? []).indexOf(taken)));
        }
      }
    }
    // A result after its call's deadline (`resultOverdue`) needs a clock past it: the same edges with the deadlines passed.
    for (const config of [capConfigs[1]!, capConfigs[2]!]) {
      const graph = buildGraph(config);
      for (const [key, edges] of graph.edges) {
        const snapshot = graph.nodes.get(key)!;
        if (isFinal(snapshot) || !inState(snapshot, 'executingTools')) continue;
        const late = pastDeadlines(graph.machine, snapshot);
        for (const { event } of edges) {
          for (const taken of graph.machine.getTransitionData(late, event)) {
            covered.add(nameOf(taken, (taken.source.transitions.get(taken.eventType) ?? []).indexOf(taken)));
          }
        }
      }
    }
    // A prompt in the input starts the run in the initial step (`hasPrompt`), before any event: the
    // initial snapshot with one has left idle, the prompt its first user message.
    for (const config of [capConfigs[1]!, guardrailsConfig]) {
      const { machine } = buildGraph(config);
      const started = getInitialSnapshot(machine, { messages: [], prompt: 'Go.' }) as Snapshot;
      if (!started.matches('idle') && started.context.messages[0]?.content === 'Go.') covered.add('conversation.idle always #1');
    }
    // Malformed input never reaches the graph (it starts from valid input); the test below runs it.
    const uncovered = [...all].filter((name) => !covered.has(name) && name !== 'conversation.idle always #0');
    expect(uncovered).toEqual([]);
  });

  it('agent calls: every way a child ends (an answer, a failure, a timeout, cancel) gives its call one result or ends the run with a valid history', () => {
    const graph = buildGraph(agentConfig);
    let checked = 0;
    for (const [key, snapshot] of graph.nodes) {
      const running = snapshot.context.round?.filter((call) => call.agent && call.state === 'running') ?? [];
      for (const call of running) {
        const id = `agent:${call.toolCallId}`;
        const failure = asEvent({ type: `xstate.done.actor.${id}`, output: childOutput('error') });
        for (const event of [
          failure,
          asEvent({ type: `xstate.done.actor.${id}`, output: childOutput('done') }),
          afterToolDeadline,
          cancel,
        ]) {
          if (event === afterToolDeadline && call.deadline === undefined) continue;
          const [next] = step(graph.machine, snapshot, event);
          checked++;
          if (isFinal(next)) {
            expect(historyProblem(next.context.messages), key).toBeNull();
            const result = next.context.messages
              .flatMap((m) => (m.role === 'tool' ? m.content : []))
              .find((r) => r.toolCallId === call.toolCallId);
            expect(result, key).toBeDefined();
            if (event === failure && call.toolName === 'ask') expect(next.context.outcome.reason, key).toBe('agent_failed');
            continue;
          }
          const after = next.context.round?.find((other) => other.toolCallId === call.toolCallId);
          // Settled, or the round completed and its results joined the history.
          const inHistory = next.context.messages.some((m) => m.role === 'tool' && m.content.some((r) => r.toolCallId === call.toolCallId));
          expect(after?.state === 'settled' || inHistory, key).toBe(true);
          // Its usage joined the parent's, once.
          if (event !== cancel && event !== afterToolDeadline)
            expect(next.context.usage.totalTokens).toBe(snapshot.context.usage.totalTokens + 10);
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
  });

  it('the doom-loop graph ends halted/doom_loop after one notice', () => {
    const graph = buildGraph(doomLoopConfig);
    const halted = [...graph.nodes.values()].filter((s) => isFinal(s) && s.context.outcome.reason === 'doom_loop');
    expect(halted.length).toBeGreaterThan(0);
    for (const snapshot of halted) {
      expect(snapshot.context.iterations).toBe(3);
      expect(snapshot.context.doomLoop.noticed).toBe(true);
      expect(historyProblem(snapshot.context.messages)).toBeNull();
      expect(
        snapshot.context.messages.some((m) => m.role === 'user' && typeof m.content === 'string' && m.content.startsWith('Notice:')),
      ).toBe(true);
    }
  });

  it('a malformed input ends in error at once (eventless transition from idle)', () => {
    const { machine } = buildGraph(capConfigs[1]!);
    const actor = createActor(machine, { input: { messages: [{ role: 'robot', content: 'x' }] as unknown as Message[] } });
    actor.start();
    expect(actor.getSnapshot().value).toBe('error');
    expect(actor.getSnapshot().output?.error?.code).toBe('invalid_input');
  });

  it('(d) static: every invoke has an onError transition, the state that spawns tool executions an xstate.error.actor.* handler', () => {
    const conversation = buildGraph(capConfigs[1]!).machine;
    const problems: string[] = [];
    let invokes = 0;
    for (const node of getStateNodes(conversation.root) as AnyStateNode[]) {
      for (const definition of node.invoke) {
        invokes++;
        if (!node.transitions.has(`xstate.error.actor.${definition.id}`))
          problems.push(`${node.id} invokes ${definition.id} without onError`);
      }
    }
    // The provider request, a guardrail check in each phase, the compaction.
    expect(invokes).toBe(4);
    const running = conversation.getStateNodeById('conversation.executingTools.running');
    expect(running.transitions.has('xstate.error.actor.*')).toBe(true);
    expect(problems).toEqual([]);
  });

  it('(b) a tool deadline times out every running call due, with the timeout text, and stops its actor', () => {
    let checked = 0;
    for (const config of [capConfigs[1]!, capConfigs[2]!]) {
      const graph = buildGraph(config);
      for (const snapshot of graph.nodes.values()) {
        if (isFinal(snapshot) || !inState(snapshot, 'executingTools')) continue;
        const running = (snapshot.context.round ?? [])
          .map((call, index) => ({ call, index }))
          .filter(({ call }) => call.state === 'running');
        if (running.length === 0) continue;
        checked++;
        const [next] = step(graph.machine, snapshot, afterToolDeadline);
        // Calls of one round start together, so they share the earliest deadline.
        for (const { call, index } of running) {
          expect(Object.keys(next.children)).not.toContain(`toolCall-${snapshot.context.iterations}-${index}`);
          const result = next.matches('executingTools')
            ? next.context.round?.[index]?.result
            : next.context.messages.findLast((message) => message.role === 'tool')?.content[index];
          expect(result, `${call.toolName} in ${graph.key(snapshot)}`).toMatchObject({
            toolCallId: call.toolCallId,
            result: resultTexts.timedOut(call.toolName, graphToolTimeoutMs),
            isError: true,
          });
        }
        expect(historyProblem(next.context.messages)).toBeNull();
      }
    }
    expect(checked).toBeGreaterThan(0);
  });

  it('(b) a result after its deadline (a stalled loop ran it ahead of the timer) is taken as the deadline takes it', () => {
    let checked = 0;
    for (const config of [capConfigs[1]!, capConfigs[2]!, agentConfig]) {
      const graph = buildGraph(config);
      for (const [key, edges] of graph.edges) {
        const snapshot = graph.nodes.get(key)!;
        if (isFinal(snapshot) || !inState(snapshot, 'executingTools')) continue;
        const late = pastDeadlines(graph.machine, snapshot);
        const [timedOut] = step(graph.machine, late, afterToolDeadline);
        for (const { event } of edges) {
          if (!/^xstate\.(done|error)\.actor\.(toolCall-|agent:)/.test(event.type)) continue;
          const call = (snapshot.context.round ?? []).find((candidate, index) =>
            event.type.endsWith(candidate.agent ? `agent:${candidate.toolCallId}` : `toolCall-${snapshot.context.iterations}-${index}`),
          );
          if (call?.state !== 'running') continue;
          checked++;
          const [next] = step(graph.machine, late, event);
          expect(next.value, `${event.type} in ${key}`).toEqual(timedOut.value);
          expect(next.context, `${event.type} in ${key}`).toEqual(timedOut.context);
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
  });

  it('(f) structured output: repairs never exceed maxRepairs; an invalid answer then ends in error, a valid one in done with its object', () => {
    const graph = buildGraph(outputConfig);
    const maxRepairs = outputOption.maxRepairs;
    let exhausted = 0;
    let repaired = 0;
    for (const [key, snapshot] of graph.nodes) {
      expect(snapshot.context.answer.repairs, key).toBeLessThanOrEqual(maxRepairs);
      if (isFinal(snapshot) || !inState(snapshot, 'requesting')) continue;
      const answer = snapshot.context.response?.answer;
      if (!answer) continue;
      const [next] = step(graph.machine, snapshot, providerDone);
      if (answer.ok) {
        expect(next.value).toBe('done');
        expect(next.output?.object).toEqual({ ok: true });
      } else if (snapshot.context.answer.repairs < maxRepairs) {
        repaired++;
        // `repairing` is left at once: the next request starts with the repair message last.
        expect(next.matches('requesting'), key).toBe(true);
        expect(next.context.answer.repairs).toBe(snapshot.context.answer.repairs + 1);
        expect(next.context.messages.at(-1)).toMatchObject({
          role: 'user',
          content: expect.stringMatching(/^Your answer could not be used/),
        });
      } else {
        exhausted++;
        expect(next.value, key).toBe('error');
        expect(next.output?.error?.code).toBe('invalid_output');
        expect(next.output?.object).toBeUndefined();
      }
      expect(historyProblem(next.context.messages)).toBeNull();
    }
    expect(repaired).toBeGreaterThan(0);
    expect(exhausted).toBeGreaterThan(0);
    const repairing = getStateNodes(graph.machine.root).find((node: AnyStateNode) => node.key === 'repairing');
    // By way of `preparing`, where every request starts (budget and context window checked).
    expect(repairing?.always?.map((transition) => transition.target?.map((target) => target.key))).toEqual([['preparing']]);
  });
});

// ---------------------------------------------------------------------------------------------
// Part 1b: long conversations (DESIGN §12) — guardrails, steering, fallback, budgets, interrupts

describe('long-conversation controls graph (DESIGN §12)', { timeout: 120_000 }, () => {
  const graph = () => buildGraph(controlsConfig);
  const finals = () => [...graph().nodes.values()].filter(isFinal);
  const allEdges = () => [...graph().edges].flatMap(([key, out]) => out.map((edge) => ({ ...edge, key, from: graph().nodes.get(key)! })));

  it('is finite and ends done, halted (budget, guardrail, cancelled) and error (guardrail, provider)', () => {
    expect(graph().nodes.size).toBeGreaterThan(50);
    expect(new Set(finals().map(stateValueOf))).toEqual(new Set(['done', 'halted', 'error']));
    const reasons = new Set(finals().map((snapshot) => snapshot.output?.reason));
    for (const reason of ['budget', 'guardrail', 'cancelled']) expect(reasons).toContain(reason);
    const codes = new Set(finals().map((snapshot) => snapshot.output?.error?.code));
    for (const code of ['guardrail_error', 'guardrail_timeout', 'rate_limit', 'bad_request']) expect(codes).toContain(code);
  });

  for (const config of [controlsConfig, controlledAgentsConfig, guardrailsConfig, compactionConfig]) {
    describe(config.name, () => {
      const graphOf = () => buildGraph(config);
      it('(a) a final state is reachable from every reachable state; finals are absorbing with a valid history', () => {
        const reverse = new Map<string, string[]>();
        for (const [from, out] of graphOf().edges) for (const { to } of out) reverse.set(to, [...(reverse.get(to) ?? []), from]);
        const canFinish = new Set([...graphOf().nodes].filter(([, snapshot]) => isFinal(snapshot)).map(([key]) => key));
        const queue = [...canFinish];
        while (queue.length) {
          for (const from of reverse.get(queue.pop()!) ?? []) {
            if (!canFinish.has(from)) {
              canFinish.add(from);
              queue.push(from);
            }
          }
        }
        expect([...graphOf().nodes.keys()].filter((key) => !canFinish.has(key))).toEqual([]);
        for (const snapshot of graphOf().nodes.values()) {
          if (!isFinal(snapshot)) continue;
          expect(historyProblem(snapshot.output!.messages), graphOf().key(snapshot)).toBeNull();
          // A message still queued when the run ended is kept at the end of its history.
          expect(snapshot.context.control.queued).toEqual([]);
          for (const event of [cancel, interrupt, budgetDeadline, userMessage])
            expect(step(graphOf().machine, snapshot, event)[0].value).toEqual(snapshot.value);
        }
      });

      it('(e) cancel from every non-final state ends halted/cancelled with a valid history and no child left', () => {
        let checked = 0;
        for (const [key, snapshot] of graphOf().nodes) {
          if (isFinal(snapshot)) continue;
          checked++;
          const [next] = step(graphOf().machine, snapshot, cancel);
          expect(next.output, key).toMatchObject({ status: 'halted', reason: 'cancelled' });
          expect(historyProblem(next.context.messages), key).toBeNull();
          expect(Object.keys(next.children), key).toEqual([]);
        }
        expect(checked).toBeGreaterThan(10);
      });
    });
  }

  it("agent calls: a grandchild's request that takes the tree over its budget halts the root, every call answered", () => {
    const graph = buildGraph(controlledAgentsConfig);
    let halted = 0;
    for (const [key, out] of graph.edges) {
      const from = graph.nodes.get(key)!;
      for (const { event, next } of out) {
        if (event.type !== 'agent.emitted' || next.output?.reason !== 'budget') continue;
        halted++;
        expect(next.output.budget).toMatchObject({ limit: 'maxTotalTokens', max: 8 });
        expect(historyProblem(next.context.messages), key).toBeNull();
        expect(Object.keys(next.children), key).toEqual([]);
        const answered = next.context.messages.flatMap((message) => (message.role === 'tool' ? message.content : []));
        for (const call of from.context.round ?? [])
          expect(
            answered.some((part) => part.toolCallId === call.toolCallId),
            key,
          ).toBe(true);
      }
    }
    expect(halted).toBeGreaterThan(0);
  });

  it('budget: no request starts at or over the budget; crossing it halts with RunOutput.budget and a valid history', () => {
    let requests = 0;
    for (const { from, next, event, key } of allEdges()) {
      const starts = next.matches('requesting') && (!from.matches('requesting') || event === runResume);
      if (!starts) continue;
      requests++;
      expect(next.context.usage.totalTokens, `request started from ${key}`).toBeLessThan(controlBudget.maxTotalTokens);
    }
    expect(requests).toBeGreaterThan(10);
    const overBudget = finals().filter((snapshot) => snapshot.output?.reason === 'budget');
    const limits = new Set(overBudget.map((snapshot) => snapshot.output?.budget?.limit));
    expect(limits).toEqual(new Set(['maxTotalTokens', 'maxDurationMs']));
    for (const snapshot of overBudget) {
      expect(snapshot.output?.status).toBe('halted');
      expect(historyProblem(snapshot.output!.messages)).toBeNull();
      if (snapshot.output?.budget?.limit === 'maxTotalTokens') {
        expect(snapshot.output.budget).toMatchObject({ max: 8 });
        expect(snapshot.output.budget.used).toBeGreaterThanOrEqual(8);
      }
    }
    // A response with tool calls that spends the budget: its calls are refused, naming the limit.
    let refused = 0;
    for (const { from, next, event, key } of allEdges()) {
      if (event !== providerDone || !from.context.response?.calls.length || next.output?.reason !== 'budget') continue;
      refused++;
      // (A message queued meanwhile follows the results, kept for the next turn.)
      const results = next.output.messages.findLast((message) => message.role === 'tool');
      expect(next.output.messages.indexOf(results!), key).toBe(next.output.messages.length - 1 - from.context.control.queued.length);
      if (results?.role === 'tool') {
        expect(results.content.map((part) => part.result)).toEqual(
          from.context.response.calls.map(() => 'not executed: the run reached its budget (maxTotalTokens)'),
        );
      }
    }
    expect(refused).toBeGreaterThan(0);
  });

  it('guardrails: every run starts through checkingInput and ends done only through checkingOutput; a trip halts, a throw or timeout errors', () => {
    let started = 0;
    let tripped = 0;
    let broken = 0;
    for (const { from, next, event, key } of allEdges()) {
      if (from.matches('idle') && event === userMessage) {
        started++;
        expect(next.value, key).toBe('checkingInput');
      }
      if (next.value === 'done') expect(from.value, `done from ${key}`).toBe('checkingOutput');
      if (from.matches('checkingInput') || from.matches('checkingOutput')) {
        const output = (event as { output?: { tripped?: boolean } }).output;
        if (output?.tripped) {
          tripped++;
          expect(next.output, key).toMatchObject({ status: 'halted', reason: 'guardrail', guardrail: { reason: 'off topic' } });
        }
        const timedOut =
          (event === afterInputGuardrailTimeout && from.matches('checkingInput')) ||
          (event === afterOutputGuardrailTimeout && from.matches('checkingOutput'));
        if ((event.type as string) === 'xstate.error.actor.guardrailCheck' || timedOut) {
          broken++;
          expect(next.output?.status, key).toBe('error');
          expect(next.output?.error?.message, key).toMatch(/guardrail "(topic|pii)"/);
        }
      }
    }
    expect(started).toBeGreaterThan(0);
    expect(tripped).toBeGreaterThan(2);
    expect(broken).toBeGreaterThan(4);
  });

  it("steering 'queue': a message during a run waits, then joins the history (checked by the input guardrail) before the next request", () => {
    let queued = 0;
    for (const { from, next, event, key } of allEdges()) {
      if (event === userMessage && !from.matches('idle') && !isFinal(from)) {
        queued++;
        expect(next.context.control.queued.length, key).toBe(from.context.control.queued.length + 1);
        expect(next.context.messages, key).toBe(from.context.messages);
      }
      // Every request starts with nothing queued, the queued messages last in its history.
      if (next.matches('requesting') && !from.matches('requesting')) expect(next.context.control.queued, key).toEqual([]);
      if (next.matches('checkingInput') && from.context.control.queued.length > 0 && next.context.control.queued.length === 0) {
        expect(next.context.messages.at(-1), `${event.type} from ${key}`).toMatchObject({ role: 'user' });
      }
    }
    expect(queued).toBeGreaterThan(5);
  });

  it('fallback: retries used up on a retryable error move the same request to the next provider; a fatal error and the last provider fail', () => {
    const retryable = providerErrorEvent(providerFailures[0]!);
    const fatal = providerErrorEvent(providerFailures.find((failure) => failure.code === 'bad_request')!);
    let fellBack = 0;
    let exhausted = 0;
    for (const [key, snapshot] of graph().nodes) {
      // (With a message queued, the next request goes through the input guardrail first.)
      if (isFinal(snapshot) || !snapshot.matches('requesting') || snapshot.context.attempt <= retry.maxRetries) continue;
      // (A failed attempt's reported tokens count too: with a response in, the budget may end the run instead.)
      if (snapshot.context.control.queued.length > 0 || snapshot.context.response !== null) continue;
      const [next] = step(graph().machine, snapshot, retryable);
      if (snapshot.context.control.provider === 0) {
        fellBack++;
        expect(next.value, key).toEqual({ requesting: 'waiting' });
        expect(next.context.control.provider).toBe(1);
        expect(next.context.attempt).toBe(1);
        expect(next.context.messages).toEqual(snapshot.context.messages);
      } else {
        exhausted++;
        expect(next.output?.error?.code, key).toBe('rate_limit');
      }
      expect(step(graph().machine, snapshot, fatal)[0].output?.error?.code, key).toBe('bad_request');
    }
    expect(fellBack).toBeGreaterThan(0);
    expect(exhausted).toBeGreaterThan(0);
  });

  it('user.interrupt abandons a request, a retry, an approval or a round: every call gets one result and the message goes through checkingInput', () => {
    const interrupted = new Set<string>();
    for (const { from, next, event, key } of allEdges()) {
      if (event !== interrupt || isFinal(from)) continue;
      const busy = (['requesting', 'retrying', 'awaitingApproval', 'executingTools'] as const).find((state) => from.matches(state));
      if (!busy) continue;
      interrupted.add(busy);
      expect(next.value, key).toBe('checkingInput');
      expect(next.context.messages.at(-1), key).toMatchObject({ role: 'user', content: 'Actually, use metric units.' });
      expect(historyProblem(next.context.messages), key).toBeNull();
      expect(Object.keys(next.children), key).toEqual(['guardrailCheck']);
      expect(next.context.round).toBeNull();
    }
    expect([...interrupted].sort()).toEqual(['awaitingApproval', 'executingTools', 'requesting', 'retrying']);
  });

  it('context window: no request starts over the window when there is something to compact; compaction keeps the history valid', () => {
    const graph = buildGraph(compactionConfig);
    let compactions = 0;
    for (const [key, out] of graph.edges) {
      const from = graph.nodes.get(key)!;
      for (const { event, next } of out) {
        if (next.matches('requesting') && !from.matches('requesting')) {
          const over = (next.context.control.lastPrompt?.inputTokens ?? 0) > 1_000;
          const plan = next.context.messages.length > 2;
          expect(over && plan && next.context.control.compactedAt !== next.context.messages.length, `${event.type} from ${key}`).toBe(
            false,
          );
        }
        if (from.matches('compacting') && (event.type as string) === 'xstate.done.actor.compaction') {
          const output = (event as unknown as { output: { text: string } }).output;
          if (output.text.trim() === '') {
            expect(next.output, key).toMatchObject({ status: 'error', error: { code: 'compaction_failed' } });
            // The history as it was (a message still queued is kept at its end, as every ending run keeps it).
            const queued = from.context.control.queued.map((content) => ({ role: 'user', content }));
            expect(next.context.messages, key).toEqual([...from.context.messages, ...queued]);
          } else {
            compactions++;
            expect(next.value, key).toEqual({ requesting: 'waiting' });
            // Shorter, but for the queued messages that join it on the way back through `preparing`.
            expect(next.context.messages.length, key).toBeLessThan(from.context.messages.length + 1 + from.context.control.queued.length);
            expect(next.context.messages[0], key).toMatchObject({ role: 'user', content: expect.stringContaining('the summary') });
            expect(historyProblem(next.context.messages), key).toBeNull();
          }
        }
      }
    }
    expect(compactions).toBeGreaterThan(0);
  });

  it("context window: a provider's context-length error compacts once; the same error right after fails the run", () => {
    const graph = buildGraph(compactionConfig);
    let compacted = 0;
    let failed = 0;
    for (const [key, snapshot] of graph.nodes) {
      if (isFinal(snapshot) || !snapshot.matches('requesting')) continue;
      const [next] = step(graph.machine, snapshot, contextLengthError);
      const already = snapshot.context.control.compactedAt === snapshot.context.messages.length;
      if (!already && snapshot.context.messages.length > 2) {
        compacted++;
        expect(next.value, key).toEqual({ compacting: 'summarizing' });
        expect(next.context.control.compaction?.cause).toBe('context_length');
        expect(next.context.attempt).toBe(1);
      } else {
        failed++;
        expect(next.output, key).toMatchObject({ status: 'error', error: { code: 'context_length' } });
      }
    }
    expect(compacted).toBeGreaterThan(0);
    expect(failed).toBeGreaterThan(0);
  });

  it('a run restored while a guardrail checks or the history is compacted starts that step again', () => {
    let checked = 0;
    for (const config of [controlsConfig, compactionConfig]) {
      const graph = buildGraph(config);
      for (const [key, snapshot] of graph.nodes) {
        if (isFinal(snapshot) || !['checkingInput', 'checkingOutput', 'compacting'].some((state) => inState(snapshot, state))) continue;
        checked++;
        const restoredRun = restored(graph.machine, snapshot);
        expect(restoredRun.children, key).toEqual({});
        const [next] = step(graph.machine, restoredRun, runResume);
        expect(next.context.restored).toBeUndefined();
        if (inState(snapshot, 'compacting')) {
          expect(next.value, key).toEqual({ compacting: 'summarizing' });
          expect(Object.keys(next.children), key).toEqual(['compaction']);
        } else {
          expect(next.value, key).toEqual(snapshot.value);
          expect(Object.keys(next.children), key).toEqual(['guardrailCheck']);
        }
      }
    }
    expect(checked).toBeGreaterThan(4);
  });
});

// ---------------------------------------------------------------------------------------------
// Part 2: real actors along graph paths

/** One provider request of a path: what was streamed, and how the attempt ended. */
type Attempt = { finish: FinishName | null; end: { kind: 'done' } | { kind: 'error'; error: unknown } | { kind: 'hang' } };

/**
 * Re-executes a path's events with `step()` from the initial snapshot, so consecutive
 * snapshots are really one run (a graph keeps one representative snapshot per key), and checks
 * each lands on the key the graph recorded.
 */
function replay(graph: Graph, path: Path): Snapshot[] {
  const [initial] = initialTransition(graph.machine, { messages: [] });
  const snapshots = [initial];
  expect(graph.key(initial)).toBe(graph.key(path.steps[0]!.state));
  for (const { event, state } of path.steps.slice(1)) {
    const [next] = step(graph.machine, snapshots.at(-1)!, event);
    expect(graph.key(next), `replaying ${event.type}`).toBe(graph.key(state));
    snapshots.push(next);
  }
  return snapshots;
}

/** Reads a graph path as a script for real actors: provider turns, tool behaviours, user events. */
function scriptOf(graph: Graph, path: Path) {
  const snapshots = replay(graph, path);
  const attempts: Attempt[] = [];
  const tools: ToolScript = new Map();
  const userEvents: Array<{ before: string; event: ConversationEvent }> = [];
  let current: Attempt | null = null;
  const running = new Map<string, string>(); // child id → tool name, for calls in progress

  path.steps.slice(1).forEach(({ event }, index) => {
    const before = snapshots[index]!;
    const after = snapshots[index + 1]!;
    const type: string = event.type;
    if (type === 'user.message' || type === 'tool.approve' || type === 'tool.deny' || type === 'cancel') {
      userEvents.push({ before: graph.coarseKey(before), event });
    } else if (type === 'provider.finish') {
      if (current) current.finish = (event as unknown as { finish: FinishName }).finish;
    } else if (type === 'xstate.done.actor.providerCall') {
      if (current) current.end = { kind: 'done' };
      current = null;
    } else if (type === 'xstate.error.actor.providerCall') {
      if (current) current.end = { kind: 'error', error: (event as unknown as { error: unknown }).error };
      current = null;
    } else if (type === afterRequestTimeout.type) {
      current = null; // that attempt hangs until the machine's request timeout stops it
    } else if (type.startsWith('xstate.done.actor.toolCall-') || type.startsWith('xstate.error.actor.toolCall-')) {
      const id = type.slice(type.indexOf('.actor.') + '.actor.'.length);
      const name = running.get(id)!;
      const error = (event as unknown as { error?: unknown }).error;
      tools.set(name, [...(tools.get(name) ?? []), type.startsWith('xstate.done.') ? 'ok' : HaltError.isInstance(error) ? 'halt' : 'fail']);
      running.delete(id);
    } else if (type === afterToolDeadline.type) {
      // Those calls hang until the machine's tool deadline (short in real runs) stops them.
      for (const [id, name] of running) {
        if (!(id in after.children)) {
          tools.set(name, [...(tools.get(name) ?? []), 'hang']);
          running.delete(id);
        }
      }
    }
    // A new provider request starts whenever a new providerCall actor appears (entering `requesting`).
    if (after.children.providerCall && after.children.providerCall !== before.children.providerCall) {
      current = { finish: null, end: { kind: 'hang' } };
      attempts.push(current);
    }
    for (const id of Object.keys(after.children)) {
      if (id.startsWith('toolCall-') && !(id in before.children)) {
        running.set(id, after.context.round![Number(id.slice(id.lastIndexOf('-') + 1))]!.toolName);
      }
    }
  });
  // Tools still running when the path ends (cancel) hang until their signal fires.
  for (const name of running.values()) tools.set(name, [...(tools.get(name) ?? []), 'hang']);
  return { attempts, tools, userEvents };
}

function scriptedTurn(attempt: Attempt) {
  return async function* turn(request: HandlerRequest): AsyncGenerator<OpenAIChatCompletionChunk> {
    if (attempt.finish !== null) {
      const content = finishContent[attempt.finish];
      const calls = content.filter((part) => part.type === 'tool-call');
      yield* turnChunks(
        calls.length > 0
          ? { toolCalls: calls.map((call) => ({ id: call.toolCallId, name: call.toolName, args: call.argsText })) }
          : { text: content.map((part) => (part.type === 'text' ? part.text : '')).join('') },
      );
    }
    if (attempt.end.kind === 'error') throw attempt.end.error;
    if (attempt.end.kind === 'hang') await waitForAbort(request.signal);
  };
}

/** Real runs: short enough that a scripted silence times out fast, long enough for any scripted turn. */
const realRunOptions: Partial<ConversationOptions> = { requestTimeoutMs: 250, toolTimeoutMs: 250 };

async function runAlong(graph: Graph, path: Path) {
  const { attempts, tools, userEvents } = scriptOf(graph, path);
  let requests = 0;
  const provider = handlerProvider((request) => {
    const attempt = attempts[requests++];
    if (!attempt) throw Object.assign(new Error(`no attempt scripted for request ${requests}`), { retryable: false });
    return scriptedTurn(attempt)(request);
  });
  const machine = createConversationMachine(machineOptions(graph.config, provider, tools, realRunOptions));
  const actor = createActor(machine, { input: { messages: [] } });
  const seen: string[] = [];
  const pending = [...userEvents];
  actor.subscribe({
    next: (snapshot) => {
      const key = graph.coarseKey(snapshot);
      if (seen.at(-1) !== key) seen.push(key);
      const next = pending[0];
      if (next && next.before === key) {
        pending.shift();
        queueMicrotask(() => actor.send(next.event));
      }
    },
    error: () => {},
  });
  actor.start();
  const output = await toPromise(actor);
  return { output, seen, requests, pending, attempts };
}

/** True when `expected` appears in `actual` in order (other keys may come in between). */
function isSubsequence(expected: string[], actual: string[]): boolean {
  let position = 0;
  for (const key of actual) if (key === expected[position]) position++;
  return position === expected.length;
}

/** `getShortestPaths` from the initial state to every reachable state, computed once per graph. */
const shortestPathsCache = new Map<string, Path[]>();
function shortestPaths(graph: Graph): Path[] {
  let paths = shortestPathsCache.get(graph.config.name);
  if (!paths) {
    paths = getShortestPaths(graph.machine, graph.traversalOptions);
    shortestPathsCache.set(graph.config.name, paths);
  }
  return paths;
}

function shortestPath(graph: Graph, to: (snapshot: Snapshot) => boolean): Path {
  const best = shortestPaths(graph)
    .filter((path) => to(path.state))
    .sort((a, b) => a.weight - b.weight)[0];
  if (!best) throw new Error('no path to the target');
  return best;
}

/** Breadth-first over the traversed graph: the shortest continuation from `from` to a state matching `to`. */
function continuation(graph: Graph, from: Snapshot, to: (snapshot: Snapshot) => boolean): Path['steps'] {
  const start = graph.key(from);
  const previous = new Map<string, { key: string; event: ConversationEvent; next: Snapshot } | null>([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const key = queue.shift()!;
    const node = key === start ? from : graph.nodes.get(key)!;
    if (to(node)) {
      const steps: Path['steps'] = [];
      for (let at = key; previous.get(at); at = previous.get(at)!.key)
        steps.unshift({ state: previous.get(at)!.next, event: previous.get(at)!.event });
      return steps;
    }
    for (const edge of graph.edges.get(key) ?? []) {
      if (!previous.has(edge.to)) {
        previous.set(edge.to, { key, event: edge.event, next: edge.next });
        queue.push(edge.to);
      }
    }
  }
  throw new Error('no continuation to the target');
}

/** The shortest path to a state matching `via`, then `event`, then the shortest way on to `to`. */
function pathThrough(
  graph: Graph,
  via: (snapshot: Snapshot) => boolean,
  event: ConversationEvent,
  to: (snapshot: Snapshot) => boolean,
): Path {
  const head = shortestPath(graph, via);
  const [next] = step(graph.machine, head.state, event);
  const tail = to(next) ? [] : continuation(graph, next, to);
  const steps = [...head.steps, { state: next, event }, ...tail];
  return { state: steps.at(-1)!.state, steps, weight: steps.length - 1 };
}

const ended =
  (status: string, extra: (s: Snapshot) => boolean = () => true) =>
  (s: Snapshot) =>
    isFinal(s) && s.value === status && extra(s);

describe('real actors follow the graph', () => {
  const config = capConfigs[2]!; // cap 2
  const graph = () => buildGraph(config);

  const scenarios: Array<{ name: string; path: () => Path; status: string; reason?: string; code?: string }> = [
    { name: 'done without tools', path: () => shortestPath(graph(), ended('done')), status: 'done' },
    {
      name: 'done after two tool rounds',
      path: () =>
        shortestPath(
          graph(),
          ended('done', (s) => s.context.iterations === 2),
        ),
      status: 'done',
    },
    {
      name: 'halted by the iteration cap',
      path: () =>
        shortestPath(
          graph(),
          ended('halted', (s) => s.context.outcome.reason === 'max_iterations'),
        ),
      status: 'halted',
      reason: 'max_iterations',
    },
    {
      name: 'halted by cancel while a tool runs',
      path: () => pathThrough(graph(), (s) => s.matches('executingTools') && s.context.iterations === 1, cancel, ended('halted')),
      status: 'halted',
      reason: 'cancelled',
    },
    {
      name: 'halted by cancel while the provider streams',
      path: () => pathThrough(graph(), (s) => s.matches('requesting') && s.context.iterations === 1, cancel, ended('halted')),
      status: 'halted',
      reason: 'cancelled',
    },
    {
      name: 'halted by a tool (HaltError)',
      path: () =>
        shortestPath(
          graph(),
          ended('halted', (s) => s.context.outcome.reason === 'tool_halt'),
        ),
      status: 'halted',
      reason: 'tool_halt',
    },
    {
      name: 'error: fatal 401',
      path: () =>
        shortestPath(
          graph(),
          ended('error', (s) => s.context.retry.lastError?.code === 'authentication'),
        ),
      status: 'error',
      code: 'authentication',
    },
    {
      name: 'error after retries are exhausted (503)',
      path: () =>
        pathThrough(
          graph(),
          (s) => s.matches('requesting') && s.context.attempt === 3 && s.context.iterations === 0 && s.context.response === null,
          providerErrorEvent(providerFailures.find((f) => f.label === '503 unavailable')!),
          ended('error'),
        ),
      status: 'error',
      code: 'server',
    },
    {
      name: 'approval denied, then done',
      path: () => pathThrough(graph(), (s) => s.matches('awaitingApproval') && s.context.iterations === 1, deny, ended('done')),
      status: 'done',
    },
    {
      name: 'approval granted, then done',
      path: () => pathThrough(graph(), (s) => s.matches('awaitingApproval') && s.context.iterations === 1, approve, ended('done')),
      status: 'done',
    },
    {
      name: 'request timeout, retried, then done',
      path: () =>
        pathThrough(
          graph(),
          (s) => s.matches('requesting') && s.context.attempt === 1 && s.context.iterations === 0 && s.context.response === null,
          afterRequestTimeout,
          ended('done'),
        ),
      status: 'done',
    },
  ];

  for (const scenario of scenarios) {
    it(scenario.name, async () => {
      const path = scenario.path();
      const expected = path.state;
      const run = runAlong(graph(), path);
      await expect(run).resolves.toBeDefined();
      const { output, seen, pending, requests, attempts } = await run;
      expect(pending, 'user events the real actor never got to').toEqual([]);
      expect(requests).toBe(attempts.length);
      expect(output.status).toBe(scenario.status);
      expect(output.status).toBe(expected.value);
      expect(output.iterations).toBe(expected.context.iterations);
      expect(output.reason).toBe(expected.output?.reason);
      if (scenario.reason) expect(output.reason).toBe(scenario.reason);
      if (scenario.code) expect(output.error?.code).toBe(scenario.code);
      expect(historyProblem(output.messages)).toBeNull();
      const pathKeys = [path.steps[0]!.state, ...path.steps.slice(1).map((step) => step.state)]
        .map(graph().coarseKey)
        .filter((key, index, all) => all[index - 1] !== key);
      expect(isSubsequence(pathKeys, seen), `real run:\n${seen.join('\n')}\n\ngraph path:\n${pathKeys.join('\n')}`).toBe(true);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Found while building the graph (fixed in 5aa7f57, kept as regression tests): `executingTools`
// handles `xstate.done.actor.*` by wildcard and trusted the event's `output`. A caller can send
// such an event (`actor.send` takes any type), and docs/behaviour.md item 1 says no run may throw or reject
// "whatever the caller do". Before the fix, an output of undefined/null threw a TypeError in
// `recordOutcome` (actor status 'error', `toPromise` rejected), and any done event carrying a
// `halt` ended the run as `tool_halt`.

describe('caller-sent actor events while tools run (regressions)', () => {
  const config = capConfigs[2]!;
  const executing = () => {
    const graph = buildGraph(config);
    const snapshot = [...graph.nodes.values()].find(
      (s) => s.matches('executingTools') && s.context.round?.length === 1 && s.context.round[0]?.state === 'running',
    );
    if (!snapshot) throw new Error('no executingTools snapshot with one running call');
    return { graph, snapshot };
  };

  it('an xstate.done.actor.* event without a tool outcome does not crash the run', async () => {
    const tools: ToolScript = new Map([['lookup', ['hang']]]);
    let requests = 0;
    const provider = handlerProvider((request) =>
      scriptedTurn({ finish: requests++ === 0 ? 'normal' : 'text', end: { kind: 'done' } })(request),
    );
    const machine = createConversationMachine(machineOptions(config, provider, tools, realRunOptions));
    const actor = createActor(machine, { input: { messages: [] } });
    actor.subscribe({ error: () => {} });
    actor.start();
    actor.send(userMessage);
    await waitFor(actor, (s) => s.matches('executingTools'));
    actor.send(asEvent({ type: 'xstate.done.actor.toolCall-1-0', output: undefined }));
    actor.send(asEvent({ type: 'xstate.done.actor.toolCall-1-0', output: null }));
    expect(actor.getSnapshot().status).toBe('active');
    actor.send(cancel);
    await expect(toPromise(actor)).resolves.toMatchObject({ status: 'halted', reason: 'cancelled' });
  });

  it('done/error events that are not a running call of the round change nothing', () => {
    const { graph, snapshot } = executing();
    const call = snapshot.context.round![0]!;
    const result = { toolCallId: call.toolCallId, result: 'x' };
    const forged = [
      // another round's child id
      asEvent({ type: 'xstate.done.actor.toolCall-99-0', output: result }),
      asEvent({ type: 'xstate.error.actor.toolCall-99-0', error: new HaltError('forged halt') }),
      // this round's child id, but a result for another call, or no result text
      asEvent({ type: `xstate.done.actor.toolCall-${snapshot.context.iterations}-0`, output: { ...result, toolCallId: 'call_other' } }),
      asEvent({ type: `xstate.done.actor.toolCall-${snapshot.context.iterations}-0`, output: { toolCallId: call.toolCallId, result: 42 } }),
      // an index that names no call
      asEvent({ type: `xstate.done.actor.toolCall-${snapshot.context.iterations}-5`, output: result }),
      asEvent({ type: 'xstate.error.actor.toolCall-99-0', error: new Error('stale crash') }),
      asEvent({ type: 'xstate.done.actor.providerCall', output: undefined }),
    ];
    for (const event of forged) {
      const [next] = step(graph.machine, snapshot, event);
      expect(next.matches('executingTools'), event.type).toBe(true);
      expect(next.context.round, event.type).toEqual(snapshot.context.round);
    }
  });
});

// Found while building the graph (fixed in 04ca0d9, kept as regression tests): in XState v5 an
// `xstate.error.actor.*` event that no active state handles escalates, and the actor itself fails.
// `idle`, `retrying` and `awaitingApproval` had no such handler (`requesting` only `providerCall`'s),
// so a caller sending e.g. `xstate.error.actor.providerCall` while the run was idle, retrying or
// waiting for approval ended the actor in status 'error' and `toPromise(actor)` rejected, against
// docs/behaviour.md item 1. A stopped child cannot send it, so only callers can.
describe('caller-sent xstate.error.actor.* events (regressions)', () => {
  it('no reachable state fails on an error event of an actor it does not hold', () => {
    const graph = buildGraph(capConfigs[1]!);
    const failing = new Set<string>();
    for (const snapshot of graph.nodes.values()) {
      if (isFinal(snapshot)) continue;
      for (const id of ['providerCall', 'toolCall-99-0', 'nobody']) {
        if (id in snapshot.children) continue;
        const [next] = step(graph.machine, snapshot, asEvent({ type: `xstate.error.actor.${id}`, error: new Error('forged') }));
        if (next.status !== 'active') failing.add(`${stateValueOf(snapshot)} on xstate.error.actor.${id}`);
      }
    }
    expect([...failing].sort()).toEqual([]);
  });

  it('toPromise resolves when a caller sends xstate.error.actor.providerCall to an idle run', async () => {
    const machine = createConversationMachine(machineOptions(capConfigs[1]!, unusedProvider, new Map()));
    const actor = createActor(machine, { input: { messages: [] } });
    actor.subscribe({ error: () => {} });
    actor.start();
    actor.send(asEvent({ type: 'xstate.error.actor.providerCall', error: new Error('forged') }));
    if (actor.getSnapshot().status === 'active') actor.send(cancel);
    await expect(toPromise(actor)).resolves.toMatchObject({ status: 'halted' });
  });
});
