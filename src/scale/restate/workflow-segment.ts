import type { ObjectContext } from '@restatedev/restate-sdk';
import { type AnyActorRef, createActor, type InspectionEvent } from 'xstate';
import type { HostedMachine, HostedSnapshot } from '../../host/hosted-machine.js';
import { stateKeyOf } from '../../host/stored-state.js';
import { approvalHolder, haltedSnapshot } from '../../host/workflow-state.js';
import { agentCallIdOf } from '../../machines/rounds/agent-calls.js';
import { isConversationMachine } from '../../machines/names/conversation-mark.js';
import { currentSchemaVersion } from '../../machines/snapshots/snapshot-migrations.js';
import { setStepJournal, type StepInfo } from '../../machines/restore/step-journal.js';
import type { ConversationEmittedEvent } from '../../machines/names/types.js';
import { isRecord } from '../../util/is-record.js';
import { type ConversationRecord, stateKeys, workflowSnapshotForState } from './conversation-record.js';
import type { JournaledWorkflow } from './journaled-workflow.js';
import { RestateStepJournal } from './restate-step-journal.js';
import type { RestateConversationEvent } from './run-segment.js';
import { SegmentClock } from './segment-clock.js';
import { StepAnnouncements } from './step-announcements.js';

/** Where a workflow's segment stopped. */
export type WorkflowSegmentEnd =
  /** The workflow reached a final state (`done`, or `halted` / `error` as its output says), or its machine failed. */
  | { kind: 'final' }
  /** Nothing is left to run: the workflow waits for an approval or for an event of its own. */
  | { kind: 'wait' }
  /** A conversation's request waits for the next invocation. */
  | { kind: 'next' }
  /** A timer is due after `delayMs` (a conversation's backoff, a time budget): the next invocation comes then. */
  | { kind: 'retry'; delayMs: number };

/**
 * A timer of the workflow's own (an `after` of its chart, a delayed send of its actions) that was
 * pending when a segment ended: XState stores no pending timer in a snapshot, so the object keeps
 * it, and the next segment sets it again for what is left of it. The actors are named by their
 * path from the workflow (`[]` is the workflow itself).
 */
export type WorkflowTimer = { source: string[]; target: string[]; event: { type: string }; id: string; dueAt: number };

export type WorkflowSegmentOptions = {
  ctx: ObjectContext;
  id: string;
  workflow: JournaledWorkflow;
  hosted: HostedMachine;
  from: { snapshot: unknown } | { input: unknown };
  /**
   * `apply`: start the run, or take the caller's `event`, and store the state it leads to, starting
   * no step (they wait for the next invocation). `advance`: run until nothing is left to run in this
   * invocation — each conversation makes at most one request, every tool call it leads to runs.
   */
  mode: 'apply' | 'advance';
  event?: { type: string };
  /** `updatedAt` of what is written before any step ends in this invocation. */
  updatedAt: number;
  /** The invocation's time (journaled): when the stored timers are due from. */
  now: number;
  /** The workflow's own timers pending when the last segment ended. */
  timers: readonly WorkflowTimer[];
  onEvent: ((event: RestateConversationEvent) => void) | undefined;
  /** Whether the invocation is past its replay: events go out only then. */
  isProcessing: () => boolean;
};

export type WorkflowSegmentResult =
  | { kind: 'rejected'; message: string }
  | {
      kind: 'ended';
      end: WorkflowSegmentEnd;
      snapshot: HostedSnapshot;
      record: ConversationRecord | undefined;
      /** The workflow's own timers pending now, for the next segment to set again. */
      timers: WorkflowTimer[];
    };

/** The longest delay timers take: the journaled machine's "never" (see `journaledMachine`). */
const neverMs = 2_147_483_647;

/** The deltas a conversation emits as it replays a recorded request; the live ones went out with their path while it streamed. */
const replayedDeltas = new Set(['text.delta', 'reasoning.delta', 'tool.call.delta', 'object.delta']);

/** A step's caller (`left`, or an agent call's child `agent:<toolCallId>`) as the last id of an event's path names it. */
const pathIdOf = (caller: string) => agentCallIdOf(caller) ?? caller;

/**
 * Runs one segment of a workflow in an invocation of its object — `runSegment` for a machine that
 * is not a conversation. The workflow is restored from the object's state (or started from its
 * input); the steps of every conversation in it go through the Restate journal (the actor system's,
 * so each conversation of the tree reaches it); the workflow's snapshot — its conversations' nested
 * in it — is written after each change that the durable host would store. A replay of the
 * invocation goes through the same transitions and writes the same state: the journal delivers
 * the recorded steps in the recorded order, and no timer fires between them (`SegmentClock`).
 */
export function runWorkflowSegment(options: WorkflowSegmentOptions): Promise<WorkflowSegmentResult> {
  const { ctx, id, hosted, mode, workflow } = options;
  const notStarted = new Set<string>();
  const clock = new SegmentClock(() => setImmediate(endWhenIdle));
  let started = false;
  const warned = new Set<string>();
  let record: ConversationRecord | undefined;
  let end: WorkflowSegmentEnd | undefined;
  let settled = false;
  /** A workflow that `cancel` ended: its final snapshot, written in place of the stopped actor's. */
  let halted: Record<string, unknown> | undefined;
  let settle!: (result: WorkflowSegmentResult) => void;
  let fail!: (error: unknown) => void;
  const result = new Promise<WorkflowSegmentResult>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });

  const publish = (event: RestateConversationEvent['event']) => {
    if (!options.onEvent || !options.isProcessing()) return;
    try {
      options.onEvent({ conversationId: id, event });
    } catch (error) {
      ctx.console.warn(`actorloop/restate: onEvent threw for workflow ${JSON.stringify(id)}:`, error);
    }
  };

  const warn = (message: string) => {
    if (warned.has(message)) return;
    warned.add(message);
    ctx.console.warn(`actorloop/restate: workflow ${JSON.stringify(id)} ${message}`);
  };
  // What the workflow runs beside its conversations and its own machines is not journaled: it still
  // runs, and the user is told. A conversation spawned from an inline machine keeps its own timers
  // (they may fire at another point in a replay); an actor of another kind (a promise) is no step.
  const checkJournaled = (actorRef: AnyActorRef) => {
    const logic = (actorRef as { logic?: unknown }).logic;
    const parent = actorRef._parent as { logic?: unknown } | undefined;
    if (!parent || isConversationMachine(parent.logic)) return;
    if (isConversationMachine(logic)) {
      if (workflow.conversations.has(logic)) return;
      warn(
        `runs conversation ${JSON.stringify(actorRef.id)} from a machine it was not given by name; name it in setup({ actors }) ` +
          'and spawn or invoke it by that name, so that its timeouts are decided inside its journaled steps',
      );
    } else if (!(isRecord(logic) && 'root' in logic)) {
      warn(
        `runs actor ${JSON.stringify(actorRef.id)}, neither a conversation nor a state machine: it is no journaled step — ` +
          'a segment does not wait for it and a replay runs it again; do such work in a tool of a conversation',
      );
    }
  };

  const inspect = (event: InspectionEvent) => {
    if (event.type === '@xstate.actor') checkJournaled(event.actorRef as AnyActorRef);
    // A conversation inside the workflow changes nothing in the workflow's own snapshot: every actor's is watched.
    else if (event.type === '@xstate.snapshot' && started) changed();
  };
  const machine = workflow.machine;
  const actor =
    'snapshot' in options.from
      ? createActor(machine, { snapshot: options.from.snapshot as never, clock, inspect })
      : createActor(machine, { input: options.from.input as never, clock, inspect });
  const snapshotNow = (): HostedSnapshot => (halted ?? actor.getSnapshot()) as HostedSnapshot;
  let lastShape = hosted.shapeOf(snapshotNow());
  let lastPublished = { value: stateKeyOf(snapshotNow().value), status: hosted.statusOf(snapshotNow()) };

  // A conversation's `request.started` comes as `agent.event`, its path ending with the caller.
  const announcements = new StepAnnouncements(publish, mode === 'advance');
  /** The path of each conversation (and agent call's child) heard from, by the last id of its path. */
  const paths = new Map<string, string[]>();
  const stepKey = (step: StepInfo) => announcements.keyOf(step, pathIdOf((step.kind === 'request' ? step.caller : undefined) ?? ''));

  let requestDeclined = false;
  /**
   * The segment ends once nothing is left to run in it: no step in flight, no timer about to fire.
   * What the workflow then waits for says how it goes on — a request declined for the next
   * invocation, a held timer, or a caller's event (an approval, an event of the workflow's own).
   */
  const endWhenIdle = () => {
    if (end || settled || mode !== 'advance' || journal.busy || clock.firing) return;
    if (snapshotNow().status !== 'active') return finish({ kind: 'final' });
    if (requestDeclined) return finish({ kind: 'next' });
    const delayMs = clock.nextDelay;
    finish(delayMs === undefined ? { kind: 'wait' } : { kind: 'retry', delayMs });
  };

  // Each conversation may make one request per invocation: conversations in parallel states ask at once.
  const askedBy = new Set<string>();
  const journal = new RestateStepJournal(ctx, {
    requests: 0,
    requestAllowed: (step) => {
      if (mode !== 'advance') return false;
      const caller = step.caller ?? '';
      if (askedBy.has(caller)) return false;
      askedBy.add(caller);
      return true;
    },
    tools: mode === 'advance',
    started: (step) => announcements.started(stepKey(step)),
    declined: (step) => {
      announcements.declined(stepKey(step));
      if (step.kind === 'tool') notStarted.add(step.toolCallId);
      else {
        requestDeclined = true;
        // Checked after the macrostep, once the steps it started with are asked.
        setImmediate(endWhenIdle);
      }
    },
    streamed: (delta, step) => {
      const caller = step?.kind === 'request' && step.caller !== undefined ? pathIdOf(step.caller) : undefined;
      if (caller === undefined) return publish(delta);
      publish({ type: 'agent.event', path: paths.get(caller) ?? [caller], event: delta });
    },
    failed: (error) => abort(error),
    idle: endWhenIdle,
  });
  setStepJournal(actor.system, journal);

  // When each of the workflow's own timers was set, in the journal's time: its due time is then
  // the same in a replay (XState's own `startedAt` is the clock's).
  const setAt = new Map<string, number>();
  const scheduler = actor.system.scheduler;
  const schedule = scheduler.schedule.bind(scheduler);
  let unnamed = 0;
  scheduler.schedule = (source, target, event, delay, timerId) => {
    // XState names a delayed event sent without an id at random: stored, it must be the same in a replay.
    const named = timerId ?? `actorloop.delayed.${options.now}.${unnamed++}`;
    setAt.set(`${source.sessionId}.${named}`, journal.lastStepAt ?? options.now);
    schedule(source, target, event, delay, named);
  };
  /** The workflow's own pending timers: those a conversation sets, it sets again itself when restored. */
  const pendingTimers = (): WorkflowTimer[] => {
    const timers: WorkflowTimer[] = [];
    for (const [key, pending] of Object.entries(actor.system.getSnapshot()._scheduledEvents)) {
      if (isConversationMachine((pending.source as { logic?: unknown }).logic) || pending.delay >= neverMs) continue;
      const source = pathOf(actor, pending.source);
      const target = pathOf(actor, pending.target);
      if (!source || !target) continue;
      const at = setAt.get(key) ?? options.now;
      timers.push({ source, target, event: pending.event, id: pending.id, dueAt: at + pending.delay });
    }
    return timers;
  };
  /** Sets the stored timers again, for what is left of them. */
  const restoreTimers = () => {
    for (const timer of options.timers) {
      const source = childAt(actor, timer.source);
      const target = childAt(actor, timer.target);
      if (!source || !target || source.getSnapshot().status !== 'active') continue;
      const left = Math.max(0, timer.dueAt - options.now);
      schedule(source, target, timer.event, left, timer.id);
      setAt.set(`${source.sessionId}.${timer.id}`, timer.dueAt - left);
    }
  };

  const persisted = () => withReadableError(halted ?? workflowSnapshotForState(actor.getPersistedSnapshot(), notStarted));
  /** The workflow as stored, for the caller's view: a live snapshot's children are actors, stopped when the segment ends. */
  const storedSnapshot = () => persisted() as HostedSnapshot;
  const write = () => {
    record = {
      schemaVersion: currentSchemaVersion,
      machineId: hosted.machine.id,
      status: hosted.statusOf(snapshotNow()),
      snapshot: JSON.stringify(persisted()),
      updatedAt: journal.lastStepAt ?? options.updatedAt,
    };
    ctx.set(stateKeys.conversation, record);
  };

  /** After any actor of the tree changed: the state the host would store is written, and the workflow's own state told. */
  function changed() {
    if (settled) return;
    const snapshot = snapshotNow();
    const status = hosted.statusOf(snapshot);
    const value = stateKeyOf(snapshot.value);
    if (value !== lastPublished.value || status !== lastPublished.status) {
      lastPublished = { value, status };
      publish({
        type: 'state',
        value: snapshot.value,
        status,
        messages: [],
        ...(snapshot.status === 'done' && snapshot.output !== undefined ? { output: snapshot.output } : {}),
      } as RestateConversationEvent['event']);
    }
    // `apply` writes once, when the event was taken: a rejected event stores nothing.
    if (mode !== 'advance') return;
    const shape = hosted.shapeOf(snapshot);
    if (!hosted.changed(lastShape, shape)) return;
    lastShape = shape;
    write();
    if (snapshot.status !== 'active') finish({ kind: 'final' });
  }

  const subscription = actor.subscribe({
    // A workflow's own failure (an action of its that threw) is its outcome, `error`, stored as any
    // other state; XState reports it to observers only (no inspection event carries it).
    error: () => changed(),
  });
  const listener = actor.on('*', (emitted: ConversationEmittedEvent) => {
    if (settled) return;
    if (emitted.type !== 'agent.event') return publish(emitted);
    const { path, event: leaf } = emitted;
    const caller = path.at(-1) ?? '';
    paths.set(caller, path);
    if (replayedDeltas.has(leaf.type)) return;
    announcements.heard(leaf, caller, emitted);
  });
  const stop = (reason: unknown) => {
    journal.close(reason);
    clock.stop();
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
  function finish(reached: WorkflowSegmentEnd) {
    if (end) return;
    end = reached;
    journal.close(new Error('the segment ended'));
    // After the macrostep, so the state that led here is written first.
    setImmediate(() => {
      if (settled) return;
      settled = true;
      if (hosted.changed(lastShape, hosted.shapeOf(snapshotNow()))) write();
      const snapshot = storedSnapshot();
      const timers = snapshot.status === 'active' ? pendingTimers() : [];
      stop(new Error('the segment ended'));
      settle({ kind: 'ended', end: reached, snapshot, record, timers });
    });
  }
  // The attempt is over (suspended, aborted, lost its connection): nothing of it may run on.
  ctx.request().attemptCompletedSignal?.addEventListener('abort', () => abort(new Error('the invocation attempt ended')), { once: true });

  started = true;
  actor.start();
  restoreTimers();
  if (mode === 'advance') {
    // A restored workflow with nothing to run ends here; one that asked for steps ends when they are done.
    setImmediate(endWhenIdle);
    return result;
  }
  const rejected = options.event ? applyToWorkflow(options.event) : undefined;
  if (rejected !== undefined) {
    settled = true;
    stop(new Error('event rejected'));
    return Promise.resolve({ kind: 'rejected', message: rejected });
  }
  write();
  const snapshot = storedSnapshot();
  const timers = snapshot.status === 'active' ? pendingTimers() : [];
  settled = true;
  stop(new Error('the event was applied'));
  const applied: WorkflowSegmentEnd = snapshot.status === 'active' ? { kind: 'next' } : { kind: 'final' };
  return Promise.resolve({ kind: 'ended', end: applied, snapshot, record, timers });

  /**
   * What the durable host does with a caller's event to a workflow (live-run.ts): an approval goes
   * to the conversation that waits for it, a `cancel` the chart does not take ends the whole
   * workflow `halted`, any other event goes to the chart when it takes it now. Returns why it was
   * not taken.
   */
  function applyToWorkflow(event: { type: string }): string | undefined {
    const root = actor.getSnapshot();
    if (event.type === 'tool.approve' || event.type === 'tool.deny') {
      const { toolCallId } = event as { type: string; toolCallId: string };
      const path = approvalHolder(root, toolCallId);
      const holder = path && childAt(actor, path);
      if (holder) {
        let refused: string | undefined;
        const heard = actor.on('*', (emitted: ConversationEmittedEvent) => {
          if (emitted.type === 'agent.event' && emitted.event.type === 'event.rejected' && emitted.event.eventType === event.type)
            refused ??= emitted.event.message;
        });
        try {
          holder.send(event);
        } finally {
          heard.unsubscribe();
        }
        return refused;
      }
      if (root.can(event as never)) return void actor.send(event as never);
      return `no call ${JSON.stringify(toolCallId)} waits for approval in the workflow (pendingApprovals lists those that do)`;
    }
    if (event.type === 'cancel' && !root.can(event as never)) {
      halted = haltedSnapshot(actor.getPersistedSnapshot(), (event as { reason?: string }).reason);
      return undefined;
    }
    if (!root.can(event as never)) {
      return `the workflow in state ${JSON.stringify(root.value)} does not take ${event.type} (its chart has no transition for it now)`;
    }
    actor.send(event as never);
    return undefined;
  }
}

/** The path of `actor` from `root` (invoke and spawn ids), if it is in the workflow's tree. */
function pathOf(root: AnyActorRef, actor: AnyActorRef): string[] | undefined {
  const path: string[] = [];
  for (let at: AnyActorRef | undefined = actor; at !== root; at = at._parent) {
    if (!at) return undefined;
    path.unshift(at.id);
  }
  return path;
}

/** The actor at `path` below `root` (invoke and spawn ids), if it is still there. */
function childAt(root: AnyActorRef, path: readonly string[]): AnyActorRef | undefined {
  let actor: AnyActorRef | undefined = root;
  for (const id of path) actor = (actor?.getSnapshot() as { children?: Record<string, AnyActorRef> } | undefined)?.children?.[id];
  return actor;
}

/** A failed machine's error as JSON keeps it (an `Error` would be stored as `{}`). */
function withReadableError(persisted: unknown): unknown {
  if (!isRecord(persisted) || persisted.status !== 'error' || !(persisted.error instanceof Error)) return persisted;
  const { name, message } = persisted.error;
  return { ...persisted, error: { name, message } };
}
