import type { AnyActorRef, AnyStateMachine, SnapshotFrom } from 'xstate';
import { upgradeSnapshot } from './migrate-snapshot.js';
import { compactSnapshot, type ResumePolicy, resumeSnapshot } from './resume-snapshot.js';
import { currentSchemaVersion } from './snapshot-migrations.js';
import type { ConversationContext } from './types.js';

const emptyContext = Object.freeze({});

/** The part of the actor scope XState passes to a logic's `start` that resuming needs. */
type StartScope = { self: AnyActorRef };

/**
 * Gives the machine the resume semantics of a durable run on its own restore path, so a plain
 * `createActor(machine, { snapshot })` resumes exactly as a host does:
 *
 * - `restoreSnapshot` upgrades the persisted JSON to the current schema version (migrate-snapshot.ts;
 *   a newer one throws) and applies {@link resumeSnapshot} to it (no child actor is restored, so
 *   XState restarts no tool by itself);
 * - `start` of a run restored in `requesting` or `executingTools` sends the run a `run.resume`:
 *   nothing else would arrive to move it on (restoring runs no entry action and re-evaluates no
 *   eventless transition), so that event makes the request again, reports the interrupted calls
 *   (`tool.result`) and starts the calls that are to run;
 * - `getPersistedSnapshot` stamps the snapshot with `schemaVersion` (snapshot-migrations.ts), leaves
 *   out the history copies child actors hold ({@link compactSnapshot}), and hands the context over
 *   as it is: it is plain JSON (no actor references), so XState's walk through all of it — the
 *   whole history, on every write a host makes — would find nothing to do.
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
    restoreSnapshot(resumeSnapshot(upgradeSnapshot(snapshot), policy), actorScope)) as TMachine['restoreSnapshot'];
  machine.getPersistedSnapshot = ((snapshot: SnapshotFrom<TMachine>, options?: unknown) => {
    const { context } = snapshot as { context: unknown };
    const persisted = getPersistedSnapshot(
      { ...(snapshot as object), context: emptyContext } as typeof snapshot,
      options as never,
    ) as unknown as Record<string, unknown>;
    return compactSnapshot({ schemaVersion: currentSchemaVersion, ...persisted, context });
  }) as unknown as TMachine['getPersistedSnapshot'];
  // XState calls a logic's `start` with the actor scope too, though StateMachine declares one parameter.
  machine.start = ((started: SnapshotFrom<TMachine>, actorScope?: StartScope) => {
    start(started, actorScope);
    const snapshot = started as unknown as { status: string; context: ConversationContext };
    // Queued until the actor's mailbox opens at the end of `actor.start()`, so it is handled before start returns.
    if (actorScope && snapshot.status === 'active' && snapshot.context.restored) actorScope.self.send({ type: 'run.resume' });
  }) as TMachine['start'];
  return machine;
}
