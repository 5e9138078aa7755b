/**
 * One property run over a workflow: a random user machine of conversations (docs/workflows.md,
 * "Composing") — a sequence of 1–3 steps, each one conversation (`invoke`), a parallel state of 2–3,
 * a nested workflow (a machine of 1–2 conversations in sequence, invoked as a child) or a map of 2–4
 * conversations spawned with `spawnChild`, at most 2 at once — every conversation started with
 * `conversationInput(prompt)` against its own fault server (test/support/fault-server.ts: tool
 * rounds, 429s, 5xx, timeouts, cut and stalled streams) with tools that throw, halt, hang past their
 * timeout or run slowly (some `idempotent`). Each step takes every outcome: `done` goes on,
 * `halted` / `error` are recorded and the step goes on or ends the workflow `failed`, as the case
 * says. While it runs the workflow is cancelled at a random moment, and killed and restored at
 * random moments: `actor.getPersistedSnapshot()` (through JSON), `actor.stop()`,
 * `createActor(machine, { snapshot })` — XState restores the conversations inside with their own
 * restore rules (src/machines/restore/xstate-restore.ts).
 *
 * **Cancelling a workflow** is what a user's machine does with a `cancel` it is sent: every step
 * state takes `cancel`, marks the workflow cancelled and `sendTo`s `cancel` to each conversation it
 * runs (the map to each spawned one still running, a nested workflow to its own); the conversations
 * end `halted`/`cancelled` through `onDone` as always, and with the mark set each step ends the
 * workflow in its `cancelled` final state, starting nothing more. (Stopping the actor instead would
 * end nothing through `onDone`: it is what a kill is here.)
 *
 * Afterwards DESIGN §3 is checked at every level: `verifyWorkflow` finds nothing in each generated
 * machine (else the generator is wrong); the workflow reaches a final state, the one its steps'
 * outcomes and failure rules lead to, and its recorded outcomes are the conversations' own; every
 * conversation that started ended once, `done`, `halted` or `error`, with a valid history; its events
 * reached the workflow as `agent.event` with its path (nested id first; each `request.started` names
 * its own model) and none came after its end; every tool call of a history has one `tool.result`;
 * no call ran twice across a kill unless its tool is idempotent, and none ran that is not in the
 * history; a cancelled workflow's running conversations ended cancelled and nothing started after;
 * the map never ran more than 2 at once; no connection or child is left, nothing escapes.
 * Shared by `test/workflow-properties.test.ts` and `npm run test:soak` (`--workflow-runs`).
 *
 * @example
 * ```ts
 * const [workflowCase] = fc.sample(workflowCaseArb, { seed: 1, numRuns: 1 });
 * const report = await runWorkflowCase(workflowCase!);
 * report.violations; // [] when every property held
 * ```
 */
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import {
  type Actor,
  type AnyActorLogic,
  type AnyActorRef,
  type AnyStateMachine,
  assign,
  createActor,
  enqueueActions,
  type InspectionEvent,
  sendTo,
  setup,
  spawnChild,
} from 'xstate';
import { type ConversationHost, createConversationHost } from '../../src/host/conversation-host.js';
import { memoryStore } from '../../src/host/memory-store.js';
import { conversationInput } from '../../src/machines/workflow/conversation-input.js';
import { createConversationMachine } from '../../src/machines/chart/conversation.js';
import { resultTexts } from '../../src/machines/rounds/tool-round.js';
import type { AgentEventEvent, ConversationEmittedEvent, RunOutput } from '../../src/machines/names/types.js';
import { verifyWorkflow } from '../../src/machines/workflow/verify-workflow.js';
import type { Provider } from '../../src/model/provider.js';
import { anthropicProvider } from '../../src/providers/anthropic/index.js';
import { openaiProvider } from '../../src/providers/openai/index.js';
import { defineTool, type Tool } from '../../src/tools/define-tool.js';
import { HaltError } from '../../src/tools/halt-error.js';
import { type FaultServer, type FaultStep, startFaultServer, type Wire } from './fault-server.js';
import { activeResources, hangMs, historyProblems, leftBehind, listenForEscapes, stepArb, takeEscapes } from './property-run.js';

// ---------------------------------------------------------------------------------------------
// Cases

const toolKinds = ['ok', 'slow', 'slowIdempotent', 'throws', 'hangs', 'hangHonours', 'halts'] as const;
type WorkflowToolKind = (typeof toolKinds)[number];

/** One conversation of a workflow: its fault server's plan, its tools and its limits. */
export type ConversationSpec = {
  wire: Wire;
  stream: boolean;
  /** What its fault server answers, request by request (then text). */
  plan: FaultStep[];
  tools: WorkflowToolKind[];
  maxToolIterations: number;
  maxRetries: number;
  toolTimeoutMs: number;
  requestTimeoutMs: number;
};

/** What a step does when one of its conversations ends `halted` or `error`. */
type OnFailure = 'continue' | 'fail';

export type WorkflowStep =
  | { kind: 'single'; conversation: ConversationSpec; onFailure: OnFailure }
  | { kind: 'parallel'; conversations: ConversationSpec[]; onFailure: OnFailure }
  /** A machine of its own, invoked: its conversations in sequence, each failure as `innerOnFailure` says; it fails the step when it ends `failed`. */
  | { kind: 'nested'; conversations: ConversationSpec[]; innerOnFailure: OnFailure; onFailure: OnFailure }
  /** Spawned with `spawnChild`, at most {@link mapCap} at once. */
  | { kind: 'map'; conversations: ConversationSpec[]; onFailure: OnFailure };

/**
 * When something is done to the running workflow (from a timer, as a user's code would): after this
 * many `agent.event`s it emitted, this many ms after it started, or right after the n-th
 * `tool.started` (1 = the first) any of its conversations emitted, while that tool most likely runs.
 */
export type WorkflowMoment = { afterEvents: number } | { afterMs: number } | { onToolStarted: number };

export type WorkflowCase = {
  steps: WorkflowStep[];
  /** `cancel` sent to the workflow. */
  cancel: WorkflowMoment | null;
  /** Kill and restore: persisted snapshot, stop, a new actor from the snapshot. */
  kills: WorkflowMoment[];
};

/** The most conversations a map runs at once. */
export const mapCap = 2;

const conversationArb: fc.Arbitrary<ConversationSpec> = fc.record({
  wire: fc.constantFrom<Wire>('openai', 'anthropic', 'responses'),
  stream: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  plan: fc.array(stepArb, { maxLength: 4 }),
  tools: fc.array(fc.constantFrom(...toolKinds), { minLength: 1, maxLength: 3 }),
  maxToolIterations: fc.integer({ min: 1, max: 3 }),
  maxRetries: fc.integer({ min: 0, max: 2 }),
  toolTimeoutMs: fc.integer({ min: 15, max: 40 }),
  requestTimeoutMs: fc.integer({ min: 150, max: 300 }),
});

const onFailureArb = fc.constantFrom<OnFailure>('continue', 'fail');

const workflowStepArb: fc.Arbitrary<WorkflowStep> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('single' as const), conversation: conversationArb, onFailure: onFailureArb }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('parallel' as const),
      conversations: fc.array(conversationArb, { minLength: 2, maxLength: 3 }),
      onFailure: onFailureArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('nested' as const),
      conversations: fc.array(conversationArb, { minLength: 1, maxLength: 2 }),
      innerOnFailure: onFailureArb,
      onFailure: onFailureArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('map' as const),
      conversations: fc.array(conversationArb, { minLength: 2, maxLength: 4 }),
      onFailure: onFailureArb,
    }),
  },
);

const momentArb = (maxEvents: number, maxMs: number): fc.Arbitrary<WorkflowMoment> =>
  fc.oneof(
    fc.record({ afterEvents: fc.integer({ min: 0, max: maxEvents }) }),
    fc.record({ afterMs: fc.integer({ min: 0, max: maxMs }) }),
    fc.record({ onToolStarted: fc.integer({ min: 1, max: 3 }) }),
  );

/** Random workflows, cancels and kills. */
export const workflowCaseArb: fc.Arbitrary<WorkflowCase> = fc.record({
  steps: fc.array(workflowStepArb, { minLength: 1, maxLength: 3 }),
  cancel: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: momentArb(40, 80) }),
  kills: fc.oneof(
    { weight: 2, arbitrary: fc.constant<WorkflowMoment[]>([]) },
    { weight: 3, arbitrary: fc.array(momentArb(40, 80), { minLength: 1, maxLength: 2 }) },
  ),
});

// ---------------------------------------------------------------------------------------------
// Layout: each conversation's id and path in the workflow

/** A conversation where it sits: `id` is its invoke or spawn id, `path` what `agent.event` says (a nested workflow's id first). */
type Placed = { id: string; path: string[]; key: string; spec: ConversationSpec };

type PlacedStep =
  | { kind: 'single'; conversation: Placed; onFailure: OnFailure }
  | { kind: 'parallel'; conversations: Placed[]; onFailure: OnFailure }
  | { kind: 'nested'; id: string; steps: PlacedStep[]; onFailure: OnFailure }
  | { kind: 'map'; conversations: Placed[]; onFailure: OnFailure };

const place = (id: string, prefix: string[], spec: ConversationSpec): Placed => ({
  id,
  path: [...prefix, id],
  key: [...prefix, id].join('/'),
  spec,
});

/** Ids: `s<k>` one conversation, `p<k>_<j>` parallel, `n<k>` a nested workflow with `c<j>` inside, `m<k>_<i>` a map's. */
function layout(steps: WorkflowStep[]): PlacedStep[] {
  return steps.map((step, k): PlacedStep => {
    switch (step.kind) {
      case 'single':
        return { kind: 'single', conversation: place(`s${k}`, [], step.conversation), onFailure: step.onFailure };
      case 'parallel':
        return {
          kind: 'parallel',
          conversations: step.conversations.map((spec, j) => place(`p${k}_${j}`, [], spec)),
          onFailure: step.onFailure,
        };
      case 'nested':
        return {
          kind: 'nested',
          id: `n${k}`,
          steps: step.conversations.map((spec, j) => ({
            kind: 'single',
            conversation: place(`c${j}`, [`n${k}`], spec),
            onFailure: step.innerOnFailure,
          })),
          onFailure: step.onFailure,
        };
      default:
        return {
          kind: 'map',
          conversations: step.conversations.map((spec, i) => place(`m${k}_${i}`, [], spec)),
          onFailure: step.onFailure,
        };
    }
  });
}

function conversationsOf(steps: PlacedStep[]): Placed[] {
  return steps.flatMap((step) => {
    switch (step.kind) {
      case 'single':
        return [step.conversation];
      case 'nested':
        return conversationsOf(step.steps);
      default:
        return step.conversations;
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Conversations: a fault server, tools and a machine each

type Conversation = Placed & {
  server: FaultServer;
  machine: AnyStateMachine;
  /** The model its provider asks for: `request.started` names it, so an event's path can be checked. */
  model: string;
  /** Executions by toolCallId, across kills. */
  executions: Map<string, number>;
  /** The calls of an idempotent tool among them: run without a write ahead, so a crash may leave one unrecorded. */
  idempotentCalls: Set<string>;
  idempotentTools: Set<string>;
  hangs: Set<Promise<unknown>>;
};

const toolParameters: Record<string, unknown> = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };

function makeTool(
  kind: WorkflowToolKind,
  index: number,
  conversation: Pick<Conversation, 'executions' | 'hangs' | 'idempotentCalls'>,
): Tool {
  const track = <T>(promise: Promise<T>): Promise<T> => {
    conversation.hangs.add(promise);
    const forget = () => conversation.hangs.delete(promise);
    promise.then(forget, forget);
    return promise;
  };
  const sleep = (ms: number, signal?: AbortSignal) =>
    track(
      new Promise<string>((resolve) => {
        const timer = setTimeout(() => resolve(`slept ${ms} ms`), ms);
        signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve('aborted');
          },
          { once: true },
        );
      }),
    );
  return defineTool({
    name: `${kind}_${index}`,
    description: `A ${kind} tool`,
    parameters: toolParameters,
    idempotent: kind === 'slowIdempotent',
    execute: async (args: Record<string, unknown>, { signal, toolCallId }) => {
      conversation.executions.set(toolCallId, (conversation.executions.get(toolCallId) ?? 0) + 1);
      if (kind === 'slowIdempotent') conversation.idempotentCalls.add(toolCallId);
      const n = typeof args.n === 'number' ? args.n : 0;
      switch (kind) {
        case 'ok':
          return `ok ${n}`;
        case 'slow':
        case 'slowIdempotent':
          // Within the timeout mostly: long enough for a kill to land while it runs.
          return sleep(3 + (Math.abs(n) % 10) * 3);
        case 'throws':
          throw new Error('the tool threw');
        case 'hangs':
          // Ignores its signal; bounded, so the process drains.
          return sleep(hangMs);
        case 'hangHonours':
          return sleep(hangMs, signal);
        case 'halts':
          throw new HaltError(`halted by tool ${n}`);
      }
    },
  }) as unknown as Tool;
}

const baseModels: Record<Wire, string> = { openai: 'gpt-4o-mini', anthropic: 'claude-haiku-4-5', responses: 'gpt-5-mini' };

function providerFor(wire: Wire, baseURL: string, apiKey: string, stream: boolean, model: string): Provider {
  switch (wire) {
    case 'openai':
      return openaiProvider({ model, apiKey, baseURL, stream });
    case 'responses':
      return openaiProvider({ api: 'responses', model, apiKey, baseURL, stream });
    case 'anthropic':
      return anthropicProvider({ model, apiKey, baseURL, maxTokens: 1024, stream });
  }
}

async function startConversation(placed: Placed, apiKey: string): Promise<Conversation> {
  const { spec } = placed;
  const state = { executions: new Map<string, number>(), hangs: new Set<Promise<unknown>>(), idempotentCalls: new Set<string>() };
  const tools = spec.tools.map((kind, index) => makeTool(kind, index, state));
  const server = await startFaultServer({
    wire: spec.wire,
    plan: spec.plan,
    toolNames: tools.map((tool) => tool.name),
    apiKey,
    stallMs: 2_000,
  });
  const model = `${baseModels[spec.wire]}-${placed.key.replace('/', '.')}`;
  const machine = createConversationMachine({
    provider: providerFor(spec.wire, server.baseURL, apiKey, spec.stream, model),
    tools: tools as never,
    name: placed.key,
    maxToolIterations: spec.maxToolIterations,
    retry: spec.maxRetries === 0 ? false : { maxRetries: spec.maxRetries, initialDelayMs: 1, maxDelayMs: 4, jitter: false },
    toolTimeoutMs: spec.toolTimeoutMs,
    requestTimeoutMs: spec.requestTimeoutMs,
  }) as unknown as AnyStateMachine;
  return {
    ...placed,
    ...state,
    server,
    machine,
    model,
    idempotentTools: new Set(tools.filter((tool) => tool.idempotent).map((tool) => tool.name)),
  };
}

// ---------------------------------------------------------------------------------------------
// The workflow machine

export type WorkflowStatus = 'done' | 'failed' | 'cancelled';

/** What a workflow records of each conversation's end: `done`, `halted/<reason>`, `error`, or `actor error` (it could not run). */
type Outcome = string;

type WorkflowContext = {
  /** By the conversation's path below this workflow (`s0`, `n1/c0`); a nested workflow's own under its id (`n1`: its status). */
  outcomes: Record<string, Outcome>;
  cancelled: boolean;
  status: WorkflowStatus | undefined;
  /** The map being run: the next conversation to spawn, those running, the most at once over every map. */
  next: number;
  running: string[];
  mostAtOnce: number;
};

export type WorkflowOutput = { status: WorkflowStatus; outcomes: Record<string, Outcome>; mostAtOnce: number };

const cancelEvent = { type: 'cancel' as const, reason: 'the workflow was cancelled' };

/** The child id of an `xstate.done.actor.<id>` or `xstate.error.actor.<id>` event. */
const childIdOf = (event: { type: string }) => event.type.replace(/^xstate\.(done|error)\.actor\./, '');

function outcomeOf(output: RunOutput | undefined): Outcome {
  if (!output) return 'no output';
  return output.status === 'halted' ? `halted/${output.reason ?? '?'}` : output.status;
}

type Built = { machine: AnyStateMachine; nested: Array<{ id: string; machine: AnyStateMachine }> };

/**
 * A user's machine for `steps` (states `step<k>`, then `done`, `failed`, `cancelled`), written as
 * docs/workflows.md shows: conversations named in `setup({ actors })` so a persisted snapshot can
 * name them, every outcome taken.
 */
function buildWorkflow(id: string, steps: PlacedStep[], conversations: Map<string, Conversation>): Built {
  const actors: Record<string, AnyActorLogic> = {};
  const nested: Built['nested'] = [];
  const states: Record<string, unknown> = {};
  const keyHere = (placed: Placed) => placed.path.slice(-1)[0] as string;
  const logicOf = (placed: Placed) => (conversations.get(placed.key) as Conversation).machine;
  const prompt = (placed: Placed) => conversationInput(`Step ${placed.key}: use your tools, then answer.`);
  const failedAmong =
    (ids: string[]) =>
    ({ context }: { context: WorkflowContext }) =>
      ids.some((at) => context.outcomes[at] !== 'done');

  steps.forEach((step, k) => {
    const next = k + 1 < steps.length ? `step${k + 1}` : 'done';
    const onFailureTarget = step.onFailure === 'fail' ? 'failed' : next;
    switch (step.kind) {
      case 'single': {
        const child = step.conversation.id;
        actors[child] = logicOf(step.conversation);
        states[`step${k}`] = {
          invoke: {
            id: child,
            src: child,
            input: prompt(step.conversation),
            onDone: [
              { guard: 'wasCancelled', target: 'cancelled', actions: 'record' },
              { guard: 'finished', target: next, actions: 'record' },
              { target: onFailureTarget, actions: 'record' },
            ],
            onError: { target: 'failed', actions: 'recordError' },
          },
          on: { cancel: { actions: ['markCancelled', sendTo(child, cancelEvent)] } },
        };
        break;
      }
      case 'parallel': {
        const regions: Record<string, unknown> = {};
        for (const [j, placed] of step.conversations.entries()) {
          actors[placed.id] = logicOf(placed);
          regions[`r${j}`] = {
            initial: 'working',
            states: {
              working: {
                invoke: {
                  id: placed.id,
                  src: placed.id,
                  input: prompt(placed),
                  onDone: { target: 'finished', actions: 'record' },
                  onError: { target: 'finished', actions: 'recordError' },
                },
                on: { cancel: { actions: ['markCancelled', sendTo(placed.id, cancelEvent)] } },
              },
              finished: { type: 'final' },
            },
          };
        }
        states[`step${k}`] = {
          type: 'parallel',
          states: regions,
          onDone: [
            { guard: 'wasCancelled', target: 'cancelled' },
            { guard: failedAmong(step.conversations.map(keyHere)), target: onFailureTarget },
            { target: next },
          ],
        };
        break;
      }
      case 'nested': {
        const inner = buildWorkflow(step.id, step.steps, conversations);
        actors[step.id] = inner.machine;
        nested.push({ id: step.id, machine: inner.machine }, ...inner.nested);
        states[`step${k}`] = {
          invoke: {
            id: step.id,
            src: step.id,
            onDone: [
              { guard: 'wasCancelled', target: 'cancelled', actions: 'recordNested' },
              {
                guard: ({ event }: { event: { output: WorkflowOutput } }) => event.output.status === 'done',
                target: next,
                actions: 'recordNested',
              },
              { target: onFailureTarget, actions: 'recordNested' },
            ],
            onError: { target: 'failed', actions: 'recordError' },
          },
          on: { cancel: { actions: ['markCancelled', sendTo(step.id, cancelEvent)] } },
        };
        break;
      }
      case 'map': {
        const ids = step.conversations.map((placed) => placed.id);
        const finishedHere: Record<string, unknown> = {};
        for (const placed of step.conversations) {
          actors[placed.id] = logicOf(placed);
          finishedHere[`xstate.done.actor.${placed.id}`] = { actions: ['record', 'oneLessRunning'] };
          finishedHere[`xstate.error.actor.${placed.id}`] = { actions: ['recordError', 'oneLessRunning'] };
        }
        const allEnded = ({ context }: { context: WorkflowContext }) =>
          context.running.length === 0 && (context.cancelled || context.next === ids.length);
        states[`step${k}`] = {
          entry: assign({ next: 0, running: [] as string[] }),
          // Taken again after every event: fills the free places, one conversation each, in order.
          always: [
            ...step.conversations.map((placed, i) => ({
              guard: ({ context }: { context: WorkflowContext }) =>
                !context.cancelled && context.next === i && context.running.length < mapCap,
              actions: [
                spawnChild(placed.id, { id: placed.id, input: prompt(placed) }),
                assign(({ context }: { context: WorkflowContext }) => ({
                  next: context.next + 1,
                  running: [...context.running, placed.id],
                  mostAtOnce: Math.max(context.mostAtOnce, context.running.length + 1),
                })),
              ],
            })),
            { guard: ({ context }: { context: WorkflowContext }) => allEnded({ context }) && context.cancelled, target: 'cancelled' },
            {
              guard: ({ context }: { context: WorkflowContext }) => allEnded({ context }) && failedAmong(ids)({ context }),
              target: onFailureTarget,
            },
            { guard: allEnded, target: next },
          ],
          on: { ...finishedHere, cancel: { actions: ['markCancelled', 'cancelRunning'] } },
        };
        break;
      }
    }
  });
  states.done = { type: 'final', entry: assign({ status: 'done' as const }) };
  states.failed = { type: 'final', entry: assign({ status: 'failed' as const }) };
  states.cancelled = { type: 'final', entry: assign({ status: 'cancelled' as const }) };

  const machine = setup({
    types: { context: {} as WorkflowContext, emitted: {} as AgentEventEvent, output: {} as WorkflowOutput },
    actors,
    guards: {
      wasCancelled: ({ context }) => context.cancelled,
      finished: ({ event }) => (event as { output?: RunOutput }).output?.status === 'done',
    },
    actions: {
      record: assign({
        outcomes: ({ context, event }) => ({
          ...context.outcomes,
          [childIdOf(event)]: outcomeOf((event as { output?: RunOutput }).output),
        }),
      }),
      recordNested: assign({
        outcomes: ({ context, event }) => {
          const output = (event as unknown as { output: WorkflowOutput }).output;
          const inner = Object.fromEntries(Object.entries(output.outcomes).map(([key, value]) => [`${childIdOf(event)}/${key}`, value]));
          return { ...context.outcomes, ...inner, [childIdOf(event)]: output.status };
        },
        mostAtOnce: ({ context, event }) =>
          Math.max(context.mostAtOnce, (event as unknown as { output: WorkflowOutput }).output.mostAtOnce),
      }),
      recordError: assign({
        outcomes: ({ context, event }) => ({
          ...context.outcomes,
          [childIdOf(event)]: `actor error: ${String((event as { error?: unknown }).error)}`,
        }),
      }),
      markCancelled: assign({ cancelled: true }),
      oneLessRunning: assign({ running: ({ context, event }) => context.running.filter((running) => running !== childIdOf(event)) }),
      cancelRunning: enqueueActions(({ context, enqueue }) => {
        for (const running of context.running) enqueue.sendTo(running, cancelEvent);
      }),
    },
  }).createMachine({
    id,
    context: { outcomes: {}, cancelled: false, status: undefined, next: 0, running: [], mostAtOnce: 0 },
    initial: 'step0',
    states: states as never,
    output: ({ context }) => ({ status: context.status ?? 'failed', outcomes: context.outcomes, mostAtOnce: context.mostAtOnce }),
  });
  return { machine: machine as unknown as AnyStateMachine, nested };
}

/** The status `steps` lead to given each conversation's outcome (no cancel), and the conversations that must have run. */
function expectedRun(steps: PlacedStep[], outcomes: Map<string, Outcome>, ran: Set<string>, nestedStatus: Map<string, WorkflowStatus>) {
  for (const step of steps) {
    let failed: boolean;
    switch (step.kind) {
      case 'single':
        ran.add(step.conversation.key);
        failed = outcomes.get(step.conversation.key) !== 'done';
        break;
      case 'nested': {
        const status = expectedRun(step.steps, outcomes, ran, nestedStatus);
        nestedStatus.set(step.id, status);
        failed = status !== 'done';
        break;
      }
      default:
        for (const placed of step.conversations) ran.add(placed.key);
        failed = step.conversations.some((placed) => outcomes.get(placed.key) !== 'done');
    }
    if (failed && step.onFailure === 'fail') return 'failed' as const;
  }
  return 'done' as const;
}

// ---------------------------------------------------------------------------------------------
// The run

export type WorkflowCounts = {
  conversations: number;
  /** Conversations' ends: `done`, `halted/cancelled`, `error`, … */
  outcomes: Record<string, number>;
  /** Faults and responses the fault servers injected, by kind. */
  faults: Record<string, number>;
  kills: number;
  restores: number;
  cancels: number;
  executions: number;
  /** Calls of an idempotent tool run again after a kill. */
  reruns: number;
  /** Calls a kill interrupted, answered `interrupted` on restore. */
  interrupted: number;
  /** Conversations a kill found running. */
  conversationsRestored: number;
  mostAtOnce: number;
};

export type WorkflowReport = {
  violations: string[];
  /** How the workflow ended: its final state, or undefined when it did not. */
  outcome: WorkflowStatus | undefined;
  counts: WorkflowCounts;
  durationMs: number;
};

export type WorkflowRunOptions = {
  /** Give up on a workflow that has not ended after this long. */
  watchdogMs?: number;
  /** Compare active handles before and after (only meaningful when runs go one at a time). */
  checkResources?: boolean;
  /**
   * Run the workflow in a host (`createConversationHost` over a memory store, `host.start`) instead
   * of an actor: a kill is then a crash — the host's store refuses every write from that moment, the
   * host is closed, and a new host over the same store `recover()`s the run from its last stored
   * step (not from a snapshot taken at the kill, as an actor's kill is).
   */
  hosted?: boolean;
};

type Heard = { seq: number; key: string; event: ConversationEmittedEvent };
type Ended = { seq: number; output?: RunOutput; error?: unknown };

/** Every actor below `ref` up to the root, as `agent.event` paths name them (the root left out). */
function pathOf(ref: AnyActorRef): string[] {
  const path: string[] = [];
  for (let at: AnyActorRef | undefined = ref; at?._parent; at = at._parent) path.unshift(at.id);
  return path;
}

const bump = (record: Record<string, number>, key: string, by = 1) => {
  record[key] = (record[key] ?? 0) + by;
};

/** Plays one workflow case; returns the violations (never throws for one). */
export async function runWorkflowCase(workflowCase: WorkflowCase, options: WorkflowRunOptions = {}): Promise<WorkflowReport> {
  listenForEscapes();
  const started = performance.now();
  const baseline = options.checkResources ? activeResources() : {};
  takeEscapes();
  const violations: string[] = [];
  const counts: WorkflowCounts = {
    conversations: 0,
    outcomes: {},
    faults: {},
    kills: 0,
    restores: 0,
    cancels: 0,
    executions: 0,
    reruns: 0,
    interrupted: 0,
    conversationsRestored: 0,
    mostAtOnce: 0,
  };
  const apiKey = `sk-workflow-${Math.random().toString(36).slice(2, 12)}`;
  const steps = layout(workflowCase.steps);
  const conversations = new Map<string, Conversation>();
  let outcome: WorkflowStatus | undefined;
  try {
    for (const placed of conversationsOf(steps)) conversations.set(placed.key, await startConversation(placed, apiKey));
    counts.conversations = conversations.size;
    const built = buildWorkflow('workflow', steps, conversations);
    for (const { id, machine } of [{ id: 'workflow', machine: built.machine }, ...built.nested])
      for (const problem of verifyWorkflow(machine))
        violations.push(`generator: verifyWorkflow(${id}) found ${problem.state} (${problem.kind}): ${problem.message}`);
    const drive = options.hosted ? driveHosted : drivePlain;
    const watchdogMs = options.watchdogMs ?? 15_000;
    const driven = await drive(workflowCase, built.machine, conversations, violations, counts, watchdogMs, apiKey);
    outcome = checkRun(driven, steps, conversations, violations, counts, watchdogMs, options.hosted === true);

    // Nothing left behind: every connection answered or closed (a kill aborts what its actor had in flight).
    for (const conversation of conversations.values()) {
      const open = await conversation.server.unreleased(2_000);
      if (open.length > 0)
        violations.push(
          `${conversation.key}: connections not released: ${open.map((entry) => `#${entry.index} (${entry.injected.join(', ')})`).join('; ')}`,
        );
      for (const kind of conversation.server.injected()) bump(counts.faults, kind);
    }
    // Hanging tools' bounded timers (a kill leaves them to run out): waited for, the wait's own timer cleared.
    let wait: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.allSettled([...conversations.values()].flatMap((conversation) => [...conversation.hangs])),
      new Promise((resolve) => {
        wait = setTimeout(resolve, hangMs * 4);
      }),
    ]);
    clearTimeout(wait);
  } catch (error) {
    violations.push(`the harness failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    await Promise.all([...conversations.values()].map((conversation) => conversation.server.close()));
  }
  violations.push(...(await leftBehind(baseline, options.checkResources === true)));
  return { violations, outcome, counts, durationMs: performance.now() - started };
}

/** What a run left for the checks: what the workflow heard and when each conversation ended, how it ended. */
type Driven = {
  heard: Heard[];
  ends: Map<string, Ended[]>;
  result: { output?: WorkflowOutput; error?: unknown; watchdog?: true };
  cancelSent: { seq: number; running: string[] } | undefined;
  /** Conversations still running under the workflow once it settled. */
  leftRunning: string[];
  finalValue: unknown;
  /** `request.started`s the workflow's dying host emitted after its crash, by conversation: its requests were made. */
  startedAfterCrash: Map<string, number>;
};

/** Runs the workflow as an actor to its end through the case's cancel and kills (restored from the persisted snapshot). */
async function drivePlain(
  workflowCase: WorkflowCase,
  machine: AnyStateMachine,
  conversations: Map<string, Conversation>,
  violations: string[],
  counts: WorkflowCounts,
  watchdogMs: number,
  apiKey: string,
): Promise<Driven> {
  let seq = 0;
  const heard: Heard[] = [];
  const ends = new Map<string, Ended[]>();
  let generation = 0;
  let stopping = false;
  let settled = false;
  let result: { output?: WorkflowOutput; error?: unknown; watchdog?: true } = {};
  let resolveEnd = () => {};
  const ended = new Promise<void>((resolve) => {
    resolveEnd = resolve;
  });
  const settle = (value: typeof result) => {
    if (settled) return;
    settled = true;
    result = value;
    resolveEnd();
  };
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const later = (fn: () => void, ms = 0) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };

  // A conversation's end, as its workflow (the root or a nested one) receives it.
  const inspect = (inspection: InspectionEvent) => {
    if (inspection.type !== '@xstate.event' || !inspection.sourceRef) return;
    const { event } = inspection;
    if (!/^xstate\.(done|error)\.actor\./.test(event.type)) return;
    const key = pathOf(inspection.sourceRef as AnyActorRef).join('/');
    if (!conversations.has(key)) return;
    const list = ends.get(key) ?? [];
    list.push({ seq: ++seq, output: (event as { output?: RunOutput }).output, error: (event as { error?: unknown }).error });
    ends.set(key, list);
  };

  let eventCount = 0;
  let toolStarts = 0;
  let cancelSent: { seq: number; running: string[] } | undefined;
  const runningNow = () => {
    const startedKeys = new Set(heard.map((entry) => entry.key));
    return [...startedKeys].filter((key) => !ends.has(key));
  };

  type WorkflowActor = Actor<AnyStateMachine>;
  let actor: WorkflowActor;
  const attach = (current: WorkflowActor) => {
    const mine = ++generation;
    current.on('agent.event', (emitted: AgentEventEvent) => {
      if (mine !== generation || stopping)
        violations.push(`an agent.event (${emitted.event.type} at ${emitted.path.join('/')}) from a stopped workflow`);
      heard.push({ seq: ++seq, key: emitted.path.join('/'), event: emitted.event });
      eventCount++;
      if (emitted.event.type === 'tool.started') toolStarts++;
      const now = (moment: WorkflowMoment) =>
        ('afterEvents' in moment && moment.afterEvents === eventCount) ||
        ('onToolStarted' in moment && emitted.event.type === 'tool.started' && moment.onToolStarted === toolStarts);
      for (const kill of workflowCase.kills) if (now(kill)) later(killAndRestore);
      if (workflowCase.cancel && now(workflowCase.cancel)) later(sendCancel);
    });
    current.subscribe({
      next: (snapshot) => {
        if (mine === generation && snapshot.status === 'done') settle({ output: snapshot.output as WorkflowOutput });
      },
      error: (error) => {
        if (mine === generation) settle({ error });
      },
    });
  };

  const killAndRestore = () => {
    if (settled || actor.getSnapshot().status !== 'active') return;
    // Stored as a user would store it: as JSON text.
    let persisted: unknown;
    try {
      const stored = JSON.stringify(actor.getPersistedSnapshot());
      if (stored.includes(apiKey)) violations.push('the persisted snapshot holds the API key');
      persisted = JSON.parse(stored);
    } catch (error) {
      violations.push(`the persisted snapshot is not JSON: ${String(error)}`);
      return;
    }
    counts.kills++;
    counts.conversationsRestored += runningNow().length;
    stopping = true;
    actor.stop();
    stopping = false;
    try {
      actor = createActor(machine, { snapshot: persisted as never, inspect });
      attach(actor);
      actor.start();
      counts.restores++;
    } catch (error) {
      violations.push(`restoring the workflow threw: ${String(error)}`);
      settle({ error });
    }
  };

  const sendCancel = () => {
    if (settled) return;
    // From a timer: the workflow takes it at once.
    if (actor.getSnapshot().status === 'active') cancelSent ??= { seq: ++seq, running: runningNow() };
    counts.cancels++;
    actor.send({ type: 'cancel' });
  };

  actor = createActor(machine, { inspect });
  attach(actor);
  const watchdog = setTimeout(() => settle({ watchdog: true }), watchdogMs);
  actor.start();
  // Moments by the clock, and "after 0 events": from now.
  const fromStart = (moment: WorkflowMoment) =>
    'afterMs' in moment ? moment.afterMs : 'afterEvents' in moment && moment.afterEvents === 0 ? 0 : undefined;
  for (const kill of workflowCase.kills) {
    const ms = fromStart(kill);
    if (ms !== undefined) later(killAndRestore, ms);
  }
  const cancelMs = workflowCase.cancel ? fromStart(workflowCase.cancel) : undefined;
  if (cancelMs !== undefined) later(sendCancel, cancelMs);
  await ended;
  clearTimeout(watchdog);
  for (const timer of timers) clearTimeout(timer);
  timers.clear();

  const snapshot = actor.getSnapshot();
  if (result.watchdog) actor.stop();
  // A spawned conversation that ended stays among the children (done) until stopped: only an active one is left running.
  const leftRunning = Object.entries(snapshot.children as Record<string, AnyActorRef>)
    .filter(([, child]) => child.getSnapshot().status === 'active')
    .map(([id]) => id);
  return { heard, ends, result, cancelSent, leftRunning, finalValue: snapshot.value, startedAfterCrash: new Map() };
}

/**
 * Runs the workflow in a host to its end through the case's cancel and kills. A kill is a crash:
 * the host's store refuses every write from then on (as a dead process writes nothing), the host
 * is closed, and a new host over the same store recovers the run from its last stored step. What
 * the dying host's run does after the crash is not the workflow's (a real one would have stopped):
 * its events are left out, but the requests it made are counted as made.
 */
async function driveHosted(
  workflowCase: WorkflowCase,
  machine: AnyStateMachine,
  conversations: Map<string, Conversation>,
  violations: string[],
  counts: WorkflowCounts,
  watchdogMs: number,
  apiKey: string,
): Promise<Driven> {
  const id = 'w';
  let seq = 0;
  const heard: Heard[] = [];
  const ends = new Map<string, Ended[]>();
  const startedAfterCrash = new Map<string, number>();
  let generation = 0;
  let settled = false;
  let result: Driven['result'] = {};
  let resolveEnd = () => {};
  const ended = new Promise<void>((resolve) => {
    resolveEnd = resolve;
  });
  const settle = (value: Driven['result']) => {
    if (settled) return;
    settled = true;
    result = value;
    resolveEnd();
  };
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const later = (fn: () => void | Promise<void>, ms = 0) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      void fn();
    }, ms);
    timers.add(timer);
  };
  const stored = memoryStore();
  let eventCount = 0;
  let toolStarts = 0;
  let cancelSent: Driven['cancelSent'];
  let cancelTaken: Driven['cancelSent'];
  const runningNow = () => {
    const startedKeys = new Set(heard.map((entry) => entry.key));
    return [...startedKeys].filter((key) => !ends.has(key));
  };

  type Life = { host: ConversationHost<AnyStateMachine>; dead: boolean; generation: number };
  const live = (): Life => {
    const life: Life = { dead: false, generation: ++generation } as Life;
    // The store as this host's process sees it: dead after the crash, and never closed by a host.
    const store = new Proxy(stored, {
      get(target, property, receiver) {
        if (property === 'close') return async () => undefined;
        if (property === 'save') {
          // A database's round trip: a crash can land between a step and its write.
          return async (...args: Parameters<typeof target.save>) => {
            await new Promise((resolve) => setTimeout(resolve, 2));
            if (life.dead) throw new Error('the process crashed: nothing more is written');
            await target.save(...args);
          };
        }
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const inspect = (inspection: InspectionEvent) => {
      // The moment the workflow itself takes the cancel (the host sends it after its own checks).
      if (
        !life.dead &&
        inspection.type === '@xstate.event' &&
        inspection.event.type === 'cancel' &&
        !(inspection.actorRef as AnyActorRef)._parent
      )
        cancelTaken ??= { seq: ++seq, running: runningNow() };
      if (life.dead || inspection.type !== '@xstate.event' || !inspection.sourceRef) return;
      const { event } = inspection;
      if (!/^xstate\.(done|error)\.actor\./.test(event.type)) return;
      const key = pathOf(inspection.sourceRef as AnyActorRef).join('/');
      if (!conversations.has(key)) return;
      const list = ends.get(key) ?? [];
      list.push({ seq: ++seq, output: (event as { output?: RunOutput }).output, error: (event as { error?: unknown }).error });
      ends.set(key, list);
    };
    life.host = createConversationHost({ machine, store, inspect, onError: () => undefined });
    life.host.subscribe(id, (event) => {
      if (event.type !== 'agent.event') return;
      const emitted = event as AgentEventEvent;
      const key = emitted.path.join('/');
      if (life.dead) {
        if (emitted.event.type === 'request.started') startedAfterCrash.set(key, (startedAfterCrash.get(key) ?? 0) + 1);
        return;
      }
      heard.push({ seq: ++seq, key, event: emitted.event });
      eventCount++;
      if (emitted.event.type === 'tool.started') toolStarts++;
      const now = (moment: WorkflowMoment) =>
        ('afterEvents' in moment && moment.afterEvents === eventCount) ||
        ('onToolStarted' in moment && emitted.event.type === 'tool.started' && moment.onToolStarted === toolStarts);
      for (const kill of workflowCase.kills) if (now(kill)) later(crashAndRecover);
      if (workflowCase.cancel && now(workflowCase.cancel)) later(sendCancel);
    });
    return life;
  };
  const awaitResult = (life: Life) => {
    life.host.result(id).then(
      (output) => {
        if (!life.dead) settle({ output: output as unknown as WorkflowOutput });
      },
      (error: unknown) => {
        if (!life.dead) settle({ error });
      },
    );
  };

  let current = live();
  let crashing = false;
  const crashAndRecover = async () => {
    if (settled || crashing) return;
    crashing = true;
    const dying = current;
    dying.dead = true;
    counts.kills++;
    counts.conversationsRestored += runningNow().length;
    await dying.host.close();
    const record = await stored.load(id);
    if (record?.snapshot.includes(apiKey)) violations.push('the stored snapshot holds the API key');
    // The run goes on from its last stored step: what was heard after it is a timeline the crash erased —
    // a conversation the stored step has running ends again, one it had not started starts again.
    // (Everything heard so far is the crashed host's: the new one has not started.)
    const persisted = record ? (JSON.parse(record.snapshot) as unknown) : undefined;
    const running = runningIn(persisted);
    const ended = endedIn(persisted);
    for (const key of [...ends.keys()]) if (running.has(key) || !ended.has(key)) ends.delete(key);
    const erased = heard.filter((entry) => !running.has(entry.key) && !ended.has(entry.key));
    for (const entry of erased) {
      heard.splice(heard.indexOf(entry), 1);
      // Its requests were made all the same.
      if (entry.event.type === 'request.started') startedAfterCrash.set(entry.key, (startedAfterCrash.get(entry.key) ?? 0) + 1);
    }
    current = live();
    try {
      const report = await current.host.recover();
      if (report.failed.length > 0) violations.push(`recover() failed: ${report.failed.map(({ error }) => String(error)).join('; ')}`);
      counts.restores++;
      // Crashed before its start was stored, the run does not exist: the start is made again (below).
      if (record) awaitResult(current);
    } catch (error) {
      violations.push(`recovering the workflow threw: ${String(error)}`);
      settle({ error });
    }
    crashing = false;
  };

  const sendCancel = async () => {
    if (settled) return;
    counts.cancels++;
    try {
      await current.host.send(id, { type: 'cancel' } as never);
      // Taken and stored (a cancel a crash lost before its write is not the workflow's).
      cancelSent ??= cancelTaken;
    } catch {
      // The workflow had ended, or the host crashed before the cancel was stored.
    }
    cancelTaken = undefined;
  };

  const watchdog = setTimeout(() => settle({ watchdog: true }), watchdogMs);
  const starting = current;
  try {
    await starting.host.start(id);
    awaitResult(starting);
  } catch (error) {
    if (!starting.dead) {
      violations.push(`host.start threw: ${String(error)}`);
      settle({ error });
    } else {
      // A crash before the start was stored: the run never existed, and the caller starts it again.
      while (crashing) await new Promise((resolve) => setTimeout(resolve, 1));
      if (!(await stored.load(id))) {
        await current.host.start(id);
        awaitResult(current);
      }
    }
  }
  const fromStart = (moment: WorkflowMoment) =>
    'afterMs' in moment ? moment.afterMs : 'afterEvents' in moment && moment.afterEvents === 0 ? 0 : undefined;
  for (const kill of workflowCase.kills) {
    const ms = fromStart(kill);
    if (ms !== undefined) later(crashAndRecover, ms);
  }
  const cancelMs = workflowCase.cancel ? fromStart(workflowCase.cancel) : undefined;
  if (cancelMs !== undefined) later(sendCancel, cancelMs);
  await ended;
  clearTimeout(watchdog);
  for (const timer of timers) clearTimeout(timer);
  timers.clear();
  while (crashing) await new Promise((resolve) => setTimeout(resolve, 5));
  const view = await current.host.get(id).catch(() => undefined);
  await current.host.close();
  const leftRunning = result.watchdog ? [] : (view?.conversations ?? []).map((conversation) => conversation.path.join('/'));
  return { heard, ends, result, cancelSent, leftRunning, finalValue: view?.value, startedAfterCrash };
}

/** The conversations a stored workflow has running: active conversation snapshots among its children, nested ones too. */
function runningIn(persisted: unknown, path: string[] = []): Set<string> {
  const found = new Set<string>();
  if (typeof persisted !== 'object' || persisted === null) return found;
  const { children } = persisted as { children?: Record<string, { snapshot?: { status?: string; context?: Record<string, unknown> } }> };
  for (const [childId, child] of Object.entries(children ?? {})) {
    const snapshot = child?.snapshot;
    const context = snapshot?.context;
    const conversation = context !== undefined && Array.isArray(context.messages) && 'outcome' in context;
    if (conversation && snapshot?.status === 'active') found.add([...path, childId].join('/'));
    else if (!conversation) for (const key of runningIn(snapshot, [...path, childId])) found.add(key);
  }
  return found;
}

/** The conversations a stored workflow had seen end: the keys of its outcomes, and of each nested workflow's below its id. */
function endedIn(persisted: unknown, path: string[] = []): Set<string> {
  const found = new Set<string>();
  if (typeof persisted !== 'object' || persisted === null) return found;
  const { context, children } = persisted as {
    context?: { outcomes?: Record<string, unknown> };
    children?: Record<string, { snapshot?: unknown }>;
  };
  for (const key of Object.keys(context?.outcomes ?? {})) found.add([...path, key].join('/'));
  for (const [childId, child] of Object.entries(children ?? {}))
    for (const key of endedIn(child?.snapshot, [...path, childId])) found.add(key);
  return found;
}

/** Checks DESIGN §3 at every level of a run a driver left; returns how the workflow ended. */
function checkRun(
  { heard, ends, result, cancelSent, leftRunning, finalValue, startedAfterCrash }: Driven,
  steps: PlacedStep[],
  conversations: Map<string, Conversation>,
  violations: string[],
  counts: WorkflowCounts,
  watchdogMs: number,
  hosted: boolean,
): WorkflowStatus | undefined {
  if (result.watchdog) violations.push(`the workflow did not end within ${watchdogMs} ms (state ${JSON.stringify(finalValue)})`);
  if (result.error !== undefined) violations.push(`the workflow failed: ${String(result.error)}`);
  if (!result.watchdog && leftRunning.length > 0) violations.push(`children left running: ${leftRunning.join(', ')}`);
  const output = result.output;
  if (output && !['done', 'failed', 'cancelled'].includes(output.status)) violations.push(`final status ${String(output.status)}`);

  // Every conversation: one end, final, a valid history; its events under its own path, none after its end.
  const outcomes = new Map<string, Outcome>();
  const heardBy = new Map<string, Heard[]>();
  for (const entry of heard) {
    if (!conversations.has(entry.key)) violations.push(`an agent.event at ${entry.key || '(empty path)'}, which is no conversation's path`);
    heardBy.set(entry.key, [...(heardBy.get(entry.key) ?? []), entry]);
  }
  const interruptedText = resultTexts.interrupted;
  for (const conversation of conversations.values()) {
    const { key } = conversation;
    const events = heardBy.get(key) ?? [];
    const endsHere = ends.get(key) ?? [];
    if (endsHere.length > 1) violations.push(`${key} ended ${endsHere.length} times`);
    const end = endsHere[0];
    if (events.length > 0 && !end && !result.watchdog) violations.push(`${key} started and never ended`);
    if (end && events.length === 0) violations.push(`${key} ended, and the workflow heard none of its events`);
    if (end) {
      const late = events.filter((entry) => entry.seq > end.seq);
      if (late.length > 0) violations.push(`${key}: ${late.length} event(s) after its end (${late[0]?.event.type})`);
      if (end.error !== undefined || !end.output) violations.push(`${key} failed as an actor: ${String(end.error)}`);
    }
    for (const entry of events)
      if (entry.event.type === 'request.started' && entry.event.model !== conversation.model)
        violations.push(`request.started for model ${String(entry.event.model)} heard at ${key} (its model: ${conversation.model})`);
    const startedHeard = events.filter((entry) => entry.event.type === 'request.started').length + (startedAfterCrash.get(key) ?? 0);
    if (conversation.server.log.length > startedHeard)
      violations.push(`${key}: ${conversation.server.log.length} HTTP requests, ${startedHeard} request.started heard`);
    counts.executions += conversation.executions.size;

    const runOutput = end?.output;
    if (!runOutput) {
      for (const id of conversation.executions.keys())
        if (!end) violations.push(`${key}: call ${id} executed in a conversation that never ended`);
      continue;
    }
    const status = outcomeOf(runOutput);
    outcomes.set(key, status);
    bump(counts.outcomes, status);
    if (!['done', 'halted', 'error'].includes(runOutput.status)) violations.push(`${key}: final status ${String(runOutput.status)}`);
    violations.push(...historyProblems(runOutput.messages).map((problem) => `${key}: ${problem}`));
    const calls = runOutput.messages.flatMap((message) =>
      message.role === 'assistant' ? message.content.flatMap((part) => (part.type === 'tool-call' ? [part] : [])) : [],
    );
    const results = new Map(
      runOutput.messages.flatMap((message) =>
        message.role === 'tool' ? message.content.map((part) => [part.toolCallId, part] as const) : [],
      ),
    );
    const toolResults = events.flatMap((entry) => (entry.event.type === 'tool.result' ? [entry.event.toolCallId] : []));
    for (const call of calls) {
      const times = toolResults.filter((id) => id === call.toolCallId).length;
      // Hosted, a result the crashed host emitted but never stored is given again after the restore.
      if (hosted ? times < 1 || times > 1 + counts.kills : times !== 1)
        violations.push(`${key}: call ${call.toolCallId} got ${times} tool.result events`);
      const text = String(results.get(call.toolCallId)?.result ?? '');
      if (text === interruptedText) {
        counts.interrupted++;
        if (counts.kills === 0) violations.push(`${key}: call ${call.toolCallId} answered as interrupted, with no kill`);
        if (conversation.idempotentTools.has(call.toolName)) violations.push(`${key}: idempotent call ${call.toolCallId} not run again`);
      }
    }
    const callIds = new Set(calls.map((call) => call.toolCallId));
    for (const [id, times] of conversation.executions) {
      // Hosted, an idempotent call runs without a write ahead: a crash before its step was stored leaves it out, and that is its contract.
      if (!callIds.has(id) && !(hosted && conversation.idempotentCalls.has(id)))
        violations.push(`${key}: executed call ${id} is not in the history`);
      const call = calls.find((candidate) => candidate.toolCallId === id);
      const idempotent = call !== undefined && conversation.idempotentTools.has(call.toolName);
      if (times > 1 && idempotent) counts.reruns += times - 1;
      if (times > 1 && !idempotent) violations.push(`${key}: call ${id} (${call?.toolName ?? '?'}) executed ${times} times`);
      if (times > 1 + counts.kills) violations.push(`${key}: call ${id} executed ${times} times with ${counts.kills} kill(s)`);
    }
  }

  // The workflow: its final state is the one the outcomes lead to, its records are the conversations' own.
  if (output) {
    for (const [key, value] of outcomes)
      if (output.outcomes[key] !== value)
        violations.push(`the workflow recorded ${key} as ${String(output.outcomes[key])}, it ended ${value}`);
    for (const key of Object.keys(output.outcomes))
      if (conversations.has(key) && !outcomes.has(key)) violations.push(`the workflow recorded ${key}, which never ended`);
    counts.mostAtOnce = Math.max(counts.mostAtOnce, output.mostAtOnce);
    if (output.mostAtOnce > mapCap) violations.push(`a map ran ${output.mostAtOnce} conversations at once, cap ${mapCap}`);
    if (cancelSent) {
      if (output.status !== 'cancelled') violations.push(`cancel sent to the active workflow, yet it ended ${output.status}`);
      for (const key of cancelSent.running)
        if (outcomes.get(key) !== 'halted/cancelled')
          violations.push(`${key} ran when the workflow was cancelled, yet it ended ${outcomes.get(key)}`);
      for (const [key, events] of heardBy)
        if ((events[0]?.seq ?? 0) > cancelSent.seq) violations.push(`${key} started after the workflow was cancelled`);
    } else {
      if (output.status === 'cancelled') violations.push('the workflow ended cancelled without a cancel');
      const ran = new Set<string>();
      const nestedStatus = new Map<string, WorkflowStatus>();
      const expected = expectedRun(steps, outcomes, ran, nestedStatus);
      if (output.status !== expected) violations.push(`the workflow ended ${output.status}; its steps' outcomes lead to ${expected}`);
      for (const key of ran)
        if (!outcomes.has(key)) violations.push(`${key} should have run (the workflow ended ${output.status}) and did not end`);
      for (const key of outcomes.keys()) if (!ran.has(key)) violations.push(`${key} ran, after the step that ended the workflow`);
      // Only the nested workflows the walk reached are in `nestedStatus`.
      for (const [id, status] of nestedStatus)
        if (output.outcomes[id] !== status)
          violations.push(`nested workflow ${id} recorded as ${String(output.outcomes[id])}; its conversations lead to ${status}`);
    }
  }
  // A map's conversations overlap at most `mapCap` at a time, as the workflow's events show (hosted, a
  // crash rewinds the run to its last stored step, so what the dying host ran is no measure: the
  // workflow's own count, checked above, is).
  for (const step of hosted ? [] : steps) {
    if (step.kind !== 'map') continue;
    const spans = step.conversations.flatMap((placed) => {
      const first = heardBy.get(placed.key)?.[0]?.seq;
      return first === undefined ? [] : [{ from: first, to: ends.get(placed.key)?.[0]?.seq ?? Number.POSITIVE_INFINITY }];
    });
    const most = Math.max(0, ...spans.map((span) => spans.filter((other) => other.from <= span.from && span.from < other.to).length));
    if (most > mapCap) violations.push(`${step.conversations[0]?.id ?? 'a map'}…: ${most} conversations overlapped, cap ${mapCap}`);
  }
  return output?.status;
}
