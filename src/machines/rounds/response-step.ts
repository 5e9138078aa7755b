import type { ConversationContext } from '../names/types.js';

/** Where a request that ended goes next (the `onDone` of `providerCall`); one step for any context. */
export type ResponseStep =
  | 'noResponse'
  | 'accept'
  | 'repair'
  | 'rejectAnswer'
  | 'haltOnBudget'
  | 'haltAtIterationCap'
  | 'haltOnDoomLoop'
  | 'awaitApproval'
  | 'executeTools';

/**
 * The one step a request's outcome leads to. The priorities live here, so the chart's guards over it
 * hold for one step each and their order on the transition does not matter: a final answer is
 * judged before any limit on tool rounds; with tool calls a budget the response used up comes first
 * (nothing more may be spent), then the iteration cap before the doom loop (a run at its cap halts
 * with `max_iterations` even when its calls also repeat), and all of them before approval.
 * `overBudget` says whether the run is over its budget once the response is counted.
 */
export function responseStep<TContext extends Pick<ConversationContext, 'response' | 'iterations' | 'answer'>>(
  context: TContext,
  limits: { maxToolIterations: number; maxRepairs: number },
  overBudget?: (context: TContext) => boolean,
): ResponseStep {
  const response = context.response;
  if (response === null) return 'noResponse';
  if (response.calls.length === 0) {
    if (response.answer?.ok ?? true) return 'accept';
    return context.answer.repairs < limits.maxRepairs ? 'repair' : 'rejectAnswer';
  }
  if (overBudget?.(context)) return 'haltOnBudget';
  if (context.iterations >= limits.maxToolIterations) return 'haltAtIterationCap';
  if (response.doomLoop.action === 'halt') return 'haltOnDoomLoop';
  return response.calls.some((call) => call.state === 'awaiting-approval') ? 'awaitApproval' : 'executeTools';
}
