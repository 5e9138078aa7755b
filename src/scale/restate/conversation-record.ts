import type { ConversationStatus } from '../../host/conversation-store.js';
import { type DecodedSnapshot, decodeStored } from '../../host/decode-stored.js';
import type { HostedMachine, HostedSnapshot } from '../../host/hosted-machine.js';
import { ConversationLoadError } from '../../host/errors/conversation-load-error.js';
import { agentCallIdOf } from '../../machines/rounds/agent-calls.js';
import type { ConversationMachine, RoundCall } from '../../machines/names/types.js';
import { isRecord } from '../../util/is-record.js';

/** The keys of the object's state. */
export const stateKeys = {
  conversation: 'conversation',
  /** Awakeables of `result` calls waiting for the run in progress to end. */
  waiters: 'waiters',
  /** Counts the run's segments; an `advance` for another segment is stale and does nothing. */
  segment: 'segment',
  /** A workflow's own pending timers (its chart's `after`, its delayed sends): XState keeps none in a snapshot. */
  timers: 'timers',
} as const;

/**
 * What a conversation object keeps in its state: the run's snapshot, stored after each step, in
 * the host's format (a `StoredConversation` without revision and owner: Restate is the single writer).
 */
export type ConversationRecord = {
  /** The snapshot's schema version (`version` in records of actorloop 0.1, still read). */
  schemaVersion: number;
  machineId: string;
  status: ConversationStatus;
  /** The run's persisted snapshot, as JSON. */
  snapshot: string;
  /** When the step it records ended (epoch milliseconds). */
  updatedAt: number;
};

/** The record's snapshot, checked for this machine; `ConversationLoadError` when it cannot be loaded. */
export function decodeRecord(id: string, record: unknown, machine: ConversationMachine): DecodedSnapshot {
  if (!isRecord(record) || typeof record.snapshot !== 'string') {
    throw new ConversationLoadError(id, 'corrupt', 'its state is not a conversation record { schemaVersion, machineId, snapshot, … }');
  }
  const stored = record as ConversationRecord & { version?: number };
  return decodeStored(
    {
      id,
      // decodeStored refuses what is not a version, so a record without either field is reported, not guessed.
      schemaVersion: (stored.schemaVersion ?? stored.version) as number,
      machineId: stored.machineId,
      status: stored.status,
      snapshot: stored.snapshot,
      revision: 0,
      owner: '',
      updatedAt: stored.updatedAt,
    },
    machine,
  );
}

/** The record's snapshot, checked for the hosted machine (a workflow's too); `ConversationLoadError` when it cannot be loaded. */
export function decodeHostedRecord(id: string, record: unknown, hosted: HostedMachine): HostedSnapshot {
  if (!isRecord(record) || typeof record.snapshot !== 'string') {
    throw new ConversationLoadError(id, 'corrupt', 'its state is not a conversation record { schemaVersion, machineId, snapshot, … }');
  }
  const stored = record as ConversationRecord & { version?: number };
  return hosted.decode({
    id,
    schemaVersion: (stored.schemaVersion ?? stored.version) as number,
    machineId: stored.machineId,
    status: stored.status,
    snapshot: stored.snapshot,
    revision: 0,
    owner: '',
    updatedAt: stored.updatedAt,
  });
}

/**
 * The persisted snapshot as the object stores it. A replay of an invocation writes the state again
 * and Restate checks that it writes the same bytes (else the invocation fails with a journal
 * mismatch, and is retried for ever), so what depends on the clock or on chance is left out — it
 * is not needed to resume:
 * - the calls' `deadline` (a restored call never keeps running; in Restate mode the step enforces
 *   the timeout anyway);
 * - `retry.delayMs`, the jittered backoff (the backoff is a delayed `advance`; a run restored in
 *   `retrying` makes its next attempt at once).
 *
 * Calls in `notStarted` — their step was declined in this invocation, so they never ran — are
 * stored `queued`: the run that restores them starts them.
 *
 * The same holds at every level of an agent tree: each agent call's child is a run whose snapshot
 * is nested in its caller's `children`, with rounds, deadlines and backoffs of its own.
 */
export function snapshotForState<T>(persisted: T, notStarted: ReadonlySet<string>): T {
  if (!isRecord(persisted) || !isRecord(persisted.context)) return persisted;
  const context = persisted.context;
  const round = Array.isArray(context.round)
    ? (context.round as RoundCall[]).map((call): RoundCall => {
        const { deadline: _deadline, ...rest } = call;
        return call.state === 'running' && notStarted.has(call.toolCallId) ? { ...rest, state: 'queued' } : rest;
      })
    : context.round;
  const retry = isRecord(context.retry) ? { ...context.retry, delayMs: 0 } : context.retry;
  const children = agentChildrenForState(persisted.children, notStarted);
  return { ...persisted, context: { ...context, retry, round }, ...(children === persisted.children ? {} : { children }) };
}

/** The persisted children with each agent call's child stored as its caller is; tool executions hold nothing to leave out. */
function agentChildrenForState(children: unknown, notStarted: ReadonlySet<string>): unknown {
  if (!isRecord(children)) return children;
  let stored: Record<string, unknown> | undefined;
  for (const [id, child] of Object.entries(children)) {
    if (agentCallIdOf(id) === undefined || !isRecord(child) || !isRecord(child.snapshot)) continue;
    stored ??= { ...children };
    stored[id] = { ...child, snapshot: snapshotForState(child.snapshot, notStarted) };
  }
  return stored ?? children;
}

/** A conversation machine's persisted snapshot, told by its context (as the host tells one in a workflow). */
function isConversationSnapshot(snapshot: Record<string, unknown>): boolean {
  const context = snapshot.context;
  return isRecord(context) && Array.isArray(context.messages) && 'round' in context && isRecord(context.outcome);
}

/**
 * A workflow's persisted snapshot as the object stores it: each conversation in it (in nested
 * workflows too) as `snapshotForState` stores a conversation alone, so a replay writes the same
 * bytes. The workflow's own context is the user's, stored as it is.
 */
export function workflowSnapshotForState<T>(persisted: T, notStarted: ReadonlySet<string>): T {
  if (!isRecord(persisted) || !isRecord(persisted.children)) return persisted;
  let children: Record<string, unknown> | undefined;
  for (const [id, child] of Object.entries(persisted.children)) {
    if (!isRecord(child) || !isRecord(child.snapshot)) continue;
    const snapshot = child.snapshot;
    const stored = isConversationSnapshot(snapshot)
      ? snapshotForState(snapshot, notStarted)
      : isRecord(snapshot.children)
        ? workflowSnapshotForState(snapshot, notStarted)
        : snapshot;
    if (stored === snapshot) continue;
    children ??= { ...persisted.children };
    children[id] = { ...child, snapshot: stored };
  }
  return children ? { ...persisted, children } : persisted;
}
