// The journal belongs to the actors (they run the steps); hosts and scale-out (above the machine) reach it here.
export type { RequestStepRecord } from '../../actors/request-step.js';
export { type StepInfo, type StepJournal, type StepOutcome, setStepJournal } from '../../actors/step-journal.js';
export type { ToolStepRecord } from '../../actors/tool-execution.js';

import type { AnyStateMachine } from 'xstate';
import { agentChildLogic, childMachineOf } from '../agents/agent-child.js';
import type { ConversationMachine } from '../names/types.js';

/** The longest delay timers take (about 24.8 days): a timer that never fires in a run. */
const neverMs = 2_147_483_647;

/**
 * The machine for runs whose steps go through a `StepJournal` (set on each actor's system with
 * `setStepJournal`): the same machine, with the request timeout and the tool deadlines left to the
 * journaled steps, which decide them inside the step. A timer of the machine that fired while a
 * step's result was on its way to the journal would make the run decide differently from a replay
 * of it, which gets that result at once.
 *
 * `provide` keeps the restore path's timer re-arm and resume semantics. The children of agent calls
 * run journaled machines too, so their steps are recorded and replayed like the parent's; an agent
 * call then has no deadline of its own (its child is many steps): its child's own limits bound it.
 *
 * @example
 * ```ts
 * const journaled = journaledMachine(machine);
 * const actor = createActor(journaled, { input: { messages: [] } });
 * setStepJournal(actor.system, journal);
 * actor.start();
 * ```
 */
export function journaledMachine<TObject>(machine: ConversationMachine<TObject>): ConversationMachine<TObject> {
  const actors: Record<string, AnyStateMachine> = {};
  for (const [source, logic] of Object.entries(machine.implementations.actors)) {
    const child = childMachineOf(logic);
    if (child) actors[source] = agentChildLogic(journaledMachine(child as ConversationMachine));
  }
  // No result is late either (`resultOverdue`): the step's record says whether its call timed out.
  return machine.provide({
    delays: { requestTimeout: neverMs, toolDeadline: neverMs },
    guards: { resultOverdue: () => false },
    actors: actors as never,
  });
}
