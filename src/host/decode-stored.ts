import { findSnapshotProblem } from '../machines/snapshot-problem.js';
import type { ConversationMachine, ConversationStateValue, RunOutput } from '../machines/types.js';
import type { ConversationContext } from '../machines/types.js';
import type { StoredConversation } from './conversation-store.js';
import { ConversationLoadError } from './errors/conversation-load-error.js';

/** The snapshot format this host writes and reads (`StoredConversation.version`). */
export const snapshotVersion = 1;

/** A stored snapshot that passed the checks: what a host reads from it without restoring it. */
export type DecodedSnapshot = {
  status: 'active' | 'done';
  value: ConversationStateValue;
  context: ConversationContext;
  output?: RunOutput;
};

/**
 * The stored conversation's snapshot, checked for this machine; throws `ConversationLoadError`
 * naming the conversation and the problem (and touches nothing).
 */
export function decodeStored(stored: StoredConversation, machine: ConversationMachine): DecodedSnapshot {
  if (stored.version !== snapshotVersion) {
    throw new ConversationLoadError(
      stored.id,
      'unknown_version',
      `its snapshot format version is ${JSON.stringify(stored.version)}; this actorloop reads version ${snapshotVersion}` +
        (typeof stored.version === 'number' && stored.version > snapshotVersion ? ' (it was written by a newer actorloop)' : ''),
    );
  }
  if (stored.machineId !== machine.id) {
    throw new ConversationLoadError(
      stored.id,
      'other_machine',
      `it was written for machine ${JSON.stringify(stored.machineId)}, not ${JSON.stringify(machine.id)}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored.snapshot);
  } catch (error) {
    throw new ConversationLoadError(stored.id, 'corrupt', `the snapshot is not valid JSON (${(error as Error).message})`);
  }
  const problem = findSnapshotProblem(parsed, machine);
  if (problem) throw new ConversationLoadError(stored.id, problem.kind, problem.message);
  return parsed as DecodedSnapshot;
}
