import { assign, emit, enqueueActions, stopChild } from 'xstate';
import type { createToolExecutionLogic } from '../actors/tool-execution.js';
import type { HaltError } from '../tools/halt-error.js';
import { answerError, objectRecorded, partialObjectStreamed, repairStarted } from './answer-repair.js';
import type { Effects } from './effects.js';
import { freshAttempt } from './fresh-attempt.js';
import type { ResolvedOptions } from './options.js';
import { errorRecorded, failureOf, failureRecorded, inputError, retryEvent, retryScheduled } from './request-failure.js';
import { committed, finalTextRecorded, responseReceived, roundStarted } from './response-commit.js';
import {
  approvalsRequested,
  callApproved,
  callDenied,
  callsRefused,
  callsTimedOut,
  childIdOf,
  interruptedReported,
  liveResult,
  queuedCallsStarted,
  resultRecorded,
  roundClosed,
  roundCompleted,
  runCancelled,
  runningCallIds,
  thrownBy,
  thrownRecorded,
} from './round-results.js';
import { haltRecorded, invalidMessageText, outcomeMarked, outOfStateText, runOutput, unknownCallText } from './run-context.js';
import { handedOff, requestStartedEvent } from './handoffs.js';
import { agentEventForwarded, agentsStopped, approvalRelay, bothEffects, runningAgentsFinished, type StoppedChild } from './agent-calls.js';
import { errorResult, resultTexts, toolResult } from './tool-round.js';
import type { ConversationContext, ConversationEmittedEvent, ConversationEvent } from './types.js';

type ExecuteToolActor = { src: 'executeTool'; logic: ReturnType<typeof createToolExecutionLogic>; id: string | undefined };

// Typed once for the machine, so each action below is checked against its context, events and emitted events.
const assignContext = assign<ConversationContext, ConversationEvent, undefined, ConversationEvent, never>;
const emitEvent = emit<ConversationContext, ConversationEvent, undefined, ConversationEvent, ConversationEmittedEvent>;
const stopChildOf = stopChild<ConversationContext, ConversationEvent, undefined, ConversationEvent>;
const enqueue = enqueueActions<
  ConversationContext,
  ConversationEvent,
  undefined,
  ConversationEvent,
  ExecuteToolActor,
  never,
  never,
  never,
  ConversationEmittedEvent
>;

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

/**
 * The conversation machine's actions, by the name the chart uses: each applies a pure function of
 * the context (and the event) from `response-commit.ts`, `round-results.ts`, `request-failure.ts`,
 * `answer-repair.ts` or `run-context.ts`.
 */
export function conversationActions(settings: ResolvedOptions) {
  const { output, prices, toolTimeoutOf, capToolResult, agentCalls, profileOf } = settings;
  /** The text a tool's `HaltError` ends the run with (the guard `executionHalts` checked it is one). */
  const haltText = (thrown: unknown) => capToolResult((thrown as HaltError).content);
  // Without handoffs every request has one provider: its settings are made once, not per event.
  const failureSettingsOf = (agent: string | undefined) => ({ retry: settings.retry, prices, model: profileOf(agent).provider.model });
  const fixedFailureSettings = settings.handoffs ? undefined : failureSettingsOf(undefined);
  const responseSettingsOf = (agent: string | undefined) => {
    const profile = profileOf(agent);
    return { ...settings, tools: profile.tools, provider: profile.provider };
  };
  const fixedResponseSettings = settings.handoffs ? undefined : responseSettingsOf(undefined);
  return {
    failOnInput: assignContext(({ context }) => errorRecorded(context, inputError(context))),
    appendUserMessage: assignContext(({ context, event }) =>
      event.type === 'user.message' ? { messages: [...context.messages, { role: 'user', content: event.content }] } : {},
    ),
    rejectInvalidMessage: emitEvent(({ event }) => ({ type: 'event.rejected', eventType: event.type, message: invalidMessageText(event) })),
    rejectOutOfState: emitEvent(({ event, self }) => ({
      type: 'event.rejected',
      eventType: event.type,
      message: outOfStateText(event.type, self.getSnapshot().value),
    })),
    rejectUnknownCall: emitEvent(({ event }) => ({ type: 'event.rejected', eventType: event.type, message: unknownCallText(event) })),
    // Every transition into `requesting` starts an attempt with one of these (or `completeRound`),
    // in the transition's one context copy rather than an entry action of its own.
    firstAttempt: assignContext({ attempt: 1, ...freshAttempt }),
    nextAttempt: assignContext(({ context }) => ({ attempt: context.attempt + 1, ...freshAttempt })),
    emitRequestStarted: emitEvent(({ context }) => requestStartedEvent(context, profileOf(context.agents.active).provider)),
    // Runs for every batch of deltas, so nothing is built that is not needed: the stream is marked
    // as moved once per timeout window, and only a machine with an `output` schema parses the answer.
    forwardDeltas: enqueue(({ context, event, enqueue }) => {
      if (event.type !== 'provider.delta') return;
      if (!context.stream.partial || !context.stream.progressed)
        enqueue.assign({ stream: { ...context.stream, partial: true, progressed: true } });
      for (const delta of event.deltas) enqueue.emit(delta);
      if (output) apply(enqueue, partialObjectStreamed(context.stream, event.deltas));
    }),
    resetProgress: assignContext(({ context }) => ({ stream: { ...context.stream, progressed: false } })),
    receiveResponse: enqueue(({ context, event, enqueue }) => {
      if (event.type !== 'provider.finish') return;
      apply(enqueue, responseReceived(context, event, fixedResponseSettings ?? responseSettingsOf(context.agents.active)));
    }),
    recordFinalText: assignContext(({ context }) => finalTextRecorded(context)),
    commitResponse: assignContext(({ context }) => committed(context, prices)),
    startRound: enqueue(({ context, enqueue }) => apply(enqueue, roundStarted(context, prices))),
    requestApprovals: enqueue(({ context, enqueue }) => apply(enqueue, approvalsRequested(context.round))),
    approveCall: assignContext(({ context, event }) =>
      event.type === 'tool.approve' ? { round: callApproved(context.round, event.toolCallId) } : {},
    ),
    denyCall: enqueue(({ context, event, enqueue }) => {
      if (event.type === 'tool.deny') apply(enqueue, callDenied(context.round, event.toolCallId, event.reason));
    }),
    startQueuedCalls: enqueue(({ context, enqueue }) =>
      startCalls(enqueue, queuedCallsStarted(context, settings.maxConcurrentTools, toolTimeoutOf, Date.now(), agentCalls)),
    ),
    // A child's event goes out as `agent.event`, with the path down to the child that emitted it.
    forwardAgentEvent: enqueue(({ context, event, enqueue }) => {
      if (event.type === 'agent.emitted') apply(enqueue, agentEventForwarded(context, event));
    }),
    // An approval for a call down the tree goes to the running child it belongs under.
    // (A child that is gone — stopped, or not restored — is skipped: XState would throw on the send.)
    relayApproval: enqueue(({ context, event, self, enqueue }) => {
      const child = event.type === 'tool.approve' || event.type === 'tool.deny' ? approvalRelay(context, event.toolCallId) : undefined;
      if (child && childrenIn(self)(child) !== undefined) enqueue.sendTo(child, event);
    }),
    // Running agent calls are stopped with the run (cancel, a halt): each reports what its child had.
    finishRunningAgents: enqueue(({ context, event, self, enqueue }) => {
      const reason = event.type === 'cancel' ? 'cancelled' : 'halted';
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
    recordToolError: enqueue(({ context, event, enqueue }) =>
      apply(
        enqueue,
        thrownRecorded(context, event, (call, thrown) => errorResult(call, capToolResult(resultTexts.failed(thrown)))),
      ),
    ),
    // The halting call's result is the text the tool halted with, not an error.
    recordHalt: enqueue(({ context, event, enqueue }) =>
      apply(
        enqueue,
        thrownRecorded(context, event, (call, thrown) => toolResult(call, haltText(thrown))),
      ),
    ),
    // Every running call whose time is up: stopped (its signal aborts) and answered with the timeout text.
    timeOutCalls: enqueue(({ context, self, enqueue }) =>
      stopCalls(enqueue, callsTimedOut(context, toolTimeoutOf, Date.now()), (agents) =>
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
    markToolHalt: assignContext(({ context, event }) => haltRecorded(context.outcome, 'tool_halt', haltText(thrownBy(event)))),
    closeHaltedRound: enqueue(({ context, enqueue }) =>
      apply(enqueue, roundClosed(context.round ?? [], resultTexts.halted, context.messages)),
    ),
    cancelRun: enqueue(({ context, event, enqueue }) =>
      apply(enqueue, runCancelled(context, event.type === 'cancel' ? event.reason : undefined)),
    ),
    recordFailure: assignContext(({ context, event }) =>
      failureRecorded(
        context,
        failureOf(event, settings.requestTimeoutMs),
        fixedFailureSettings ?? failureSettingsOf(context.agents.active),
      ),
    ),
    scheduleRetry: assignContext(({ context }) => retryScheduled(context, settings.retry)),
    emitRetry: emitEvent(({ context }) => retryEvent(context)),
    recordObject: assignContext(({ context }) => objectRecorded(context)),
    startRepair: enqueue(({ context, enqueue }) => apply(enqueue, repairStarted(context, output))),
    failOnAnswer: assignContext(({ context }) => errorRecorded(context, answerError(context))),
    clearRestored: assignContext({ restored: undefined }),
    // The calls a restart interrupted got their result while the run was restored; their events go out now.
    reportInterrupted: enqueue(({ context, enqueue }) => apply(enqueue, interruptedReported(context))),
    markDone: assignContext(({ context }) => outcomeMarked(context.outcome, 'done')),
    markHalted: assignContext(({ context }) => outcomeMarked(context.outcome, 'halted')),
    markError: assignContext(({ context }) => outcomeMarked(context.outcome, 'error')),
  };
}
