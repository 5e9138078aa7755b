/**
 * One property run over an agent tree: a random tree of conversation machines (each with its own
 * scripted model: answers, tool calls, agent calls, retryable and fatal provider errors, a request
 * that hangs until aborted), random tools (ok, throwing, `HaltError`, hanging, needing approval),
 * random limits (iterations, retries, concurrency, the agent calls' timeouts, `maxAgentDepth`,
 * `onChildFailure`), approvals decided at the root, and a cancel at a random moment. Afterwards every
 * guarantee is checked at every level of the tree: the run ends in `done`, `halted` or `error`;
 * nothing escapes; every child that started finished; every history (the root's and each child's)
 * answers each call once, in order; the usage split adds up to the tree's; nothing is left running.
 * Shared by `test/agent-tree-properties.test.ts` and `npm run test:soak` (`--tree-runs`).
 *
 * @example
 * ```ts
 * const [treeCase] = fc.sample(treeCaseArb, { seed: 1, numRuns: 1 });
 * const report = await runTreeCase(treeCase!);
 * report.violations; // [] when every property held
 * ```
 */
import fc from 'fast-check';
import { createActor, toPromise } from 'xstate';
import { agentTool } from '../../src/machines/agents/agent-tool.js';
import { createConversationMachine } from '../../src/machines/chart/conversation.js';
import type { ConversationEmittedEvent, RunOutput } from '../../src/machines/names/types.js';
import type { HandlerRequest } from '../../src/providers/handler/handler-provider.js';
import { handlerProvider } from '../../src/providers/handler/handler-provider.js';
import { defineTool, type Tool } from '../../src/tools/define-tool.js';
import { HaltError } from '../../src/tools/halt-error.js';
import { historyProblems } from './property-run.js';
import { turnChunks } from './scripted-model.js';

const toolKinds = ['ok', 'throws', 'halts', 'hangs', 'approval'] as const;
type TreeToolKind = (typeof toolKinds)[number];

/** One answer of a node's model. `call` indexes into the node's tools, then its agents (modulo their count). */
type TreeTurn = { kind: 'text' } | { kind: 'calls'; calls: number[] } | { kind: 'fail'; status: 401 | 503 } | { kind: 'hang' };

export type TreeNode = {
  turns: TreeTurn[];
  tools: TreeToolKind[];
  children: TreeNode[];
  onChildFailure: Array<'result' | 'halt'>;
  /** The agent calls' timeout (each child's), or the default. */
  childTimeoutMs: number | undefined;
  maxToolIterations: number;
  maxRetries: number;
  maxConcurrentTools: number | undefined;
  maxAgentDepth: number | undefined;
};

export type TreeCase = {
  root: TreeNode;
  /** Decisions for approval requests, in order (then approve). */
  approvals: Array<'approve' | 'deny'>;
  cancelAfterMs: number | undefined;
};

const turnArb: fc.Arbitrary<TreeTurn> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'text' as const }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('calls' as const), calls: fc.array(fc.nat(5), { minLength: 1, maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fail' as const), status: fc.constantFrom(401 as const, 503 as const) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'hang' as const }) },
);

const nodeArb = (depth: number): fc.Arbitrary<TreeNode> =>
  fc.record({
    turns: fc.array(turnArb, { minLength: 1, maxLength: 5 }),
    tools: fc.array(fc.constantFrom(...toolKinds), { maxLength: 3 }),
    children:
      depth >= 3 ? fc.constant([]) : fc.array(nodeArb(depth + 1), { minLength: depth === 0 ? 1 : 0, maxLength: depth === 0 ? 2 : 1 }),
    onChildFailure: fc.array(fc.constantFrom('result' as const, 'halt' as const), { minLength: 2, maxLength: 2 }),
    childTimeoutMs: fc.option(fc.integer({ min: 30, max: 400 }), { nil: undefined }),
    maxToolIterations: fc.integer({ min: depth === 0 ? 1 : 0, max: 3 }),
    maxRetries: fc.integer({ min: 0, max: 2 }),
    maxConcurrentTools: fc.option(fc.integer({ min: 1, max: 2 }), { nil: undefined }),
    maxAgentDepth: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
  });

/** Random agent trees, up to depth 3. */
export const treeCaseArb: fc.Arbitrary<TreeCase> = fc.record({
  root: nodeArb(0),
  approvals: fc.array(fc.constantFrom('approve' as const, 'deny' as const), { maxLength: 6 }),
  cancelAfterMs: fc.option(fc.integer({ min: 0, max: 300 }), { nil: undefined }),
});

export type TreeReport = {
  violations: string[];
  output: RunOutput | undefined;
  /** Agent calls that started, at any depth. */
  agents: number;
  /** Deepest agent call (1: the root's children). */
  depth: number;
  durationMs: number;
};

type Tracker = { hanging: Set<AbortSignal>; aborted: number };

const waitForAbort = (signal: AbortSignal) =>
  new Promise<never>((_resolve, reject) => {
    const fail = () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });

function makeTool(kind: TreeToolKind, index: number, tracker: Tracker): Tool {
  return defineTool({
    name: `${kind}_${index}`,
    description: `a ${kind} tool`,
    parameters: { type: 'object', properties: { n: { type: 'number' } } },
    needsApproval: kind === 'approval',
    execute: async (_args, { signal }) => {
      if (kind === 'throws') throw new Error('the tool threw');
      if (kind === 'halts') throw new HaltError('the tool halted the run');
      if (kind === 'hangs') {
        tracker.hanging.add(signal);
        signal.addEventListener('abort', () => tracker.aborted++, { once: true });
        // Bounded: a tool that outlives every timeout still ends, so the process drains.
        await Promise.race([waitForAbort(signal), new Promise((resolve) => setTimeout(resolve, 1_500))]);
        return 'woke up';
      }
      return `ok ${kind}`;
    },
  }) as unknown as Tool;
}

/** A node's model: its turns in order, shared by every run of the node's machine; then text. */
function nodeModel(node: TreeNode, tools: string[], agents: string[]) {
  // Odd numbers call an agent when the node has one, so trees grow deep often enough.
  const pick = (call: number) =>
    agents.length > 0 && (call % 2 === 1 || tools.length === 0)
      ? (agents[Math.floor(call / 2) % agents.length] as string)
      : (tools[call % tools.length] as string);
  let next = 0;
  let serial = 0;
  return handlerProvider(async function* (request: HandlerRequest) {
    const turn = node.turns[next++] ?? { kind: 'text' as const };
    if (turn.kind === 'fail') throw Object.assign(new Error(`scripted ${turn.status}`), { status: turn.status });
    if (turn.kind === 'hang') {
      await waitForAbort(request.signal);
      return;
    }
    if (turn.kind === 'calls' && tools.length + agents.length > 0) {
      yield* turnChunks({
        toolCalls: turn.calls.map((call) => {
          const name = pick(call);
          const id = `t${++serial}_${Math.random().toString(36).slice(2, 8)}`;
          return { id, name, args: name.startsWith('agent_') ? { prompt: 'help' } : { n: call } };
        }),
      });
      return;
    }
    yield* turnChunks({ text: 'an answer' });
  });
}

function buildMachine(node: TreeNode, path: string, tracker: Tracker): ReturnType<typeof createConversationMachine> {
  const tools = node.tools.map((kind, index) => makeTool(kind, index, tracker));
  const agents = node.children.map((child, index) =>
    agentTool(buildMachine(child, `${path}.${index}`, tracker), {
      name: `agent_${index}`,
      onChildFailure: node.onChildFailure[index] ?? 'result',
      ...(node.childTimeoutMs === undefined ? {} : { timeoutMs: node.childTimeoutMs }),
    }),
  );
  return createConversationMachine({
    provider: nodeModel(
      node,
      tools.map((tool) => tool.name),
      agents.map((tool) => tool.name),
    ),
    tools: [...tools, ...agents] as never,
    name: `node${path}`,
    maxToolIterations: node.maxToolIterations,
    retry: node.maxRetries === 0 ? false : { maxRetries: node.maxRetries, initialDelayMs: 1, maxDelayMs: 4, jitter: false },
    requestTimeoutMs: 500,
    toolTimeoutMs: 600,
    ...(node.maxConcurrentTools === undefined ? {} : { maxConcurrentTools: node.maxConcurrentTools }),
    ...(node.maxAgentDepth === undefined ? {} : { maxAgentDepth: node.maxAgentDepth }),
  });
}

const finalStatuses = new Set(['done', 'halted', 'error']);
const usageTotal = (usage: { totalTokens: number }) => usage.totalTokens;

/** The event at the end of an `agent.event` chain, with its full path. */
function leaf(event: ConversationEmittedEvent, path: string[] = []): { path: string[]; event: ConversationEmittedEvent } {
  return event.type === 'agent.event' ? leaf(event.event, [...path, ...event.path]) : { path, event };
}

/** Plays one tree case; returns the violations (never throws for one). */
export async function runTreeCase(treeCase: TreeCase, options: { watchdogMs?: number } = {}): Promise<TreeReport> {
  const started = performance.now();
  const violations: string[] = [];
  const tracker: Tracker = { hanging: new Set(), aborted: 0 };
  const machine = buildMachine(treeCase.root, '', tracker);
  const actor = createActor(machine, { input: { messages: [] } });
  const events: ConversationEmittedEvent[] = [];
  let approvalIndex = 0;
  actor.on('*', (event) => {
    events.push(event as ConversationEmittedEvent);
    if (event.type === 'tool.approval.requested') {
      const decision = treeCase.approvals[approvalIndex++] ?? 'approve';
      // Decided after the current step, as a person (or a host) would.
      setTimeout(() => {
        if (decision === 'approve') actor.send({ type: 'tool.approve', toolCallId: event.toolCallId });
        else actor.send({ type: 'tool.deny', toolCallId: event.toolCallId, reason: 'tree test says no' });
      }, 0);
    }
  });
  const timers: Array<ReturnType<typeof setTimeout>> = [];
  let watchdogFired = false;
  timers.push(
    setTimeout(() => {
      watchdogFired = true;
      actor.stop();
    }, options.watchdogMs ?? 15_000),
  );
  actor.start();
  if (treeCase.cancelAfterMs !== undefined) {
    timers.push(setTimeout(() => actor.send({ type: 'cancel', reason: 'tree test cancels' }), treeCase.cancelAfterMs));
  }
  actor.send({ type: 'user.message', content: 'Work with your agents.' });
  let output: RunOutput | undefined;
  try {
    output = (await toPromise(actor)) as RunOutput;
  } catch (error) {
    violations.push(`toPromise rejected: ${String(error)}`);
  }
  for (const timer of timers) clearTimeout(timer);
  if (watchdogFired) violations.push(`the tree did not finish (state ${JSON.stringify(actor.getSnapshot().value)})`);
  const snapshot = actor.getSnapshot();
  if (Object.keys(snapshot.children).length > 0) violations.push(`children left: ${Object.keys(snapshot.children).join(', ')}`);

  // Every level: each child that started finished, with a final status and a valid history.
  const startedAgents = new Map<string, number>();
  const finishedAgents = new Map<string, number>();
  let depth = 0;
  for (const event of events) {
    const { path, event: inner } = leaf(event);
    if (inner.type === 'agent.started' || inner.type === 'agent.finished') {
      const key = [...path, inner.toolCallId].join('/');
      const counts = inner.type === 'agent.started' ? startedAgents : finishedAgents;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      depth = Math.max(depth, path.length + 1);
    }
    if (inner.type === 'agent.finished') {
      if (!finalStatuses.has(inner.output.status)) violations.push(`child ${path.join('/')}: final status ${inner.output.status}`);
      for (const problem of historyProblems(inner.output.messages))
        violations.push(`child ${[...path, inner.toolCallId].join('/')}: ${problem}`);
    }
  }
  for (const [key, count] of startedAgents) {
    if (count !== 1) violations.push(`agent call ${key} started ${count} times`);
    if (finishedAgents.get(key) !== 1) violations.push(`agent call ${key} started and finished ${finishedAgents.get(key) ?? 0} times`);
  }
  for (const key of finishedAgents.keys()) if (!startedAgents.has(key)) violations.push(`agent call ${key} finished without starting`);

  if (output) {
    if (!finalStatuses.has(output.status)) violations.push(`final status ${String(output.status)}`);
    violations.push(...historyProblems(output.messages).map((problem) => `root: ${problem}`));
    if (output.usageByAgent) {
      const split = output.usageByAgent.reduce((sum, entry) => sum + usageTotal(entry.usage), 0);
      if (split !== usageTotal(output.usage)) violations.push(`usageByAgent adds up to ${split}, usage says ${usageTotal(output.usage)}`);
      if (output.usageByAgent.some((entry) => entry.usage.totalTokens < 0)) violations.push('a negative usage share');
    }
    // A cancelled or halted tree aborts what its children had running: no hanging tool outlives it.
    if (output.status !== 'done') {
      await new Promise((resolve) => setTimeout(resolve, 0));
      const stillHanging = [...tracker.hanging].filter((signal) => !signal.aborted).length;
      if (stillHanging > 0 && output.reason === 'cancelled') violations.push(`${stillHanging} hanging tool(s) not aborted after cancel`);
    }
  }
  return { violations, output, agents: startedAgents.size, depth, durationMs: performance.now() - started };
}
