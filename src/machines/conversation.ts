import { and, assign, emit, enqueueActions, setup, stopChild } from 'xstate';
import { createProviderCallLogic, type ProviderCallEvent } from '../actors/provider-call.js';
import { createToolExecutionLogic, type ToolExecutionInput, type ToolExecutionOutput } from '../actors/tool-execution.js';
import { toProviderError } from '../providers/errors/classify-error.js';
import { ProviderError } from '../providers/errors/provider-error.js';
import { findMessagesProblem, textOf, type Message, type ToolResultPart } from '../providers/messages.js';
import { addUsage, emptyUsage } from '../providers/usage.js';
import { findJsonProblem } from '../util/json-problem.js';
import { doomLoopNotice, findRepetition, maxDoomLoopPeriod, recentCallSignatures, signatureOfPart } from './doom-loop.js';
import { resolveOptions, type ConversationOptions } from './options.js';
import { addCost, zeroCost } from './pricing.js';
import { checkAnswer, type InferObject, repairPrompt } from './structured-output.js';
import { parsePartialJson } from '../util/parse-partial-json.js';
import type { StandardSchemaV1 } from '../tools/standard-schema.js';
import type { JSONSchema } from '../tools/validate.js';
import { freshAttempt } from './fresh-attempt.js';
import { resumeRunsOnRestore } from './resume-runs.js';
import { rearmTimersOnRestore } from './resume-timers.js';
import { canRetry, retryAfterCapNote, retryDelay } from './retry-policy.js';
import { HaltError } from '../tools/halt-error.js';
import { capText } from '../tools/result-text.js';
import { errorResult, planResponse, resultTexts, settleRemaining, toolMessage, toolResult } from './tool-round.js';
import type {
  ConversationContext,
  ConversationEmittedEvent,
  ConversationEvent,
  ConversationInput,
  ConversationMachine,
  DoomLoopVerdict,
  RoundCall,
  RunError,
  RunOutput,
} from './types.js';

type FinishEvent = Extract<ProviderCallEvent, { type: 'provider.finish' }>;

/** Child ids of tool calls: unique per round, and the round's index of the call at the end. */
const toolCallActorId = (iteration: number, index: number) => `toolCall-${iteration}-${index}`;
const toolCallIndexOf = (eventType: string) => Number(eventType.slice(eventType.lastIndexOf('-') + 1));
/** The child id in an `xstate.done.actor.<id>` / `xstate.error.actor.<id>` event type. */
const childIdOf = (eventType: string) => eventType.slice(eventType.indexOf('.actor.') + '.actor.'.length);

/**
 * The running call of this round that a done/error event of an execution actor belongs to. Anything
 * else (a stale child, or a caller sending `xstate.*.actor.*` by hand) is ignored rather than trusted.
 */
function liveCall(context: ConversationContext, eventType: string): { index: number; call: RoundCall } | null {
  const index = toolCallIndexOf(eventType);
  if (!Number.isInteger(index) || childIdOf(eventType) !== toolCallActorId(context.iterations, index)) return null;
  const call = context.round?.[index];
  return call?.state === 'running' ? { index, call } : null;
}

/** A done event's result, when it really is the end of a running call and names that call. */
function liveResult(
  context: ConversationContext,
  event: { type: string },
): { index: number; call: RoundCall; text: string; isError: boolean } | null {
  const found = liveCall(context, event.type);
  const output: unknown = 'output' in event ? event.output : undefined;
  if (!found || typeof output !== 'object' || output === null) return null;
  const { toolCallId, result, isError } = output as Partial<ToolExecutionOutput>;
  if (toolCallId !== found.call.toolCallId || typeof result !== 'string') return null;
  return { ...found, text: result, isError: isError === true };
}

/** The error a tool threw, from an `xstate.error.actor.*` event. */
const thrownBy = (event: { type: string }): unknown => ('error' in event ? event.error : undefined);

/** The earliest deadline among the running calls of a round. */
function earliestDeadline(round: RoundCall[] | null): number | undefined {
  let earliest: number | undefined;
  for (const call of round ?? []) {
    if (call.state === 'running' && call.deadline !== undefined && (earliest === undefined || call.deadline < earliest))
      earliest = call.deadline;
  }
  return earliest;
}

/** The longest delay timers take (about 24.8 days); with no running call the deadline never fires. */
const maxTimerDelayMs = 2_147_483_647;

function runErrorOf(error: ProviderError): RunError {
  const cause = error.cause;
  const name = cause instanceof Error && cause.name !== 'Error' ? cause.name : error.name;
  return {
    name,
    message: error.message,
    ...(error.status === undefined ? {} : { status: error.status }),
    retryable: error.retryable,
    code: error.code,
  };
}

/** The failure behind an event that ends a request attempt without a usable response. */
function failureOf(event: { type: string; error?: unknown }, requestTimeoutMs: number): ProviderError {
  if (event.type.startsWith('xstate.error.actor.')) return toProviderError(event.error);
  if (event.type.startsWith('xstate.after.')) {
    return new ProviderError(`no response from the provider for ${requestTimeoutMs} ms`, { code: 'timeout', retryable: true });
  }
  return new ProviderError('the provider stream ended without a final response', { code: 'incomplete_stream', retryable: true });
}

function lastAssistantText(messages: Message[], from: number): string {
  for (let index = messages.length - 1; index >= from; index--) {
    const message = messages[index];
    if (message?.role === 'assistant') return textOf(message);
  }
  return '';
}

function isValidUserContent(content: unknown): boolean {
  if (typeof content === 'string') return content.trim() !== '';
  return (
    Array.isArray(content) &&
    content.length > 0 &&
    content.every(
      (part: unknown) =>
        typeof part === 'object' &&
        part !== null &&
        (part as { type?: unknown }).type === 'text' &&
        typeof (part as { text?: unknown }).text === 'string',
    ) &&
    content.some((part: { text: string }) => part.text.trim() !== '')
  );
}

/** `cancel` ends any running state in `halted`, closing the round in progress. */
const cancelTransition = { target: '#conversation.halted', actions: 'cancelRun' } as const;

/** Events a busy run cannot take: rejected with an event, and `cancel`. */
const outOfStateTransitions = {
  'user.message': { actions: 'rejectOutOfState' },
  'tool.approve': { actions: 'rejectOutOfState' },
  'tool.deny': { actions: 'rejectOutOfState' },
  cancel: cancelTransition,
} as const;

/**
 * Creates the conversation machine: one actor is one run, a user turn and the whole tool loop that
 * follows it, ending in `done`, `halted` or `error`. Options are validated here and throw
 * `InvalidOptionsError` naming the option; nothing about a run ever throws.
 *
 * @example
 * ```ts
 * import { createActor, toPromise } from 'xstate';
 * import { z } from 'zod';
 *
 * const machine = createConversationMachine({
 *   provider: openaiProvider({ model: 'gpt-4o-mini' }),
 *   tools: [defineTool({
 *     name: 'add', description: 'Add two numbers',
 *     parameters: z.object({ a: z.number(), b: z.number() }),
 *     execute: async ({ a, b }) => a + b,
 *   })],
 *   system: 'You are terse.',
 * });
 * const actor = createActor(machine, { input: { messages: [] } }).start();
 * actor.on('text.delta', (event) => process.stdout.write(event.delta));
 * actor.send({ type: 'user.message', content: 'What is 2+3?' });
 * const output = await toPromise(actor); // { status: 'done', text: '5', messages, ... }
 * ```
 */
export function createConversationMachine<TOutputSchema extends StandardSchemaV1 | JSONSchema = never>(
  options: ConversationOptions<TOutputSchema>,
): ConversationMachine<[TOutputSchema] extends [never] ? unknown : InferObject<TOutputSchema>> {
  const resolved = resolveOptions(options);
  const { tools, retry, output } = resolved;
  const toolTimeoutOf = (name: string) => tools.get(name)?.timeoutMs ?? resolved.toolTimeoutMs;
  /** The run's final text and the halting call's result when a tool throws `HaltError` (the guard checked it is one). */
  const haltText = (event: { type: string }) => capText((thrownBy(event) as HaltError).content, resolved.maxToolResultBytes);

  /** The response joins the run: its usage (and cost) counted, its content appended to the history. */
  const committed = (context: ConversationContext): Partial<ConversationContext> => {
    const response = context.response;
    if (!response) return {};
    const spent = {
      usage: addUsage(context.usage, response.usage),
      ...(context.billing.cost && resolved.prices
        ? { billing: { ...context.billing, cost: addCost(context.billing.cost, resolved.prices, response.model, response.usage) } }
        : {}),
    };
    if (response.content.length === 0) return spent;
    return { ...spent, messages: [...context.messages, { role: 'assistant', content: response.content }] };
  };

  const machine = setup({
    types: {
      context: {} as ConversationContext,
      events: {} as ConversationEvent,
      input: {} as ConversationInput,
      output: {} as RunOutput,
      emitted: {} as ConversationEmittedEvent,
    },
    actors: {
      providerCall: createProviderCallLogic(
        resolved.provider,
        resolved.toolDescriptions,
        resolved.system,
        output && {
          name: output.name,
          schema: output.jsonSchema,
          strict: output.strict,
          ...(output.description === undefined ? {} : { description: output.description }),
        },
        resolved.requestTimeoutMs,
      ),
      executeTool: createToolExecutionLogic(tools, resolved.maxToolResultBytes),
    },
    delays: {
      retryDelay: ({ context }) => context.retry.delayMs,
      requestTimeout: resolved.requestTimeoutMs,
      // Aims at the running call whose time is up first; `running` is re-entered whenever a call
      // starts or ends, so the timer always follows the earliest deadline.
      toolDeadline: ({ context }) => {
        const deadline = earliestDeadline(context.round);
        return deadline === undefined ? maxTimerDelayMs : Math.min(maxTimerDelayMs, Math.max(0, deadline - Date.now()));
      },
    },
    guards: {
      hasInputProblem: ({ context }) => context.inputProblem !== undefined,
      isValidUserMessage: ({ event }) => event.type === 'user.message' && isValidUserContent(event.content),
      canRetryFailure: ({ context, event }) => {
        const failure = failureOf(event, resolved.requestTimeoutMs);
        return canRetry(context.attempt, retry, failure, failure.retryAfterMs ?? null);
      },
      missingResponse: ({ context }) => context.response === null,
      streamProgressed: ({ context }) => context.stream.progressed,
      noToolCalls: ({ context }) => context.response !== null && context.response.calls.length === 0,
      answerAccepted: ({ context }) =>
        context.response !== null && context.response.calls.length === 0 && (context.response.answer?.ok ?? true),
      answerRepairable: ({ context }) =>
        context.response !== null &&
        context.response.calls.length === 0 &&
        context.response.answer?.ok === false &&
        context.answer.repairs < (output?.maxRepairs ?? 0),
      iterationCapReached: ({ context }) => context.iterations >= resolved.maxToolIterations,
      doomLoopPersists: ({ context }) => context.response?.doomLoop.action === 'halt',
      roundNeedsApproval: ({ context }) => context.response?.calls.some((call) => call.state === 'awaiting-approval') ?? false,
      approvalsComplete: ({ context }) => !context.round?.some((call) => call.state === 'awaiting-approval'),
      isAwaitingApproval: ({ context, event }) =>
        (event.type === 'tool.approve' || event.type === 'tool.deny') &&
        (context.round?.some((call) => call.toolCallId === event.toolCallId && call.state === 'awaiting-approval') ?? false),
      roundSettled: ({ context }) => context.round?.every((call) => call.state === 'settled') ?? false,
      // The result of the round's last unsettled call: the round is over, so no deadline needs re-aiming.
      settlesRound: ({ context, event }) => {
        const live = liveResult(context, event);
        return live !== null && (context.round?.every((call, index) => index === live.index || call.state === 'settled') ?? false);
      },
      isRestored: ({ context }) => context.restored !== undefined,
      executionHalts: ({ context, event }) =>
        event.type.startsWith('xstate.error.actor.') && liveCall(context, event.type) !== null && HaltError.isInstance(thrownBy(event)),
    },
    actions: {
      failOnInput: assign(({ context }) => ({
        retry: {
          ...context.retry,
          lastError: {
            name: 'InvalidInputError',
            message: context.inputProblem ?? 'invalid input',
            retryable: false,
            code: 'invalid_input',
          },
        },
      })),
      appendUserMessage: assign(({ context, event }) => {
        if (event.type !== 'user.message') return {};
        return { messages: [...context.messages, { role: 'user', content: event.content }] };
      }),
      rejectInvalidMessage: emit(({ event }) => ({
        type: 'event.rejected' as const,
        eventType: event.type,
        message:
          'user.message content must be a non-empty string or a non-empty array of { type: "text", text } parts; ' +
          `got ${event.type === 'user.message' ? (JSON.stringify(event.content) ?? typeof event.content) : 'no content'}`,
      })),
      rejectOutOfState: emit(({ event, self }) => ({
        type: 'event.rejected' as const,
        eventType: event.type,
        message: `${event.type} is not accepted while the run is ${JSON.stringify(self.getSnapshot().value)}`,
      })),
      rejectUnknownCall: emit(({ event }) => ({
        type: 'event.rejected' as const,
        eventType: event.type,
        message: `${event.type}: no tool call ${'toolCallId' in event ? JSON.stringify(event.toolCallId) : ''} is waiting for approval`,
      })),
      // Every transition into `requesting` starts an attempt with one of these (or `completeRound`),
      // in the transition's one context copy rather than an entry action of its own.
      firstAttempt: assign({ attempt: 1, ...freshAttempt }),
      nextAttempt: assign(({ context }) => ({ attempt: context.attempt + 1, ...freshAttempt })),
      emitRequestStarted: emit(({ context }) => ({
        type: 'request.started' as const,
        iteration: context.iterations,
        attempt: context.attempt,
        provider: resolved.provider.name,
        ...(resolved.provider.model === undefined ? {} : { model: resolved.provider.model }),
      })),
      forwardDeltas: enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'provider.delta') return;
        // Assigned once per timeout window, not per delta: most deltas only emit.
        if (!context.stream.partial || !context.stream.progressed)
          enqueue.assign({ stream: { ...context.stream, partial: true, progressed: true } });
        for (const delta of event.deltas) enqueue.emit(delta);
        if (output) streamPartialObject(context, event.deltas, enqueue);
      }),
      resetProgress: assign(({ context }) => ({ stream: { ...context.stream, progressed: false } })),
      receiveResponse: enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'provider.finish') return;
        const finish = event as FinishEvent;
        const { content, calls } = planResponse(finish.content, tools, resolved.maxToolArgsBytes);
        let doomLoop: DoomLoopVerdict = { action: 'none' };
        if (resolved.doomLoopThreshold !== false && calls.length > 0) {
          const threshold = resolved.doomLoopThreshold;
          const recent = recentCallSignatures(context.messages, threshold * maxDoomLoopPeriod);
          for (const part of content) if (part.type === 'tool-call') recent.push(signatureOfPart(part));
          const repetition = findRepetition(recent, threshold);
          if (repetition) {
            doomLoop = {
              action: context.doomLoop.noticed ? 'halt' : 'notice',
              notice: doomLoopNotice(repetition),
              pattern: repetition.pattern.map(({ name, args }) => ({ name, args })),
              repeats: repetition.repeats,
            };
          }
        }
        const model = finish.model ?? resolved.provider.model;
        const answer = output && calls.length === 0 ? checkAnswer(textOfParts(content), finish.finishReason, output) : undefined;
        enqueue.assign({
          response: {
            content,
            finishReason: finish.finishReason,
            calls,
            doomLoop,
            usage: finish.usage,
            ...(model === undefined ? {} : { model }),
            ...(answer === undefined ? {} : { answer }),
          },
          outcome: { ...context.outcome, finishReason: finish.finishReason },
        });
        // The total as it will be once this response is committed (every answered request is).
        enqueue.emit({ type: 'usage', step: finish.usage, total: addUsage(context.usage, finish.usage) });
        for (const part of content) {
          if (part.type === 'tool-call')
            enqueue.emit({ type: 'tool.call', toolCallId: part.toolCallId, name: part.toolName, args: part.args });
        }
        // Last, so a listener has seen the response's tool calls when it learns the request is over.
        enqueue.emit({
          type: 'request.finished',
          iteration: context.iterations,
          attempt: context.attempt,
          finishReason: finish.finishReason,
          usage: finish.usage,
          ...(model === undefined ? {} : { model }),
          ...(finish.responseId === undefined ? {} : { responseId: finish.responseId }),
        });
      }),
      // The run's text is the last response's, even when that response is empty: an earlier
      // round's text would read as an answer the model never gave.
      recordFinalText: assign(({ context }) => {
        let finalText = '';
        for (const part of context.response?.content ?? []) if (part.type === 'text') finalText += part.text;
        return { outcome: { ...context.outcome, finalText } };
      }),
      commitResponse: assign(({ context }) => committed(context)),
      startRound: enqueueActions(({ context, enqueue }) => {
        const response = context.response;
        if (!response) return;
        const doomLoop = response.doomLoop;
        // The response is committed here too: one context copy for the transition, not two.
        enqueue.assign({
          ...committed(context),
          round: response.calls,
          response: null,
          iterations: context.iterations + 1,
          doomLoop: { noticed: doomLoop.action === 'notice', pendingNotice: doomLoop.action === 'notice' ? doomLoop.notice : null },
        });
        if (doomLoop.action === 'notice') {
          enqueue.emit({ type: 'doom_loop.detected', pattern: doomLoop.pattern, repeats: doomLoop.repeats, action: 'notice' });
        }
        for (const call of response.calls) {
          if (call.state === 'settled' && call.result) enqueue.emit(toolResultEvent(call));
        }
      }),
      requestApprovals: enqueueActions(({ context, enqueue }) => {
        for (const call of context.round ?? []) {
          if (call.state === 'awaiting-approval') {
            enqueue.emit({ type: 'tool.approval.requested', toolCallId: call.toolCallId, name: call.toolName, args: call.args });
          }
        }
      }),
      approveCall: assign(({ context, event }) => {
        if (event.type !== 'tool.approve') return {};
        return { round: updateFirstAwaiting(context.round, event.toolCallId, (call) => ({ ...call, state: 'queued' })) };
      }),
      denyCall: enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'tool.deny') return;
        let denied: RoundCall | undefined;
        const round = updateFirstAwaiting(context.round, event.toolCallId, (call) => {
          denied = { ...call, state: 'settled', result: errorResult(call, resultTexts.denied(event.reason)) };
          return denied;
        });
        enqueue.assign({ round });
        if (denied) enqueue.emit(toolResultEvent(denied));
      }),
      startQueuedCalls: enqueueActions(({ context, enqueue }) => {
        const round = context.round;
        if (!round) return;
        let running = round.filter((call) => call.state === 'running').length;
        if (running >= resolved.maxConcurrentTools || !round.some((call) => call.state === 'queued')) return;
        // One clock reading for the calls started together, so equal timeouts give one deadline and one timer.
        const startedAt = Date.now();
        const next = round.map((call, index) => {
          if (call.state !== 'queued' || running >= resolved.maxConcurrentTools) return call;
          running++;
          const input: ToolExecutionInput = {
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            args: call.args,
            messages: context.messages,
            ...(context.sessionData === undefined ? {} : { sessionData: context.sessionData }),
            timeoutMs: toolTimeoutOf(call.toolName),
          };
          enqueue.spawnChild('executeTool', { id: toolCallActorId(context.iterations, index), input });
          enqueue.emit({ type: 'tool.started', toolCallId: call.toolCallId, name: call.toolName });
          return { ...call, state: 'running' as const, deadline: startedAt + toolTimeoutOf(call.toolName) };
        });
        enqueue.assign({ round: next });
      }),
      // A finished child stays in the snapshot's children until stopped: without this, every round
      // would leave one behind, growing snapshots and making each spawn copy a longer list.
      releaseChild: stopChild(({ event }) => childIdOf(event.type)),
      stopRunningCalls: enqueueActions(({ context, enqueue }) => {
        context.round?.forEach((call, index) => {
          if (call.state === 'running') enqueue.stopChild(toolCallActorId(context.iterations, index));
        });
      }),
      recordOutcome: enqueueActions(({ context, event, enqueue }) => {
        const live = liveResult(context, event);
        if (live) settleCall(context, live.index, resultPartOf(live), enqueue);
      }),
      recordToolError: enqueueActions(({ context, event, enqueue }) => {
        const live = liveCall(context, event.type);
        if (!live) return;
        settleCall(
          context,
          live.index,
          errorResult(live.call, capText(resultTexts.failed(thrownBy(event)), resolved.maxToolResultBytes)),
          enqueue,
        );
      }),
      // The halting call's result is the text the tool halted with, not an error.
      recordHalt: enqueueActions(({ context, event, enqueue }) => {
        const live = liveCall(context, event.type);
        if (live) settleCall(context, live.index, toolResult(live.call, haltText(event)), enqueue);
      }),
      // Every running call whose time is up: stopped (its signal aborts) and answered with the timeout text.
      timeOutCalls: enqueueActions(({ context, enqueue }) => {
        const round = context.round;
        const earliest = earliestDeadline(round);
        if (!round || earliest === undefined) return;
        const due = Math.max(earliest, Date.now());
        const settled: RoundCall[] = [];
        const next = round.map((call, index) => {
          if (call.state !== 'running' || call.deadline === undefined || call.deadline > due) return call;
          enqueue.stopChild(toolCallActorId(context.iterations, index));
          const timedOut: RoundCall = {
            ...call,
            state: 'settled',
            result: errorResult(call, resultTexts.timedOut(call.toolName, toolTimeoutOf(call.toolName))),
          };
          settled.push(timedOut);
          return timedOut;
        });
        enqueue.assign({ round: next });
        for (const call of settled) enqueue.emit(toolResultEvent(call));
      }),
      // The round's results go into the history, and the request that follows is a first attempt.
      completeRound: assign(({ context }) => roundCompleted(context, context.round ?? [])),
      // The last result of the round settles its call and completes the round in one context copy.
      completeRoundWithResult: enqueueActions(({ context, event, enqueue }) => {
        const live = liveResult(context, event);
        if (live) settleCall(context, live.index, resultPartOf(live), enqueue, true);
      }),
      haltAtIterationCap: enqueueActions(({ context, enqueue }) => {
        enqueue.assign({ outcome: { ...context.outcome, status: 'halted', reason: 'max_iterations' } });
        settleAll(unanswered(context.response?.calls ?? []), resultTexts.iterationLimit, context.messages, enqueue);
      }),
      haltOnDoomLoop: enqueueActions(({ context, enqueue }) => {
        const doomLoop = context.response?.doomLoop;
        if (doomLoop && doomLoop.action !== 'none') {
          enqueue.emit({ type: 'doom_loop.detected', pattern: doomLoop.pattern, repeats: doomLoop.repeats, action: 'halt' });
        }
        enqueue.assign({ outcome: { ...context.outcome, status: 'halted', reason: 'doom_loop' } });
        settleAll(unanswered(context.response?.calls ?? []), resultTexts.doomLoop, context.messages, enqueue);
      }),
      markToolHalt: assign(({ context, event }) => ({
        outcome: { ...context.outcome, status: 'halted' as const, reason: 'tool_halt', finalText: haltText(event) },
      })),
      closeHaltedRound: enqueueActions(({ context, enqueue }) => {
        settleAll(context.round ?? [], resultTexts.halted, context.messages, enqueue);
      }),
      cancelRun: enqueueActions(({ context, event, enqueue }) => {
        const reason = event.type === 'cancel' ? event.reason : undefined;
        enqueue.assign({ outcome: { ...context.outcome, status: 'halted', reason: 'cancelled' } });
        // A response not yet committed is dropped like any partial output; a round in progress is closed.
        if (context.round) settleAll(context.round, resultTexts.cancelled(reason), context.messages, enqueue);
      }),
      recordFailure: assign(({ context, event }) => {
        const failure = failureOf(event, resolved.requestTimeoutMs);
        // A failed attempt's tokens are billed but not the run's: counted apart.
        const wasted = failure.usage ?? context.response?.usage;
        const model = failure.model ?? context.response?.model ?? resolved.provider.model;
        const lastError = runErrorOf(failure);
        const capNote = retryAfterCapNote(context.attempt, retry, failure, failure.retryAfterMs ?? null);
        if (capNote !== undefined) lastError.message = `${lastError.message} — ${capNote}`;
        return {
          retry: { ...context.retry, lastError, lastRetryAfterMs: failure.retryAfterMs ?? null },
          ...(wasted
            ? {
                billing: {
                  failedUsage: addUsage(context.billing.failedUsage, wasted),
                  cost:
                    context.billing.cost && resolved.prices
                      ? addCost(context.billing.cost, resolved.prices, model, wasted)
                      : context.billing.cost,
                },
              }
            : {}),
        };
      }),
      scheduleRetry: assign(({ context }) => ({
        retry: { ...context.retry, delayMs: retryDelay(context.attempt, retry, context.retry.lastRetryAfterMs) },
      })),
      emitRetry: emit(({ context }) => ({
        type: 'request.retry' as const,
        attempt: context.attempt + 1,
        delayMs: context.retry.delayMs,
        error: context.retry.lastError ?? { name: 'ProviderError', message: 'unknown failure', retryable: true },
        discardPartial: context.stream.partial,
      })),
      recordObject: assign(({ context }) => {
        const answer = context.response?.answer;
        return answer?.ok ? { answer: { ...context.answer, object: answer.object } } : {};
      }),
      startRepair: enqueueActions(({ context, enqueue }) => {
        const answer = context.response?.answer;
        if (!output || !answer || answer.ok) return;
        const repair = context.answer.repairs + 1;
        enqueue.assign({
          answer: { ...context.answer, repairs: repair },
          response: null,
          messages: [...context.messages, { role: 'user', content: repairPrompt(answer.problem, output) }],
        });
        enqueue.emit({ type: 'output.repair', repair, maxRepairs: output.maxRepairs, problem: answer.problem });
      }),
      failOnAnswer: assign(({ context }) => {
        const answer = context.response?.answer;
        const problem = answer && !answer.ok ? answer.problem : 'no valid answer';
        return {
          retry: {
            ...context.retry,
            lastError: {
              name: 'OutputValidationError',
              message: `the final answer did not match the output schema after ${context.answer.repairs} repair(s): ${problem}`,
              retryable: false,
              code: 'invalid_output',
            },
          },
        };
      }),
      clearRestored: assign({ restored: undefined }),
      // The calls a restart interrupted got their result while the run was restored; their events go out now.
      reportInterrupted: enqueueActions(({ context, enqueue }) => {
        const interrupted = new Set(context.restored?.interrupted);
        enqueue.assign({ restored: undefined });
        for (const call of context.round ?? []) if (interrupted.has(call.toolCallId) && call.result) enqueue.emit(toolResultEvent(call));
      }),
      markDone: assign(({ context }) => ({ outcome: { ...context.outcome, status: 'done' as const } })),
      markHalted: assign(({ context }) => ({
        outcome: { ...context.outcome, status: 'halted' as const, reason: context.outcome.reason ?? 'cancelled' },
      })),
      markError: assign(({ context }) => ({ outcome: { ...context.outcome, status: 'error' as const } })),
    },
  }).createMachine({
    id: 'conversation',
    context: ({ input }) => {
      const messages = input?.messages ?? [];
      const inputProblem =
        input === undefined || typeof input === 'object'
          ? (findMessagesProblem(messages) ?? findJsonProblem(input?.sessionData, 'input.sessionData'))
          : 'input must be an object { messages?, sessionData? }';
      return {
        messages: Array.isArray(messages) ? messages : [],
        ...(input?.sessionData === undefined ? {} : { sessionData: input.sessionData }),
        ...(inputProblem === undefined ? {} : { inputProblem }),
        runStart: Array.isArray(messages) ? messages.length : 0,
        iterations: 0,
        attempt: 0,
        usage: emptyUsage(),
        response: null,
        round: null,
        stream: freshAttempt.stream,
        doomLoop: { noticed: false, pendingNotice: null },
        retry: { delayMs: 0, lastError: null, lastRetryAfterMs: null },
        outcome: { status: null, reason: null, finalText: null, finishReason: null },
        billing: { failedUsage: emptyUsage(), cost: resolved.prices ? zeroCost() : null },
        answer: { repairs: 0 },
      };
    },
    initial: 'idle',
    // `cancel` is declared on each non-final state rather than here, so final states take no event.
    // An error event of an actor the current state does not hold can only come from a caller; XState
    // would let it fail the whole actor, so it is turned away here (states that hold the actor
    // handle it first, being deeper).
    on: {
      'xstate.error.actor.*': { actions: 'rejectOutOfState' },
    },
    states: {
      idle: {
        always: { guard: 'hasInputProblem', target: 'error', actions: 'failOnInput' },
        on: {
          'user.message': [
            { guard: 'isValidUserMessage', target: 'requesting', actions: ['appendUserMessage', 'firstAttempt'] },
            { actions: 'rejectInvalidMessage' },
          ],
          'tool.approve': { actions: 'rejectOutOfState' },
          'tool.deny': { actions: 'rejectOutOfState' },
          cancel: cancelTransition,
        },
      },
      requesting: {
        entry: 'emitRequestStarted',
        invoke: {
          id: 'providerCall',
          src: 'providerCall',
          input: ({ context }) => ({
            messages: context.messages,
            ...(context.sessionData === undefined ? {} : { sessionData: context.sessionData }),
          }),
          onDone: [
            { guard: and(['missingResponse', 'canRetryFailure']), target: 'retrying', actions: 'recordFailure' },
            { guard: 'missingResponse', target: 'error', actions: 'recordFailure' },
            { guard: 'answerAccepted', target: 'done', actions: ['recordFinalText', 'commitResponse', 'recordObject'] },
            { guard: 'answerRepairable', target: 'repairing', actions: 'commitResponse' },
            { guard: 'noToolCalls', target: 'error', actions: ['recordFinalText', 'commitResponse', 'failOnAnswer'] },
            { guard: 'iterationCapReached', target: 'halted', actions: ['recordFinalText', 'commitResponse', 'haltAtIterationCap'] },
            { guard: 'doomLoopPersists', target: 'halted', actions: ['recordFinalText', 'commitResponse', 'haltOnDoomLoop'] },
            { guard: 'roundNeedsApproval', target: 'awaitingApproval', actions: 'startRound' },
            { target: 'executingTools', actions: 'startRound' },
          ],
          onError: [
            { guard: 'canRetryFailure', target: 'retrying', actions: 'recordFailure' },
            { target: 'error', actions: 'recordFailure' },
          ],
        },
        on: {
          'provider.finish': { actions: 'receiveResponse' },
          // Restored mid-request: the response in progress is lost, so the request is made again.
          // (`resumeSnapshot` has already made the restored attempt a fresh one.)
          'run.resume': { guard: 'isRestored', target: 'requesting', reenter: true, actions: 'clearRestored' },
          ...outOfStateTransitions,
        },
        initial: 'waiting',
        states: {
          // `requestTimeout` bounds the silence, not the whole stream: when the window ends after
          // some progress, a new window starts; a whole window without any event is a timeout.
          waiting: {
            on: { 'provider.delta': { actions: 'forwardDeltas' } },
            after: {
              requestTimeout: [
                { guard: 'streamProgressed', target: 'waiting', reenter: true, actions: 'resetProgress' },
                { guard: 'canRetryFailure', target: '#conversation.retrying', actions: 'recordFailure' },
                { target: '#conversation.error', actions: 'recordFailure' },
              ],
            },
          },
        },
      },
      // The final answer failed the `output` schema: it goes back to the model with what was wrong
      // (at most `output.maxRepairs` times), and the request is made again.
      repairing: {
        entry: 'startRepair',
        always: { target: 'requesting', actions: 'firstAttempt' },
      },
      retrying: {
        entry: ['scheduleRetry', 'emitRetry'],
        after: { retryDelay: { target: 'requesting', actions: 'nextAttempt' } },
        on: outOfStateTransitions,
      },
      awaitingApproval: {
        entry: 'requestApprovals',
        always: { guard: 'approvalsComplete', target: 'executingTools' },
        on: {
          'tool.approve': [{ guard: 'isAwaitingApproval', actions: 'approveCall' }, { actions: 'rejectUnknownCall' }],
          'tool.deny': [{ guard: 'isAwaitingApproval', actions: 'denyCall' }, { actions: 'rejectUnknownCall' }],
          'user.message': { actions: 'rejectOutOfState' },
          cancel: cancelTransition,
        },
      },
      // Each call runs as an `executeTool` actor (`toolCall-<iteration>-<index>`); a call's timeout
      // is the `toolDeadline` delayed transition, aimed at the earliest deadline of the running calls.
      executingTools: {
        entry: 'startQueuedCalls',
        exit: 'stopRunningCalls',
        always: { guard: 'roundSettled', target: 'requesting', actions: 'completeRound' },
        on: outOfStateTransitions,
        initial: 'running',
        states: {
          running: {
            after: {
              toolDeadline: { target: 'running', reenter: true, actions: ['timeOutCalls', 'startQueuedCalls'] },
            },
            on: {
              'xstate.done.actor.*': [
                // Leaving `executingTools` stops the finished child (`stopRunningCalls` still sees its call running).
                { guard: 'settlesRound', target: '#conversation.requesting', actions: 'completeRoundWithResult' },
                { target: 'running', reenter: true, actions: ['releaseChild', 'recordOutcome', 'startQueuedCalls'] },
              ],
              // Restored mid-round: interrupted calls are reported, calls to run (again) start, and a settled round moves on.
              'run.resume': { guard: 'isRestored', target: 'running', reenter: true, actions: ['reportInterrupted', 'startQueuedCalls'] },
              'xstate.error.actor.*': [
                {
                  guard: 'executionHalts',
                  target: '#conversation.halted',
                  actions: ['releaseChild', 'markToolHalt', 'recordHalt', 'closeHaltedRound'],
                },
                { target: 'running', reenter: true, actions: ['releaseChild', 'recordToolError', 'startQueuedCalls'] },
              ],
            },
          },
        },
      },
      done: { type: 'final', entry: 'markDone' },
      halted: { type: 'final', entry: 'markHalted' },
      error: { type: 'final', entry: 'markError' },
    },
    output: ({ context }): RunOutput => ({
      status: context.outcome.status ?? 'error',
      ...(context.outcome.reason === null ? {} : { reason: context.outcome.reason }),
      text: context.outcome.finalText ?? lastAssistantText(context.messages, context.runStart),
      messages: context.messages,
      iterations: context.iterations,
      usage: context.usage,
      ...(context.outcome.finishReason === null ? {} : { finishReason: context.outcome.finishReason }),
      ...(context.outcome.status === 'error' && context.retry.lastError ? { error: context.retry.lastError } : {}),
      ...(context.billing.failedUsage.totalTokens > 0 || context.billing.failedUsage.inputTokens > 0
        ? { failedUsage: context.billing.failedUsage }
        : {}),
      ...(context.billing.cost ? { cost: context.billing.cost } : {}),
      ...(context.outcome.status === 'done' && context.answer.object !== undefined ? { object: context.answer.object } : {}),
      ...(context.answer.repairs > 0 ? { repairs: context.answer.repairs } : {}),
    }),
  });
  const isIdempotent = (name: string) => tools.get(name)?.idempotent === true;
  return resumeRunsOnRestore(rearmTimersOnRestore(machine), { isIdempotent }) as unknown as ConversationMachine<
    [TOutputSchema] extends [never] ? unknown : InferObject<TOutputSchema>
  >;
}

/**
 * A finished round joins the history (its tool message, then a pending doom-loop notice), and the
 * request that follows starts as a first attempt.
 */
function roundCompleted(context: ConversationContext, round: RoundCall[]): Partial<ConversationContext> {
  const messages: Message[] = [...context.messages, toolMessage(round)];
  if (context.doomLoop.pendingNotice !== null) messages.push({ role: 'user', content: context.doomLoop.pendingNotice });
  return {
    messages,
    round: null,
    doomLoop: { ...context.doomLoop, pendingNotice: null },
    attempt: 1,
    ...freshAttempt,
  };
}

/** The text parts of a response, joined. */
function textOfParts(content: ReadonlyArray<{ type: string; text?: string }>): string {
  let text = '';
  for (const part of content) if (part.type === 'text' && part.text !== undefined) text += part.text;
  return text;
}

/** Sends `object.delta` when the streamed answer, parsed best effort, has changed. */
function streamPartialObject(
  context: ConversationContext,
  deltas: ReadonlyArray<{ type: string; delta?: string }>,
  enqueue: Enqueue,
): void {
  let added = '';
  for (const delta of deltas) if (delta.type === 'text.delta' && delta.delta !== undefined) added += delta.delta;
  if (added === '') return;
  const answerText = context.stream.answerText + added;
  const partial = parsePartialJson(answerText);
  const json = partial === undefined ? null : JSON.stringify(partial);
  const changed = json !== null && json !== context.stream.lastPartialJson;
  enqueue.assign({
    stream: { ...context.stream, partial: true, progressed: true, answerText, ...(changed ? { lastPartialJson: json } : {}) },
  });
  if (changed) enqueue.emit({ type: 'object.delta', object: partial });
}

function toolResultEvent(call: RoundCall) {
  const result = call.result ?? errorResult(call, resultTexts.cancelled(undefined));
  return {
    type: 'tool.result' as const,
    toolCallId: call.toolCallId,
    name: call.toolName,
    result: typeof result.result === 'string' ? result.result : JSON.stringify(result.result),
    isError: result.isError === true,
  };
}

/**
 * Settles the call at `index` with its one result and emits its `tool.result`; with `completesRound`
 * (it was the round's last open call) the round joins the history in the same context copy.
 */
function settleCall(context: ConversationContext, index: number, result: ToolResultPart, enqueue: Enqueue, completesRound = false): void {
  const round = context.round;
  const call = round?.[index];
  if (!round || !call) return;
  const settled: RoundCall = { ...call, state: 'settled', result };
  const next = round.map((existing, position) => (position === index ? settled : existing));
  enqueue.assign(completesRound ? roundCompleted(context, next) : { round: next });
  enqueue.emit(toolResultEvent(settled));
}

/** The result part an execution's done event gives its call: an error result when the execution reported one. */
function resultPartOf(live: { call: RoundCall; text: string; isError: boolean }): ToolResultPart {
  return live.isError ? errorResult(live.call, live.text) : toolResult(live.call, live.text);
}

function updateFirstAwaiting(round: RoundCall[] | null, toolCallId: string, update: (call: RoundCall) => RoundCall): RoundCall[] | null {
  if (!round) return round;
  const index = round.findIndex((call) => call.toolCallId === toolCallId && call.state === 'awaiting-approval');
  if (index < 0) return round;
  return round.map((call, position) => (position === index ? update(call) : call));
}

/**
 * The calls of a response that will not run, as not yet answered: an unknown tool or invalid
 * arguments found while planning give way to the reason nothing ran, and each call gets its event.
 */
function unanswered(calls: RoundCall[]): RoundCall[] {
  return calls.map(({ result: _result, ...call }) => ({ ...call, state: 'queued' as const }));
}

type Enqueue = {
  assign: (values: Partial<ConversationContext>) => void;
  emit: (event: ConversationEmittedEvent) => void;
};

/**
 * Ends a round early: every call still without a result gets `text`, results are appended to the
 * history in call order, and a `tool.result` is emitted for each newly settled call.
 */
function settleAll(calls: RoundCall[], text: string, messages: Message[], enqueue: Enqueue): void {
  if (calls.length === 0) return;
  const settled = settleRemaining(calls, text);
  enqueue.assign({ round: null, response: null, messages: [...messages, toolMessage(settled)] });
  settled.forEach((call, index) => {
    if (calls[index]?.state !== 'settled') enqueue.emit(toolResultEvent(call));
  });
}
