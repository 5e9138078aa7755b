import type { AnyActorRef, AnyStateMachine, SnapshotFrom } from 'xstate';
import { compactSnapshot, type ResumePolicy, resumeSnapshot } from './resume-snapshot.js';
import type { ConversationContext } from './types.js';

/** The part of the actor scope XState passes to a logic's `start` that resuming needs. */
type StartScope = { self: AnyActorRef };

/**
 * Gives the machine the resume semantics of a durable run on its own restore path, so a plain
 * `createActor(machine, { snapshot })` resumes exactly as a host does:
 *
 * - `restoreSnapshot` applies {@link resumeSnapshot} to the persisted JSON first (no child actor
 *   is restored, so XState restarts no tool by itself);
 * - `start` of a run restored in `requesting` or `executingTools` sends the run a `run.resume`:
 *   nothing else would arrive to move it on (restoring runs no entry action and re-evaluates no
 *   eventless transition), so that event makes the request again, reports the interrupted calls
 *   (`tool.result`) and starts the calls that are to run;
 * - `getPersistedSnapshot` leaves out the history copies child actors hold ({@link compactSnapshot}).
 *
 * Applied to the machine it returns and to every machine its `provide(...)` builds.
 */
export function resumeRunsOnRestore<TMachine extends AnyStateMachine>(machine: TMachine, policy: ResumePolicy): TMachine {
  const restoreSnapshot = machine.restoreSnapshot.bind(machine);
  const getPersistedSnapshot = machine.getPersistedSnapshot.bind(machine);
  const start = machine.start.bind(machine) as (snapshot: SnapshotFrom<TMachine>, actorScope?: StartScope) => void;
  const provide = machine.provide.bind(machine);
  machine.provide = ((implementations) => resumeRunsOnRestore(provide(implementations), policy)) as TMachine['provide'];
  machine.restoreSnapshot = ((snapshot, actorScope) =>
    restoreSnapshot(resumeSnapshot(snapshot, policy), actorScope)) as TMachine['restoreSnapshot'];
  machine.getPersistedSnapshot = ((snapshot, options) =>
    compactSnapshot(getPersistedSnapshot(snapshot, options))) as TMachine['getPersistedSnapshot'];
  // XState calls a logic's `start` with the actor scope too, though StateMachine declares one parameter.
  machine.start = ((started: SnapshotFrom<TMachine>, actorScope?: StartScope) => {
    start(started, actorScope);
    const snapshot = started as unknown as { status: string; context: ConversationContext };
    // Queued until the actor's mailbox opens at the end of `actor.start()`, so it is handled before start returns.
    if (actorScope && snapshot.status === 'active' && snapshot.context.restored) actorScope.self.send({ type: 'run.resume' });
  }) as TMachine['start'];
  return machine;
}
