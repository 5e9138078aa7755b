import type { AnyStateMachine } from 'xstate';
import type { ConversationStateValue } from '../machines/hostable.js';
import type { Message } from '../model/messages.js';
import { addUsage, emptyUsage, type Usage } from '../model/usage.js';
import { isRecord } from '../util/is-record.js';
import type { ConversationStatus } from './conversation-status.js';
import { type ConversationView, pendingApprovalsOf, type RunState, statusOf, type WorkflowConversation } from './conversation-view.js';
import { changesStoredState, type StoredShape, stateKeyOf, storedShapeOf } from './stored-state.js';

/**
 * What a cancelled workflow ends with: `host.send(id, { type: 'cancel' })` to a workflow whose own
 * chart takes no `cancel` stops every conversation in it and ends it `halted` with this output.
 *
 * @example
 * ```ts
 * const output = await host.result('wf-1');
 * if (isRecord(output) && output.status === 'halted') console.log(output.message);
 * ```
 */
export type WorkflowHaltedOutput = { status: 'halted'; reason: 'cancelled'; message: string };

/** A snapshot of any machine, live (children are actors) or as stored (children hold their persisted snapshots). */
type AnySnapshot = { status?: unknown; value?: unknown; context?: unknown; children?: unknown; output?: unknown };

/** The snapshot of a child: an actor's (live) or the persisted one a stored parent holds. */
function snapshotOfChild(child: unknown): AnySnapshot | undefined {
  if (!isRecord(child)) return undefined;
  const snapshot = typeof child.getSnapshot === 'function' ? (child.getSnapshot as () => unknown)() : child.snapshot;
  return isRecord(snapshot) ? (snapshot as AnySnapshot) : undefined;
}

/** A conversation machine's snapshot, told by its context (the same test for a live actor and a stored one). */
function isConversationSnapshot(snapshot: AnySnapshot): snapshot is AnySnapshot & RunState {
  const context = snapshot.context;
  return isRecord(context) && Array.isArray(context.messages) && 'round' in context && isRecord(context.outcome);
}

/** A state machine's snapshot (a nested workflow), not a promise's or a callback's. */
const isMachineSnapshot = (snapshot: AnySnapshot) => 'value' in snapshot && isRecord(snapshot.children);

function childrenOf(snapshot: AnySnapshot): Array<[string, AnySnapshot]> {
  const children = snapshot.children;
  if (!isRecord(children)) return [];
  const found: Array<[string, AnySnapshot]> = [];
  for (const id of Object.keys(children)) {
    const child = snapshotOfChild(children[id]);
    if (child) found.push([id, child]);
  }
  return found;
}

/**
 * The conversations a workflow runs now, in nested workflows too: a conversation's own agent tree
 * is its own (its approvals are listed with it), finished conversations have left the tree.
 */
export function workflowConversations(snapshot: AnySnapshot, path: string[] = []): WorkflowConversation[] {
  const found: WorkflowConversation[] = [];
  for (const [id, child] of childrenOf(snapshot)) {
    const childPath = [...path, id];
    if (isConversationSnapshot(child)) {
      if (child.status !== 'active') continue;
      found.push({
        path: childPath,
        status: statusOf(child),
        value: child.value as ConversationStateValue,
        messages: child.context.messages,
        usage: child.context.usage ?? emptyUsage(),
        pendingApprovals: pendingApprovalsOf(child.context).map((approval) => ({
          ...approval,
          path: [...childPath, ...(approval.path ?? [])],
        })),
      });
    } else if (isMachineSnapshot(child)) found.push(...workflowConversations(child, childPath));
  }
  return found;
}

/** A workflow's output that says it did not end well (`{ status: 'halted' | 'error' }`), as a conversation's does. */
function outcomeOf(output: unknown): ConversationStatus {
  return isRecord(output) && (output.status === 'halted' || output.status === 'error') ? output.status : 'done';
}

/**
 * Where a hosted workflow stands: `running` until its machine reaches a final state, then `done`
 * (or `halted` / `error` when its output's `status` says so); `error` when the machine itself
 * failed; `awaitingApproval` while a conversation in it waits for one.
 *
 * @example
 * ```ts
 * workflowStatusOf({ status: 'done', value: 'published', output: { status: 'done' } }); // 'done'
 * ```
 */
export function workflowStatusOf(snapshot: AnySnapshot): ConversationStatus {
  if (snapshot.status === 'error') return 'error';
  if (snapshot.status === 'done') return outcomeOf(snapshot.output);
  if (snapshot.status === 'stopped') return 'halted';
  return workflowConversations(snapshot).some((conversation) => conversation.pendingApprovals.length > 0) ? 'awaitingApproval' : 'running';
}

/** The view of a workflow's state (`messages`: its context's, when it keeps a history; else none). */
export function workflowViewOf(id: string, snapshot: AnySnapshot, updatedAt: number, seq?: number): ConversationView {
  const conversations = workflowConversations(snapshot);
  const status = snapshot.status === 'active' ? statusFrom(conversations) : workflowStatusOf(snapshot);
  const context = snapshot.context;
  const messages = isRecord(context) && Array.isArray(context.messages) ? (context.messages as Message[]) : [];
  return {
    id,
    status,
    value: snapshot.value as ConversationStateValue,
    messages,
    pendingApprovals: conversations.flatMap((conversation) => conversation.pendingApprovals),
    // A workflow that counts its own (withBudget) has every conversation's, finished ones too.
    usage: isUsage(isRecord(context) ? context.usage : undefined)
      ? (context as { usage: Usage }).usage
      : conversations.reduce((total, conversation) => addUsage(total, conversation.usage), emptyUsage()),
    updatedAt,
    ...(seq === undefined ? {} : { seq }),
    conversations,
    ...(snapshot.status === 'done' ? { output: snapshot.output } : {}),
  };
}

const isUsage = (value: unknown): value is Usage =>
  isRecord(value) && typeof value.totalTokens === 'number' && typeof value.inputTokens === 'number';

const statusFrom = (conversations: WorkflowConversation[]): ConversationStatus =>
  conversations.some((conversation) => conversation.pendingApprovals.length > 0) ? 'awaitingApproval' : 'running';

/** What of a workflow's snapshot a store must see change: its state, its context, and each child's own shape. */
export type WorkflowShape = {
  value: string;
  status: unknown;
  context: unknown;
  children: Array<readonly [string, StoredShape | WorkflowShape | string]>;
};

/**
 * The workflow's shape. Its context is compared by identity (XState makes a new one only when an
 * action assigns); a conversation in it by its stored shape — what is written for a conversation
 * alone is written for one inside a workflow, no more (streamed deltas are not).
 */
export function workflowShapeOf(snapshot: AnySnapshot): WorkflowShape {
  return {
    value: stateKeyOf(snapshot.value),
    status: snapshot.status,
    context: snapshot.context,
    children: childrenOf(snapshot).map(([id, child]) => {
      if (isConversationSnapshot(child)) return [id, storedShapeOf(child as Parameters<typeof storedShapeOf>[0])] as const;
      if (isMachineSnapshot(child)) return [id, workflowShapeOf(child)] as const;
      return [id, String(child.status)] as const;
    }),
  };
}

/** Whether the workflow's snapshot must be written. */
export function workflowChanged(previous: WorkflowShape, next: WorkflowShape): boolean {
  if (previous.value !== next.value || previous.status !== next.status || previous.context !== next.context) return true;
  if (previous.children.length !== next.children.length) return true;
  return next.children.some(([id, shape], index) => {
    const [previousId, previousShape] = previous.children[index] as (typeof previous.children)[number];
    if (id !== previousId) return true;
    if (typeof shape === 'string' || typeof previousShape === 'string') return shape !== previousShape;
    if ('children' in shape && 'children' in previousShape) return workflowChanged(previousShape, shape);
    if ('children' in shape || 'children' in previousShape) return true;
    return changesStoredState(previousShape as StoredShape, shape as StoredShape);
  });
}

/**
 * Where a `tool.approve` / `tool.deny` for `toolCallId` goes: the path of the conversation (from
 * the workflow down) whose run, or agent tree, waits for it; `undefined` when none does.
 */
export function approvalHolder(snapshot: AnySnapshot, toolCallId: string): string[] | undefined {
  return workflowConversations(snapshot).find((conversation) =>
    conversation.pendingApprovals.some((approval) => approval.toolCallId === toolCallId),
  )?.path;
}

/** The persisted snapshot of a workflow that `cancel` ended: final, `halted`, with nothing left running in it. */
export function haltedSnapshot(persisted: unknown, reason: string | undefined): Record<string, unknown> {
  const output: WorkflowHaltedOutput = {
    status: 'halted',
    reason: 'cancelled',
    message: reason ?? 'cancelled: every conversation in the workflow was stopped',
  };
  return { ...(isRecord(persisted) ? persisted : {}), status: 'done', output, children: {} };
}

/** What is wrong with a stored workflow snapshot for `machine`, if anything (another machine's names other states). */
export function findWorkflowProblem(
  snapshot: unknown,
  machine: AnyStateMachine,
): { kind: 'corrupt' | 'other_machine'; message: string } | undefined {
  if (!isRecord(snapshot)) return { kind: 'corrupt', message: 'the snapshot is not an object' };
  if (!['active', 'done', 'error', 'stopped'].includes(snapshot.status as string)) {
    const message = `its status ${JSON.stringify(snapshot.status)} is not a snapshot status (active, done, error, stopped)`;
    return { kind: 'corrupt', message };
  }
  if (snapshot.children !== undefined && !isRecord(snapshot.children))
    return { kind: 'corrupt', message: 'its children are not an object' };
  try {
    machine.resolveState({ value: snapshot.value as never, context: snapshot.context as never });
  } catch (error) {
    const message = `its state ${JSON.stringify(snapshot.value)} is not one of machine ${JSON.stringify(machine.id)} (${(error as Error).message})`;
    return { kind: 'other_machine', message };
  }
  return undefined;
}
