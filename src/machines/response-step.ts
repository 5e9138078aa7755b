import type { ConversationContext } from './types.js';

/** Where a request that ended goes next (the `onDone` of `providerCall`); one step for any context. */
export type ResponseStep =
  | 'noResponse'
  | 'accept'
  | 'repair'
  | 'rejectAnswer'
  | 'haltAtIterationCap'
  | 'haltOnDoomLoop'
  | 'awaitApproval'
  | 'executeTools';

/**
 * The one step a request's outcome leads to. The priorities live here, so the chart's guards over it
 * hold for one step each and their order on the transition does not matter: a final answer is
 * judged before any limit on tool rounds; with tool calls the iteration cap comes before the doom
 * loop (a run at its cap halts with `max_iterations` even when its calls also repeat), and both
 * before approval.
 */
export function responseStep(
  context: Pick<ConversationContext, 'response' | 'iterations' | 'answer'>,
  limits: { maxToolIterations: number; maxRepairs: number },
): ResponseStep {
  const response = context.response;
  if (response === null) return 'noResponse';
  if (response.calls.length === 0) {
    if (response.answer?.ok ?? true) return 'accept';
    return context.answer.repairs < limits.maxRepairs ? 'repair' : 'rejectAnswer';
  }
  if (context.iterations >= limits.maxToolIterations) return 'haltAtIterationCap';
  if (response.doomLoop.action === 'halt') return 'haltOnDoomLoop';
  return response.calls.some((call) => call.state === 'awaiting-approval') ? 'awaitApproval' : 'executeTools';
}
