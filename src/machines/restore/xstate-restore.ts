/**
 * Restore of a conversation run through XState's public API — `createActor(machine, { snapshot })`,
 * `actor.getPersistedSnapshot()`, `machine.provide(...)` — with the one thing XState's public API
 * cannot say done here, and only here: "when a run is restored, do this".
 *
 * What the chart itself does (public API): a restored run resumes by handling `run.resume`
 * (conversation.ts): `requesting` re-enters itself, `executingTools.running` re-enters itself, so
 * XState arms their `after` timers again as usual. What is left needs a hook XState does not offer:
 *
 * - upgrade the stored JSON and apply the resume semantics to it before XState reads it
 *   (`restoreSnapshot`): there is no public "migrate on restore";
 * - stamp `schemaVersion` on, and compact, what `getPersistedSnapshot` returns;
 * - on start of a restored actor, send it `run.resume` (restoring runs no entry action and
 *   evaluates no eventless transition, so nothing else would move it) and re-arm the `after`
 *   timers of the restored states — for `retrying`, which `run.resume` does not re-enter (that would
 *   run its entry again: a second `request.retry`), no other way re-arms its backoff. XState persists
 *   no pending delayed event in an actor's snapshot; the system snapshot holds them with live actor
 *   references, so it cannot be stored.
 *
 * The XState internals this relies on — each one is checked by name in test/xstate-restore.test.ts,
 * which runs against the floor of the peer range and the latest XState (`npm test`,
 * `npm run test:floor`), so an XState release that changes one fails there, not silently:
 *
 * 1. `restoreSnapshot`, `getPersistedSnapshot` and `start` are read off the logic object by the
 *    actor at each call, so own properties on the machine instance replace them; `provide` builds
 *    a new machine without them, so it is wrapped too.
 * 2. `start` is called as `start(snapshot, actorScope)` (the `ActorLogic` contract; `StateMachine`
 *    declares one parameter), and an event `actorScope.self.send`s there is handled before
 *    `actor.start()` returns.
 * 3. `actorScope.system.scheduler.schedule(source, target, event, delay, id)` (typed on
 *    `ActorSystem`, undocumented).
 * 4. An `after` transition's timer is scheduled on entry under an id equal to its event type
 *    (`DelayedTransitionDefinition.eventType`, `xstate.after.<delay>.<stateId>`) and cancelled by
 *    that id on exit, so a timer re-armed under that id is cancelled when the state is left.
 * 5. `StateMachine.getPersistedSnapshot(snapshot)` returns the snapshot's own fields with `context`
 *    (walked for actor references) in place: it is handed an empty context and the plain-JSON
 *    context is put back, sparing a walk through the whole history on every write.
 */
import type { AnyActorRef, AnyStateMachine, SnapshotFrom, StateValue } from 'xstate';
import { upgradeSnapshot } from '../snapshots/migrate-snapshot.js';
import { compactSnapshot, type ResumePolicy, resumeSnapshot } from './resume-snapshot.js';
import { currentSchemaVersion } from '../snapshots/snapshot-migrations.js';
import { budgetDeadlineId } from '../policies/budget.js';
import type { ConversationContext } from '../names/types.js';

/** The part of the actor scope XState passes to a logic's `start` (internal 2, 3). */
export type RestoreScope = {
  self: AnyActorRef;
  system: {
    scheduler: { schedule(source: AnyActorRef, target: AnyActorRef, event: { type: string }, delay: number, id: string | undefined): void };
  };
};

/** What re-arming reads of a restored snapshot: public fields of every machine snapshot. */
type RestoredSnapshot = { status: string; context: unknown; matches(value: StateValue): boolean };

/** What the machine's state nodes offer re-arming (public: `machine.root`, `StateNode.after`). */
type ChartNode = {
  path: string[];
  states: Record<string, ChartNode>;
  after: ReadonlyArray<{ eventType: string; delay?: unknown }>;
};

const emptyContext = Object.freeze({});

/** The event delay functions are called with when a timer is re-armed rather than entered. */
const resumeEvent = { type: 'xstate.resume' } as const;

function delayOf(machine: AnyStateMachine, delay: unknown, context: unknown): number {
  if (typeof delay === 'number') return delay;
  const configured: unknown = typeof delay === 'string' ? (machine.implementations.delays as Record<string, unknown>)[delay] : delay;
  const value =
    typeof configured === 'function'
      ? (configured as (args: { context: unknown; event: unknown }) => unknown)({ context, event: resumeEvent })
      : configured;
  return typeof value === 'number' && Number.isFinite(value) ? Math.max(0, value) : 0;
}

/** The state nodes a snapshot is in, found from the chart and `snapshot.matches` rather than XState's `_nodes`. */
function activeNodes(node: ChartNode, snapshot: RestoredSnapshot, found: ChartNode[] = []): ChartNode[] {
  for (const child of Object.values(node.states)) {
    if (!snapshot.matches(child.path.join('.'))) continue;
    found.push(child);
    activeNodes(child, snapshot, found);
  }
  return found;
}

/**
 * Schedules the `after` timers of the states a restored snapshot is in, as entering them would
 * (internals 3 and 4). Each starts afresh: the request window and the retry backoff start over.
 * Exported for the pinning test.
 */
export function rearmDelayedTransitions(machine: AnyStateMachine, snapshot: RestoredSnapshot, actorScope: RestoreScope): void {
  const armed = new Set<string>();
  for (const node of activeNodes(machine.root, snapshot)) {
    for (const transition of node.after) {
      if (armed.has(transition.eventType)) continue;
      armed.add(transition.eventType);
      const delay = delayOf(machine, transition.delay, snapshot.context);
      actorScope.system.scheduler.schedule(actorScope.self, actorScope.self, { type: transition.eventType }, delay, transition.eventType);
    }
  }
}

/**
 * Gives the machine the resume semantics of a durable run on its own restore path, so a plain
 * `createActor(machine, { snapshot })` resumes exactly as a host does (resume-snapshot.ts holds the
 * semantics, migrate-snapshot.ts the upgrade). Applied to the machine it returns and to every
 * machine its `provide(...)` builds.
 */
export function restoreOnXState<TMachine extends AnyStateMachine>(machine: TMachine, policy: ResumePolicy): TMachine {
  const restoreSnapshot = machine.restoreSnapshot.bind(machine);
  const getPersistedSnapshot = machine.getPersistedSnapshot.bind(machine);
  const start = machine.start.bind(machine) as (snapshot: SnapshotFrom<TMachine>, actorScope?: RestoreScope) => void;
  const provide = machine.provide.bind(machine);
  // Snapshots this machine restored: only their actors get the restore work on start.
  const restored = new WeakSet<object>();
  machine.provide = ((implementations) => restoreOnXState(provide(implementations), policy)) as TMachine['provide'];
  machine.restoreSnapshot = ((snapshot, actorScope) => {
    const restoredSnapshot = restoreSnapshot(resumeSnapshot(upgradeSnapshot(snapshot), policy), actorScope);
    restored.add(restoredSnapshot);
    return restoredSnapshot;
  }) as TMachine['restoreSnapshot'];
  machine.getPersistedSnapshot = ((snapshot: SnapshotFrom<TMachine>, options?: unknown) => {
    const { context } = snapshot as { context: unknown };
    const persisted = getPersistedSnapshot(
      { ...(snapshot as object), context: emptyContext } as typeof snapshot,
      options as never,
    ) as unknown as Record<string, unknown>;
    return compactSnapshot({ schemaVersion: currentSchemaVersion, ...persisted, context });
  }) as unknown as TMachine['getPersistedSnapshot'];
  machine.start = ((started: SnapshotFrom<TMachine>, actorScope?: RestoreScope) => {
    start(started, actorScope);
    const snapshot = started as unknown as RestoredSnapshot & { context: ConversationContext };
    if (!actorScope || !restored.has(snapshot) || snapshot.status !== 'active') return;
    restored.delete(snapshot);
    rearmDelayedTransitions(machine, snapshot, actorScope);
    // The time budget's delayed event was raised by an action, not an `after`: it is re-armed by its id too.
    const deadline = snapshot.context.control?.limits.deadline;
    if (deadline !== undefined) {
      const delay = Math.max(0, deadline - Date.now());
      actorScope.system.scheduler.schedule(actorScope.self, actorScope.self, { type: 'budget.deadline' }, delay, budgetDeadlineId);
    }
    // Queued until the actor's mailbox opens at the end of `actor.start()`, so it is handled before start returns.
    if (snapshot.context.restored) actorScope.self.send({ type: 'run.resume' });
  }) as TMachine['start'];
  return machine;
}
