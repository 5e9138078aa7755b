import type { AnyActorRef, AnyStateMachine } from 'xstate';
import type { AgentEmittedEvent } from './types.js';

const childMachines = new WeakMap<object, AnyStateMachine>();

/** The child machine an agent call's logic runs, for a logic made by {@link agentChildLogic}. */
export function childMachineOf(logic: unknown): AnyStateMachine | undefined {
  return typeof logic === 'object' && logic !== null ? childMachines.get(logic) : undefined;
}

/**
 * The logic an agent call's child runs: the child's own machine, which on start also hands each
 * event the child emits to its parent as `agent.emitted` (the parent re-emits it as `agent.event`
 * with its path). XState delivers emitted events only to `actor.on` listeners, never to a parent,
 * and the child machine does not know it is one; so the listener is added here, where the child
 * actor is started (also when it is restored with its parent's snapshot).
 *
 * Everything else is the machine's own (read through the prototype), so a persisted child restores
 * like any run.
 */
export function agentChildLogic(machine: AnyStateMachine): AnyStateMachine {
  const logic = Object.create(machine) as AnyStateMachine;
  childMachines.set(logic, machine);
  // `start(snapshot, actorScope)` is the ActorLogic contract; StateMachine declares one parameter.
  const startMachine = machine.start as ((snapshot: unknown, actorScope: unknown) => void) | undefined;
  (logic as { start: (snapshot: unknown, actorScope: unknown) => void }).start = (snapshot, actorScope) => {
    const scope = actorScope as { self: AnyActorRef } | undefined;
    const self = scope?.self;
    // `_parent` is declared on XState's public `ActorRef` type: the actor that spawned this one.
    const parent = self?._parent;
    if (self && parent) {
      self.on('*', (event) => {
        const forwarded: AgentEmittedEvent = { type: 'agent.emitted', childId: self.id, event: event as AgentEmittedEvent['event'] };
        parent.send(forwarded);
      });
    }
    startMachine?.call(machine, snapshot, actorScope);
  };
  return logic;
}
