/**
 * Check 2 of `verifyWorkflow`: every conversation a workflow invokes or spawns has each of its
 * outcomes taken by a transition. A conversation ends `done`, `halted` or `error` (its `RunOutput`),
 * always through `onDone`; an actor error (its input function threw, say) comes through `onError`.
 *
 * XState itself decides: the machine is put in each state where the conversation's events can
 * arrive (`machine.resolveState`, with the context the machine starts with) and asked whether it
 * takes a synthetic `xstate.done.actor.<id>` of each outcome (`snapshot.can`), so guards — named
 * ones, inline functions, `and` / `or` / `not`, `stateIn` — and transitions of ancestors, of other
 * regions and on wildcards count exactly as they would in a run. `halted` is tried with every
 * `HaltReason`, so a guard on one reason leaves the others unhandled, as it would.
 */
import { type AnyMachineSnapshot, type AnyStateMachine, type AnyStateNode, initialTransition, pathToStateValue } from 'xstate';
import { isConversationMachine } from '../names/conversation-mark.js';
import type { HaltReason, RunOutput } from '../names/types.js';
import {
  allNodes,
  builtInOf,
  invokesOf,
  leavesOf,
  logicOfInvoke,
  logicOfSource,
  placedActions,
  stateName,
  transitionsOf,
} from './chart-nodes.js';
import { computedActorId } from './sent-events.js';
import type { WorkflowProblem } from './workflow-problem.js';

/** Every reason a run halts for: `satisfies` keeps the list whole when `HaltReason` grows. */
const haltReasons = Object.keys({
  max_iterations: true,
  tool_halt: true,
  doom_loop: true,
  cancelled: true,
  agent_failed: true,
  budget: true,
  guardrail: true,
} satisfies Record<HaltReason, true>) as HaltReason[];

type Outcome = { status: RunOutput['status']; reason?: HaltReason; output: RunOutput };

const noUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };

/** One synthetic `RunOutput` per outcome a conversation can end with. */
const outcomes: readonly Outcome[] = [
  { status: 'done', output: { status: 'done', text: 'verifyWorkflow: a done run', messages: [], iterations: 0, usage: noUsage } },
  ...haltReasons.map((reason) => ({
    status: 'halted' as const,
    reason,
    output: { status: 'halted' as const, reason, text: '', messages: [], iterations: 0, usage: noUsage },
  })),
  {
    status: 'error',
    output: {
      status: 'error',
      text: '',
      messages: [],
      iterations: 0,
      usage: noUsage,
      error: { name: 'ProviderError', message: 'verifyWorkflow: a failed run', retryable: false, code: 'server_error' },
    },
  },
];

/** A conversation the workflow starts: where its events are checked, under which actor id, and how it was started. */
type ConversationUse = { node: AnyStateNode; actorId: string | undefined; started: 'invoked' | 'spawned'; hasOnDone?: boolean };

function conversationUses(machine: AnyStateMachine): ConversationUse[] {
  const uses: ConversationUse[] = [];
  for (const node of allNodes(machine)) {
    invokesOf(node).forEach((invoke, index) => {
      if (!isConversationMachine(logicOfInvoke(machine, node, index))) return;
      uses.push({ node, actorId: invoke.id, started: 'invoked', hasOnDone: invoke.onDone !== undefined });
    });
  }
  for (const { action, lands } of placedActions(machine)) {
    const spawn = builtInOf(action, 'xstate.spawnChild');
    if (!spawn || !isConversationMachine(logicOfSource(machine, spawn.src))) continue;
    const actorId = typeof spawn.id === 'string' ? spawn.id : undefined;
    for (const node of lands) uses.push({ node, actorId, started: 'spawned' });
  }
  return uses;
}

type Verdict = { taken: boolean; threw?: unknown };

/** Asks XState whether the machine, in `leaf`, takes `event`; a guard that throws takes nothing (and is reported). */
function takes(snapshot: AnyMachineSnapshot, event: { type: string }): Verdict {
  try {
    return { taken: snapshot.can(event) };
  } catch (error) {
    return { taken: false, threw: error };
  }
}

function describeOutcomes(missing: readonly Outcome[]): string {
  const statuses: string[] = [];
  for (const status of ['done', 'halted', 'error'] as const) {
    const of = missing.filter((outcome) => outcome.status === status);
    if (of.length === 0) continue;
    if (status !== 'halted' || of.length === haltReasons.length) statuses.push(`'${status}'`);
    else statuses.push(`'halted' (reason ${of.map((outcome) => `'${outcome.reason}'`).join(', ')})`);
  }
  if (statuses.length <= 1) return statuses.join('');
  return `${statuses.slice(0, -1).join(', ')} and ${statuses.at(-1)}`;
}

function describeThrow(threw: unknown): string {
  // XState wraps a guard's error in one naming the guard, the event and the state, its message on a second line.
  const text = threw instanceof Error ? threw.message.replace(/\s*\n\s*/g, ' ') : String(threw);
  return ` (a guard threw: ${text} — given \`input\`, verifyWorkflow builds the machine's initial context from it)`;
}

function describeUse(use: ConversationUse): string {
  if (use.actorId === undefined) return 'the conversation spawned here without a fixed id';
  return `the conversation ${use.started} here as '${use.actorId}'`;
}

/**
 * The conversations whose outcomes (`unhandled-outcome`) or actor errors (`unhandled-error`) no
 * transition takes, in the states where they run. `input` is the machine's input, to build the
 * context guards are evaluated with.
 */
export function conversationOutcomeProblems(machine: AnyStateMachine, input: unknown): WorkflowProblem[] {
  const uses = conversationUses(machine);
  if (uses.length === 0) return [];
  const context = initialContext(machine, input);
  const snapshots = new Map<AnyStateNode, AnyMachineSnapshot>();
  const snapshotIn = (leaf: AnyStateNode) => {
    let snapshot = snapshots.get(leaf);
    if (snapshot === undefined) {
      snapshot = machine.resolveState({ value: pathToStateValue(leaf.path), context }) as AnyMachineSnapshot;
      snapshots.set(leaf, snapshot);
    }
    return snapshot;
  };
  const problems: WorkflowProblem[] = [];
  const seen = new Set<string>();
  for (const use of uses) {
    const id = use.actorId ?? computedActorId;
    // Once the machine is in one of its own final states it is done, and its actors are stopped: nothing arrives there.
    const leaves = leavesOf(use.node).filter((leaf) => !(leaf.type === 'final' && leaf.parent === machine.root));
    if (leaves.length === 0) continue;
    const add = (problem: WorkflowProblem) => {
      const key = `${problem.state}\u0000${problem.kind}\u0000${problem.message}`;
      if (!seen.has(key)) problems.push(problem);
      seen.add(key);
    };

    // Outcomes, leaf by leaf: a child state may take an outcome its parent's onDone leaves out, or the other way round.
    const missingByLeaf = leaves.map((leaf) => {
      let threw: unknown;
      const missing = outcomes.filter((outcome) => {
        const verdict = takes(snapshotIn(leaf), { type: `xstate.done.actor.${id}`, output: outcome.output, actorId: id } as {
          type: string;
        });
        if (verdict.threw !== undefined) threw ??= verdict.threw;
        return !verdict.taken;
      });
      return { leaf, missing, threw };
    });
    // The same outcomes left out in every state under the invoking one: one problem, named by that state.
    const same = missingByLeaf.every(({ missing }) => describeOutcomes(missing) === describeOutcomes(missingByLeaf[0]?.missing ?? []));
    for (const { leaf, missing, threw } of same ? missingByLeaf.slice(0, 1) : missingByLeaf) {
      if (missing.length === 0) continue;
      const state = same ? use.node : leaf;
      const nothing = use.started === 'invoked' && use.hasOnDone === false;
      const message = nothing
        ? `${describeUse(use)} has no onDone: no transition takes its outcomes ${describeOutcomes(missing)}`
        : `${describeUse(use)} can end ${describeOutcomes(missing)}, and no transition takes ${missing.length === 1 ? 'it' : 'them'}${use.actorId === undefined ? ' (only an xstate.done.actor.* transition can take the events of an actor with a computed id)' : ''}${threw === undefined ? '' : describeThrow(threw)}`;
      add({ state: stateName(state), kind: 'unhandled-outcome', message });
    }

    // An actor error: anything that fails the conversation's actor rather than its run.
    const errorEvent = { type: `xstate.error.actor.${id}`, error: new Error('verifyWorkflow: an actor error'), actorId: id };
    const errorVerdicts = leaves.map((leaf) => ({ leaf, verdict: takes(snapshotIn(leaf), errorEvent) }));
    const untaken = errorVerdicts.filter(({ verdict }) => !verdict.taken);
    const everywhere = untaken.length === leaves.length;
    for (const { leaf, verdict } of everywhere ? untaken.slice(0, 1) : untaken) {
      const state = everywhere ? use.node : leaf;
      const handlers = transitionsOf(use.node).some((transition) => transition.eventType === errorEvent.type);
      const what = handlers ? 'no transition of its onError takes an actor error' : 'has no onError';
      add({
        state: stateName(state),
        kind: 'unhandled-error',
        message: `${describeUse(use)} ${what}: if its actor fails (its input function throws, say), XState fails the whole workflow with it${verdict.threw === undefined ? '' : describeThrow(verdict.threw)}`,
      });
    }
  }
  return problems;
}

/** The context the machine starts with, for guards to read; `{}` when it cannot be made (its input is missing, say). */
function initialContext(machine: AnyStateMachine, input: unknown): unknown {
  try {
    const [snapshot] = initialTransition(machine, input);
    return snapshot.context ?? {};
  } catch {
    return {};
  }
}
