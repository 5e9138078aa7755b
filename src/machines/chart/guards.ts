import { HaltError } from '../../tools/halt-error.js';
import { finishProblem, providerEventProblem } from '../../model/provider-event-problem.js';
import type { ResolvedOptions } from './options.js';
import { failureOf } from '../controls/request-failure.js';
import { responseStep } from '../rounds/response-step.js';
import { canRetry } from '../policies/retry-policy.js';
import { isAwaitingApproval, liveCall, liveResult, progressEvent, resultOverdue, settlesRound, thrownBy } from '../rounds/round-results.js';
import { isValidUserContent } from '../../model/user-content.js';
import { approvalRelay } from '../rounds/agent-calls.js';
import { handoffOf } from '../agents/handoffs.js';
import type { ConversationContext, ConversationEvent } from '../names/types.js';
import type { GuardrailCheckOutput } from '../../actors/guardrail-check.js';
import { agentCallIdOf, isAgentBatch } from '../rounds/agent-calls.js';
import { budgetReached, childSpendRecorded } from '../policies/budget.js';
import { canFallBack } from '../controls/fallback.js';
import { compactionProblem, compactsAfter, overWindow } from '../controls/compaction.js';
import { committed } from '../rounds/response-commit.js';
import { type CombinedGuardName, combinedGuards } from './combined-guards.js';

type GuardArgs = { context: ConversationContext; event: ConversationEvent };

type Guard = (args: GuardArgs) => boolean;

/**
 * The conversation machine's guards, by the name the chart uses. The names are the chart's words
 * (`src/observe/chart/overview-words.ts`), so a guard keeps its name when its body changes. The
 * combined ones (combined-guards.ts) hold when every guard they list holds, tried in order.
 *
 * One table serves every machine of the process: XState hands a guard only the context and the
 * event, so `settingsNow` says whose machine is stepping (the shared chart's `currentSettings`).
 */
export function conversationGuards(settingsNow: () => ResolvedOptions) {
  const plain = plainGuards(settingsNow);
  const allOf =
    (parts: readonly (keyof typeof plain)[]): Guard =>
    (args) =>
      parts.every((part) => plain[part](args));
  const combined = Object.fromEntries(Object.entries(combinedGuards).map(([name, parts]) => [name, allOf(parts)])) as Record<
    CombinedGuardName,
    Guard
  >;
  return { ...plain, ...combined };
}

/** What the guards read of a machine's settings, made once per machine on its first use. */
type GuardSettings = {
  settings: ResolvedOptions;
  stepIs(context: ConversationContext, step: ReturnType<typeof responseStep>): boolean;
  contextSettings: Parameters<typeof overWindow>[1] | undefined;
};

const guardSettings = new WeakMap<ResolvedOptions, GuardSettings>();

function guardSettingsOf(settings: ResolvedOptions): GuardSettings {
  let made = guardSettings.get(settings);
  if (made) return made;
  const limits = { maxToolIterations: settings.maxToolIterations, maxRepairs: settings.output?.maxRepairs ?? 0 };
  const { prices } = settings;
  // Whether the run is over its budget once the pending response is counted (only machines with a budget look).
  const overBudget = settings.budget
    ? (context: ConversationContext) => budgetReached({ ...context, ...committed(context, prices) }, Date.now()) !== undefined
    : undefined;
  made = {
    settings,
    stepIs: (context, step) => responseStep(context, limits, overBudget) === step,
    contextSettings: settings.context && { context: settings.context, profileOf: settings.profileOf },
  };
  guardSettings.set(settings, made);
  return made;
}

/** The guards that combine no other. */
function plainGuards(settingsNow: () => ResolvedOptions) {
  const now = () => guardSettingsOf(settingsNow());
  const stepIs = (context: ConversationContext, step: ReturnType<typeof responseStep>) => now().stepIs(context, step);
  const providersOf = (context: ConversationContext) => settingsNow().profileOf(context.agents.active).providers.length;
  return {
    hasInputProblem: ({ context }: GuardArgs) => context.inputProblem !== undefined,
    isProviderDeltas: ({ event }: GuardArgs) =>
      event.type === 'provider.delta' &&
      Array.isArray(event.deltas) &&
      event.deltas.every((delta) => providerEventProblem(delta) === undefined),
    isProviderFinish: ({ event }: GuardArgs) => event.type === 'provider.finish' && finishProblem(event) === undefined,
    isAgentBatch: ({ event }: GuardArgs) => event.type === 'agent.emitted' && isAgentBatch(event),
    isValidUserMessage: ({ event }: GuardArgs) =>
      (event.type === 'user.message' || event.type === 'user.interrupt') && isValidUserContent(event.content, settingsNow().maxMediaBytes),
    canRetryFailure: ({ context, event }: GuardArgs) => {
      const settings = settingsNow();
      const failure = failureOf(event, settings.requestTimeoutMs);
      return canRetry(context.attempt, settings.retry, failure, failure.retryAfterMs ?? null);
    },
    streamProgressed: ({ context }: GuardArgs) => context.stream.progressed,
    // The steps after a response: each holds for one `responseStep`, so at most one holds at a time.
    missingResponse: ({ context }: GuardArgs) => stepIs(context, 'noResponse'),
    answerAccepted: ({ context }: GuardArgs) => stepIs(context, 'accept'),
    answerRepairable: ({ context }: GuardArgs) => stepIs(context, 'repair'),
    // Named for the chart's words: of the responses without tool calls, only an invalid answer with no repair left.
    noToolCalls: ({ context }: GuardArgs) => stepIs(context, 'rejectAnswer'),
    budgetSpent: ({ context }: GuardArgs) => stepIs(context, 'haltOnBudget'),
    iterationCapReached: ({ context }: GuardArgs) => stepIs(context, 'haltAtIterationCap'),
    doomLoopPersists: ({ context }: GuardArgs) => stepIs(context, 'haltOnDoomLoop'),
    roundNeedsApproval: ({ context }: GuardArgs) => stepIs(context, 'awaitApproval'),
    approvalsComplete: ({ context }: GuardArgs) => !context.round?.some((call) => call.state === 'awaiting-approval'),
    isAwaitingApproval: ({ context, event }: GuardArgs) =>
      (event.type === 'tool.approve' || event.type === 'tool.deny') && isAwaitingApproval(context.round, event.toolCallId),
    roundSettled: ({ context }: GuardArgs) => context.round?.every((call) => call.state === 'settled') ?? false,
    // The result of the round's last unsettled call: the round is over, so no deadline needs re-aiming.
    // A round with a handoff completes through `executingTools`' eventless transition to `handingOff` instead.
    settlesRound: ({ context, event }: GuardArgs) => settlesRound(context, event) && handoffOf(context.round) === undefined,
    // A result that came after its call's deadline, ahead of the `toolDeadline` timer (a stalled event loop).
    resultOverdue: ({ context, event }: GuardArgs) => resultOverdue(context, event, Date.now()),
    isRestored: ({ context }: GuardArgs) => context.restored !== undefined,
    isProgressOfRunningCall: ({ context, event }: GuardArgs) => progressEvent(context, event) !== undefined,
    handoffPending: ({ context }: GuardArgs) => handoffOf(context.round) !== undefined,
    awaitsApprovalInChild: ({ context, event }: GuardArgs) =>
      (event.type === 'tool.approve' || event.type === 'tool.deny') && approvalRelay(context, event.toolCallId) !== undefined,
    agentFailureHalts: ({ context, event }: GuardArgs) => {
      const live = event.type.startsWith('xstate.done.actor.agent:') ? liveResult(context, event) : null;
      return live?.agentOutput !== undefined && live.isError && settingsNow().agentCalls.get(live.call.toolName)?.onChildFailure === 'halt';
    },
    // Long conversations (DESIGN §12).
    canFallBack: ({ context, event }: GuardArgs) =>
      canFallBack(context, failureOf(event, settingsNow().requestTimeoutMs), providersOf(context)),
    hasInputGuardrails: () => settingsNow().guardrails.input.length > 0,
    hasOutputGuardrails: () => settingsNow().guardrails.output.length > 0,
    guardrailTripped: ({ event }: GuardArgs) =>
      event.type.startsWith('xstate.done.actor.') && (event as { output?: GuardrailCheckOutput }).output?.tripped === true,
    moreInputChecks: ({ context }: GuardArgs) => context.control.check + 1 < settingsNow().guardrails.input.length,
    moreOutputChecks: ({ context }: GuardArgs) => context.control.check + 1 < settingsNow().guardrails.output.length,
    hasQueuedMessages: ({ context }: GuardArgs) => context.control.queued.length > 0,
    // In `idle`, the one message queued is the input's prompt (`initialContext`).
    hasPrompt: ({ context }: GuardArgs) => context.control.queued.length > 0,
    steeringQueues: () => settingsNow().steering === 'queue',
    budgetReached: ({ context }: GuardArgs) => budgetReached(context, Date.now()) !== undefined,
    treeBudgetReached: ({ context, event }: GuardArgs) => {
      if (
        event.type !== 'agent.emitted' ||
        (context.control.limits.maxTotalTokens === undefined && context.control.limits.maxCostUsd === undefined)
      )
        return false;
      const toolCallId = agentCallIdOf(event.childId);
      const spend = toolCallId === undefined ? undefined : childSpendRecorded(context, toolCallId, event.events, settingsNow().prices);
      return spend !== undefined && budgetReached({ ...context, ...spend }, Date.now()) !== undefined;
    },
    contextOverWindow: ({ context }: GuardArgs) => {
      const { contextSettings } = now();
      return contextSettings !== undefined && overWindow(context, contextSettings);
    },
    contextLengthExceeded: ({ context, event }: GuardArgs) => {
      const { settings, contextSettings } = now();
      return contextSettings !== undefined && compactsAfter(failureOf(event, settings.requestTimeoutMs), context, contextSettings);
    },
    compactionUsable: ({ event }: GuardArgs) => compactionProblem((event as { output?: unknown }).output) === undefined,
    executionHalts: ({ context, event }: GuardArgs) =>
      event.type.startsWith('xstate.error.actor.') && liveCall(context, event.type) !== null && HaltError.isInstance(thrownBy(event)),
  };
}
