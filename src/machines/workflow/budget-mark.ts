/**
 * The mark `withBudget` puts on the machine it makes, so that a conversation's relay (see
 * workflow-events.ts) knows which ancestor counts what it spends. A registry symbol, so a machine
 * from another copy of actorloop is recognised too.
 */
const budgetMark = Symbol.for('actorloop.budgetedWorkflow');

/** Marks a machine as one that takes `workflow.spent`. */
export function markBudgetedWorkflow<TMachine extends object>(machine: TMachine): TMachine {
  Object.defineProperty(machine, budgetMark, { value: true });
  return machine;
}

/** True for a machine `withBudget` made. */
export function isBudgetedWorkflow(logic: unknown): boolean {
  return typeof logic === 'object' && logic !== null && (logic as Record<symbol, unknown>)[budgetMark] === true;
}
