/**
 * Tool progress (DESIGN §16): an `execute` written as a generator reports each yield as
 * `tool.progress { toolCallId, data }` while it runs, and its return value is the result. Progress
 * never extends the call's timeout; a call stopped by its timeout or a cancel has its generator
 * closed (its `finally` runs) and reports nothing more. Streamed in rx and as the UI protocol's
 * preliminary tool output.
 */
import { firstValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { createConversationMachine, defineTool, handlerProvider, resultTexts, type ToolProgressEvent } from '../src/index.js';
import { journaledMachine, setStepJournal, type StepJournal } from '../src/machines/restore/step-journal.js';
import { events$ } from '../src/observe/rx/index.js';
import { drainProgress, isProgressIterator, progressData } from '../src/tools/tool-progress.js';
import { eventsOf, expectValidHistory, runConversation } from './support/run-conversation.js';
import { scriptedModel } from './support/scripted-model.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const indexer = defineTool({
  name: 'index_files',
  parameters: z.object({ files: z.number() }),
  execute: async function* ({ files }) {
    for (let done = 1; done <= files; done++) {
      await sleep(1);
      yield { done, of: files };
    }
    return `indexed ${files} files`;
  },
});

describe('progress as pure functions', () => {
  it('a generator, async or not, is progress; an array, a Map or a promise is a result', async () => {
    async function* asyncGen() {
      yield 1;
    }
    function* syncGen() {
      yield 1;
    }
    expect(isProgressIterator(asyncGen())).toBe(true);
    expect(isProgressIterator(syncGen())).toBe(true);
    for (const value of [[1, 2], new Map(), new Set([1]), Promise.resolve(1), 'text', null, { next: () => 1 }]) {
      expect(isProgressIterator(value), String(value)).toBe(false);
    }
  });

  it('yields become JSON (a bigint, a cycle, undefined in readable form); the return value is the result', async () => {
    expect(progressData({ done: 3, of: 10 })).toEqual({ done: 3, of: 10 });
    expect(progressData(10n)).toBe('10');
    expect(progressData(undefined)).toBeNull();
    expect(progressData(Number.NaN)).toBe('NaN');
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    expect(progressData(cycle)).toEqual({ a: 1, self: '[Circular]' });
    const reported: unknown[] = [];
    function* steps() {
      yield 'a';
      yield 'b';
      return 'done';
    }
    expect(
      await drainProgress(
        steps(),
        (data) => reported.push(data),
        () => false,
      ),
    ).toBe('done');
    expect(reported).toEqual(['a', 'b']);
  });

  it('stopped: the generator is closed (its finally runs) and reports nothing more', async () => {
    let closed = false;
    let stopped = false;
    const reported: unknown[] = [];
    async function* forever() {
      try {
        for (let step = 0; ; step++) yield step;
      } finally {
        closed = true;
      }
    }
    const result = await drainProgress(
      forever(),
      (data) => {
        reported.push(data);
        if (reported.length === 3) stopped = true;
      },
      () => stopped,
    );
    expect(result).toBeUndefined();
    expect(reported).toEqual([0, 1, 2]);
    expect(closed).toBe(true);
  });
});

describe('tool progress through a conversation', () => {
  it('each yield is a tool.progress of that call, in order, before its tool.result; the return value is the result', async () => {
    const { output, events } = await runConversation(
      [{ toolCalls: [{ id: 'i1', name: 'index_files', args: { files: 3 } }] }, { text: 'Indexed.' }],
      { tools: [indexer] },
    );
    expect(output.status).toBe('done');
    const seen = events.filter((event) => event.type === 'tool.progress' || event.type === 'tool.result');
    expect(seen).toEqual([
      { type: 'tool.progress', toolCallId: 'i1', data: { done: 1, of: 3 } },
      { type: 'tool.progress', toolCallId: 'i1', data: { done: 2, of: 3 } },
      { type: 'tool.progress', toolCallId: 'i1', data: { done: 3, of: 3 } },
      { type: 'tool.result', toolCallId: 'i1', name: 'index_files', result: 'indexed 3 files', isError: false },
    ]);
    // Progress is events only: the history holds the result.
    expect(output.messages[2]).toEqual({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'i1', toolName: 'index_files', result: 'indexed 3 files' }],
    });
  });

  it('progress never extends the timeout: a generator that keeps reporting times out on time, is closed, and reports nothing after', async () => {
    let closed = false;
    const chatty = defineTool({
      name: 'chatty',
      parameters: z.object({}),
      timeoutMs: 150,
      execute: async function* () {
        try {
          for (let step = 0; ; step++) {
            await sleep(10);
            yield step;
          }
        } finally {
          closed = true;
        }
      },
    });
    const started = Date.now();
    const { output, events } = await runConversation([{ toolCalls: [{ id: 'c1', name: 'chatty', args: {} }] }, { text: 'ok' }], {
      tools: [chatty],
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(output.status).toBe('done');
    const results = eventsOf(events, 'tool.result');
    expect(results).toEqual([expect.objectContaining({ toolCallId: 'c1', isError: true, result: resultTexts.timedOut('chatty', 150) })]);
    const resultAt = events.indexOf(results[0]!);
    expect(events.slice(resultAt).some((event) => event.type === 'tool.progress')).toBe(false);
    expect(eventsOf(events, 'tool.progress').length).toBeGreaterThan(0);
    await sleep(50);
    expect(closed).toBe(true);
    expectValidHistory(output.messages);
  });

  it('a cancel while a generator runs closes it; the call gets its one cancelled result', async () => {
    let closed = false;
    const slow = defineTool({
      name: 'slow',
      parameters: z.object({}),
      execute: async function* () {
        try {
          for (;;) {
            await sleep(10);
            yield 'working';
          }
        } finally {
          closed = true;
        }
      },
    });
    const { output, events } = await runConversation([{ toolCalls: [{ id: 's1', name: 'slow', args: {} }] }], {
      tools: [slow],
      onStart: (actor) => actor.on('tool.progress', () => actor.send({ type: 'cancel', reason: 'enough' })),
    });
    expect(output).toMatchObject({ status: 'halted', reason: 'cancelled' });
    expect(eventsOf(events, 'tool.result')).toEqual([expect.objectContaining({ toolCallId: 's1', isError: true })]);
    await sleep(50);
    expect(closed).toBe(true);
  });

  it('a generator that throws after reporting: its progress went out, the call gets one error result, the run goes on', async () => {
    const failing = defineTool({
      name: 'failing',
      parameters: z.object({}),
      execute: async function* () {
        yield 'half way';
        throw new Error('disk full');
      },
    });
    const { output, events } = await runConversation([{ toolCalls: [{ id: 'f1', name: 'failing', args: {} }] }, { text: 'Sorry.' }], {
      tools: [failing],
    });
    expect(output.status).toBe('done');
    expect(eventsOf(events, 'tool.progress')).toEqual([{ type: 'tool.progress', toolCallId: 'f1', data: 'half way' }]);
    expect(eventsOf(events, 'tool.result')).toEqual([
      expect.objectContaining({ toolCallId: 'f1', isError: true, result: 'Error: disk full' }),
    ]);
    expectValidHistory(output.messages);
  });

  it('a tool.progress sent from outside, for a call that is not running, is ignored', async () => {
    const { events } = await runConversation([{ text: 'hi' }], {
      onStart: (actor) => actor.send({ type: 'tool.progress', toolCallId: 'nope', data: 'spoofed' } as never),
    });
    expect(eventsOf(events, 'tool.progress')).toEqual([]);
  });

  it('rx: events$(actor, "tool.progress") streams the progress', async () => {
    const model = scriptedModel([{ toolCalls: [{ id: 'i1', name: 'index_files', args: { files: 2 } }] }, { text: 'ok' }]);
    const actor = createActor(createConversationMachine({ provider: handlerProvider(model.handler), tools: [indexer] }), { input: {} });
    const collected = firstValueFrom(events$(actor, 'tool.progress').pipe(toArray()));
    actor.start();
    actor.send({ type: 'user.message', content: 'index' });
    await toPromise(actor);
    expect((await collected).map((event: ToolProgressEvent) => event.data)).toEqual([
      { done: 1, of: 2 },
      { done: 2, of: 2 },
    ]);
  });

  it('a journaled execution (Restate) reports progress live and records only the result', async () => {
    const records: unknown[] = [];
    const journal: StepJournal = {
      async step(step, action, signal) {
        const value = await action(signal);
        if (step.kind === 'tool') records.push(value);
        return { status: 'done', value };
      },
    };
    const model = scriptedModel([{ toolCalls: [{ id: 'i1', name: 'index_files', args: { files: 2 } }] }, { text: 'ok' }]);
    const actor = createActor(journaledMachine(createConversationMachine({ provider: handlerProvider(model.handler), tools: [indexer] })), {
      input: {},
    });
    setStepJournal(actor.system, journal);
    const progress: unknown[] = [];
    actor.on('tool.progress', (event) => progress.push(event.data));
    actor.start();
    actor.send({ type: 'user.message', content: 'index' });
    expect((await toPromise(actor)).status).toBe('done');
    expect(progress).toEqual([
      { done: 1, of: 2 },
      { done: 2, of: 2 },
    ]);
    expect(records).toEqual([{ kind: 'result', text: 'indexed 2 files' }]);
  });
});
