import type { ObjectContext } from '@restatedev/restate-sdk';
import { createActor } from 'xstate';
import { statusOf } from '../../host/conversation-view.js';
import type { ConversationStateEvent } from '../../host/live-run.js';
import { changesStoredState, storedShapeOf } from '../../host/stored-state.js';
import { agentActorId } from '../../machines/rounds/agent-calls.js';
import { currentSchemaVersion } from '../../machines/snapshots/snapshot-migrations.js';
import { setStepJournal, type StepInfo } from '../../machines/restore/step-journal.js';
import type {
  ConversationEmittedEvent,
  ConversationInput,
  ConversationMachine,
  ConversationSnapshot,
  ConversationUserEvent,
} from '../../machines/names/types.js';
import { type ConversationRecord, snapshotForState, stateKeys } from './conversation-record.js';
import { RestateStepJournal } from './restate-step-journal.js';
import { StepAnnouncements } from './step-announcements.js';

/**
 * What a worker tells `onEvent` as the runs it drives go: every event a run emits (`tool.call`,
 * `tool.result`, `tool.approval.requested`, `usage`, …), `text.delta` / `reasoning.delta` /
 * `tool.call.delta` as the provider streams them, and a `state` event on each state change.
 *
 * @example
 * ```ts
 * const onEvent = ({ conversationId, event }: RestateConversationEvent) => {
 *   if (event.type === 'text.delta') channel.publish(conversationId, event.delta);
 * };
 * ```
 */
export type RestateConversationEvent = { conversationId: string; event: ConversationEmittedEvent | ConversationStateEvent };

/** Where a segment stopped. */
export type SegmentEnd =
  /** The run ended (`done`, `halted`, `error`). */
  | { kind: 'final' }
  /** The run waits for `tool.approve` / `tool.deny`. */
  | { kind: 'approval' }
  /** The run goes on in the next invocation (its next request). */
  | { kind: 'next' }
  /** The run backs off before its next attempt; the next invocation comes after `delayMs`. */
  | { kind: 'retry'; delayMs: number };

export type SegmentOptions = {
  ctx: ObjectContext;
  conversationId: string;
  /** The journaled machine (`journaledMachine(machine)`). */
  machine: ConversationMachine;
  from: { snapshot: unknown } | { input: ConversationInput };
  /**
   * `apply`: take the caller's `event` and store the state it leads to, starting nothing (requests and
   * tool calls wait for the next invocation). `advance`: run until the run ends, waits for approval,
   * backs off, or is about to make its next request.
   */
  mode: 'apply' | 'advance';
  event?: ConversationUserEvent;
  /** `updatedAt` of what is written before any step ends in this invocation. */
  updatedAt: number;
  onEvent: ((event: RestateConversationEvent) => void) | undefined;
  /** Whether the invocation is past its replay: events go out only then. */
  isProcessing: () => boolean;
};

export type SegmentResult =
  | { kind: 'rejected'; message: string }
  | { kind: 'ended'; end: SegmentEnd; snapshot: ConversationSnapshot; record: ConversationRecord | undefined };

/** The machine's own deltas replay a recorded request; the live ones went out while it streamed. */
const replayedDeltas = new Set(['text.delta', 'reasoning.delta', 'tool.call.delta', 'object.delta']);

/**
 * Runs one segment of a conversation in an invocation of its object: the run is restored from the
 * object's state (or started from its input), its steps go through the Restate journal, and the
 * state is written after each step that changes it — the same changes the durable host writes. A
 * replay of the invocation goes through the same transitions (the journal returns the recorded
 * steps, in the recorded order), so it writes the same state.
 */
export function runSegment(options: SegmentOptions): Promise<SegmentResult> {
  const { ctx, conversationId, machine, mode } = options;
  const actor =
    'snapshot' in options.from
      ? createActor(machine, { snapshot: options.from.snapshot as ConversationSnapshot, input: {} })
      : createActor(machine, { input: options.from.input });
  const notStarted = new Set<string>();
  let lastShape = storedShapeOf(actor.getSnapshot());
  let lastPublished = { value: lastShape.value, status: statusOf(actor.getSnapshot()) };
  let record: ConversationRecord | undefined;
  let end: SegmentEnd | undefined;
  let settled = false;
  let settle!: (result: SegmentResult) => void;
  let fail!: (error: unknown) => void;
  const result = new Promise<SegmentResult>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });

  const publish = (event: RestateConversationEvent['event']) => {
    if (!options.onEvent || !options.isProcessing()) return;
    try {
      options.onEvent({ conversationId, event });
    } catch (error) {
      ctx.console.warn(`actorloop/restate: onEvent threw for conversation ${JSON.stringify(conversationId)}:`, error);
    }
  };
  // A child of the tree asks and announces as itself (its `request.started` comes as `agent.event`).
  const announcements = new StepAnnouncements(publish, mode === 'advance');
  const stepKey = (step: StepInfo) => announcements.keyOf(step, (step.kind === 'request' ? step.caller : undefined) ?? actor.id);

  // A declined request (the root's, or a child's in an agent tree) leaves the rest of the tree
  // running: calls beside the agent call, other children. The segment ends once none of their steps
  // is in flight — ending it earlier stops them mid-step, and the restored run takes a call whose
  // step never finished for interrupted. Likewise a child waiting for approval: the root stays in
  // `executingTools`, and the invocation must end for `send` (which takes the approval) to run.
  let requestDeclined = false;
  const endWhenIdle = () => {
    if (end || mode !== 'advance' || journal.busy) return;
    if (requestDeclined) finish({ kind: 'next' });
    else if (statusOf(actor.getSnapshot()) === 'awaitingApproval') finish({ kind: 'approval' });
  };

  const journal = new RestateStepJournal(ctx, {
    requests: mode === 'advance' ? 1 : 0,
    tools: mode === 'advance',
    started: (step) => announcements.started(stepKey(step)),
    declined: (step) => {
      announcements.declined(stepKey(step));
      if (step.kind === 'tool') notStarted.add(step.toolCallId);
      else {
        // The request belongs to the next invocation; checked after the macrostep, once the steps it started with are asked.
        requestDeclined = true;
        setImmediate(endWhenIdle);
      }
    },
    streamed: (delta) => publish(delta),
    failed: (error) => abort(error),
    idle: endWhenIdle,
  });
  setStepJournal(actor.system, journal);

  const write = () => {
    const snapshot = actor.getSnapshot();
    record = {
      schemaVersion: currentSchemaVersion,
      machineId: machine.id,
      status: statusOf(snapshot),
      snapshot: JSON.stringify(snapshotForState(actor.getPersistedSnapshot(), notStarted)),
      updatedAt: journal.lastStepAt ?? options.updatedAt,
    };
    ctx.set(stateKeys.conversation, record);
  };

  const subscription = actor.subscribe({
    next: (snapshot) => {
      if (settled) return;
      const shape = storedShapeOf(snapshot);
      const status = statusOf(snapshot);
      if (shape.value !== lastPublished.value || status !== lastPublished.status) {
        lastPublished = { value: shape.value, status };
        publish({
          type: 'state',
          value: snapshot.value,
          status,
          messages: snapshot.context.messages,
          ...(snapshot.status === 'done' && snapshot.output ? { output: snapshot.output } : {}),
        });
      }
      // `apply` writes once, when the event was taken: a rejected event stores nothing.
      if (mode !== 'advance' || !changesStoredState(lastShape, shape)) return;
      lastShape = shape;
      write();
      // Only a state entered here ends the segment: the restored one (a run restored in `retrying`) goes on.
      if (snapshot.status === 'done') finish({ kind: 'final' });
      else if (snapshot.value === 'awaitingApproval') finish({ kind: 'approval' });
      else if (snapshot.value === 'retrying') finish({ kind: 'retry', delayMs: snapshot.context.retry.delayMs });
    },
    // The machine routes every failure to a final state; an actor error would be a bug, not a run outcome.
    error: (error) => abort(error),
  });
  const listener = actor.on('*', (event) => {
    if (settled || replayedDeltas.has(event.type)) return;
    const { caller, leaf } = emitterOf(actor.id, event);
    announcements.heard(leaf, caller, event);
  });
  const stop = (reason: unknown) => {
    journal.close(reason);
    listener.unsubscribe();
    subscription.unsubscribe();
    actor.stop();
  };
  const abort = (error: unknown) => {
    if (settled) return;
    settled = true;
    stop(error);
    fail(error);
  };
  function finish(reached: SegmentEnd) {
    if (end) return;
    end = reached;
    journal.close(new Error('the segment ended'));
    // After the macrostep, so the state that led here is written first.
    setImmediate(() => {
      if (settled) return;
      settled = true;
      const snapshot = actor.getSnapshot();
      if (changesStoredState(lastShape, storedShapeOf(snapshot))) write();
      stop(new Error('the segment ended'));
      settle({ kind: 'ended', end: reached, snapshot, record });
    });
  }
  // The attempt is over (suspended, aborted, lost its connection): nothing of it may run on.
  ctx.request().attemptCompletedSignal?.addEventListener('abort', () => abort(new Error('the invocation attempt ended')), { once: true });

  actor.start();
  if (mode === 'apply') {
    const rejected = applyEvent(actor, options.event);
    if (rejected !== undefined) {
      settled = true;
      stop(new Error('event rejected'));
      return Promise.resolve({ kind: 'rejected', message: rejected });
    }
    write();
    const snapshot = actor.getSnapshot();
    settled = true;
    stop(new Error('the event was applied'));
    const status = statusOf(snapshot);
    const applied: SegmentEnd =
      snapshot.status === 'done' ? { kind: 'final' } : status === 'awaitingApproval' ? { kind: 'approval' } : { kind: 'next' };
    return Promise.resolve({ kind: 'ended', end: applied, snapshot, record });
  }
  return result;
}

/** The event a run emitted as its emitter emitted it, and the emitter's actor id (a child's is `agent:<toolCallId>`). */
function emitterOf(rootId: string, event: ConversationEmittedEvent): { caller: string; leaf: ConversationEmittedEvent } {
  let leaf = event;
  let caller = rootId;
  while (leaf.type === 'agent.event') {
    caller = agentActorId(leaf.path.at(-1) ?? '');
    leaf = leaf.event;
  }
  return { caller, leaf };
}

/** Sends the caller's event; returns the machine's rejection message when the run did not take it. */
function applyEvent(
  actor: ReturnType<typeof createActor<ConversationMachine>>,
  event: ConversationUserEvent | undefined,
): string | undefined {
  if (!event) return undefined;
  let rejection: string | undefined;
  const listener = actor.on('event.rejected', (rejected) => {
    if (rejected.eventType === event.type) rejection ??= rejected.message;
  });
  try {
    actor.send(event);
  } finally {
    listener.unsubscribe();
  }
  return rejection;
}
