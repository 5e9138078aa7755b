import { isRecord } from '../../util/is-record.js';
import { freshAttempt } from '../rounds/fresh-attempt.js';
import { errorResult, resultTexts, settleRemaining, toolMessage, toolResult } from '../rounds/tool-round.js';
import type { AnyStateMachine } from 'xstate';
import { agentActorId, agentFinished, agentResult, isRunOutput } from '../rounds/agent-calls.js';
import { migrateSnapshot } from '../snapshots/migrate-snapshot.js';
import { runOutput } from '../rounds/run-context.js';
import { findSnapshotProblem } from '../snapshots/snapshot-problem.js';
import type { ConversationContext, RoundCall } from '../names/types.js';
import { appended } from '../../util/appended.js';

/** What resuming needs to know about the machine's tools. */
export type ResumePolicy = {
  /** Whether a call of this tool that a restart interrupted may run again. */
  isIdempotent: (toolName: string) => boolean;
  /** The machine an agent tool's calls run, to check a stored child against (absent: the child is not checked). */
  agentMachineOf?: (toolName: string) => AnyStateMachine | undefined;
};

type PersistedChild = { snapshot?: unknown } & Record<string, unknown>;

const isState = (value: unknown, name: string) => isRecord(value) && name in value;

/** States whose one actor (a guardrail check, a compaction) is started again by `run.resume`. */
const restartedStates = ['checkingInput', 'checkingOutput', 'compacting'];

/**
 * The persisted snapshot a run resumes from — the resume semantics of a durable run, as a pure
 * function of the stored JSON (the machine's restore path applies it, so a plain
 * `createActor(machine, { snapshot })` resumes the same way as the host does):
 *
 * - No tool execution is restored: XState would restart every active one by itself, running a tool
 *   call again whatever its tool is. The machine decides what runs again when the `run.resume` it
 *   sends itself on start arrives. An agent call's child conversation is restored (it applies
 *   these rules to its own calls) and its call stays running; without its child's snapshot, it is
 *   an interrupted call like any other.
 * - Restored in `requesting`: the response in progress is dropped and the request is made again.
 * - Restored in `checkingInput`, `checkingOutput` or `compacting`: the guardrail check or the
 *   compaction in progress starts again.
 * - Restored in `executingTools`: settled calls keep their results and never run again. A call
 *   that was running goes back to the queue when its tool is `idempotent` (it then runs again, with
 *   a fresh deadline); otherwise it is settled with `resultTexts.interrupted`, and the model decides.
 * - Any other state, and a snapshot that is not an active run, is returned as it is.
 *
 * Applying it twice gives the same result as once (a run restored again before it resumed keeps
 * the calls it had interrupted in `restored.interrupted`).
 *
 * @example
 * ```ts
 * const resumed = resumeSnapshot(JSON.parse(stored), { isIdempotent: (name) => name === 'lookup' });
 * ```
 */
export function resumeSnapshot<T>(persisted: T, policy: ResumePolicy): T {
  if (!isRecord(persisted) || persisted.status !== 'active' || !isRecord(persisted.context)) return persisted;
  const context = persisted.context as unknown as ConversationContext;
  const earlier = Array.isArray(context.restored?.interrupted) ? context.restored.interrupted : [];
  if (isState(persisted.value, 'requesting')) {
    const resumed: ConversationContext = {
      ...context,
      ...freshAttempt,
      restored: { interrupted: earlier },
    };
    return { ...persisted, context: resumed, children: {} } as T;
  }
  // Restored while a guardrail checked or the history was being compacted: that step starts over.
  if (restartedStates.some((state) => persisted.value === state || isState(persisted.value, state))) {
    return { ...persisted, context: { ...context, restored: { interrupted: earlier } }, children: {} } as T;
  }
  if (isState(persisted.value, 'executingTools') && Array.isArray(context.round)) {
    const interrupted = [...earlier];
    let unrestorable: string | undefined;
    const persistedChildren = isRecord(persisted.children) ? persisted.children : {};
    const children: Record<string, unknown> = {};
    let finishedChildren: Pick<ConversationContext, 'usage' | 'agents'> = context;
    const round = context.round.map((call): RoundCall => {
      if (call.state !== 'running') return call;
      // An agent call's child is itself a run: restored with its parent, it resumes where it was
      // (its own calls by these same rules), and its call goes on running with its deadline.
      const agentChild = call.agent ? persistedChildren[agentActorId(call.toolCallId)] : undefined;
      if (agentChild !== undefined) {
        const problem = childProblem(agentChild, policy.agentMachineOf?.(call.toolName));
        if (problem)
          unrestorable ??= `agent call ${call.toolCallId} (${call.toolName}): its child's snapshot cannot be restored (${problem})`;
        // A child that had ended before the snapshot was taken, its caller not yet told: a restored
        // child sends no done event, so its output settles the call here (its result reported on resume).
        const output = isRecord(agentChild) && isRecord(agentChild.snapshot) ? agentChild.snapshot.output : undefined;
        if (isRecord(agentChild) && isRecord(agentChild.snapshot) && agentChild.snapshot.status === 'done' && isRunOutput(output)) {
          finishedChildren = { ...finishedChildren, ...(agentFinished(finishedChildren, call, output).context as object) };
          interrupted.push(call.toolCallId);
          const { deadline: _deadline, ...rest } = call;
          const { text, isError } = agentResult(call.toolName, output);
          return { ...rest, state: 'settled', result: isError ? errorResult(call, text) : toolResult(call, text) };
        }
        children[agentActorId(call.toolCallId)] = agentChild;
        return call;
      }
      const { deadline: _deadline, ...rest } = call;
      if (policy.isIdempotent(call.toolName)) return { ...rest, state: 'queued' };
      interrupted.push(call.toolCallId);
      return { ...rest, state: 'settled', result: errorResult(call, resultTexts.interrupted) };
    });
    if (unrestorable !== undefined) return failedRun(persisted, context, unrestorable) as T;
    const resumed = { ...context, usage: finishedChildren.usage, agents: finishedChildren.agents, round, restored: { interrupted } };
    return { ...persisted, context: resumed, children } as T;
  }
  return persisted;
}

/** Why a stored agent child cannot be restored: a version this actorloop cannot read, or a snapshot that is not its machine's. */
function childProblem(child: unknown, machine: AnyStateMachine | undefined): string | undefined {
  const snapshot = isRecord(child) ? child.snapshot : undefined;
  const migrated = migrateSnapshot(snapshot);
  if (migrated.problem) return migrated.problem.message;
  return machine ? findSnapshotProblem(migrated.snapshot, machine)?.message : undefined;
}

/**
 * A run whose agent child cannot be restored ends in `error`, naming the child: its round is closed
 * (every call answered, so the history stays valid) and nothing runs. The stored data is not
 * touched — this is only what the restored actor starts from.
 */
function failedRun(persisted: Record<string, unknown>, context: ConversationContext, message: string): Record<string, unknown> {
  const messages = context.round
    ? appended(context.messages, toolMessage(settleRemaining(context.round, `Error: ${message}`)))
    : context.messages;
  const failed: ConversationContext = {
    ...context,
    messages,
    round: null,
    response: null,
    retry: { ...context.retry, lastError: { name: 'AgentRestoreError', message, retryable: false, code: 'agent_restore' } },
    outcome: { ...context.outcome, status: 'error' },
  };
  return { ...persisted, value: 'error', status: 'done', children: {}, context: failed, output: runOutput(failed) };
}

/**
 * A persisted snapshot without the copies of the history its child actors hold: each running tool
 * call's and the provider call's input carries the whole `messages` (and `sessionData`), so a round
 * of N calls would write the history N + 1 times. Restoring never needs them ({@link resumeSnapshot}
 * drops the children); what identifies a call (`toolCallId`, `toolName`, `args`) stays.
 *
 * @example
 * ```ts
 * const json = JSON.stringify(compactSnapshot(actor.getPersistedSnapshot()));
 * ```
 */
export function compactSnapshot<T>(persisted: T): T {
  if (!isRecord(persisted) || !isRecord(persisted.children)) return persisted;
  let children: Record<string, unknown> | undefined;
  for (const [id, child] of Object.entries(persisted.children)) {
    const snapshot = isRecord(child) ? (child as PersistedChild).snapshot : undefined;
    if (!isRecord(snapshot) || !isRecord(snapshot.input) || !('messages' in snapshot.input || 'sessionData' in snapshot.input)) continue;
    const { messages: _messages, sessionData: _sessionData, ...input } = snapshot.input;
    children ??= { ...persisted.children };
    children[id] = { ...(child as PersistedChild), snapshot: { ...snapshot, input } };
  }
  return children ? ({ ...persisted, children } as T) : persisted;
}
