/**
 * The conversation machine's guards and events in words, for the overview chart. A guard or event
 * missing here still reads well enough (`someNewGuard` → "some new guard"); the visualization test
 * names any guard of the machine that has no words yet.
 */

/** `words` says when the guard holds (null: the event says it all); `negated`, when it does not. */
export type GuardWords = { words: string | null; negated?: string };

export const guardWords: Record<string, GuardWords> = {
  hasInputProblem: { words: 'invalid input' },
  hasPrompt: { words: 'a prompt in the input' },
  isRestored: { words: 'restored from a snapshot' },
  isValidUserMessage: { words: null },
  isAgentBatch: { words: null },
  isProviderDeltas: { words: null },
  isProviderFinish: { words: null },
  canRetryFailure: { words: 'retries left', negated: 'no retry left' },
  missingResponse: { words: 'no response' },
  // After `answerAccepted` and `answerRepairable`: only an invalid structured answer gets here.
  noToolCalls: { words: 'answer invalid, no repair left' },
  answerAccepted: { words: 'answered' },
  answerRepairable: { words: 'answer invalid (repairs left)' },
  iterationCapReached: { words: 'tool-round cap reached' },
  doomLoopPersists: { words: 'doom loop persists' },
  roundNeedsApproval: { words: 'a call needs approval' },
  approvalsComplete: { words: 'all approved or denied' },
  roundSettled: { words: 'all results in' },
  settlesRound: { words: 'the last result of the round' },
  resultOverdue: { words: 'after its deadline' },
  executionHalts: { words: 'a tool threw HaltError' },
  agentFailureHalts: { words: 'an agent call failed (halt)' },
  awaitsApprovalInChild: { words: 'a child waits for it' },
  isProgressOfRunningCall: { words: 'its call is running' },
  handoffPending: { words: 'a handoff call in it' },
  streamProgressed: { words: 'the stream moved' },
  isAwaitingApproval: { words: 'the call is waiting' },
  // Long conversations (DESIGN §12).
  hasInputGuardrails: { words: 'input guardrails' },
  hasOutputGuardrails: { words: 'output guardrails' },
  guardrailTripped: { words: 'tripped' },
  moreInputChecks: { words: 'next guardrail' },
  moreOutputChecks: { words: 'next guardrail' },
  hasQueuedMessages: { words: 'messages queued' },
  steeringQueues: { words: "steering: 'queue'" },
  budgetReached: { words: 'budget reached' },
  budgetSpent: { words: 'budget spent' },
  treeBudgetReached: { words: 'agent tree over budget' },
  canFallBack: { words: 'next provider' },
  contextOverWindow: { words: 'over the context window' },
  contextLengthExceeded: { words: 'context too long' },
  compactionUsable: { words: 'compacted' },
};

/** Events in words (`''`: the guard says it all). */
export const eventWords: Record<string, string> = {
  always: '',
  'done: providerCall': '',
  'error: providerCall': 'request failed',
  'after requestTimeout': 'timed out',
  'after retryDelay': 'after the backoff',
  'error: *': '',
  'done: *': 'a tool finished',
  'after toolDeadline': 'a tool timed out',
  'after inputGuardrailTimeout': 'check timed out',
  'after outputGuardrailTimeout': 'check timed out',
  'done: guardrailCheck': '',
  'error: guardrailCheck': 'check threw',
  'done: compaction': '',
  'error: compaction': 'summary failed',
  'budget.deadline': 'time budget over',
  'agent.emitted': '',
  'user.interrupt': 'interrupt',
};

/** Events a child actor sends the run, never a user: the overview does not list their rejection (a malformed one) among the user's. */
export const childEvents: ReadonlySet<string> = new Set(['agent.emitted', 'provider.delta', 'provider.finish']);

/** Unguarded eventless transitions in words, by the state they leave. */
export const eventlessWords: Record<string, string> = {
  repairing: 'problem sent back',
  handingOff: 'the new agent asks',
  preparing: 'request',
};

/** What the unguarded fallback of an event means when nothing before it matched. */
export const fallbackWords: Record<string, string> = {
  'done: providerCall': 'tool calls to run',
  'done: guardrailCheck': 'passed',
  'done: compaction': 'unusable summary',
};

/** `someNewGuard` → `some new guard`. */
export function camelCaseWords(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[._-]+/g, ' ')
    .toLowerCase();
}
