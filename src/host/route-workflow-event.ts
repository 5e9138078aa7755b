import type { AnyActorRef } from 'xstate';
import { isBudgetedWorkflow } from '../machines/hostable.js';
import { approvalHolder } from './workflow-state.js';

/**
 * Where a caller's event goes in a running workflow: `send` to that actor (an approval to the
 * conversation that holds the call, anything else the chart takes to the workflow), `halt` for a
 * `cancel` the chart does not handle (the whole workflow ends), or `refused` saying why not.
 */
export type WorkflowRoute = { send: AnyActorRef } | { halt: true } | { refused: string };

/**
 * Routes a caller's event into a workflow as the host does (and the viewer, for a workflow actor it
 * watches): an approval where it is waited for (the conversation `pendingApprovals` names by its
 * path), a `cancel` the chart does not handle as the end of the whole workflow, any other event
 * when the chart takes it now.
 *
 * @example
 * ```ts
 * const route = routeWorkflowEvent(actor, { type: 'tool.approve', toolCallId: 'call_1' });
 * if ('send' in route) route.send.send(event);
 * ```
 */
export function routeWorkflowEvent(actor: AnyActorRef, event: { type: string; toolCallId?: unknown }): WorkflowRoute {
  if (event.type === 'tool.approve' || event.type === 'tool.deny') {
    const toolCallId = String(event.toolCallId);
    const path = approvalHolder(actor.getSnapshot(), toolCallId);
    const holder = path && actorAt(actor, path);
    if (holder) return { send: holder };
    if (takes(actor, event)) return { send: actor };
    return { refused: `no call ${JSON.stringify(toolCallId)} waits for approval in the workflow (pendingApprovals lists those that do)` };
  }
  if (event.type === 'cancel' && !takes(actor, event)) return { halt: true };
  if (!takes(actor, event)) {
    const value = (actor.getSnapshot() as { value?: unknown }).value;
    return {
      refused: `the workflow in state ${JSON.stringify(value)} does not take ${event.type} (its chart has no transition for it now)`,
    };
  }
  return { send: actor };
}

/** Whether the workflow takes `event` now: its chart — for one `withBudget` wraps, the chart inside, where the event goes. */
function takes(actor: AnyActorRef, event: { type: string }): boolean {
  const snapshot = actor.getSnapshot() as { can: (event: { type: string }) => boolean; children: Record<string, AnyActorRef | undefined> };
  if (!snapshot.can(event)) return false;
  if (!isBudgetedWorkflow((actor as { logic?: unknown }).logic)) return true;
  const inner = snapshot.children.workflow;
  return inner !== undefined && takes(inner, event);
}

/** The actor at `path` below `root` (invoke and spawn ids), if it is still there. */
export function actorAt(root: AnyActorRef, path: readonly string[]): AnyActorRef | undefined {
  let actor: AnyActorRef | undefined = root;
  for (const id of path) actor = (actor?.getSnapshot() as { children?: Record<string, AnyActorRef> } | undefined)?.children?.[id];
  return actor;
}
