import type { AnyStateMachine } from 'xstate';

/**
 * The mark `createConversationMachine` puts on its machines, so that a workflow check
 * (`verifyWorkflow`) tells a conversation from any other logic a user's machine invokes, whatever
 * id or implementations it was given. A registry symbol, so a machine from another copy of
 * actorloop is recognised too.
 */
const conversationMark = Symbol.for('actorloop.conversationMachine');

/** Marks a conversation machine, and every machine its `provide(...)` builds from it. */
export function markConversationMachine<TMachine extends AnyStateMachine>(machine: TMachine): TMachine {
  Object.defineProperty(machine, conversationMark, { value: true });
  const provide = machine.provide.bind(machine);
  machine.provide = ((implementations) => markConversationMachine(provide(implementations))) as TMachine['provide'];
  return machine;
}

/** True for a machine `createConversationMachine` made (or one provided from it). */
export function isConversationMachine(logic: unknown): logic is AnyStateMachine {
  return typeof logic === 'object' && logic !== null && (logic as Record<symbol, unknown>)[conversationMark] === true;
}
