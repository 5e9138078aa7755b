import { type AnyActorRef, assign, emit, enqueueActions, stopChild } from 'xstate';
import type { createToolExecutionLogic } from '../../actors/tool-execution.js';
import type { HaltError } from '../../tools/halt-error.js';
import type { Provider } from '../../model/provider.js';
import type { Tool } from '../../tools/define-tool.js';
import { answerError, objectRecorded, partialObjectStreamed, repairStarted } from '../controls/answer-repair.js';
import type { Effects } from '../names/effects.js';
import { freshAttempt } from '../rounds/fresh-attempt.js';
import type { ResolvedOptions } from './options.js';
import { errorRecorded, failureOf, failureRecorded, inputError, retryEvent, retryScheduled } from '../controls/request-failure.js';
import { committed, finalTextRecorded, responseReceived, roundStarted } from '../rounds/response-commit.js';
import {
  approvalsRequested,
  callApproved,
  callDenied,
  callsRefused,
  callsTimedOut,
  childIdOf,
  interruptedReported,
  liveResult,
  progressEvent,
  queuedCallsStarted,
  resultRecorded,
  roundClosed,
  roundCompleted,
  runCancelled,
  runningCallIds,
  thrownBy,
  thrownRecorded,
} from '../rounds/round-results.js';
import { storedUserContent } from '../../model/user-content.js';
import { invalidMessageText, invalidProviderEventText, outOfStateText, runOutput, unknownCallText } from '../rounds/run-context.js';
import { handedOff, requestStartedEvent } from '../agents/handoffs.js';
import {
  agentEventForwarded,
  agentsStopped,
  approvalRelay,
  bothEffects,
  invalidAgentBatchText,
  runningAgentsFinished,
  type StoppedChild,
} from '../rounds/agent-calls.js';
import { errorResult, resultTexts, toolResult } from '../rounds/tool-round.js';
import type { GuardrailCheckOutput } from '../../actors/guardrail-check.js';
import { agentCallIdOf } from '../rounds/agent-calls.js';
import { budgetDeadlineId, budgetReached, childSpendRecorded, runLimits, timeReached } from '../policies/budget.js';
import { budgetHalted, budgetResultText } from '../controls/budget-halt.js';
import { haltRecorded, outcomeMarked } from '../rounds/run-outcome.js';
import { fellBack } from '../controls/fallback.js';
import {
  type CompactionOutput,
  compactionApplied,
  compactionFailureError,
  compactionStarted,
  unusableCompactionError,
} from '../controls/compaction.js';
import { guardrailError, guardrailPassed, guardrailTripped } from '../controls/guardrails.js';
import { messageQueued, queuedKept, queuedMessageTaken, queuedTaken, runInterrupted } from '../controls/steering.js';
import type { ConversationContext, ConversationEmittedEvent, ConversationEvent, ToolProgressEvent } from '../names/types.js';
import { appended } from '../../util/appended.js';

type ExecuteToolActor = { src: 'executeTool'; logic: ReturnType<typeof createToolExecutionLogic>; id: string | undefined };

// Typed once for the machine, so each action below is checked against its context, events and emitted events.
const assignContext = assign<ConversationContext, ConversationEvent, undefined, ConversationEvent, never>;
const emitEvent = emit<ConversationContext, ConversationEvent, undefined, ConversationEvent, ConversationEmittedEvent>;
const stopChildOf = stopChild<ConversationContext, ConversationEvent, undefined, ConversationEvent>;
/** `enqueueActions` typed for the machine, with the parameters the chart gives the action (if any). */
const enqueueWith = <TParams extends Record<string, unknown> | undefined>() =>
  enqueueActions<
    ConversationContext,
    ConversationEvent,
    TParams,
    ConversationEvent,
    ExecuteToolActor,
    never,
    never,
    never,
    ConversationEmittedEvent
  >;
const enqueue = enqueueWith<undefined>();

/** `assign` / `enqueueActions` for actions the chart gives a parameter (the guardrail phase, the state interrupted). */
const assignWithPhase = assign<ConversationContext, ConversationEvent, { phase: 'input' | 'output' }, ConversationEvent, never>;
const assignWithCause = assign<ConversationContext, ConversationEvent, { cause: 'window' | 'context_length' }, ConversationEvent, never>;
const enqueueWithState = enqueueWith<{ state: string }>();

/** What every first attempt sets: shared, since contexts are never mutated. */
const firstAttempt: Partial<ConversationContext> = { attempt: 1, ...freshAttempt };

/** The answer to an event the run does not take, and why. */
const rejection = (event: ConversationEvent, message: string): ConversationEmittedEvent => ({
  type: 'event.rejected',
  eventType: event.type,
  message,
});
/** An action that answers the event with `event.rejected`, worded by `messageOf`. */
const rejectWith = (messageOf: (event: ConversationEvent) => string) => emitEvent(({ event }) => rejection(event, messageOf(event)));

type Sink = { assign: (values: Partial<ConversationContext>) => void; emit: (event: ConversationEmittedEvent) => void };

/** Reads a child actor as it is now, and its own children (a stopped agent call reports what its child had). */
function childrenIn(self: { getSnapshot(): unknown }): (id: string) => StoppedChild | undefined {
  return (id) => {
    const children = (self.getSnapshot() as { children?: Record<string, { getSnapshot(): unknown } | undefined> }).children;
    const child = children?.[id];
    if (!child) return undefined;
    return { context: (child.getSnapshot() as { context?: unknown }).context, childOf: childrenIn(child) };
  };
}

/** Applies what a pure function decided: the context change, then its events in order. */
function apply(sink: Sink, effects: Effects): void {
  if (effects.context) sink.assign(effects.context);
  if (effects.emitted) for (const event of effects.emitted) sink.emit(event);
}

type StartSink = Sink & {
  spawnChild: (src: 'executeTool', options: { id: string; input: never }) => void;
  sendTo: (to: string, event: ConversationEvent) => void;
};

/**
 * Starts the calls `queuedCallsStarted` chose: each child is spawned before its `tool.started`, as
 * the events were always ordered; an agent call's child is a conversation, spawned idle and then
 * asked its question.
 */
function startCalls(sink: StartSink, started: ReturnType<typeof queuedCallsStarted>): void {
  if (!started) return;
  for (const start of started.starts) {
    sink.spawnChild((start.kind === 'tool' ? 'executeTool' : start.src) as 'executeTool', { id: start.id, input: start.input as never });
    if (start.kind === 'tool') sink.emit(start.event);
    else {
      sink.sendTo(start.id, { type: 'user.message', content: start.prompt });
      for (const event of start.events) sink.emit(event);
    }
  }
  sink.assign({ round: started.round });
}

/** Stops the calls whose time is up (their signals abort), then applies their results and what their agent children had. */
function stopCalls(
  sink: Sink & { stopChild: (id: string) => void },
  timedOut: ReturnType<typeof callsTimedOut>,
  agentsOf: (calls: NonNullable<ReturnType<typeof callsTimedOut>>['agents']) => Effects,
): void {
  if (!timedOut) return;
  const agents = agentsOf(timedOut.agents);
  for (const id of timedOut.stop) sink.stopChild(id);
  apply(sink, bothEffects(agents, timedOut.effects));
}

/** What the actions read of a machine's settings, made once per machine on its first use. */
function actionSettingsOf(settings: ResolvedOptions) {
  const { profileOf, capToolResult } = settings;
  // The provider the request is made with: the active agent's, at the fallback list's current index.
  const providerOf = (context: ConversationContext) => {
    const profile = profileOf(context.agents.active);
    return profile.providers[context.control.provider] ?? profile.provider;
  };
  const failureSettingsWith = (provider: Provider) => ({ retry: settings.retry, prices: settings.prices, model: provider.model });
  const responseSettingsWith = (tools: ReadonlyMap<string, Tool>, provider: Provider) => ({ ...settings, tools, provider });
  // With one agent and one provider, every request's settings are the same: made once, not per event.
  const only = settings.handoffs || profileOf(undefined).providers.length > 1 ? undefined : profileOf(undefined);
  const fixedFailureSettings = only && failureSettingsWith(only.provider);
  const fixedResponseSettings = only && responseSettingsWith(only.tools, only.provider);
  return {
    settings,
    windowSettings: settings.context && { context: settings.context, profileOf },
    providerOf,
    /** The text a tool's `HaltError` ends the run with (the guard `executionHalts` checked it is one). */
    haltText: (thrown: unknown) => capToolResult((thrown as HaltError).content),
    failureSettingsOf: (context: ConversationContext) => fixedFailureSettings ?? failureSettingsWith(providerOf(context)),
    responseSettingsOf: (context: ConversationContext) =>
      fixedResponseSettings ?? responseSettingsWith(profileOf(context.agents.active).tools, providerOf(context)),
  };
}

type ActionSettings = ReturnType<typeof actionSettingsOf>;

/**
 * The conversation machine's actions, by the name the chart uses: each applies a pure function of
 * the context (and the event) from `response-commit.ts`, `round-results.ts`, `request-failure.ts`,
 * `answer-repair.ts` or `run-context.ts`.
 *
 * One table serves every machine of the process, each action reading the settings of the machine
 * its actor runs (`settingsOf(self)`: the shared chart's): a machine made per tenant or per request
 * then costs its settings, not a copy of every action.
 */
export function conversationActions(settingsOf: (self: AnyActorRef) => ResolvedOptions) {
  const made = new WeakMap<ResolvedOptions, ActionSettings>();
  const at = (self: AnyActorRef): ActionSettings => {
    const settings = settingsOf(self);
    let found = made.get(settings);
    if (!found) {
      found = actionSettingsOf(settings);
      made.set(settings, found);
    }
    return found;
  };
  const haltOnReachedBudget = enqueue(({ context, enqueue }) => {
    const reached = budgetReached(context, Date.now());
    if (reached) apply(enqueue, budgetHalted(context, reached));
  });
  return {
    failOnInput: assignContext(({ context }) => errorRecorded(context, inputError(context))),
    // A `user.interrupt` with nothing to interrupt starts the run as a message would (the chart's idle).
    appendUserMessage: assignContext(({ context, event }) =>
      event.type === 'user.message' || event.type === 'user.interrupt'
        ? { messages: appended(context.messages, { role: 'user', content: storedUserContent(event.content) }) }
        : {},
    ),
    rejectInvalidMessage: emitEvent(({ event, self }) => rejection(event, invalidMessageText(event, settingsOf(self).maxMediaBytes))),
    rejectOutOfState: emitEvent(({ event, self }) => rejection(event, outOfStateText(event.type, self.getSnapshot().value))),
    rejectInvalidProviderEvent: rejectWith(invalidProviderEventText),
    rejectInvalidAgentBatch: rejectWith((event) => invalidAgentBatchText(event as { childId?: unknown; events?: unknown })),
    rejectUnknownCall: rejectWith(unknownCallText),
    // Every transition into `requesting` starts an attempt with one of these (or `completeRound`),
    // in the transition's one context copy rather than an entry action of its own.
    // A new request starts with the first provider of a fallback list again.
    firstAttempt: assignContext(({ context }) =>
      context.control.provider === 0 ? firstAttempt : { ...firstAttempt, control: { ...context.control, provider: 0 } },
    ),
    nextAttempt: assignContext(({ context }) => ({ attempt: context.attempt + 1, ...freshAttempt })),
    emitRequestStarted: emitEvent(({ context, self }) => requestStartedEvent(context, at(self).providerOf(context))),
    // Runs for every batch of deltas, so nothing is built that is not needed: the stream is marked
    // as moved once per timeout window, and only a machine with an `output` schema parses the answer.
    forwardDeltas: enqueue(({ context, event, self, enqueue }) => {
      if (event.type !== 'provider.delta') return;
      if (!context.stream.partial || !context.stream.progressed)
        enqueue.assign({ stream: { ...context.stream, partial: true, progressed: true } });
      for (const delta of event.deltas) enqueue.emit(delta);
      if (settingsOf(self).output) apply(enqueue, partialObjectStreamed(context.stream, event.deltas));
    }),
    resetProgress: assignContext(({ context }) => ({ stream: { ...context.stream, progressed: false } })),
    receiveResponse: enqueue(({ context, event, self, enqueue }) => {
      if (event.type !== 'provider.finish') return;
      const { responseSettingsOf, windowSettings } = at(self);
      apply(enqueue, responseReceived(context, event, responseSettingsOf(context)));
      // The prompt's real size, the base of the next estimate (machines with a context window).
      if (windowSettings && event.usage.inputTokens > 0)
        enqueue.assign({
          control: { ...context.control, lastPrompt: { inputTokens: event.usage.inputTokens, messages: context.messages.length } },
        });
    }),
    recordFinalText: assignContext(({ context }) => finalTextRecorded(context)),
    commitResponse: assignContext(({ context, self }) => committed(context, settingsOf(self).prices)),
    startRound: enqueue(({ context, self, enqueue }) => apply(enqueue, roundStarted(context, settingsOf(self).prices))),
    requestApprovals: enqueue(({ context, enqueue }) => apply(enqueue, approvalsRequested(context.round))),
    approveCall: assignContext(({ context, event }) =>
      event.type === 'tool.approve' ? { round: callApproved(context.round, event.toolCallId) } : {},
    ),
    denyCall: enqueue(({ context, event, enqueue }) => {
      if (event.type === 'tool.deny') apply(enqueue, callDenied(context.round, event.toolCallId, event.reason));
    }),
    startQueuedCalls: enqueue(({ context, self, enqueue }) => {
      const { maxConcurrentTools, toolTimeoutOf, agentCalls } = settingsOf(self);
      startCalls(enqueue, queuedCallsStarted(context, maxConcurrentTools, toolTimeoutOf, Date.now(), agentCalls));
    }),
    // A child's events go out as `agent.event`s, with the path down to the child that emitted them.
    // Their `request.finished`s (from any depth) count toward the tree's spend as they come.
    forwardAgentEvent: enqueue(({ context, event, self, enqueue }) => {
      if (event.type !== 'agent.emitted') return;
      apply(enqueue, agentEventForwarded(context, event));
      const toolCallId = agentCallIdOf(event.childId);
      const spend = toolCallId === undefined ? undefined : childSpendRecorded(context, toolCallId, event.events, settingsOf(self).prices);
      if (spend) enqueue.assign(spend);
    }),
    // An approval for a call down the tree goes to the running child it belongs under.
    // (A child that is gone — stopped, or not restored — is skipped: XState would throw on the send.)
    relayApproval: enqueue(({ context, event, self, enqueue }) => {
      const child = event.type === 'tool.approve' || event.type === 'tool.deny' ? approvalRelay(context, event.toolCallId) : undefined;
      if (child && childrenIn(self)(child) !== undefined) enqueue.sendTo(child, event);
    }),
    // Running agent calls are stopped with the run (cancel, a halt): each reports what its child had.
    finishRunningAgents: enqueue(({ context, event, self, enqueue }) => {
      const reason = event.type === 'cancel' || event.type === 'user.interrupt' ? 'cancelled' : 'halted';
      apply(enqueue, runningAgentsFinished(context, reason, childrenIn(self), runOutput));
    }),
    // A handoff call's round completed: the next request is the new agent's.
    handOff: enqueue(({ context, enqueue }) => apply(enqueue, handedOff(context))),
    markAgentHalt: assignContext(({ context, event }) => haltRecorded(context.outcome, 'agent_failed', liveResult(context, event)?.text)),
    // A finished child stays in the snapshot's children until stopped: without this, every round
    // would leave one behind, growing snapshots and making each spawn copy a longer list.
    releaseChild: stopChildOf(({ event }) => childIdOf(event.type)),
    stopRunningCalls: enqueue(({ context, enqueue }) => {
      for (const id of runningCallIds(context)) enqueue.stopChild(id);
    }),
    recordOutcome: enqueue(({ context, event, enqueue }) => apply(enqueue, resultRecorded(context, event))),
    recordToolError: enqueue(({ context, event, self, enqueue }) => {
      const { capToolResult } = settingsOf(self);
      apply(
        enqueue,
        thrownRecorded(context, event, (call, thrown) => errorResult(call, capToolResult(resultTexts.failed(thrown)))),
      );
    }),
    // The halting call's result is the text the tool halted with, not an error.
    recordHalt: enqueue(({ context, event, self, enqueue }) => {
      const { haltText } = at(self);
      apply(
        enqueue,
        thrownRecorded(context, event, (call, thrown) => toolResult(call, haltText(thrown))),
      );
    }),
    // Every running call whose time is up: stopped (its signal aborts) and answered with the timeout text.
    timeOutCalls: enqueue(({ context, self, enqueue }) =>
      stopCalls(enqueue, callsTimedOut(context, settingsOf(self).toolTimeoutOf, Date.now()), (agents) =>
        agentsStopped(context, agents, 'timeout', childrenIn(self), runOutput),
      ),
    ),
    // The round's results go into the history, and the request that follows is a first attempt.
    completeRound: assignContext(({ context }) => roundCompleted(context, context.round ?? [])),
    // The last result of the round settles its call and completes the round in one context copy.
    completeRoundWithResult: enqueue(({ context, event, enqueue }) => apply(enqueue, resultRecorded(context, event, true))),
    haltAtIterationCap: enqueue(({ context, enqueue }) =>
      apply(enqueue, callsRefused(context, 'max_iterations', resultTexts.iterationLimit)),
    ),
    haltOnDoomLoop: enqueue(({ context, enqueue }) => apply(enqueue, callsRefused(context, 'doom_loop', resultTexts.doomLoop))),
    markToolHalt: assignContext(({ context, event, self }) =>
      haltRecorded(context.outcome, 'tool_halt', at(self).haltText(thrownBy(event))),
    ),
    closeHaltedRound: enqueue(({ context, enqueue }) =>
      apply(enqueue, roundClosed(context.round ?? [], resultTexts.halted, context.messages)),
    ),
    cancelRun: enqueue(({ context, event, enqueue }) =>
      apply(enqueue, runCancelled(context, event.type === 'cancel' ? event.reason : undefined)),
    ),
    recordFailure: assignContext(({ context, event, self }) => {
      const { settings, failureSettingsOf } = at(self);
      return failureRecorded(context, failureOf(event, settings.requestTimeoutMs, context.messages), failureSettingsOf(context));
    }),
    scheduleRetry: assignContext(({ context, self }) => retryScheduled(context, settingsOf(self).retry)),
    emitRetry: emitEvent(({ context }) => retryEvent(context)),
    // The guard `isProgressOfRunningCall` let it through: the event is there.
    reportProgress: emitEvent(({ context, event }) => progressEvent(context, event) as ToolProgressEvent),
    recordObject: assignContext(({ context }) => objectRecorded(context)),
    startRepair: enqueue(({ context, self, enqueue }) => apply(enqueue, repairStarted(context, settingsOf(self).output))),
    failOnAnswer: assignContext(({ context }) => errorRecorded(context, answerError(context))),
    clearRestored: assignContext({ restored: undefined }),
    // The calls a restart interrupted got their result while the run was restored; their events go out now.
    reportInterrupted: enqueue(({ context, enqueue }) => apply(enqueue, interruptedReported(context))),
    markDone: assignContext(({ context }) => outcomeMarked(context.outcome, 'done')),
    // Messages still queued stay in the history, so the next turn has them.
    markHalted: assignContext(({ context }) => ({ ...outcomeMarked(context.outcome, 'halted'), ...queuedKept(context) })),
    markError: assignContext(({ context }) => ({ ...outcomeMarked(context.outcome, 'error'), ...queuedKept(context) })),
    // Long conversations (DESIGN §12): the run's clock and limits start with its message.
    // Compaction (machines with `context`): the cause is the chart's (a parameter).
    startCompaction: assignWithCause(({ context, self }, params) => {
      const { windowSettings } = at(self);
      return windowSettings ? compactionStarted(context, windowSettings, params.cause) : {};
    }),
    applyCompaction: enqueue(({ context, event, self, enqueue }) => {
      const output = (event as { output?: CompactionOutput }).output;
      const { windowSettings, settings } = at(self);
      if (output && windowSettings) apply(enqueue, compactionApplied(context, output, { ...windowSettings, prices: settings.prices }));
    }),
    failOnCompaction: assignContext(({ context, event }) =>
      errorRecorded(context, unusableCompactionError((event as { output?: unknown }).output)),
    ),
    failOnCompactionError: assignContext(({ context, event, self }) =>
      errorRecorded(context, compactionFailureError(failureOf(event, settingsOf(self).requestTimeoutMs))),
    ),
    nextCompactionAttempt: assignContext(({ context }) => ({ attempt: context.attempt + 1 })),
    // Only a run with a time limit reads the clock: a snapshot holds no time it does not need (a
    // Restate replay must write the same bytes).
    startRun: enqueue(({ context, self, enqueue }) => {
      const settings = settingsOf(self);
      const now = settings.budget?.maxDurationMs !== undefined || context.control.limits.deadline !== undefined ? Date.now() : 0;
      const limits = runLimits(settings.budget, context.control.limits, now);
      if (limits !== context.control.limits || limits.deadline !== undefined)
        enqueue.assign({ control: { ...context.control, limits, startedAt: limits.deadline === undefined ? null : now } });
      if (limits.deadline !== undefined)
        enqueue.raise({ type: 'budget.deadline' }, { id: budgetDeadlineId, delay: Math.max(0, limits.deadline - now) });
    }),
    startChecks: assignContext(({ context }) => ({ control: { ...context.control, check: 0 } })),
    passGuardrail: enqueue(({ context, event, enqueue }) => {
      const output = (event as { output?: GuardrailCheckOutput }).output;
      if (output) apply(enqueue, guardrailPassed(context, output.name, output.phase));
    }),
    haltOnGuardrail: enqueue(({ context, event, enqueue }) => {
      const output = (event as { output?: GuardrailCheckOutput }).output;
      if (output) apply(enqueue, guardrailTripped(context, { name: output.name, phase: output.phase, reason: output.reason }));
    }),
    // The phase is the chart's (a parameter): a check that threw, or did not answer in time.
    failOnGuardrail: assignWithPhase(({ context, event, self }, params) =>
      errorRecorded(context, guardrailError(context, params.phase, settingsOf(self).guardrails, thrownBy(event))),
    ),
    failOnGuardrailTimeout: assignWithPhase(({ context, self }, params) =>
      errorRecorded(context, guardrailError(context, params.phase, settingsOf(self).guardrails)),
    ),
    queueMessage: enqueue(({ context, event, enqueue }) => {
      if (event.type === 'user.message' || event.type === 'user.interrupt')
        apply(enqueue, messageQueued(context, storedUserContent(event.content)));
    }),
    takeQueuedMessages: assignContext(({ context }) => queuedTaken(context)),
    takeQueuedMessage: assignContext(({ context }) => queuedMessageTaken(context)),
    // The state interrupted is the chart's (a parameter).
    interruptRun: enqueueWithState(({ context, event, self, enqueue }, params) => {
      if (event.type === 'user.interrupt')
        apply(enqueue, runInterrupted(context, storedUserContent(event.content), params.state, settingsOf(self).prices));
    }),
    fallBack: enqueue(({ context, event, self, enqueue }) => {
      const { profileOf, requestTimeoutMs } = settingsOf(self);
      apply(enqueue, fellBack(context, profileOf(context.agents.active).providers, failureOf(event, requestTimeoutMs)));
    }),
    // Before a request, or as an agent call's request comes up: the same halt, under the chart's two names.
    haltOnBudget: haltOnReachedBudget,
    haltOnTreeBudget: haltOnReachedBudget,
    haltOnDeadline: enqueue(({ context, enqueue }) => apply(enqueue, budgetHalted(context, timeReached(context, Date.now())))),
    // The response with tool calls used the budget up: committed (the guard counted it), its calls refused.
    haltOnSpentBudget: enqueue(({ context, enqueue }) => {
      const reached = budgetReached(context, Date.now()) ?? timeReached(context, Date.now());
      const refused = callsRefused(context, 'budget', budgetResultText(reached));
      apply(enqueue, bothEffects(refused, { context: { control: { ...context.control, budget: reached } } }));
    }),
  };
}
