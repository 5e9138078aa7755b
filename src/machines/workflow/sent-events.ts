/**
 * The events something inside a workflow sends it, as far as its config says: what it `raise`s
 * and `sendTo`s itself (a `sendTo` may aim at the machine, so every one counts), what the machines
 * it invokes or spawns send (`sendParent` is a `sendTo` of the parent), and the done, error and
 * snapshot events of every actor it invokes or spawns with a fixed id. Only static events count: an
 * event made by a function, and whatever `enqueueActions`, an inline action or a callback actor
 * sends, is code the config does not show. `emit` does not count: an emitted event goes to the
 * actor's listeners (`actor.on`), never to the machine.
 */
import type { AnyStateMachine } from 'xstate';
import { isConversationMachine } from '../names/conversation-mark.js';
import { allNodes, builtInOf, invokesOf, isStateMachine, logicOfInvoke, logicOfSource, placedActions } from './chart-nodes.js';

/**
 * The id an actor spawned without a fixed one stands under: no transition names it, so only a
 * wildcard one (`xstate.done.actor.*`) takes its events, as in a run.
 */
export const computedActorId = 'verifyWorkflow:computed-id';

function staticType(event: unknown): string | undefined {
  if (typeof event !== 'object' || event === null) return undefined;
  const type = (event as { type?: unknown }).type;
  return typeof type === 'string' ? type : undefined;
}

/** The static types of the events `machine`'s actions of the given built-in kinds send. */
function sentBy(machine: AnyStateMachine, kinds: readonly string[]): string[] {
  const types: string[] = [];
  for (const { action } of placedActions(machine)) {
    for (const kind of kinds) {
      const type = staticType(builtInOf(action, kind)?.event);
      if (type !== undefined) types.push(type);
    }
  }
  return types;
}

/** The logic `machine` invokes or spawns, named in `implementations.actors` or given inline. */
function childLogics(machine: AnyStateMachine): unknown[] {
  const logics = new Set<unknown>(Object.values(machine.implementations.actors as Record<string, unknown>));
  for (const node of allNodes(machine)) {
    for (const index of invokesOf(node).keys()) logics.add(logicOfInvoke(machine, node, index));
  }
  for (const { action } of placedActions(machine)) {
    const spawn = builtInOf(action, 'xstate.spawnChild');
    if (spawn) logics.add(logicOfSource(machine, spawn.src));
  }
  return [...logics];
}

/** The types of the events sent to the machine from inside it (an actor with a computed id under {@link computedActorId}). */
export function sentEvents(machine: AnyStateMachine): Set<string> {
  const types = new Set(sentBy(machine, ['xstate.raise', 'xstate.sendTo']));
  // A conversation sends its parent nothing; any other child machine may (`sendParent`, `sendTo` by system id).
  for (const logic of childLogics(machine)) {
    if (isStateMachine(logic) && !isConversationMachine(logic) && logic !== machine) {
      for (const type of sentBy(logic, ['xstate.sendTo'])) types.add(type);
    }
  }
  const actorIds: string[] = [];
  for (const node of allNodes(machine)) for (const invoke of invokesOf(node)) actorIds.push(invoke.id);
  for (const { action } of placedActions(machine)) {
    const spawn = builtInOf(action, 'xstate.spawnChild');
    if (!spawn) continue;
    actorIds.push(typeof spawn.id === 'string' ? spawn.id : computedActorId);
  }
  for (const id of actorIds) {
    for (const prefix of ['xstate.done.actor.', 'xstate.error.actor.', 'xstate.snapshot.']) types.add(`${prefix}${id}`);
  }
  return types;
}
