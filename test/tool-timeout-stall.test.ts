/**
 * DESIGN §3.7: a tool call that outlives its timeout gets the timeout result, also when the event
 * loop stalls. A stalled loop runs I/O callbacks and microtasks before due timers, so a result can
 * reach the machine after the call's deadline while its `toolDeadline` timer has not fired yet (seen
 * with 8 runs and a CPU hog: 24 of 240 calls kept a late result). Here the tool itself blocks the
 * loop past its deadline, which makes that order certain: its result comes before the timer.
 */
import { describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { createConversationMachine, defineTool, handlerProvider, HaltError, resultTexts, type Tool } from '../src/index.js';
import { resultOverdue } from '../src/machines/rounds/round-results.js';
import { journaledMachine, setStepJournal, type StepJournal } from '../src/machines/restore/step-journal.js';
import type { ConversationEmittedEvent, RoundCall } from '../src/machines/names/types.js';
import { eventsOf, expectValidHistory } from './support/run-conversation.js';
import { scriptedModel } from './support/scripted-model.js';

const timeoutMs = 28;

/** Holds the event loop (no timer can fire) until well past the call's deadline. */
function blockLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: the stall under test
  }
}

/** The tool `slow` (timeout 28 ms), doing what `execute` does. */
const slowTool = (execute: (signal: AbortSignal) => unknown): Tool<never, unknown> =>
  defineTool({ name: 'slow', parameters: z.object({}), timeoutMs, execute: (_args, { signal }) => execute(signal) }) as Tool<
    never,
    unknown
  >;

/** Stalls past its deadline, then answers. */
const lateResult = slowTool(() => {
  blockLoop(timeoutMs * 3);
  return 'late answer';
});
/** Never answers; only the deadline ends it (the path every timeout took before a stall could get ahead of it). */
const hangs = slowTool(
  (signal) => new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
);
const quick = defineTool({ name: 'quick', parameters: z.object({}), execute: () => 'quick answer' }) as Tool<never, unknown>;

async function run(tools: Array<Tool<never, unknown>>, toolCalls: Array<{ id: string; name: string }>, journal?: StepJournal) {
  const model = scriptedModel([{ toolCalls: toolCalls.map((call) => ({ ...call, args: {} })) }, { text: 'done' }]);
  const plain = createConversationMachine({ provider: handlerProvider(model.handler), tools, maxConcurrentTools: toolCalls.length });
  const machine = journal ? journaledMachine(plain) : plain;
  const actor = createActor(machine, { input: { messages: [] } });
  if (journal) setStepJournal(actor.system, journal);
  const events: ConversationEmittedEvent[] = [];
  actor.on('*', (event) => events.push(event));
  actor.start();
  actor.send({ type: 'user.message', content: 'go' });
  const output = await toPromise(actor);
  expectValidHistory(output.messages);
  return { output, events, requests: model.requests };
}

const timedOut = resultTexts.timedOut('slow', timeoutMs);

describe('a result that arrives after its deadline (DESIGN §3.7)', () => {
  it('is dropped: the call gets the timeout result, with the same events and history as a call the deadline stopped', async () => {
    const late = await run([lateResult], [{ id: 's', name: 'slow' }]);
    const stopped = await run([hangs], [{ id: 's', name: 'slow' }]);
    expect(eventsOf(late.events, 'tool.result')).toEqual([
      { type: 'tool.result', toolCallId: 's', name: 'slow', result: timedOut, isError: true },
    ]);
    // Indistinguishable from the deadline's own path: every event, the output and the next request
    // (the scripted model numbers its responses across runs, so their ids are left out).
    const alike = (value: unknown) => JSON.parse(JSON.stringify(value).replace(/chatcmpl-scripted-\d+/g, 'response')) as unknown;
    expect(alike(late.events)).toEqual(alike(stopped.events));
    expect(alike(late.output)).toEqual(alike(stopped.output));
    expect(late.requests[1]?.messages).toEqual(stopped.requests[1]?.messages);
    expect(late.output.status).toBe('done');
  });

  it('a late error and a late HaltError are timeouts too: the run goes on', async () => {
    for (const thrown of [new Error('too late to matter'), new HaltError('too late to halt')]) {
      const { output, events } = await run(
        [
          slowTool(() => {
            blockLoop(timeoutMs * 3);
            throw thrown;
          }),
        ],
        [{ id: 's', name: 'slow' }],
      );
      expect(output.status, String(thrown)).toBe('done');
      expect(eventsOf(events, 'tool.result').map((event) => event.result)).toEqual([timedOut]);
    }
  });

  it('one stall, many calls: every call whose time is up gets the timeout, a call with time left keeps its result', async () => {
    // `quick` has the default timeout (60 s); both `slow` calls share one deadline.
    const { output, events } = await run(
      [lateResult, quick],
      [
        { id: 's1', name: 'slow' },
        { id: 'q', name: 'quick' },
        { id: 's2', name: 'slow' },
      ],
    );
    const results = new Map(eventsOf(events, 'tool.result').map((event) => [event.toolCallId, event.result]));
    expect(results).toEqual(
      new Map([
        ['s1', timedOut],
        ['q', 'quick answer'],
        ['s2', timedOut],
      ]),
    );
    expect(output.messages[2]).toMatchObject({
      role: 'tool',
      content: [
        { toolCallId: 's1', isError: true },
        { toolCallId: 'q', result: 'quick answer' },
        { toolCallId: 's2', isError: true },
      ],
    });
  });

  it('journaled runs leave the timeout to the step, as the deadline timer is: what the journal recorded is what the call gets', async () => {
    // A journal that recorded the result as in time: a replay gets it at once, so the machine must not judge it late.
    const recorded: StepJournal = {
      async step(step, action, signal) {
        if (step.kind === 'tool') {
          blockLoop(timeoutMs * 3);
          return { status: 'done', value: { kind: 'result', text: 'recorded answer' } as never };
        }
        return { status: 'done', value: await action(signal) };
      },
    };
    const { events } = await run([hangs], [{ id: 's', name: 'slow' }], recorded);
    expect(eventsOf(events, 'tool.result').map((event) => event.result)).toEqual(['recorded answer']);
  });

  it('a journaled step whose tool stalls past its timeout records a timeout, so the run and its replays see one', async () => {
    const records: unknown[] = [];
    const running: StepJournal = {
      async step(step, action, signal) {
        const value = await action(signal);
        if (step.kind === 'tool') records.push(value);
        return { status: 'done', value };
      },
    };
    const { output, events } = await run([lateResult], [{ id: 's', name: 'slow' }], running);
    expect(records).toEqual([{ kind: 'timeout' }]);
    expect(eventsOf(events, 'tool.result')).toEqual([
      { type: 'tool.result', toolCallId: 's', name: 'slow', result: timedOut, isError: true },
    ]);
    expect(output.status).toBe('done');
  });
});

describe('resultOverdue', () => {
  const running = (deadline?: number): RoundCall => ({
    toolCallId: 'c',
    toolName: 'slow',
    args: {},
    state: 'running',
    ...(deadline === undefined ? {} : { deadline }),
  });
  const context = (call: RoundCall) => ({ iterations: 1, round: [call] });
  const done = { type: 'xstate.done.actor.toolCall-1-0', output: { toolCallId: 'c', result: 'x' } };
  const error = { type: 'xstate.error.actor.toolCall-1-0', error: new Error('x') };

  it('holds for a running call past its deadline, on its done or its error event', () => {
    expect(resultOverdue(context(running(100)), done, 101)).toBe(true);
    expect(resultOverdue(context(running(100)), error, 101)).toBe(true);
  });

  it('does not hold at or before the deadline', () => {
    expect(resultOverdue(context(running(100)), done, 100)).toBe(false);
    expect(resultOverdue(context(running(100)), done, 50)).toBe(false);
  });

  it('does not hold for a call without a deadline (restored from a store that leaves it out)', () => {
    expect(resultOverdue(context(running()), done, Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  it('does not hold for an event of no running call of the round, nor for a done event without its result', () => {
    expect(resultOverdue(context({ ...running(100), state: 'settled' }), done, 101)).toBe(false);
    expect(resultOverdue(context(running(100)), { ...done, type: 'xstate.done.actor.toolCall-0-0' }, 101)).toBe(false);
    expect(resultOverdue({ iterations: 1, round: null }, done, 101)).toBe(false);
    // Forged: another call's result, or no result text; such events change nothing, late or not.
    const forged = (output: unknown): { type: string } => ({ type: done.type, output }) as { type: string };
    expect(resultOverdue(context(running(100)), forged({ toolCallId: 'other', result: 'x' }), 101)).toBe(false);
    expect(resultOverdue(context(running(100)), forged({ toolCallId: 'c', result: 42 }), 101)).toBe(false);
  });
});
