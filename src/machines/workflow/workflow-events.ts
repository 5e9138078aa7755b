import type { AnyActorRef, AnyStateMachine } from 'xstate';
import { isBudgetedWorkflow } from './budget-mark.js';
import { isConversationMachine } from '../names/conversation-mark.js';
import type { AgentEventEvent, ConversationEmittedEvent, RequestFinishedEvent } from '../names/types.js';
import type { WorkflowSpentEvent } from './with-budget.js';

/** What is read of an actor here: its logic (public) and its listeners' emitter (internal, below). */
type Ancestor = AnyActorRef & { logic?: unknown; _actorScope?: { emit?: (event: AgentEventEvent) => void } };

/**
 * A conversation that a workflow (any machine other than a conversation) invokes or spawns: every
 * event it emits is emitted by each workflow above it as `agent.event`, `path` starting with the
 * invoke or spawn id — `['writer']`, `['review', 'writer']` for a workflow inside a workflow, with an
 * agent call's `toolCallId`s after it for the conversation's own agent tree. So
 * `workflow.on('agent.event', …)` hears every conversation in it, as a conversation's actor hears its
 * agent tree.
 *
 * XState delivers emitted events only to the emitting actor's own `on` listeners, and the
 * workflow's machine is the user's: it neither knows nor handles the events. So the conversation,
 * as it starts, listens to itself and hands each event to its ancestors' listeners through the
 * emitter XState gives every actor (`_actorScope.emit`, internal: the same call its `emit` action
 * makes, listener errors reported as XState reports them). A conversation under a conversation (an
 * agent call) is left out: its parent forwards its events (agent-child.ts).
 */
export function relayEventsToWorkflows<TMachine extends AnyStateMachine>(machine: TMachine): TMachine {
  // `start(snapshot, actorScope)` is the ActorLogic contract; StateMachine declares one parameter.
  const start = machine.start.bind(machine) as unknown as (snapshot: unknown, actorScope?: { self: AnyActorRef }) => void;
  const provide = machine.provide.bind(machine);
  machine.provide = ((implementations) => relayEventsToWorkflows(provide(implementations))) as TMachine['provide'];
  machine.start = ((snapshot: unknown, actorScope?: { self: AnyActorRef }) => {
    const self = actorScope?.self;
    // `_parent` is declared on XState's public `ActorRef` type: the actor that invoked or spawned this one.
    const parent = self?._parent as Ancestor | undefined;
    if (self && parent && !isConversationMachine(parent.logic))
      self.on('*', (event: ConversationEmittedEvent) => relay(self.id, parent, event));
    start(snapshot, actorScope);
  }) as unknown as TMachine['start'];
  return machine;
}

/** Emits `event` as `agent.event` on every workflow from `parent` up, each with the path down from it. */
function relay(childId: string, parent: Ancestor, event: ConversationEmittedEvent): void {
  let path = event.type === 'agent.event' ? [childId, ...event.path] : [childId];
  const inner = event.type === 'agent.event' ? event.event : event;
  for (
    let ancestor: Ancestor | undefined = parent;
    ancestor && !isConversationMachine(ancestor.logic);
    ancestor = ancestor._parent as Ancestor
  ) {
    ancestor._actorScope?.emit?.({ type: 'agent.event', path, event: inner });
    if (inner.type === 'request.finished' && isBudgetedWorkflow(ancestor.logic)) reportSpend(ancestor, inner);
    path = [ancestor.id, ...path];
  }
}

/**
 * Tells a budgeted workflow (`withBudget`) what a request cost — an event, as its chart counts it.
 * Sent after the conversation's own step: sending now would run the workflow's transitions (a
 * halt that stops this very conversation) in the middle of it.
 */
function reportSpend(ancestor: Ancestor, finished: RequestFinishedEvent): void {
  const spent: WorkflowSpentEvent = {
    type: 'workflow.spent',
    usage: finished.usage,
    ...(finished.model === undefined ? {} : { model: finished.model }),
  };
  queueMicrotask(() => {
    if (ancestor.getSnapshot().status === 'active') ancestor.send(spent);
  });
}
