import type { Effects } from '../names/effects.js';
import { roundClosed } from '../rounds/round-results.js';
import { haltRecorded } from '../rounds/run-outcome.js';
import type { BudgetReached, ConversationContext } from '../names/types.js';

/** The result the calls of a round a budget stopped get, naming the limit. */
export const budgetResultText = (reached: Pick<BudgetReached, 'limit'>) => `not executed: the run reached its budget (${reached.limit})`;

/**
 * The run halts on a budget: the limit is kept for the output, and a round in progress is closed
 * (every call without a result gets one naming the limit), so the history stays valid.
 */
export function budgetHalted(context: ConversationContext, reached: BudgetReached): Effects {
  const halted: Partial<ConversationContext> = {
    ...haltRecorded(context.outcome, 'budget'),
    control: { ...context.control, budget: reached },
  };
  if (!context.round) return { context: { ...halted, response: null } };
  const closed = roundClosed(context.round, budgetResultText(reached), context.messages);
  return { context: { ...halted, ...closed.context }, ...(closed.emitted ? { emitted: closed.emitted } : {}) };
}
