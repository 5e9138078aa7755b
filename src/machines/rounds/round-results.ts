import type { ToolExecutionInput, ToolExecutionOutput } from '../../actors/tool-execution.js';
import type { Message, ToolResultContentPart, ToolResultPart } from '../../model/messages.js';
import type { Effects } from '../names/effects.js';
import { freshAttempt } from './fresh-attempt.js';
import { errorResult, resultTexts, settleRemaining, toolMessage, toolResult } from './tool-round.js';
import { haltRecorded } from './run-outcome.js';
import {
  agentActorId,
  agentCallIdOf,
  agentChildInput,
  agentFinished,
  agentPrompt,
  agentResult,
  agentSource,
  bothEffects,
  isRunOutput,
} from './agent-calls.js';
import type { AgentCallSpec } from '../agents/agent-tool.js';
import type {
  AgentStartedEvent,
  ConversationContext,
  ConversationEmittedEvent,
  RoundCall,
  RunOutput,
  ToolProgressEvent,
  ToolResultEvent,
  ToolStartedEvent,
} from '../names/types.js';
import { appended } from '../../util/appended.js';
import { withFields } from '../../util/with-fields.js';

/** Child ids of tool calls: unique per round, and the round's index of the call at the end. */
export const toolCallActorId = (iteration: number, index: number) => `toolCall-${iteration}-${index}`;
const toolCallIndexOf = (eventType: string) => Number(eventType.slice(eventType.lastIndexOf('-') + 1));
/** The child id in an `xstate.done.actor.<id>` / `xstate.error.actor.<id>` event type. */
export const childIdOf = (eventType: string) => eventType.slice(eventType.indexOf('.actor.') + '.actor.'.length);

/** The error a tool threw, from an `xstate.error.actor.*` event. */
export const thrownBy = (event: { type: string }): unknown => ('error' in event ? event.error : undefined);

/**
 * The running call of this round that a done/error event of an execution actor belongs to. Anything
 * else (a stale child, or a caller sending `xstate.*.actor.*` by hand) is ignored rather than trusted.
 */
export function liveCall(
  context: Pick<ConversationContext, 'iterations' | 'round'>,
  eventType: string,
): { index: number; call: RoundCall } | null {
  const agentCallId = agentCallIdOf(childIdOf(eventType));
  if (agentCallId !== undefined) {
    const index = context.round?.findIndex((call) => call.agent && call.state === 'running' && call.toolCallId === agentCallId) ?? -1;
    const call = context.round?.[index];
    return call ? { index, call } : null;
  }
  const index = toolCallIndexOf(eventType);
  if (!Number.isInteger(index) || childIdOf(eventType) !== toolCallActorId(context.iterations, index)) return null;
  const call = context.round?.[index];
  return call?.state === 'running' ? { index, call } : null;
}

export type LiveResult = {
  index: number;
  call: RoundCall;
  text: string;
  isError: boolean;
  content?: ToolResultContentPart[];
  agentOutput?: RunOutput;
};

/** A done event's result, when it really is the end of a running call and names that call. */
export function liveResult(context: Pick<ConversationContext, 'iterations' | 'round'>, event: { type: string }): LiveResult | null {
  const found = liveCall(context, event.type);
  const output: unknown = 'output' in event ? event.output : undefined;
  if (!found || typeof output !== 'object' || output === null) return null;
  if (found.call.agent) {
    if (!isRunOutput(output)) return null;
    const { text, isError } = agentResult(found.call.toolName, output);
    return { index: found.index, call: found.call, text, isError, agentOutput: output };
  }
  const { toolCallId, result, isError, content } = output as Partial<ToolExecutionOutput>;
  if (toolCallId !== found.call.toolCallId || typeof result !== 'string') return null;
  // Spelled out, not `{ ...found, text, isError }`: see `src/util/with-fields.ts` on Node 20's spreads.
  const live: LiveResult = { index: found.index, call: found.call, text: result, isError: isError === true };
  if (Array.isArray(content)) live.content = content;
  return live;
}

/**
 * A progress report as the `tool.progress` the conversation emits: only for a call of this round
 * that is running now (progress that comes after its timeout, cancel or result is dropped).
 */
export function progressEvent(context: Pick<ConversationContext, 'round'>, event: { type: string }): ToolProgressEvent | undefined {
  if (event.type !== 'tool.progress') return undefined;
  const { toolCallId, data } = event as Partial<ToolProgressEvent>;
  const running = context.round?.some((call) => call.toolCallId === toolCallId && call.state === 'running' && !call.agent);
  return running && typeof toolCallId === 'string' ? { type: 'tool.progress', toolCallId, data: data ?? null } : undefined;
}

/** Whether a done event is the result of the round's last unsettled call. */
export function settlesRound(context: Pick<ConversationContext, 'iterations' | 'round'>, event: { type: string }): boolean {
  const live = liveResult(context, event);
  return live !== null && (context.round?.every((call, index) => index === live.index || call.state === 'settled') ?? false);
}

/** The earliest deadline among the running calls of a round. */
export function earliestDeadline(round: RoundCall[] | null): number | undefined {
  let earliest: number | undefined;
  for (const call of round ?? []) {
    if (call.state === 'running' && call.deadline !== undefined && (earliest === undefined || call.deadline < earliest))
      earliest = call.deadline;
  }
  return earliest;
}

/**
 * Whether a running call's result (its done event with a result, or its error event) comes after
 * the call's deadline. A stalled event loop runs I/O and microtasks before due timers, so a result
 * can arrive ahead of the `toolDeadline` timer that should have ended its call; it is too late all
 * the same. A call without a deadline (restored from a store that leaves it out) is never late.
 */
export function resultOverdue(context: Pick<ConversationContext, 'iterations' | 'round'>, event: { type: string }, now: number): boolean {
  // The clock first: on time (nearly every result), nothing else is read; the result is checked only when late.
  const deadline = liveCall(context, event.type)?.call.deadline;
  if (deadline === undefined || now <= deadline) return false;
  return event.type.startsWith('xstate.error.actor.') || liveResult(context, event) !== null;
}

/** The longest delay timers take (about 24.8 days); with no running call the deadline never fires. */
export const maxTimerDelayMs = 2_147_483_647;

/** Milliseconds from `now` until the earliest deadline of the round's running calls. */
export function untilEarliestDeadline(round: RoundCall[] | null, now: number): number {
  const deadline = earliestDeadline(round);
  return deadline === undefined ? maxTimerDelayMs : Math.min(maxTimerDelayMs, Math.max(0, deadline - now));
}

export function toolResultEvent(call: RoundCall): ToolResultEvent {
  const result = call.result ?? errorResult(call, resultTexts.cancelled(undefined));
  return {
    type: 'tool.result',
    toolCallId: call.toolCallId,
    name: call.toolName,
    result: typeof result.result === 'string' ? result.result : JSON.stringify(result.result),
    isError: result.isError === true,
    ...(result.content === undefined ? {} : { content: result.content }),
  };
}

/**
 * A finished round joins the history (its tool message, then a pending doom-loop notice), and the
 * request that follows starts as a first attempt.
 */
export function roundCompleted(
  context: Pick<ConversationContext, 'messages' | 'doomLoop' | 'control'>,
  round: RoundCall[],
): Partial<ConversationContext> {
  const notice = context.doomLoop.pendingNotice;
  const messages =
    notice === null
      ? appended(context.messages, toolMessage(round))
      : appended(context.messages, toolMessage(round), { role: 'user', content: notice });
  return {
    messages,
    round: null,
    doomLoop: notice === null ? context.doomLoop : { ...context.doomLoop, pendingNotice: null },
    attempt: 1,
    ...freshAttempt,
    // The next request starts with the first provider of a fallback list again.
    ...(context.control.provider === 0 ? {} : { control: { ...context.control, provider: 0 } }),
  };
}

/**
 * Settles the call at `index` with its one result and emits its `tool.result`; with `completesRound`
 * (it was the round's last open call) the round joins the history in the same context copy.
 */
export function callSettled(context: ConversationContext, index: number, result: ToolResultPart, completesRound = false): Effects {
  const round = context.round;
  const call = round?.[index];
  if (!round || !call) return {};
  const settled: RoundCall = withFields(call, { state: 'settled' as const, result });
  const next = round.map((existing, position) => (position === index ? settled : existing));
  return { context: completesRound ? roundCompleted(context, next) : { round: next }, emitted: [toolResultEvent(settled)] };
}

/** The result part an execution's done event gives its call: an error result when the execution reported one. */
export function resultPartOf(live: Pick<LiveResult, 'call' | 'text' | 'isError' | 'content'>): ToolResultPart {
  return live.isError ? errorResult(live.call, live.text) : toolResult(live.call, live.text, live.content);
}

/** A done event of a running call settles it with its result (and, with `completesRound`, ends the round). */
export function resultRecorded(context: ConversationContext, event: { type: string }, completesRound = false): Effects {
  const live = liveResult(context, event);
  if (!live) return {};
  const settled = callSettled(context, live.index, resultPartOf(live), completesRound);
  // An agent call's usage joins first, so the round's `usage` and `tool.result` follow `agent.finished`.
  return live.agentOutput ? bothEffects(agentFinished(context, live.call, live.agentOutput), settled) : settled;
}

/** An error event of a running call settles it with `text` (given the thrown value) as an error or plain result. */
export function thrownRecorded(
  context: ConversationContext,
  event: { type: string },
  resultOf: (call: RoundCall, thrown: unknown) => ToolResultPart,
): Effects {
  const live = liveCall(context, event.type);
  return live ? callSettled(context, live.index, resultOf(live.call, thrownBy(event))) : {};
}

function updateFirstAwaiting(round: RoundCall[] | null, toolCallId: string, update: (call: RoundCall) => RoundCall): RoundCall[] | null {
  if (!round) return round;
  const index = round.findIndex((call) => call.toolCallId === toolCallId && call.state === 'awaiting-approval');
  if (index < 0) return round;
  return round.map((call, position) => (position === index ? update(call) : call));
}

/** Whether a call of the round with this id waits for approval. */
export function isAwaitingApproval(round: RoundCall[] | null, toolCallId: string): boolean {
  return round?.some((call) => call.toolCallId === toolCallId && call.state === 'awaiting-approval') ?? false;
}

/** The first call with this id that waits for approval is queued to run. */
export function callApproved(round: RoundCall[] | null, toolCallId: string): RoundCall[] | null {
  return updateFirstAwaiting(round, toolCallId, (call) => ({ ...call, state: 'queued' }));
}

/** The first call with this id that waits for approval is settled with the denial, and reported. */
export function callDenied(round: RoundCall[] | null, toolCallId: string, reason: string | undefined): Effects {
  let denied: RoundCall | undefined;
  const next = updateFirstAwaiting(round, toolCallId, (call) => {
    denied = { ...call, state: 'settled', result: errorResult(call, resultTexts.denied(reason)) };
    return denied;
  });
  return { context: { round: next }, emitted: denied ? [toolResultEvent(denied)] : [] };
}

/** The calls of the round that wait for approval, announced. */
export function approvalsRequested(round: RoundCall[] | null): Effects {
  const emitted = (round ?? [])
    .filter((call) => call.state === 'awaiting-approval')
    .map((call) => ({ type: 'tool.approval.requested' as const, toolCallId: call.toolCallId, name: call.toolName, args: call.args }));
  return { emitted };
}

/**
 * The calls of a response that will not run, as not yet answered: an unknown tool or invalid
 * arguments found while planning give way to the reason nothing ran, and each call gets its event.
 */
export function unanswered(calls: RoundCall[]): RoundCall[] {
  return calls.map(({ result: _result, ...call }) => ({ ...call, state: 'queued' as const }));
}

/**
 * Ends a round early: every call still without a result gets `text`, results are appended to the
 * history in call order, and a `tool.result` is emitted for each newly settled call.
 */
export function roundClosed(calls: RoundCall[], text: string, messages: Message[]): Effects {
  if (calls.length === 0) return {};
  const settled = settleRemaining(calls, text);
  return {
    context: { round: null, response: null, messages: appended(messages, toolMessage(settled)) },
    emitted: settled.filter((_call, index) => calls[index]?.state !== 'settled').map(toolResultEvent),
  };
}

/**
 * A tool call to start: its child's id, source and input, and the `tool.started` it is announced
 * with; an agent call also gets its `prompt` (the child's `user.message`) and `agent.started`.
 */
export type CallStart =
  | { kind: 'tool'; id: string; input: ToolExecutionInput; event: ToolStartedEvent }
  | {
      kind: 'agent';
      id: string;
      src: string;
      input: Record<string, unknown>;
      prompt: string;
      events: [ToolStartedEvent, AgentStartedEvent];
    };

/** The child id of the call at `index` of the round. */
export function callActorId(context: Pick<ConversationContext, 'iterations'>, call: RoundCall, index: number): string {
  return call.agent ? agentActorId(call.toolCallId) : toolCallActorId(context.iterations, index);
}

/**
 * Queued calls start while fewer than `maxConcurrent` run: each gets its deadline from `now` (one
 * clock reading for the calls started together, so equal timeouts give one deadline and one timer).
 */
export function queuedCallsStarted(
  context: Pick<ConversationContext, 'round' | 'iterations' | 'messages' | 'sessionData' | 'agents' | 'usage' | 'billing' | 'control'>,
  maxConcurrent: number,
  timeoutOf: (toolName: string) => number,
  now: number,
  agentCalls: ReadonlyMap<string, Pick<AgentCallSpec, 'promptArgument'>> = new Map(),
): { round: RoundCall[]; starts: CallStart[] } | null {
  const round = context.round;
  if (!round) return null;
  let running = round.filter((call) => call.state === 'running').length;
  if (running >= maxConcurrent || !round.some((call) => call.state === 'queued')) return null;
  const starts: CallStart[] = [];
  const next = round.map((call, index) => {
    if (call.state !== 'queued' || running >= maxConcurrent) return call;
    running++;
    const agent = call.agent ? agentCalls.get(call.toolName) : undefined;
    const started: ToolStartedEvent = { type: 'tool.started', toolCallId: call.toolCallId, name: call.toolName };
    if (agent) {
      starts.push({
        kind: 'agent',
        id: agentActorId(call.toolCallId),
        src: agentSource(call.toolName),
        input: agentChildInput(context),
        prompt: agentPrompt(call.args, agent),
        events: [started, { type: 'agent.started', toolCallId: call.toolCallId, agent: call.toolName }],
      });
      return withFields(call, { state: 'running' as const, deadline: now + timeoutOf(call.toolName) });
    }
    const input: ToolExecutionInput = {
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      args: call.args,
      messages: context.messages,
      ...(context.sessionData === undefined ? {} : { sessionData: context.sessionData }),
      timeoutMs: timeoutOf(call.toolName),
    };
    starts.push({ kind: 'tool', id: toolCallActorId(context.iterations, index), input, event: started });
    return withFields(call, { state: 'running' as const, deadline: now + timeoutOf(call.toolName) });
  });
  return { round: next, starts };
}

/** The child ids of the round's running calls. */
export function runningCallIds(context: Pick<ConversationContext, 'round' | 'iterations'>): string[] {
  const ids: string[] = [];
  context.round?.forEach((call, index) => {
    if (call.state === 'running') ids.push(callActorId(context, call, index));
  });
  return ids;
}

/**
 * Every running call whose time is up at `now` (never before the earliest deadline): answered with
 * the timeout text, its child to stop.
 */
export function callsTimedOut(
  context: Pick<ConversationContext, 'round' | 'iterations'>,
  timeoutOf: (toolName: string) => number,
  now: number,
): { stop: string[]; agents: RoundCall[]; effects: Effects } | null {
  const round = context.round;
  const earliest = earliestDeadline(round);
  if (!round || earliest === undefined) return null;
  const due = Math.max(earliest, now);
  const stop: string[] = [];
  const agents: RoundCall[] = [];
  const settled: RoundCall[] = [];
  const next = round.map((call, index) => {
    if (call.state !== 'running' || call.deadline === undefined || call.deadline > due) return call;
    stop.push(callActorId(context, call, index));
    if (call.agent) agents.push(call);
    const timedOut: RoundCall = withFields(call, {
      state: 'settled' as const,
      result: errorResult(call, resultTexts.timedOut(call.toolName, timeoutOf(call.toolName))),
    });
    settled.push(timedOut);
    return timedOut;
  });
  return { stop, agents, effects: { context: { round: next }, emitted: settled.map(toolResultEvent) } };
}

/** The calls a restart interrupted got their result while the run was restored; their events go out now. */
export function interruptedReported(context: Pick<ConversationContext, 'round' | 'restored'>): Effects {
  const interrupted = new Set(context.restored?.interrupted);
  const emitted: ToolResultEvent[] = [];
  for (const call of context.round ?? []) if (interrupted.has(call.toolCallId) && call.result) emitted.push(toolResultEvent(call));
  return { context: { restored: undefined }, emitted };
}

/**
 * The response's calls will not run: the run halts with `reason` and each call is answered with
 * `text`, so the history stays valid; a doom loop that persists is announced first.
 */
export function callsRefused(context: ConversationContext, reason: 'max_iterations' | 'doom_loop' | 'budget', text: string): Effects {
  const closed = roundClosed(unanswered(context.response?.calls ?? []), text, context.messages);
  const doomLoop = context.response?.doomLoop;
  const detected: ConversationEmittedEvent[] =
    reason === 'doom_loop' && doomLoop && doomLoop.action !== 'none'
      ? [{ type: 'doom_loop.detected', pattern: doomLoop.pattern, repeats: doomLoop.repeats, action: 'halt' }]
      : [];
  return { context: { ...haltRecorded(context.outcome, reason), ...closed.context }, emitted: [...detected, ...(closed.emitted ?? [])] };
}

/** `cancel`: the run halts, and a round in progress is closed (a response not yet committed is dropped like any partial output). */
export function runCancelled(context: ConversationContext, reason: string | undefined): Effects {
  const halted = haltRecorded(context.outcome, 'cancelled');
  if (!context.round) return { context: halted };
  const closed = roundClosed(context.round, resultTexts.cancelled(reason), context.messages);
  return { context: { ...halted, ...closed.context }, ...(closed.emitted ? { emitted: closed.emitted } : {}) };
}
