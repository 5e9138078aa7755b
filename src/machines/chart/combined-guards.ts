/**
 * The chart's combined guards, each under a name of its own (DESIGN §18): an exported config
 * (`machineConfigOf`, `visualizations/conversation.machine.json`) then names only guards a Stately
 * user can implement, never `and(a, b)`. Each holds when every guard it lists holds, tried in the
 * order listed and stopping at the first that does not hold, as XState's `and` does: where one is an
 * option or a queue (a field read), it comes first, so the costlier guard runs only when it matters.
 * `conversationGuards` (guards.ts) implements them over the plain guards; the overview chart reads
 * each as its parts (`src/observe/chart/overview-chart.ts`).
 */
export const combinedGuards = {
  /** A valid first (or interrupting) message, to be checked by the input guardrails. */
  validMessageWithInputGuardrails: ['isValidUserMessage', 'hasInputGuardrails'],
  /** A queued message joins the history, checked by the input guardrails like the first. */
  queuedMessagesWithInputGuardrails: ['hasQueuedMessages', 'hasInputGuardrails'],
  /** No response, and the request may be made again. */
  missingResponseCanRetry: ['missingResponse', 'canRetryFailure'],
  /** No response and no retry left, but another provider to ask. */
  missingResponseCanFallBack: ['missingResponse', 'canFallBack'],
  /** The final answer, to be checked by the output guardrails. */
  answerAcceptedWithOutputGuardrails: ['hasOutputGuardrails', 'answerAccepted'],
  /** The final answer, with a message queued for the next request. */
  answerAcceptedWithQueuedMessages: ['hasQueuedMessages', 'answerAccepted'],
  /** Every result of a round with a handoff call in it is in. */
  roundSettledWithHandoff: ['roundSettled', 'handoffPending'],
  /** An agent call's child spent over the tree's budget. */
  agentBatchOverTreeBudget: ['isAgentBatch', 'treeBudgetReached'],
  /** A valid message while the run is busy, queued (`steering: 'queue'`). */
  steeringQueuesValidMessage: ['steeringQueues', 'isValidUserMessage'],
} as const;

/** The name of one of the chart's combined guards. */
export type CombinedGuardName = keyof typeof combinedGuards;

/** The guards a combined guard lists, in the order they are tried; `undefined` for any other name. */
export function partsOfGuard(name: string): readonly string[] | undefined {
  return Object.hasOwn(combinedGuards, name) ? combinedGuards[name as CombinedGuardName] : undefined;
}
