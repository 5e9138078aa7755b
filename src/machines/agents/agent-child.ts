import type { AnyActorRef, AnyStateMachine } from 'xstate';
import type { AgentEmittedEvent } from '../names/types.js';

const childMachines = new WeakMap<object, AnyStateMachine>();

/** The child machine an agent call's logic runs, for a logic made by {@link agentChildLogic}. */
export function childMachineOf(logic: unknown): AnyStateMachine | undefined {
  return typeof logic === 'object' && logic !== null ? childMachines.get(logic) : undefined;
}

/** The events one step of a child emits, sent to its parent in one `agent.emitted` when the step ends. */
class StepEvents {
  private events: AgentEmittedEvent['events'] = [];
  constructor(
    private readonly childId: string,
    private readonly parent: AnyActorRef,
  ) {}
  add(event: AgentEmittedEvent['events'][number]): void {
    this.events.push(event);
  }
  next(): void {
    this.send();
  }
  error(): void {
    this.send();
  }
  private send(): void {
    if (this.events.length === 0) return;
    const forwarded: AgentEmittedEvent = { type: 'agent.emitted', childId: this.childId, events: this.events };
    this.events = [];
    this.parent.send(forwarded);
  }
}

/**
 * The logic an agent call's child runs: the child's own machine, which on start also hands the
 * events the child emits to its parent as `agent.emitted` (the parent re-emits each as
 * `agent.event` with its path). XState delivers emitted events only to `actor.on` listeners, never
 * to a parent, and the child machine does not know it is one; so the listener is added here, where
 * the child actor is started (also when it is restored with its parent's snapshot).
 *
 * The events of one step of the child go up together, in one `agent.emitted`: a child streaming
 * a batch of 40 deltas costs its parent one step, not 40. XState runs a step's emits just before
 * it tells the step's observers, and tells them before the parent hears that the child ended or
 * failed; so the batch is sent from an observer, ahead of the child's done or error event.
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
      const step = new StepEvents(self.id, parent);
      self.on('*', (event) => step.add(event as AgentEmittedEvent['events'][number]));
      // As an observer it hears the end of each step; its `error` also keeps XState from reporting
      // the child's error as unhandled (the parent handles it).
      self.subscribe(step);
    }
    startMachine?.call(machine, snapshot, actorScope);
  };
  return logic;
}
