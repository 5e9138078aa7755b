import type { AnyActorRef, AnyStateMachine, MachineSnapshot, SnapshotFrom } from 'xstate';

/** The part of the actor scope XState passes to a logic's `start` that re-arming needs. */
type StartScope = {
  self: AnyActorRef;
  system: {
    scheduler: { schedule(source: AnyActorRef, target: AnyActorRef, event: { type: string }, delay: number, id: string | undefined): void };
  };
};

type AnyMachineSnapshot = MachineSnapshot<Record<string, unknown>, { type: string }, never, never, never, unknown, never, never>;

/** The event delay functions are called with when a timer is re-armed rather than entered. */
const resumeEvent = { type: 'xstate.resume' } as const;

function delayOf(machine: AnyStateMachine, delay: string | number, context: unknown): number {
  if (typeof delay === 'number') return delay;
  const configured: unknown = (machine.implementations.delays as Record<string, unknown>)[delay];
  const value =
    typeof configured === 'function'
      ? (configured as (args: { context: unknown; event: unknown }) => unknown)({ context, event: resumeEvent })
      : configured;
  return typeof value === 'number' && Number.isFinite(value) ? Math.max(0, value) : 0;
}

/**
 * XState keeps no delayed events in a persisted snapshot, and restoring one runs no entry actions:
 * a run restored in `requesting`, `retrying` or `executingTools` would wait forever on a timer that
 * no longer exists — a hanging tool would never time out. This re-arms the delayed transitions of
 * the restored states when the restored actor starts, under the ids XState gives them, so leaving
 * a state still cancels them: the request window and the retry backoff start afresh. (A tool call
 * never keeps running across a restore — see `resume-runs.ts` — so a call that runs again gets a
 * fresh deadline when it starts.)
 *
 * Applied to the machine it returns and to every machine its `provide(...)` builds.
 */
export function rearmTimersOnRestore<TMachine extends AnyStateMachine>(machine: TMachine): TMachine {
  const restored = new WeakSet<object>();
  const restoreSnapshot = machine.restoreSnapshot.bind(machine);
  const start = machine.start.bind(machine);
  const provide = machine.provide.bind(machine);
  // A provided machine (other actors, e.g. journaled ones) is a new object: it needs the re-arm too.
  machine.provide = ((implementations) => rearmTimersOnRestore(provide(implementations))) as TMachine['provide'];
  machine.restoreSnapshot = ((snapshot, actorScope) => {
    const restoredSnapshot = restoreSnapshot(snapshot, actorScope);
    restored.add(restoredSnapshot);
    return restoredSnapshot;
  }) as TMachine['restoreSnapshot'];
  // XState calls a logic's `start` with the actor scope too, though StateMachine declares one parameter.
  machine.start = ((started: SnapshotFrom<TMachine>, actorScope?: StartScope) => {
    start(started);
    const snapshot = started as unknown as AnyMachineSnapshot;
    if (!actorScope || !restored.has(snapshot) || snapshot.status !== 'active') return;
    restored.delete(snapshot);
    const armed = new Set<string>();
    for (const node of snapshot._nodes) {
      for (const transition of node.after) {
        if (armed.has(transition.eventType)) continue;
        armed.add(transition.eventType);
        const delay = delayOf(machine, transition.delay as string | number, snapshot.context);
        actorScope.system.scheduler.schedule(actorScope.self, actorScope.self, { type: transition.eventType }, delay, transition.eventType);
      }
    }
  }) as TMachine['start'];
  return machine;
}
