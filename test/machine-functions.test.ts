/**
 * The pure functions the conversation machine's actions and guards are made of (src/machines/
 * round-results.ts, response-commit.ts, response-step.ts, request-failure.ts, run-context.ts,
 * answer-repair.ts, agent-calls.ts), tested without an actor; and the guards on each transition list of the chart:
 * mutually exclusive where the chart relies on it, in their documented order where it does not.
 */
import fc from 'fast-check';
import { isValidUserContent } from '../src/model/user-content.js';
import { describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { bothEffects } from '../src/machines/rounds/agent-calls.js';
import { runLimits } from '../src/machines/policies/budget.js';
import type { Effects } from '../src/machines/names/effects.js';
import { answerError, objectRecorded, partialObjectStreamed, repairStarted } from '../src/machines/controls/answer-repair.js';
import { createConversationMachine } from '../src/machines/chart/conversation.js';
import { type CombinedGuardName, combinedGuards } from '../src/machines/chart/combined-guards.js';
import { conversationGuards } from '../src/machines/chart/guards.js';
import { resolveOptions } from '../src/machines/chart/options.js';
import {
  errorRecorded,
  failureOf,
  failureRecorded,
  retryEvent,
  retryScheduled,
  runErrorOf,
} from '../src/machines/controls/request-failure.js';
import {
  committed,
  doomLoopVerdict,
  finalTextRecorded,
  responseReceived,
  roundStarted,
  textOfParts,
  type FinishEvent,
} from '../src/machines/rounds/response-commit.js';
import { responseStep, type ResponseStep } from '../src/machines/rounds/response-step.js';
import {
  approvalsRequested,
  callApproved,
  callDenied,
  callSettled,
  callsRefused,
  callsTimedOut,
  childIdOf,
  earliestDeadline,
  interruptedReported,
  isAwaitingApproval,
  liveCall,
  liveResult,
  maxTimerDelayMs,
  queuedCallsStarted,
  resultPartOf,
  resultRecorded,
  roundClosed,
  roundCompleted,
  runCancelled,
  runningCallIds,
  settlesRound,
  thrownBy,
  thrownRecorded,
  toolCallActorId,
  toolResultEvent,
  unanswered,
  untilEarliestDeadline,
} from '../src/machines/rounds/round-results.js';
import { haltRecorded, outcomeMarked } from '../src/machines/rounds/run-outcome.js';
import {
  initialContext,
  invalidMessageText,
  lastAssistantText,
  outOfStateText,
  runOutput,
  unknownCallText,
} from '../src/machines/rounds/run-context.js';
import { resolveOutput } from '../src/machines/policies/structured-output.js';
import { errorResult, resultTexts, toolResult } from '../src/machines/rounds/tool-round.js';
import type { ConversationContext, ConversationEvent, PendingResponse, RoundCall, RoundCallState } from '../src/machines/names/types.js';
import { ProviderError } from '../src/model/errors/provider-error.js';
import type { Provider } from '../src/model/provider.js';
import { defineTool } from '../src/tools/define-tool.js';
import { HaltError } from '../src/tools/halt-error.js';

const usage = (total: number) => ({ inputTokens: total, outputTokens: 0, totalTokens: total });
const base = (overrides: Partial<ConversationContext> = {}): ConversationContext => ({
  ...initialContext({ messages: [] }, false),
  ...overrides,
});
const call = (id: string, state: RoundCallState, extra: Partial<RoundCall> = {}): RoundCall => ({
  toolCallId: id,
  toolName: 'add',
  args: { a: 1 },
  state,
  ...extra,
});
const response = (overrides: Partial<PendingResponse> = {}): PendingResponse => ({
  content: [{ type: 'text', text: 'hi' }],
  finishReason: 'stop',
  usage: usage(3),
  calls: [],
  doomLoop: { action: 'none' },
  ...overrides,
});
const addTool = defineTool({
  name: 'add',
  description: 'adds',
  parameters: { type: 'object', properties: { a: { type: 'number' } } },
  execute: async () => 'ok',
});
const slowTool = defineTool({
  name: 'slow',
  description: 'slow',
  parameters: { type: 'object', properties: {} },
  timeoutMs: 50,
  execute: async () => 'ok',
});
const tools = new Map([
  ['add', addTool],
  ['slow', slowTool],
]);
const doneEvent = (iteration: number, index: number, output: unknown) => ({
  type: `xstate.done.actor.${toolCallActorId(iteration, index)}`,
  output,
});
const errorEvent = (iteration: number, index: number, error: unknown) => ({
  type: `xstate.error.actor.${toolCallActorId(iteration, index)}`,
  error,
});

describe('round-results', () => {
  it('names a call’s child by round and index, and reads the id back from an actor event', () => {
    expect(toolCallActorId(2, 1)).toBe('toolCall-2-1');
    expect(childIdOf('xstate.done.actor.toolCall-2-1')).toBe('toolCall-2-1');
    expect(thrownBy({ type: 'x', error: 'boom' } as { type: string })).toBe('boom');
    expect(thrownBy({ type: 'x' })).toBeUndefined();
  });

  it('trusts a done/error event only for a running call of this round, with its own id and a string result', () => {
    const context = base({ iterations: 1, round: [call('c0', 'settled'), call('c1', 'running')] });
    expect(liveCall(context, 'xstate.done.actor.toolCall-1-1')?.index).toBe(1);
    expect(liveCall(context, 'xstate.done.actor.toolCall-0-1')).toBeNull(); // stale round
    expect(liveCall(context, 'xstate.done.actor.toolCall-1-0')).toBeNull(); // not running
    expect(liveCall(context, 'xstate.done.actor.toolCall-1-x')).toBeNull();
    expect(liveResult(context, doneEvent(1, 1, { toolCallId: 'c1', result: 'r', isError: true }))).toMatchObject({
      index: 1,
      text: 'r',
      isError: true,
    });
    expect(liveResult(context, doneEvent(1, 1, { toolCallId: 'other', result: 'r' }))).toBeNull();
    expect(liveResult(context, doneEvent(1, 1, { toolCallId: 'c1', result: 3 }))).toBeNull();
    expect(liveResult(context, doneEvent(1, 1, null))).toBeNull();
  });

  it('settlesRound holds only for the result of the last unsettled call', () => {
    const last = base({ iterations: 0, round: [call('c0', 'settled'), call('c1', 'running')] });
    expect(settlesRound(last, doneEvent(0, 1, { toolCallId: 'c1', result: 'r' }))).toBe(true);
    const notLast = base({ round: [call('c0', 'running'), call('c1', 'running')] });
    expect(settlesRound(notLast, doneEvent(0, 1, { toolCallId: 'c1', result: 'r' }))).toBe(false);
    expect(settlesRound(last, doneEvent(0, 1, { toolCallId: 'c0', result: 'r' }))).toBe(false);
  });

  it('aims the tool deadline at the earliest running call, never beyond the longest timer', () => {
    const round = [call('a', 'running', { deadline: 500 }), call('b', 'running', { deadline: 200 }), call('c', 'settled', { deadline: 1 })];
    expect(earliestDeadline(round)).toBe(200);
    expect(earliestDeadline(null)).toBeUndefined();
    expect(untilEarliestDeadline(round, 150)).toBe(50);
    expect(untilEarliestDeadline(round, 900)).toBe(0);
    expect(untilEarliestDeadline([call('a', 'queued')], 0)).toBe(maxTimerDelayMs);
    expect(untilEarliestDeadline([call('a', 'running', { deadline: 2 ** 40 })], 0)).toBe(maxTimerDelayMs);
  });

  it('reports a call’s result as text (JSON for other values), and a missing one as cancelled', () => {
    expect(toolResultEvent(call('c', 'settled', { result: toolResult(call('c', 'settled'), 'fine') }))).toEqual({
      type: 'tool.result',
      toolCallId: 'c',
      name: 'add',
      result: 'fine',
      isError: false,
    });
    const json = call('c', 'settled', { result: { type: 'tool-result', toolCallId: 'c', toolName: 'add', result: { n: 1 } } });
    expect(toolResultEvent(json).result).toBe('{"n":1}');
    expect(toolResultEvent(call('c', 'running'))).toMatchObject({ result: 'cancelled', isError: true });
  });

  it('a completed round joins the history, then a pending notice, and the next request is a first attempt', () => {
    const round = [call('c', 'settled', { result: toolResult(call('c', 'settled'), 'r') })];
    const done = roundCompleted(base({ doomLoop: { noticed: true, pendingNotice: 'stop repeating' }, attempt: 3 }), round);
    expect(done.messages?.map((message) => message.role)).toEqual(['tool', 'user']);
    expect(done).toMatchObject({ round: null, attempt: 1, response: null, doomLoop: { noticed: true, pendingNotice: null } });
    expect(roundCompleted(base(), round).messages?.map((message) => message.role)).toEqual(['tool']);
    // Without a notice the doom-loop state is the run's own object, not a copy per round.
    const quiet = base();
    expect(roundCompleted(quiet, round).doomLoop).toBe(quiet.doomLoop);
  });

  it('settles one call, or with completesRound the whole round, with one tool.result', () => {
    const context = base({ round: [call('c0', 'running'), call('c1', 'settled')] });
    const result = toolResult(context.round?.[0] ?? call('c0', 'running'), 'r');
    const one = callSettled(context, 0, result);
    expect(one.context?.round?.[0]).toMatchObject({ state: 'settled', result });
    expect(one.emitted).toEqual([expect.objectContaining({ type: 'tool.result', toolCallId: 'c0' })]);
    expect(callSettled(context, 0, result, true).context).toMatchObject({ round: null, attempt: 1 });
    expect(callSettled(context, 5, result)).toEqual({});
    expect(callSettled(base(), 0, result)).toEqual({});
  });

  it('turns an execution’s output or what it threw into the call’s result', () => {
    const running = call('c0', 'running');
    expect(resultPartOf({ call: running, text: 'bad', isError: true })).toEqual(errorResult(running, 'bad'));
    expect(resultPartOf({ call: running, text: 'ok', isError: false })).toEqual(toolResult(running, 'ok'));
    const context = base({ round: [running] });
    expect(resultRecorded(context, doneEvent(0, 0, { toolCallId: 'c0', result: 'ok' })).context?.round?.[0]?.result).toEqual(
      toolResult(running, 'ok'),
    );
    expect(resultRecorded(context, doneEvent(0, 0, { toolCallId: 'zz', result: 'ok' }))).toEqual({});
    const thrown = thrownRecorded(context, errorEvent(0, 0, new Error('no')), (settledCall, error) =>
      errorResult(settledCall, String(error)),
    );
    expect(thrown.context?.round?.[0]?.result).toEqual(errorResult(running, 'Error: no'));
    expect(thrownRecorded(context, errorEvent(1, 0, 'x'), () => toolResult(running, ''))).toEqual({});
  });

  it('approves or denies the first call with that id that waits, and announces the waiting ones', () => {
    const round = [call('a', 'awaiting-approval'), call('b', 'queued'), call('a', 'awaiting-approval')];
    expect(isAwaitingApproval(round, 'a')).toBe(true);
    expect(isAwaitingApproval(round, 'b')).toBe(false);
    expect(isAwaitingApproval(null, 'a')).toBe(false);
    expect(callApproved(round, 'a')?.map((c) => c.state)).toEqual(['queued', 'queued', 'awaiting-approval']);
    expect(callApproved(round, 'b')).toBe(round);
    const denied = callDenied(round, 'a', 'no');
    expect(denied.context?.round?.[0]).toMatchObject({
      state: 'settled',
      result: errorResult(round[0] ?? call('a', 'settled'), resultTexts.denied('no')),
    });
    expect(denied.emitted).toHaveLength(1);
    expect(callDenied(round, 'zz', undefined)).toEqual({ context: { round }, emitted: [] });
    expect(approvalsRequested(round).emitted?.map((event) => event.type)).toEqual(['tool.approval.requested', 'tool.approval.requested']);
    expect(approvalsRequested(null).emitted).toEqual([]);
  });

  it('closes a round early: every open call gets the text, only newly settled calls are reported', () => {
    const settledOne = call('s', 'settled', { result: toolResult(call('s', 'settled'), 'kept') });
    const closed = roundClosed([settledOne, call('r', 'running')], 'halted', []);
    expect(closed.context).toMatchObject({ round: null, response: null });
    expect(closed.context?.messages).toHaveLength(1);
    expect(closed.emitted?.map((event) => event.type === 'tool.result' && event.toolCallId)).toEqual(['r']);
    expect(roundClosed([], 'x', [])).toEqual({});
    expect(unanswered([settledOne]).map((c) => [c.state, c.result])).toEqual([['queued', undefined]]);
  });

  it('starts queued calls up to maxConcurrent, each with its child, its tool.started and one deadline from now', () => {
    const context = base({ iterations: 2, round: [call('a', 'running'), call('b', 'queued'), call('c', 'queued', { toolName: 'slow' })] });
    const started = queuedCallsStarted(context, 3, (name) => (name === 'slow' ? 50 : 1000), 100);
    expect(started?.starts.map((start) => start.kind === 'tool' && [start.id, start.input.timeoutMs, start.event.toolCallId])).toEqual([
      ['toolCall-2-1', 1000, 'b'],
      ['toolCall-2-2', 50, 'c'],
    ]);
    expect(started?.round.map((c) => [c.state, c.deadline])).toEqual([
      ['running', undefined],
      ['running', 1100],
      ['running', 150],
    ]);
    expect(queuedCallsStarted(context, 2, () => 1, 0)?.starts).toHaveLength(1);
    expect(queuedCallsStarted(context, 1, () => 1, 0)).toBeNull();
    expect(queuedCallsStarted(base(), 1, () => 1, 0)).toBeNull();
    expect(runningCallIds(context)).toEqual(['toolCall-2-0']);
  });

  it('times out every running call due by now (at least the earliest deadline)', () => {
    const context = base({
      round: [call('a', 'running', { deadline: 100 }), call('b', 'running', { deadline: 100 }), call('c', 'running', { deadline: 900 })],
    });
    const timedOut = callsTimedOut(context, () => 100, 50);
    expect(timedOut?.stop).toEqual(['toolCall-0-0', 'toolCall-0-1']);
    expect(timedOut?.effects.context?.round?.map((c) => c.state)).toEqual(['settled', 'settled', 'running']);
    expect(timedOut?.effects.emitted).toHaveLength(2);
    expect(callsTimedOut(base({ round: [call('a', 'queued')] }), () => 1, 0)).toBeNull();
  });

  it('reports the calls a restart interrupted and clears the restore mark', () => {
    const result = errorResult(call('a', 'settled'), resultTexts.interrupted);
    const context = base({ round: [call('a', 'settled', { result }), call('b', 'queued')], restored: { interrupted: ['a'] } });
    expect(interruptedReported(context)).toEqual({
      context: { restored: undefined },
      emitted: [toolResultEvent(call('a', 'settled', { result }))],
    });
  });

  it('refuses a response’s calls at the iteration cap or a persisting doom loop, announcing the doom loop first', () => {
    const doomLoop = { action: 'halt' as const, notice: 'n', pattern: [{ name: 'add', args: {} }], repeats: 3 };
    const context = base({ response: response({ calls: [call('a', 'queued')], doomLoop }) });
    const cap = callsRefused(context, 'max_iterations', resultTexts.iterationLimit);
    expect(cap.context).toMatchObject({ outcome: { status: 'halted', reason: 'max_iterations' }, round: null, response: null });
    expect(cap.emitted?.map((event) => event.type)).toEqual(['tool.result']);
    const loop = callsRefused(context, 'doom_loop', resultTexts.doomLoop);
    expect(loop.emitted?.map((event) => event.type)).toEqual(['doom_loop.detected', 'tool.result']);
  });

  it('a cancel halts the run and closes a round in progress', () => {
    expect(runCancelled(base(), 'bye')).toEqual({
      context: { outcome: expect.objectContaining({ status: 'halted', reason: 'cancelled' }) },
    });
    const cancelled = runCancelled(base({ round: [call('a', 'running')] }), 'bye');
    expect(cancelled.emitted).toEqual([expect.objectContaining({ result: 'cancelled: bye', isError: true })]);
  });
});

describe('response-commit', () => {
  const finish = (content: FinishEvent['content'], extra: Partial<FinishEvent> = {}): FinishEvent => ({
    type: 'provider.finish',
    content,
    finishReason: 'tool-calls',
    usage: usage(5),
    ...extra,
  });
  const settings = { tools, maxToolArgsBytes: 10_000, doomLoopThreshold: 3 as const, output: undefined, provider: { model: 'm' } };

  it('joins text parts', () => {
    expect(
      textOfParts([
        { type: 'text', text: 'a' },
        { type: 'reasoning', text: 'x' },
        { type: 'text', text: 'b' },
      ]),
    ).toBe('ab');
  });

  it('finds a doom loop: a notice first, a halt once noticed, nothing when switched off', () => {
    const history = [1, 2].flatMap(() => [
      { role: 'assistant' as const, content: [{ type: 'tool-call' as const, toolCallId: 'x', toolName: 'add', args: { a: 1 } }] },
    ]);
    const content = [{ type: 'tool-call' as const, toolCallId: 'y', toolName: 'add', args: { a: 1 } }];
    expect(doomLoopVerdict(history, content, 3, false)).toMatchObject({ action: 'notice', repeats: 3 });
    expect(doomLoopVerdict(history, content, 3, true)).toMatchObject({ action: 'halt' });
    expect(doomLoopVerdict(history, content, false, true)).toEqual({ action: 'none' });
    expect(doomLoopVerdict([], content, 3, false)).toEqual({ action: 'none' });
  });

  it('keeps a finished response pending and announces usage, its tool calls, then request.finished', () => {
    const received = responseReceived(
      base({ attempt: 2, iterations: 1 }),
      finish(
        [
          { type: 'text', text: 'x' },
          { type: 'tool-call', toolCallId: 'c', toolName: 'add', argsText: '{"a":1}' },
        ],
        { responseId: 'r1' },
      ),
      settings,
    );
    expect(received.context?.response).toMatchObject({
      model: 'm',
      calls: [{ toolCallId: 'c', state: 'queued' }],
      doomLoop: { action: 'none' },
    });
    expect(received.context?.outcome?.finishReason).toBe('tool-calls');
    expect(received.emitted?.map((event) => event.type)).toEqual(['usage', 'tool.call', 'request.finished']);
    expect(received.emitted?.at(-1)).toMatchObject({ iteration: 1, attempt: 2, responseId: 'r1', model: 'm' });
  });

  it('checks a final answer against the output schema', () => {
    const output = resolveOutput({ schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } }, new Set());
    const ok = responseReceived(base(), finish([{ type: 'text', text: '{"n":1}' }], { finishReason: 'stop' }), { ...settings, output });
    expect(ok.context?.response?.answer).toEqual({ ok: true, object: { n: 1 } });
    const bad = responseReceived(base(), finish([{ type: 'text', text: '{}' }], { finishReason: 'stop' }), { ...settings, output });
    expect(bad.context?.response?.answer?.ok).toBe(false);
  });

  it('commits a response: usage (and cost) counted, content appended unless empty', () => {
    const context = base({ response: response() });
    expect(committed(context, undefined)).toEqual({
      usage: usage(3),
      messages: [{ role: 'assistant', content: [{ type: 'text', text: 'hi' }] }],
    });
    expect(committed(base({ response: response({ content: [] }) }), undefined)).toEqual({ usage: usage(3) });
    expect(committed(base(), undefined)).toEqual({});
    const priced = { ...initialContext({ messages: [] }, true), response: response({ model: 'p' }) };
    expect(committed(priced, { p: { input: 1_000_000, output: 0 } }).billing?.cost?.total).toBeCloseTo(3);
  });

  it('the final text is the last response’s text, also when empty', () => {
    expect(finalTextRecorded(base({ response: response() })).outcome?.finalText).toBe('hi');
    expect(finalTextRecorded(base()).outcome?.finalText).toBe('');
  });

  it('starts a round from the response: committed, calls in the round, notice pending, settled calls reported', () => {
    const doomLoop = { action: 'notice' as const, notice: 'n', pattern: [], repeats: 3 };
    const settled = call('s', 'settled', { result: errorResult(call('s', 'settled'), 'unknown tool') });
    const started = roundStarted(base({ response: response({ calls: [settled, call('q', 'queued')], doomLoop }) }), undefined);
    expect(started.context).toMatchObject({
      iterations: 1,
      response: null,
      doomLoop: { noticed: true, pendingNotice: 'n' },
      usage: usage(3),
    });
    expect(started.context?.round).toHaveLength(2);
    expect(started.emitted?.map((event) => event.type)).toEqual(['doom_loop.detected', 'tool.result']);
    expect(roundStarted(base(), undefined)).toEqual({});
  });

  it('keeps the doom-loop state and the outcome when a round leaves them as they were, and copies them when it changes them', () => {
    const quiet = { action: 'none' as const };
    const calm = base({ response: response({ calls: [call('q', 'queued')], doomLoop: quiet }) });
    expect(roundStarted(calm, undefined).context?.doomLoop).toBe(calm.doomLoop);
    const noticed = base({
      doomLoop: { noticed: true, pendingNotice: null },
      response: response({ calls: [call('q', 'queued')], doomLoop: quiet }),
    });
    expect(roundStarted(noticed, undefined).context?.doomLoop).toEqual({ noticed: false, pendingNotice: null });
    const settings = { tools, maxToolArgsBytes: 10_000, doomLoopThreshold: 3 as const, output: undefined, provider: { model: 'm' } };
    const finishWith = (finishReason: string) =>
      ({ type: 'provider.finish', content: [{ type: 'text', text: 'a' }], finishReason, usage: usage(1) }) as FinishEvent;
    const same = base({ outcome: { status: null, reason: null, finalText: null, finishReason: 'stop' } });
    expect(responseReceived(same, finishWith('stop'), settings).context?.outcome).toBe(same.outcome);
    expect(responseReceived(same, finishWith('length'), settings).context?.outcome).toEqual({ ...same.outcome, finishReason: 'length' });
    expect(same.outcome.finishReason).toBe('stop');
  });
});

describe('agent-calls', () => {
  it('joins two effects: the second’s context wins on a shared key, events in order, neither input changed', () => {
    const first: Effects = {
      context: { iterations: 1, attempt: 2 },
      emitted: [{ type: 'request.started', iteration: 1, attempt: 2, provider: 'p' }],
    };
    const second: Effects = { context: { attempt: 3, response: null }, emitted: [{ type: 'text.delta', delta: 'a' }] };
    const both = bothEffects(first, second);
    expect(both.context).toEqual({ iterations: 1, attempt: 3, response: null });
    expect(both.emitted?.map((event) => event.type)).toEqual(['request.started', 'text.delta']);
    expect(first.context).toEqual({ iterations: 1, attempt: 2 });
    expect(first.emitted).toHaveLength(1);
    expect(bothEffects({}, {})).toEqual({ context: {}, emitted: [] });
    expect(bothEffects({}, second).context).not.toBe(second.context);
  });
});

describe('response-step', () => {
  const limits = { maxToolIterations: 2, maxRepairs: 1 };
  it('gives one step per outcome, in the documented priorities', () => {
    const step = (context: ConversationContext) => responseStep(context, limits);
    expect(step(base())).toBe('noResponse');
    expect(step(base({ response: response() }))).toBe('accept');
    const invalid = response({ answer: { ok: false, problem: 'p' } });
    expect(step(base({ response: invalid }))).toBe('repair');
    expect(step(base({ response: invalid, answer: { repairs: 1 } }))).toBe('rejectAnswer');
    const halt = { action: 'halt' as const, notice: 'n', pattern: [], repeats: 3 };
    // At the cap, the cap wins over a persisting doom loop; a final answer wins over the cap.
    expect(step(base({ iterations: 2, response: response({ calls: [call('a', 'queued')], doomLoop: halt }) }))).toBe('haltAtIterationCap');
    expect(step(base({ iterations: 2, response: response() }))).toBe('accept');
    expect(step(base({ response: response({ calls: [call('a', 'awaiting-approval')], doomLoop: halt }) }))).toBe('haltOnDoomLoop');
    expect(step(base({ response: response({ calls: [call('a', 'awaiting-approval')] }) }))).toBe('awaitApproval');
    expect(step(base({ response: response({ calls: [call('a', 'queued')] }) }))).toBe('executeTools');
  });
});

describe('request-failure', () => {
  it('names the failure behind an attempt that ended without a response', () => {
    expect(failureOf({ type: 'xstate.after.requestTimeout.x' }, 100)).toMatchObject({ code: 'timeout', retryable: true });
    expect(failureOf({ type: 'xstate.done.actor.providerCall' }, 100)).toMatchObject({ code: 'incomplete_stream' });
    const thrown = new ProviderError('nope', { status: 401, code: 'authentication', retryable: false });
    expect(failureOf({ type: 'xstate.error.actor.providerCall', error: thrown }, 100)).toBe(thrown);
  });

  it('keeps the error as JSON, named after a named cause', () => {
    const cause = new TypeError('fetch failed');
    expect(runErrorOf(new ProviderError('down', { code: 'network', retryable: true, cause }))).toEqual({
      name: 'TypeError',
      message: 'down',
      retryable: true,
      code: 'network',
    });
    expect(runErrorOf(new ProviderError('x', { status: 500, code: 'server', retryable: true }))).toMatchObject({
      name: 'ProviderError',
      status: 500,
    });
  });

  it('records a failure, billing its wasted tokens apart and saying why a long retry-after is not honoured', () => {
    const retry = { maxRetries: 3, initialDelayMs: 10, maxDelayMs: 100, jitter: false, maxRetryAfterMs: 1000 };
    const failure = new ProviderError('slow down', { status: 429, code: 'rate_limit', retryable: true, retryAfterMs: 5000 });
    const recorded = failureRecorded(base({ attempt: 1, response: response() }), failure, { retry, prices: undefined, model: undefined });
    expect(recorded.retry).toMatchObject({ lastRetryAfterMs: 5000, lastError: { code: 'rate_limit' } });
    expect(recorded.retry?.lastError?.message).toContain('exceeds retry.maxRetryAfterMs');
    expect(recorded.billing?.failedUsage).toEqual(usage(3));
    expect(
      failureRecorded(base(), new ProviderError('x', { code: 'network', retryable: true }), { retry, prices: undefined, model: undefined })
        .billing,
    ).toBeUndefined();
    expect(retryScheduled(base({ attempt: 2 }), retry).retry?.delayMs).toBe(20);
  });

  it('announces a retry with the next attempt, the backoff and whether streamed output is discarded', () => {
    const context = base({ attempt: 1, retry: { delayMs: 20, lastError: null, lastRetryAfterMs: null } });
    expect(retryEvent(context)).toEqual({
      type: 'request.retry',
      attempt: 2,
      delayMs: 20,
      error: { name: 'ProviderError', message: 'unknown failure', retryable: true },
      discardPartial: false,
    });
    const error = { name: 'E', message: 'm', retryable: false };
    expect(errorRecorded(context, error).retry).toEqual({ ...context.retry, lastError: error });
  });
});

describe('run-context', () => {
  it('starts a run from its input, keeping a malformed input as its problem', () => {
    const context = initialContext({ messages: [{ role: 'user', content: 'hi' }], sessionData: { a: 1 } }, true);
    expect(context).toMatchObject({ runStart: 1, iterations: 0, sessionData: { a: 1 }, billing: { cost: { total: 0 } } });
    expect(context.inputProblem).toBeUndefined();
    expect(initialContext(undefined, false)).toMatchObject({ messages: [], runStart: 0, billing: { cost: null } });
    expect(initialContext('nope' as never, false).inputProblem).toBe('input must be an object { messages?, prompt?, sessionData? }');
    expect(initialContext({ messages: 'x' as never }, false)).toMatchObject({
      messages: [],
      runStart: 0,
      inputProblem: expect.any(String),
    });
  });

  it('starts every run on the same frozen groups until the run changes them; a priced run’s cost is its own', () => {
    const first = initialContext({ messages: [] }, false);
    const second = initialContext({ messages: [] }, false);
    for (const group of ['doomLoop', 'retry', 'outcome', 'billing', 'answer', 'agents', 'control'] as const) {
      expect(second[group], group).toBe(first[group]);
      expect(Object.isFrozen(first[group]), group).toBe(true);
    }
    // A write to a shared group throws rather than reaching another run.
    expect(() => {
      (first.retry as { delayMs: number }).delayMs = 5;
    }).toThrow(TypeError);
    const priced = initialContext({ messages: [] }, true);
    expect(priced.billing).not.toBe(initialContext({ messages: [] }, true).billing);
    expect(Object.isFrozen(priced.billing.cost)).toBe(false);
    // A child's depth, a starting agent or an inherited budget make groups of their own.
    const child = initialContext({ messages: [], agentDepth: 2, budget: { maxTotalTokens: 10 } }, false);
    expect(child.agents).toMatchObject({ depth: 2 });
    expect(child.control.limits).toEqual({ maxTotalTokens: 10 });
    expect(child.control).not.toBe(first.control);
    expect(first.control.limits).toEqual({});
    const handoffs = initialContext({ messages: [] }, false, { start: 'triage', known: new Set(['triage']) });
    expect(handoffs.agents).toEqual({ depth: 0, usageByAgent: [], approvals: [], active: 'triage' });
    expect(handoffs.agents).not.toBe(first.agents);
  });

  it('keeps a run’s limits object when its budget changes none of them, and makes a new one when it does', () => {
    const none = initialContext({ messages: [] }, false).control.limits;
    expect(runLimits(undefined, none, 1_000)).toBe(none);
    const inherited = { maxTotalTokens: 100 };
    expect(runLimits({ maxTotalTokens: 500 }, inherited, 1_000)).toBe(inherited);
    expect(runLimits({ maxTotalTokens: 50 }, inherited, 1_000)).toEqual({ maxTotalTokens: 50 });
    expect(runLimits({ maxDurationMs: 10 }, none, 1_000)).toEqual({ deadline: 1_010 });
    expect(runLimits(undefined, { maxCostUsd: 1, stray: 3 } as never, 0)).toEqual({ maxCostUsd: 1 });
  });

  it('resolves with the run’s output, leaving out what has no value', () => {
    const context = base({ messages: [{ role: 'assistant', content: [{ type: 'text', text: 'earlier' }] }] });
    expect(runOutput(context)).toEqual({ status: 'error', text: 'earlier', messages: context.messages, iterations: 0, usage: usage(0) });
    const done = base({
      outcome: { status: 'done', reason: null, finalText: 'f', finishReason: 'stop' },
      answer: { repairs: 1, object: { n: 1 } },
    });
    expect(runOutput(done)).toMatchObject({ status: 'done', text: 'f', finishReason: 'stop', object: { n: 1 }, repairs: 1 });
    expect(lastAssistantText(context.messages, 1)).toBe('');
  });

  it('accepts user content that is a non-empty string or text parts with some text', () => {
    expect(isValidUserContent('hi')).toBe(true);
    expect(isValidUserContent('  ')).toBe(false);
    expect(isValidUserContent([{ type: 'text', text: 'a' }])).toBe(true);
    expect(isValidUserContent([{ type: 'text', text: ' ' }])).toBe(false);
    expect(isValidUserContent([{ type: 'image' }])).toBe(false);
    expect(isValidUserContent([])).toBe(false);
    expect(isValidUserContent(3)).toBe(false);
  });

  it('says why an event was turned away', () => {
    expect(invalidMessageText({ type: 'user.message', content: 3 })).toMatch(/got 3$/);
    expect(invalidMessageText({ type: 'user.message', content: undefined })).toMatch(/got undefined$/);
    expect(outOfStateText('user.message', { requesting: 'waiting' })).toBe(
      'user.message is not accepted while the run is {"requesting":"waiting"}',
    );
    expect(unknownCallText({ type: 'tool.approve', toolCallId: 'c' })).toBe('tool.approve: no tool call "c" is waiting for approval');
  });

  it('marks how the run ended; a halt without a reason is a cancel', () => {
    const outcome = base().outcome;
    expect(outcomeMarked(outcome, 'done').outcome).toMatchObject({ status: 'done', reason: null });
    expect(outcomeMarked(outcome, 'halted').outcome).toMatchObject({ status: 'halted', reason: 'cancelled' });
    expect(outcomeMarked({ ...outcome, reason: 'doom_loop' }, 'halted').outcome?.reason).toBe('doom_loop');
    expect(haltRecorded(outcome, 'tool_halt', 'bye').outcome).toMatchObject({ status: 'halted', reason: 'tool_halt', finalText: 'bye' });
    expect(haltRecorded(outcome, 'max_iterations').outcome?.finalText).toBeNull();
  });
});

describe('answer-repair', () => {
  const output = { name: 'final_answer', maxRepairs: 2 };
  it('keeps only a valid answer’s object', () => {
    expect(objectRecorded(base({ response: response({ answer: { ok: true, object: { n: 1 } } }) })).answer).toEqual({
      repairs: 0,
      object: { n: 1 },
    });
    expect(objectRecorded(base({ response: response({ answer: { ok: false, problem: 'p' } }) }))).toEqual({});
  });

  it('sends an invalid answer back with its problem, announced by output.repair', () => {
    const repair = repairStarted(base({ response: response({ answer: { ok: false, problem: 'p' } }) }), output);
    expect(repair.context).toMatchObject({ answer: { repairs: 1 }, response: null, messages: [{ role: 'user' }] });
    expect(repair.emitted).toEqual([{ type: 'output.repair', repair: 1, maxRepairs: 2, problem: 'p' }]);
    expect(repairStarted(base({ response: response() }), output)).toEqual({});
    expect(repairStarted(base({ response: response({ answer: { ok: false, problem: 'p' } }) }), undefined)).toEqual({});
  });

  it('ends with invalid_output naming the problem and the repairs made', () => {
    const error = answerError(base({ response: response({ answer: { ok: false, problem: 'p' } }), answer: { repairs: 2 } }));
    expect(error).toMatchObject({ name: 'OutputValidationError', code: 'invalid_output', retryable: false });
    expect(error.message).toBe('the final answer did not match the output schema after 2 repair(s): p');
    expect(answerError(base()).message).toMatch(/no valid answer$/);
  });

  it('streams the partial object only when it changed', () => {
    const stream = base().stream;
    const first = partialObjectStreamed(stream, [{ type: 'text.delta', delta: '{"n":1' }]);
    expect(first.emitted).toEqual([{ type: 'object.delta', object: { n: 1 } }]);
    const next = first.context?.stream ?? stream;
    expect(next).toMatchObject({ partial: true, progressed: true, answerText: '{"n":1', lastPartialJson: '{"n":1}' });
    expect(partialObjectStreamed(next, [{ type: 'text.delta', delta: ' ' }]).emitted).toBeUndefined();
    expect(partialObjectStreamed(next, [{ type: 'reasoning.delta', delta: 'x' }])).toEqual({});
  });
});

// ---------------------------------------------------------------------------------------------
// Guards on one transition list

const settings = resolveOptions({
  provider: { name: 'stub', async *stream() {} },
  tools: [addTool],
  maxToolIterations: 2,
  output: { schema: { type: 'object' }, maxRepairs: 1 },
});
const guards = conversationGuards(() => settings);

const roundCallArb = fc.record({
  toolCallId: fc.constantFrom('a', 'b'),
  toolName: fc.constant('add'),
  args: fc.constant({}),
  state: fc.constantFrom<RoundCallState>('awaiting-approval', 'queued', 'running', 'settled'),
});
const responseArb = fc.option(
  fc.record({
    calls: fc.array(roundCallArb, { maxLength: 3 }),
    doomLoop: fc.constantFrom<PendingResponse['doomLoop']>(
      { action: 'none' },
      { action: 'notice', notice: 'n', pattern: [], repeats: 3 },
      { action: 'halt', notice: 'n', pattern: [], repeats: 3 },
    ),
    answer: fc.option(fc.constantFrom({ ok: true as const, object: {} }, { ok: false as const, problem: 'p' }), { nil: undefined }),
  }),
  { nil: null },
);
const contextArb = fc
  .record({
    response: responseArb,
    iterations: fc.integer({ min: 0, max: 3 }),
    repairs: fc.integer({ min: 0, max: 2 }),
    attempt: fc.integer({ min: 1, max: 5 }),
  })
  .map(({ response: pending, iterations, repairs, attempt }) =>
    base({
      response:
        pending === null
          ? null
          : response({ calls: pending.calls, doomLoop: pending.doomLoop, ...(pending.answer ? { answer: pending.answer } : {}) }),
      iterations,
      attempt,
      answer: { repairs },
    }),
  );
const doneProviderCall = { type: 'xstate.done.actor.providerCall' } as unknown as ConversationEvent;

describe('combined guards (src/machines/chart/combined-guards.ts)', () => {
  const guardrail = { name: 'topic', check: () => ({ tripped: false }), timeoutMs: 1_000 };
  const stub = (name: string): Provider => ({ name, async *stream() {} });
  const settled = (toolCallId: string) => ({ type: 'tool-result' as const, toolCallId, toolName: 'add', result: 'r' });
  const controlSettings = resolveOptions({
    provider: [stub('first'), stub('second')],
    tools: [addTool],
    maxToolIterations: 2,
    output: { schema: { type: 'object' }, maxRepairs: 1 },
    guardrails: { input: [guardrail], output: [guardrail] },
    steering: 'queue',
  });
  const withControls = conversationGuards(() => controlSettings);
  const events = [
    doneProviderCall,
    { type: 'xstate.error.actor.providerCall', error: new ProviderError('down', { code: 'network', retryable: true }) },
    { type: 'user.message', content: 'hi' },
    { type: 'user.interrupt', content: 'stop' },
    { type: 'user.message', content: 42 },
    { type: 'agent.emitted', childId: 'agent:nobody', events: [] },
  ] as unknown as ConversationEvent[];
  const argsArb = fc
    .record({
      context: contextArb,
      queued: fc.boolean(),
      round: fc.constantFrom<RoundCall[] | null>(
        null,
        [call('a', 'running')],
        [call('a', 'settled', { result: settled('a') })],
        [call('a', 'settled', { handoff: 'billing', result: settled('a') })],
      ),
      provider: fc.constantFrom(0, 1),
      event: fc.constantFrom(...events),
    })
    .map(({ context, queued, round, provider, event }) => ({
      context: { ...context, round, control: { ...context.control, provider, queued: queued ? ['later'] : [] } },
      event,
    }));

  it('each holds exactly when every guard it lists holds, with the options off and on', () => {
    const held = new Set<string>();
    fc.assert(
      fc.property(argsArb, (args) => {
        for (const machineGuards of [guards, withControls]) {
          for (const [name, parts] of Object.entries(combinedGuards)) {
            const holds = machineGuards[name as CombinedGuardName](args);
            expect(holds, name).toBe(parts.every((part) => machineGuards[part](args)));
            if (holds) held.add(name);
          }
        }
      }),
      { numRuns: 1000, seed: 48 },
    );
    // Each was seen holding (but the tree budget's, which needs a child's spend over a budget: test/agents.test.ts).
    expect([...held].sort()).toEqual(
      Object.keys(combinedGuards)
        .filter((name) => name !== 'agentBatchOverTreeBudget')
        .sort(),
    );
  });

  it('none holds without the options it needs: no guardrails, no queueing, one provider', () => {
    const args = { context: base({ control: { ...base().control, queued: ['later'] } }), event: events[2] as ConversationEvent };
    expect(guards.validMessageWithInputGuardrails(args)).toBe(false);
    expect(guards.steeringQueuesValidMessage(args)).toBe(false);
    expect(guards.queuedMessagesWithInputGuardrails(args)).toBe(false);
    expect(withControls.validMessageWithInputGuardrails(args)).toBe(true);
    expect(withControls.steeringQueuesValidMessage(args)).toBe(true);
    expect(withControls.queuedMessagesWithInputGuardrails(args)).toBe(true);
  });
});

describe('guards on one transition list', () => {
  it('onDone of providerCall: the guards after the retry pair hold for at most one context, and the fallback only when none does', () => {
    const stepGuards = [
      'missingResponse',
      'answerAccepted',
      'answerRepairable',
      'noToolCalls',
      'iterationCapReached',
      'doomLoopPersists',
      'roundNeedsApproval',
    ] as const;
    const seen = new Set<ResponseStep>();
    fc.assert(
      fc.property(contextArb, (context) => {
        const holding = stepGuards.filter((name) => guards[name]({ context, event: doneProviderCall }));
        expect(holding.length).toBeLessThanOrEqual(1);
        const step = responseStep(context, { maxToolIterations: 2, maxRepairs: 1 });
        seen.add(step);
        // The unguarded last branch (to executingTools) is taken exactly when no guard holds.
        expect(holding.length === 0).toBe(step === 'executeTools');
      }),
      { numRuns: 2000, seed: 24 },
    );
    expect(seen.size).toBe(8);
  });

  it('onDone of providerCall, documented order: `missingResponseCanRetry` is tried before `missingResponse` alone', () => {
    // The pair is one decision (retry if allowed, else fail): the second branch is the first's else.
    const noResponse = base({ attempt: 1 });
    expect(guards.missingResponse({ context: noResponse, event: doneProviderCall })).toBe(true);
    expect(guards.canRetryFailure({ context: noResponse, event: doneProviderCall })).toBe(true);
    expect(guards.missingResponseCanRetry({ context: noResponse, event: doneProviderCall })).toBe(true);
    const exhausted = base({ attempt: settings.retry.maxRetries + 1 });
    expect(guards.canRetryFailure({ context: exhausted, event: doneProviderCall })).toBe(false);
    expect(guards.missingResponseCanRetry({ context: exhausted, event: doneProviderCall })).toBe(false);
    expect(guards.missingResponse({ context: exhausted, event: doneProviderCall })).toBe(true);
  });

  it('after requestTimeout, documented order: a window with progress starts a new window even with retries left', async () => {
    const timeout = { type: 'xstate.after.requestTimeout.conversation.requesting.waiting' } as unknown as ConversationEvent;
    const progressed = base({ stream: { partial: true, progressed: true, answerText: '', lastPartialJson: null }, attempt: 1 });
    // Both guards hold here: the order of the branches is the point.
    expect(guards.streamProgressed({ context: progressed, event: timeout })).toBe(true);
    expect(guards.canRetryFailure({ context: progressed, event: timeout })).toBe(true);
    // A stream slower than one window but never silent for a whole one is not retried.
    const provider: Provider = {
      name: 'slow-stream',
      async *stream() {
        for (let index = 0; index < 6; index++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          yield { type: 'text.delta', delta: `${index}` };
        }
        yield { type: 'finish', content: [{ type: 'text', text: '012345' }], finishReason: 'stop', usage: usage(1) };
      },
    };
    const actor = createActor(createConversationMachine({ provider, requestTimeoutMs: 200 }), { input: { messages: [] } }).start();
    const retries: unknown[] = [];
    actor.on('request.retry', (event) => retries.push(event));
    actor.send({ type: 'user.message', content: 'hi' });
    await expect(toPromise(actor)).resolves.toMatchObject({ status: 'done', text: '012345' });
    expect(retries).toEqual([]);
  });

  it('the other lists are a guard and its unguarded else, or a single guarded branch', () => {
    // Tool results: settlesRound / else; tool errors: executionHalts / else; approvals: isAwaitingApproval / else.
    const context = base({ round: [call('a', 'running')] });
    expect(guards.settlesRound({ context, event: doneEvent(0, 0, { toolCallId: 'a', result: 'r' }) as unknown as ConversationEvent })).toBe(
      true,
    );
    expect(guards.executionHalts({ context, event: errorEvent(0, 0, new HaltError('stop')) as unknown as ConversationEvent })).toBe(true);
    expect(guards.executionHalts({ context, event: errorEvent(0, 0, new Error('x')) as unknown as ConversationEvent })).toBe(false);
  });
});
