import type { AnyStateMachine } from 'xstate';
import { isConversationMachine } from '../machines/hostable.js';
import type { ConversationStatus } from './conversation-status.js';
import type { StoredConversation } from './conversation-store.js';
import { type ConversationView, type RunState, statusOf, viewOf } from './conversation-view.js';
import { decodeStored, decodeStoredWorkflow } from './decode-stored.js';
import { changesStoredState, type StoredShape, storedShapeOf } from './stored-state.js';
import { type WorkflowShape, workflowChanged, workflowShapeOf, workflowStatusOf, workflowViewOf } from './workflow-state.js';

/** A snapshot as the host reads it, live or decoded from the store. */
export type HostedSnapshot = { status: string; value: unknown; context: unknown; output?: unknown; children?: unknown };

/**
 * What the host needs of the machine it runs — the one place it tells a conversation machine from a
 * workflow (any other machine): how a snapshot reads as a status and a view, what of it must be
 * stored when it changes, and how a stored one is checked. Everything else the host does (writes,
 * leases, streams, history) is the same for both.
 */
export type HostedMachine = {
  readonly machine: AnyStateMachine;
  /** Not a conversation machine: started with `host.start`, kept in memory until it ends. */
  readonly workflow: boolean;
  statusOf(snapshot: HostedSnapshot): ConversationStatus;
  viewOf(id: string, snapshot: HostedSnapshot, updatedAt: number, seq?: number): ConversationView;
  /** What of a snapshot a store must see change, and whether it did. */
  shapeOf(snapshot: HostedSnapshot): unknown;
  changed(previous: unknown, next: unknown): boolean;
  /** The stored snapshot, checked for this machine; `ConversationLoadError` otherwise. */
  decode(stored: StoredConversation): HostedSnapshot;
};

/**
 * The hosted form of `machine`.
 *
 * @example
 * ```ts
 * const hosted = hostedMachineOf(machine);
 * if (hosted.workflow) console.log('started with host.start(id, { input })');
 * ```
 */
export function hostedMachineOf(machine: AnyStateMachine): HostedMachine {
  if (isConversationMachine(machine)) {
    return {
      machine,
      workflow: false,
      statusOf: (snapshot) => statusOf(snapshot as RunState),
      viewOf: (id, snapshot, updatedAt, seq) => viewOf(id, snapshot as RunState, updatedAt, seq),
      shapeOf: (snapshot) => storedShapeOf(snapshot as Parameters<typeof storedShapeOf>[0]),
      changed: (previous, next) => changesStoredState(previous as StoredShape, next as StoredShape),
      decode: (stored) => decodeStored(stored, machine),
    };
  }
  return {
    machine,
    workflow: true,
    statusOf: workflowStatusOf,
    viewOf: workflowViewOf,
    shapeOf: workflowShapeOf,
    changed: (previous, next) => workflowChanged(previous as WorkflowShape, next as WorkflowShape),
    decode: (stored) => decodeStoredWorkflow(stored, machine),
  };
}
