import type { AnyStateMachine } from 'xstate';
import {
  type ConversationContext,
  type ConversationMachine,
  type ConversationStateValue,
  currentSchemaVersion,
  findSnapshotProblem,
  firstSchemaVersion,
  migrateSnapshot,
  type RunOutput,
} from '../machines/hostable.js';
import type { StoredConversation } from './conversation-store.js';
import { ConversationLoadError } from './errors/conversation-load-error.js';
import { findWorkflowProblem } from './workflow-state.js';

/** A stored snapshot that passed the checks: what a host reads from it without restoring it. */
export type DecodedSnapshot = {
  status: 'active' | 'done';
  value: ConversationStateValue;
  context: ConversationContext;
  output?: RunOutput;
};

/**
 * The stored conversation's snapshot, upgraded to the current schema version and checked for this
 * machine; throws `ConversationLoadError` naming the conversation and the problem (and touches nothing).
 */
export function decodeStored(stored: StoredConversation, machine: ConversationMachine): DecodedSnapshot {
  const { parsed, version } = parseStored(stored, machine);
  // Upgraded in memory only: the store keeps what was written until the run writes its next step.
  const migrated = migrateSnapshot(parsed, { from: version });
  if (migrated.problem) throw new ConversationLoadError(stored.id, migrated.problem.kind, migrated.problem.message);
  const problem = findSnapshotProblem(migrated.snapshot, machine);
  if (problem) throw new ConversationLoadError(stored.id, problem.kind, problem.message);
  return migrated.snapshot as DecodedSnapshot;
}

/** A stored workflow's snapshot (any machine other than a conversation) as persisted: what a host reads of it. */
export type DecodedWorkflowSnapshot = {
  status: 'active' | 'done' | 'error' | 'stopped';
  value: unknown;
  context: unknown;
  output?: unknown;
  children?: unknown;
};

/**
 * A stored workflow's snapshot, checked for this machine (its state one of the machine's); throws
 * `ConversationLoadError` naming the workflow and the problem (and touches nothing). The
 * conversations in it are upgraded by the conversation machine as XState restores them.
 */
export function decodeStoredWorkflow(stored: StoredConversation, machine: AnyStateMachine): DecodedWorkflowSnapshot {
  const { parsed } = parseStored(stored, machine);
  const problem = findWorkflowProblem(parsed, machine);
  if (problem) throw new ConversationLoadError(stored.id, problem.kind, problem.message);
  return parsed as DecodedWorkflowSnapshot;
}

/** The stored snapshot's JSON, once its schema version and machine are ones this actorloop and host read. */
function parseStored(stored: StoredConversation, machine: AnyStateMachine): { parsed: unknown; version: number } {
  // A store written for actorloop 0.1 returns the field under its old name.
  const version: unknown = stored.schemaVersion ?? (stored as { version?: unknown }).version;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < firstSchemaVersion || version > currentSchemaVersion) {
    throw new ConversationLoadError(
      stored.id,
      'unknown_version',
      `it has schemaVersion ${JSON.stringify(version) ?? typeof version}; this actorloop reads versions ${firstSchemaVersion} to ${currentSchemaVersion}` +
        (typeof version === 'number' && version > currentSchemaVersion
          ? ' (a newer actorloop wrote it: upgrade actorloop to load it; the stored data is left as it is)'
          : ''),
    );
  }
  if (stored.machineId !== machine.id) {
    throw new ConversationLoadError(
      stored.id,
      'other_machine',
      `it was written for machine ${JSON.stringify(stored.machineId)}, not ${JSON.stringify(machine.id)}`,
    );
  }
  try {
    return { parsed: JSON.parse(stored.snapshot), version };
  } catch (error) {
    throw new ConversationLoadError(stored.id, 'corrupt', `the snapshot is not valid JSON (${(error as Error).message})`);
  }
}
