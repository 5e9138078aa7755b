import { describe, expect, it, vi } from 'vitest';
import { createActor, toPromise, waitFor } from 'xstate';
import { z } from 'zod';
import { createConversationMachine, defineTool, HaltError, handlerProvider, resultTexts, type Message } from '../src/index.js';
import { deferred, eventsOf, expectValidHistory, runConversation } from './support/run-conversation.js';
import { scriptedModel, turnChunks } from './support/scripted-model.js';

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => a + b,
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a run', () => {
  it('answers without tools and ends done with text, usage and history', async () => {
    const { output, events, requests } = await runConversation([{ text: 'Hi there.', usage: { prompt: 7, completion: 3 } }], {
      system: 'Be terse.',
    });
    expect(output).toMatchObject({ status: 'done', text: 'Hi there.', iterations: 0, finishReason: 'stop' });
    expect(output.usage).toEqual({ inputTokens: 7, outputTokens: 3, totalTokens: 10 });
    expect(output.messages).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: [{ type: 'text', text: 'Hi there.' }] },
    ]);
    expect(requests[0]?.messages[0]).toEqual({ role: 'system', content: 'Be terse.' });
    expect(
      eventsOf(events, 'text.delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe('Hi there.');
    expect(eventsOf(events, 'request.started')).toEqual([{ type: 'request.started', iteration: 0, attempt: 1, provider: 'handler' }]);
    expect(eventsOf(events, 'usage')).toHaveLength(1);
  });

  it('runs a tool round and feeds the results back in call order', async () => {
    const { output, events, requests } = await runConversation(
      [
        {
          toolCalls: [
            { id: 'c1', name: 'add', args: { a: 2, b: 3 } },
            { id: 'c2', name: 'add', args: { b: 1, a: 1 } },
          ],
        },
        { text: '5 and 2' },
      ],
      { tools: [add] },
    );
    expect(output).toMatchObject({ status: 'done', text: '5 and 2', iterations: 1 });
    expect(output.messages[2]).toEqual({
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'c1', toolName: 'add', result: '5' },
        { type: 'tool-result', toolCallId: 'c2', toolName: 'add', result: '2' },
      ],
    });
    expectValidHistory(output.messages);
    expect(eventsOf(events, 'tool.call').map((event) => event.args)).toEqual([
      { a: 2, b: 3 },
      { b: 1, a: 1 },
    ]);
    expect(eventsOf(events, 'tool.call.delta').length).toBeGreaterThan(2);
    expect(requests[1]?.messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: '5' },
      { role: 'tool', tool_call_id: 'c2', content: '2' },
    ]);
    expect(output.usage.totalTokens).toBe(30);
  });

  it('leaves the signal of a request that completed alone (no abort after the response)', async () => {
    // An abort after the response would run the SDK's abort path on a finished request, and close a
    // connection whose body was not yet drained instead of reusing it.
    const signals: AbortSignal[] = [];
    const aborts: unknown[] = [];
    const capture = (turn: Parameters<typeof turnChunks>[0]) => (request: { signal: AbortSignal }) => {
      signals.push(request.signal);
      request.signal.addEventListener('abort', () => aborts.push(request.signal.reason));
      return turnChunks(turn);
    };
    const { output } = await runConversation(
      [capture({ toolCalls: [{ id: 'c1', name: 'add', args: { a: 1, b: 2 } }] }), capture({ text: 'three' })],
      { tools: [add] },
    );
    expect(output).toMatchObject({ status: 'done', text: 'three', iterations: 1 });
    expect(signals).toHaveLength(2);
    expect(signals.map((signal) => signal.aborted)).toEqual([false, false]);
    expect(aborts).toEqual([]);
  });

  it('continues from a previous run’s history', async () => {
    const first = await runConversation([{ text: 'one' }]);
    const second = await runConversation([{ text: 'two' }], { messages: first.output.messages, content: 'again' });
    expect(second.output.text).toBe('two');
    expect(second.output.messages).toHaveLength(4);
    expect(second.requests[0]?.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
  });
});

describe('tool failures go back to the model (docs/behaviour.md item 3)', () => {
  it('5 parallel calls where the 3rd throws: the others succeed, results stay in call order', async () => {
    let running = 0;
    let peak = 0;
    const flaky = defineTool({
      name: 'flaky',
      parameters: z.object({ n: z.number() }),
      execute: async ({ n }) => {
        running++;
        peak = Math.max(peak, running);
        await sleep(5 * (5 - n));
        running--;
        if (n === 3) throw new Error('disk on fire');
        return { n };
      },
    });
    const calls = [1, 2, 3, 4, 5].map((n) => ({ id: `c${n}`, name: 'flaky', args: { n } }));
    const { output, events } = await runConversation([{ toolCalls: calls }, { text: 'done' }], { tools: [flaky] });
    expect(output.status).toBe('done');
    expect(peak).toBe(5);
    const results = output.messages[2];
    expect(results?.role).toBe('tool');
    if (results?.role !== 'tool') return;
    expect(results.content.map((part) => part.toolCallId)).toEqual(['c1', 'c2', 'c3', 'c4', 'c5']);
    expect(results.content[2]).toEqual({
      type: 'tool-result',
      toolCallId: 'c3',
      toolName: 'flaky',
      result: 'Error: disk on fire',
      isError: true,
    });
    expect(results.content[0]).toMatchObject({ result: '{"n":1}' });
    expect(eventsOf(events, 'tool.result')).toHaveLength(5);
  });

  it('a tool that throws a non-Error value gets an error result', async () => {
    const throwsString = defineTool({
      name: 'a',
      parameters: z.object({}),
      execute: () => {
        throw 'plain string';
      },
    });
    const throwsObject = defineTool({ name: 'b', parameters: z.object({}), execute: async () => Promise.reject({ code: 42 }) });
    const throwsUndefined = defineTool({
      name: 'c',
      parameters: z.object({}),
      execute: () => {
        throw undefined;
      },
    });
    const { output } = await runConversation(
      [
        {
          toolCalls: [
            { id: '1', name: 'a', args: {} },
            { id: '2', name: 'b', args: {} },
            { id: '3', name: 'c', args: {} },
          ],
        },
        { text: 'ok' },
      ],
      { tools: [throwsString, throwsObject, throwsUndefined] },
    );
    expect(output.status).toBe('done');
    const results = output.messages[2];
    if (results?.role !== 'tool') throw new Error('expected tool results');
    expect(results.content.map((part) => [part.result, part.isError])).toEqual([
      ['Error: plain string', true],
      ['Error: {"code":42}', true],
      ['Error: undefined', true],
    ]);
  });

  it('malformed JSON arguments, an unknown tool and schema-invalid arguments never reach execute', async () => {
    let executed = 0;
    const counted = defineTool({
      name: 'add',
      parameters: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => {
        executed++;
        return a + b;
      },
    });
    const { output, events } = await runConversation(
      [
        {
          toolCalls: [
            { id: 'bad-json', name: 'add', args: '{"a": 1, "b": ' },
            { id: 'unknown', name: 'subtract', args: { a: 1 } },
            { id: 'invalid', name: 'add', args: { a: 'one', b: 2 } },
            { id: 'fine', name: 'add', args: { a: 1, b: 2 } },
          ],
        },
        { text: 'ok' },
      ],
      { tools: [counted] },
    );
    expect(executed).toBe(1);
    expect(output.status).toBe('done');
    expectValidHistory(output.messages);
    const results = eventsOf(events, 'tool.result');
    const byId = Object.fromEntries(results.map((event) => [event.toolCallId, event]));
    expect(byId['bad-json']).toMatchObject({ isError: true });
    expect(byId['bad-json']?.result).toMatch(/invalid arguments for tool "add": not valid JSON/);
    expect(byId.unknown?.result).toBe('Error: unknown tool "subtract". Available tools: add.');
    expect(byId.invalid?.result).toMatch(/invalid arguments for tool "add": arguments\.a: /);
    expect(byId.fine).toMatchObject({ result: '3', isError: false });
    // The raw text of malformed arguments stays in the history.
    const assistant = output.messages[1];
    if (assistant?.role !== 'assistant') throw new Error('expected assistant');
    expect(assistant.content[0]).toMatchObject({ toolCallId: 'bad-json', args: '{"a": 1, "b": ' });
  });

  it('validates plain JSON Schema tools with ajv', async () => {
    const lookup = defineTool({
      name: 'lookup',
      parameters: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'], additionalProperties: false },
      execute: (args) => `item ${String(args.id)}`,
    });
    const { output } = await runConversation(
      [
        {
          toolCalls: [
            { id: 'x', name: 'lookup', args: { id: 'seven' } },
            { id: 'y', name: 'lookup', args: { id: 7 } },
          ],
        },
        { text: 'ok' },
      ],
      { tools: [lookup] },
    );
    const results = output.messages[2];
    if (results?.role !== 'tool') throw new Error('expected tool results');
    expect(results.content[0]).toMatchObject({
      isError: true,
      result: 'Error: invalid arguments for tool "lookup": arguments.id must be integer',
    });
    expect(results.content[1]).toMatchObject({ result: 'item 7' });
  });

  it('enforces the standard JSON Schema formats, accepts unknown ones, and never prints (ajv-formats, logger off)', async () => {
    const stderr = vi.spyOn(process.stderr, 'write');
    const warn = vi.spyOn(console, 'warn');
    const log = vi.spyOn(console, 'log');
    const error = vi.spyOn(console, 'error');
    try {
      const book = defineTool({
        name: 'book',
        parameters: {
          type: 'object',
          properties: {
            page: { type: 'string', format: 'uri' },
            email: { type: 'string', format: 'email' },
            at: { type: 'string', format: 'date-time' },
            id: { type: 'string', format: 'uuid' },
            // Meaningful to the model or another validator, unknown to ajv: accepted, not checked.
            room: { type: 'string', format: 'x-room-code' },
          },
          required: ['page', 'email', 'at', 'id', 'room'],
        },
        execute: () => 'booked',
      });
      const valid = {
        page: 'https://example.com/rooms?id=7',
        email: 'ada@example.com',
        at: '2025-03-01T10:30:00Z',
        id: '123e4567-e89b-12d3-a456-426614174000',
        room: 'anything',
      };
      const { output } = await runConversation(
        [
          {
            toolCalls: [
              { id: 'bad', name: 'book', args: { page: 'not a uri', email: 'ada at example', at: 'tomorrow', id: '42', room: 'x' } },
              { id: 'good', name: 'book', args: valid },
            ],
          },
          { text: 'ok' },
        ],
        { tools: [book] },
      );
      const results = output.messages[2];
      if (results?.role !== 'tool') throw new Error('expected tool results');
      expect(results.content[0]).toMatchObject({
        isError: true,
        result:
          'Error: invalid arguments for tool "book": arguments.page must match format "uri"; arguments.email must match format "email"; ' +
          'arguments.at must match format "date-time"; arguments.id must match format "uuid"',
      });
      expect(results.content[1]).toMatchObject({ result: 'booked' });
      expect(book.validate({ ...valid, at: '2025-02-30T10:30:00Z' })).toEqual({
        success: false,
        error: 'arguments.at must match format "date-time"',
      });
      for (const spy of [stderr, warn, log, error]) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of [stderr, warn, log, error]) spy.mockRestore();
    }
  });

  it('zod string formats (email, url, uuid, ISO date-time) are enforced, and go to the model as JSON Schema formats', () => {
    const invite = defineTool({
      name: 'invite',
      parameters: z.object({ email: z.email(), page: z.url(), id: z.uuid(), at: z.iso.datetime() }),
      execute: () => 'sent',
    });
    expect(invite.inputSchema.properties).toMatchObject({
      email: { format: 'email' },
      page: { format: 'uri' },
      id: { format: 'uuid' },
      at: { format: 'date-time' },
    });
    const checked = invite.validate({ email: 'nope', page: 'nope', id: 'nope', at: 'nope' });
    expect(checked.success).toBe(false);
    if (checked.success) return;
    expect(checked.error.split('; ')).toEqual([
      expect.stringMatching(/^arguments\.email: .*email/i),
      expect.stringMatching(/^arguments\.page: .*URL/i),
      expect.stringMatching(/^arguments\.id: .*UUID/i),
      expect.stringMatching(/^arguments\.at: .*datetime/i),
    ]);
    expect(
      invite.validate({
        email: 'ada@example.com',
        page: 'https://example.com',
        id: '123e4567-e89b-12d3-a456-426614174000',
        at: '2025-03-01T10:30:00Z',
      }).success,
    ).toBe(true);
  });

  it('serialises results: strings as they are, others as JSON, unserialisable values readably', async () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const values: Record<string, unknown> = { s: 'plain', n: 42, o: { a: [1, 2] }, u: undefined, b: 10n, c: cyclic };
    const tool = defineTool({ name: 'value', parameters: z.object({ key: z.string() }), execute: ({ key }) => values[key] });
    const { output } = await runConversation(
      [{ toolCalls: Object.keys(values).map((key) => ({ id: key, name: 'value', args: { key } })) }, { text: 'ok' }],
      { tools: [tool] },
    );
    const results = output.messages[2];
    if (results?.role !== 'tool') throw new Error('expected tool results');
    expect(results.content.map((part) => part.result)).toEqual([
      'plain',
      '42',
      '{"a":[1,2]}',
      '',
      '"10"',
      '{"name":"loop","self":"[Circular]"}',
    ]);
    expect(() => JSON.stringify(output)).not.toThrow();
  });

  it('passes signal, toolCallId and the history to execute', async () => {
    const seen: Array<{ id: string; messages: number; aborted: boolean }> = [];
    const spy = defineTool({
      name: 'spy',
      parameters: z.object({}),
      execute: (_args, context) => {
        seen.push({ id: context.toolCallId, messages: context.messages.length, aborted: context.signal.aborted });
        return 'ok';
      },
    });
    await runConversation([{ toolCalls: [{ id: 'call-9', name: 'spy', args: {} }] }, { text: 'ok' }], { tools: [spy] });
    expect(seen).toEqual([{ id: 'call-9', messages: 2, aborted: false }]);
  });
});

describe('tool timeouts are enforced by the machine (docs/behaviour.md item 7)', () => {
  it('a tool that ignores its signal and never settles does not stall the run', async () => {
    let signal: AbortSignal | undefined;
    const hang = defineTool({
      name: 'hang',
      parameters: z.object({}),
      timeoutMs: 30,
      execute: (_args, context) => {
        signal = context.signal;
        return new Promise<never>(() => undefined);
      },
    });
    const { output } = await runConversation(
      [
        {
          toolCalls: [
            { id: 'h', name: 'hang', args: {} },
            { id: 'a', name: 'add', args: { a: 1, b: 1 } },
          ],
        },
        { text: 'gave up' },
      ],
      {
        tools: [hang, add],
      },
    );
    expect(output.status).toBe('done');
    expect(signal?.aborted).toBe(true);
    const results = output.messages[2];
    if (results?.role !== 'tool') throw new Error('expected tool results');
    expect(results.content[0]).toMatchObject({ toolCallId: 'h', isError: true, result: resultTexts.timedOut('hang', 30) });
    expect(results.content[1]).toMatchObject({ toolCallId: 'a', result: '2' });
  });

  it('uses toolTimeoutMs for tools without their own timeout, and a late settle is ignored', async () => {
    const late = defineTool({
      name: 'late',
      parameters: z.object({}),
      execute: () =>
        sleep(60).then(() => {
          throw new Error('too late');
        }),
    });
    const { output } = await runConversation([{ toolCalls: [{ id: 'l', name: 'late', args: {} }] }, { text: 'ok' }], {
      tools: [late],
      toolTimeoutMs: 10,
    });
    expect(output.messages[2]).toMatchObject({ content: [{ result: resultTexts.timedOut('late', 10), isError: true }] });
    await sleep(80);
  });
  // One timer serves the whole round (aimed at the earliest deadline), so it must follow calls that
  // start later or have their own, shorter, timeout.
  it('times out each call at its own deadline when timeouts differ and calls start at different times', async () => {
    const started: Record<string, number> = {};
    const ended: Record<string, number> = {};
    const tool = (name: string, timeoutMs: number, work: (signal: AbortSignal) => Promise<string>) =>
      defineTool({
        name,
        parameters: z.object({}),
        timeoutMs,
        execute: (_args, { signal }) => {
          started[name] = Date.now();
          signal.addEventListener('abort', () => (ended[name] = Date.now()));
          return work(signal).finally(() => (ended[name] ??= Date.now()));
        },
      });
    const never = () => new Promise<string>(() => undefined);
    const slowOk = tool('slow_ok', 5_000, () => sleep(150).then(() => 'slow done'));
    const quickHang = tool('quick_hang', 40, never);
    const queuedHang = tool('queued_hang', 60, never);
    const began = Date.now();
    const { output, events } = await runConversation(
      [
        {
          toolCalls: [
            { id: 's', name: 'slow_ok', args: {} },
            { id: 'q', name: 'quick_hang', args: {} },
            { id: 'w', name: 'queued_hang', args: {} },
          ],
        },
        { text: 'done' },
      ],
      { tools: [slowOk, quickHang, queuedHang], maxConcurrentTools: 2 },
    );
    expect(output.status).toBe('done');
    expect(output.messages[2]).toMatchObject({
      content: [
        { toolCallId: 's', result: 'slow done' },
        { toolCallId: 'q', result: resultTexts.timedOut('quick_hang', 40), isError: true },
        { toolCallId: 'w', result: resultTexts.timedOut('queued_hang', 60), isError: true },
      ],
    });
    // The queued call starts when the quick one times out, and gets its own full 60 ms.
    expect(started.queued_hang! - began).toBeGreaterThanOrEqual(35);
    expect(ended.queued_hang! - started.queued_hang!).toBeGreaterThanOrEqual(55);
    // Results arrive in the order the calls ended, each once.
    expect(eventsOf(events, 'tool.result').map((event) => event.toolCallId)).toEqual(['q', 'w', 's']);
  });

  it('a call started when another finishes gets its own shorter deadline, not the finished call’s', async () => {
    const quick = defineTool({
      name: 'quick',
      parameters: z.object({}),
      timeoutMs: 5_000,
      execute: () => sleep(20).then(() => 'quick done'),
    });
    const hang = defineTool({ name: 'hang', parameters: z.object({}), timeoutMs: 40, execute: () => new Promise<never>(() => undefined) });
    const began = Date.now();
    const { output } = await runConversation(
      [
        {
          toolCalls: [
            { id: 'k', name: 'quick', args: {} },
            { id: 'h', name: 'hang', args: {} },
          ],
        },
        { text: 'done' },
      ],
      { tools: [quick, hang], maxConcurrentTools: 1 },
    );
    expect(output.messages[2]).toMatchObject({
      content: [
        { toolCallId: 'k', result: 'quick done' },
        { toolCallId: 'h', result: resultTexts.timedOut('hang', 40), isError: true },
      ],
    });
    // Had the timer stayed aimed at the first call's 5 s deadline, the run would take 5 s.
    expect(Date.now() - began).toBeLessThan(2_000);
  });
});

describe('HaltError (docs/behaviour.md item 3)', () => {
  it('among parallel calls ends the run halted with its content; unfinished calls get a halted result', async () => {
    let slowSignal: AbortSignal | undefined;
    const slow = defineTool({
      name: 'slow',
      parameters: z.object({}),
      execute: (_args, { signal }) => {
        slowSignal = signal;
        return new Promise((resolve) => setTimeout(() => resolve('slow result'), 1000));
      },
    });
    const stop = defineTool({
      name: 'stop',
      parameters: z.object({}),
      execute: () =>
        sleep(5).then(() => {
          throw new HaltError('Handed over to a human.');
        }),
    });
    const { output, events, requests } = await runConversation(
      [
        {
          toolCalls: [
            { id: 'fast', name: 'add', args: { a: 1, b: 2 } },
            { id: 'halt', name: 'stop', args: {} },
            { id: 'slow', name: 'slow', args: {} },
          ],
        },
      ],
      { tools: [add, stop, slow] },
    );
    expect(output).toMatchObject({ status: 'halted', reason: 'tool_halt', text: 'Handed over to a human.', iterations: 1 });
    expect(requests).toHaveLength(1);
    expect(slowSignal?.aborted).toBe(true);
    expectValidHistory(output.messages);
    const results = output.messages[2];
    if (results?.role !== 'tool') throw new Error('expected tool results');
    expect(results.content).toEqual([
      { type: 'tool-result', toolCallId: 'fast', toolName: 'add', result: '3' },
      { type: 'tool-result', toolCallId: 'halt', toolName: 'stop', result: 'Handed over to a human.' },
      { type: 'tool-result', toolCallId: 'slow', toolName: 'slow', result: resultTexts.halted, isError: true },
    ]);
    expect(
      eventsOf(events, 'tool.result')
        .map((event) => event.toolCallId)
        .sort(),
    ).toEqual(['fast', 'halt', 'slow']);
  });
});

describe('the iteration cap (docs/behaviour.md item 4)', () => {
  const loopForever = (count: number) =>
    Array.from({ length: count }, (_, index) => ({ toolCalls: [{ id: `c${index}`, name: 'add', args: { a: index, b: 1 } }] }));

  for (const cap of [0, 1, 2, 3, 10]) {
    it(`cap ${cap}: executes ${cap} rounds, then halts without running the next calls`, async () => {
      let executed = 0;
      const counted = defineTool({
        name: 'add',
        parameters: z.object({ a: z.number(), b: z.number() }),
        execute: ({ a, b }) => {
          executed++;
          return a + b;
        },
      });
      const { output, requests } = await runConversation(loopForever(cap + 1), { tools: [counted], maxToolIterations: cap });
      expect(output).toMatchObject({ status: 'halted', reason: 'max_iterations', iterations: cap });
      expect(executed).toBe(cap);
      expect(requests).toHaveLength(cap + 1);
      expectValidHistory(output.messages);
      expect(output.messages.at(-1)).toEqual({
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: `c${cap}`, toolName: 'add', result: resultTexts.iterationLimit, isError: true }],
      });
    });
  }

  it('defaults to 10', async () => {
    const { output } = await runConversation(loopForever(11), { tools: [add] });
    expect(output).toMatchObject({ status: 'halted', reason: 'max_iterations', iterations: 10 });
  });

  it('200 rounds with the cap raised: no stack growth, every call answered', async () => {
    const { output } = await runConversation([...loopForever(200), { text: 'finally' }], { tools: [add], maxToolIterations: 200 });
    expect(output).toMatchObject({ status: 'done', iterations: 200, text: 'finally' });
    expect(output.messages).toHaveLength(1 + 200 * 2 + 1);
    expectValidHistory(output.messages);
  });
});

describe('doom loops (docs/behaviour.md item 5)', () => {
  const same = (id: string) => ({ toolCalls: [{ id, name: 'add', args: { a: 1, b: 1 } }] });

  it('A,A,A: one notice after that round’s results, then halt when it repeats once more', async () => {
    const { output, events, requests } = await runConversation([same('1'), same('2'), same('3'), same('4')], { tools: [add] });
    expect(output).toMatchObject({ status: 'halted', reason: 'doom_loop', iterations: 3 });
    expect(requests).toHaveLength(4);
    expectValidHistory(output.messages);
    // user, (assistant, tool) × 3, notice, assistant, tool(not executed)
    const notice = output.messages[7];
    expect(notice?.role).toBe('user');
    expect(typeof notice?.content === 'string' && notice.content).toMatch(/add\(\{"a":1,"b":1\}\)/);
    expect(output.messages[6]?.role).toBe('tool');
    expect(output.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: [{ toolCallId: '4', isError: true, result: resultTexts.doomLoop }],
    });
    expect(eventsOf(events, 'doom_loop.detected').map((event) => event.action)).toEqual(['notice', 'halt']);
  });

  it('A,B,A,B,A,B is a loop too; canonical arguments ignore key order', async () => {
    const a = (id: string, args: unknown) => ({ toolCalls: [{ id, name: 'add', args }] });
    const { output } = await runConversation(
      [
        a('1', { a: 1, b: 2 }),
        a('2', { a: 5, b: 5 }),
        a('3', { b: 2, a: 1 }),
        a('4', { a: 5, b: 5 }),
        a('5', { a: 1, b: 2 }),
        a('6', { a: 5, b: 5 }),
        a('7', { a: 1, b: 2 }),
      ],
      { tools: [add] },
    );
    expect(output).toMatchObject({ status: 'halted', reason: 'doom_loop', iterations: 6 });
  });

  it('a model that changes course after the notice goes on normally', async () => {
    const { output } = await runConversation(
      [same('1'), same('2'), same('3'), { toolCalls: [{ id: '4', name: 'add', args: { a: 2, b: 2 } }] }, { text: 'ok' }],
      { tools: [add] },
    );
    expect(output).toMatchObject({ status: 'done', iterations: 4 });
  });

  it('can be switched off', async () => {
    const { output } = await runConversation([same('1'), same('2'), same('3'), same('4'), { text: 'ok' }], {
      tools: [add],
      doomLoop: false,
    });
    expect(output).toMatchObject({ status: 'done', iterations: 4 });
  });
});

describe('retries (docs/behaviour.md item 6)', () => {
  it('retries 429 and 5xx with backoff, honouring retry-after-ms, then succeeds', async () => {
    const started = Date.now();
    const { output, events, requests } = await runConversation(
      [
        { error: Object.assign(new Error('slow down'), { status: 429, headers: { 'retry-after-ms': '40' } }) },
        { error: Object.assign(new Error('bad gateway'), { status: 502 }) },
        { text: 'finally' },
      ],
      { retry: { maxRetries: 3, initialDelayMs: 1, maxDelayMs: 5, jitter: false } },
    );
    expect(output).toMatchObject({ status: 'done', text: 'finally' });
    expect(requests).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
    const retries = eventsOf(events, 'request.retry');
    expect(retries.map((event) => [event.attempt, event.delayMs, event.error.status, event.discardPartial])).toEqual([
      [2, 40, 429, false],
      [3, 2, 502, false],
    ]);
    expect(eventsOf(events, 'request.started').map((event) => event.attempt)).toEqual([1, 2, 3]);
  });

  it('ends in error when retries are exhausted: maxRetries + 1 attempts', async () => {
    const overloaded = { error: Object.assign(new Error('overloaded'), { status: 529 }) };
    const { output, requests } = await runConversation([overloaded, overloaded, overloaded], {
      retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 2, jitter: false },
    });
    expect(requests).toHaveLength(3);
    expect(output).toMatchObject({ status: 'error', error: { status: 529, retryable: true, message: 'overloaded' } });
  });

  for (const status of [400, 401, 403, 404, 422]) {
    it(`fails at once on ${status}`, async () => {
      const { output, requests, events } = await runConversation([{ error: Object.assign(new Error(`http ${status}`), { status }) }]);
      expect(requests).toHaveLength(1);
      expect(eventsOf(events, 'request.retry')).toHaveLength(0);
      expect(output).toMatchObject({ status: 'error', error: { status, retryable: false, message: `http ${status}` } });
    });
  }

  it('honours a handler error’s boolean retryable, and does not retry unknown errors', async () => {
    const retried = await runConversation([{ error: Object.assign(new Error('transient'), { retryable: true }) }, { text: 'ok' }]);
    expect(retried.output.status).toBe('done');
    const fatal = await runConversation([{ error: new Error('bug in handler') }]);
    expect(fatal.requests).toHaveLength(1);
    expect(fatal.output).toMatchObject({ status: 'error', error: { retryable: false, message: 'bug in handler' } });
  });

  it('a retry after partial output says discardPartial and the partial text is not kept', async () => {
    const failMidStream = async function* () {
      yield { choices: [{ index: 0, delta: { content: 'Half an ans' }, finish_reason: null }] };
      throw Object.assign(new Error('connection reset'), { code: 'ECONNRESET' });
    };
    const { output, events } = await runConversation([() => failMidStream(), { text: 'Whole answer.' }]);
    expect(output).toMatchObject({ status: 'done', text: 'Whole answer.' });
    expect(eventsOf(events, 'request.retry')[0]).toMatchObject({ discardPartial: true, error: { code: 'network' } });
    expect(JSON.stringify(output.messages)).not.toContain('Half an ans');
  });

  it('a stream that ends without a finish_reason is an incomplete response, retried', async () => {
    const cut = async function* () {
      yield { choices: [{ index: 0, delta: { content: 'cut' }, finish_reason: null }] };
    };
    const { output, events } = await runConversation([() => cut(), { text: 'whole' }]);
    expect(output.text).toBe('whole');
    expect(eventsOf(events, 'request.retry')[0]?.error.code).toBe('incomplete_stream');
  });

  it('a provider silent for longer than requestTimeoutMs times out and is retried; its signal aborts', async () => {
    let firstSignal: AbortSignal | undefined;
    const silent = (request: { signal: AbortSignal }) => {
      firstSignal = request.signal;
      return (async function* () {
        await new Promise((resolve) => setTimeout(resolve, 5_000));
      })();
    };
    const { output, events } = await runConversation([silent, { text: 'awake' }], { requestTimeoutMs: 30 });
    expect(output.text).toBe('awake');
    expect(firstSignal?.aborted).toBe(true);
    expect(eventsOf(events, 'request.retry')[0]?.error).toMatchObject({ code: 'timeout', retryable: true });
  });

  it('the request timeout is an idle timeout: a slow but steady stream is not cut', async () => {
    const steady = async function* () {
      for (const piece of ['a', 'b', 'c', 'd', 'e']) {
        await sleep(15);
        yield { choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] };
      }
      yield { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] };
    };
    const { output, events } = await runConversation([() => steady()], { requestTimeoutMs: 40 });
    expect(output.text).toBe('abcde');
    expect(eventsOf(events, 'request.retry')).toHaveLength(0);
  });

  it('a retry-after longer than maxRetryAfterMs ends the run instead of blocking it', async () => {
    const { output, requests } = await runConversation([
      { error: Object.assign(new Error('later'), { status: 429, headers: { 'retry-after': '3600' } }) },
    ]);
    expect(requests).toHaveLength(1);
    expect(output).toMatchObject({ status: 'error', error: { status: 429 } });
  });
});

describe('cancel (docs/behaviour.md item 8)', () => {
  it('during requesting aborts the request and halts', async () => {
    const signalSeen = deferred<AbortSignal>();
    const { output } = await runConversation(
      [
        (request) => {
          signalSeen.resolve(request.signal);
          return (async function* () {
            yield { choices: [{ index: 0, delta: { content: 'thinking' }, finish_reason: null }] };
            await new Promise((resolve) => setTimeout(resolve, 10_000));
          })();
        },
      ],
      {
        onStart: (actor) => {
          void signalSeen.promise.then(() => setTimeout(() => actor.send({ type: 'cancel', reason: 'user left' }), 5));
        },
      },
    );
    expect(output).toMatchObject({ status: 'halted', reason: 'cancelled', iterations: 0 });
    expect((await signalSeen.promise).aborted).toBe(true);
    expect(output.messages).toEqual([{ role: 'user', content: 'hello' }]);
  });

  it('during executingTools aborts every running tool; each call gets a result', async () => {
    const signals: AbortSignal[] = [];
    const started = deferred();
    const wait = defineTool({
      name: 'wait',
      parameters: z.object({}),
      execute: (_args, { signal }) => {
        signals.push(signal);
        if (signals.length === 2) started.resolve();
        return new Promise((resolve) => setTimeout(() => resolve('late'), 5_000));
      },
    });
    const { output, events } = await runConversation(
      [
        {
          toolCalls: [
            { id: 'w1', name: 'wait', args: {} },
            { id: 'w2', name: 'wait', args: {} },
            { id: 'a', name: 'add', args: { a: 1, b: 1 } },
          ],
        },
      ],
      {
        tools: [wait, add],
        onStart: (actor) => void started.promise.then(() => setTimeout(() => actor.send({ type: 'cancel', reason: 'stop' }), 10)),
      },
    );
    expect(output).toMatchObject({ status: 'halted', reason: 'cancelled' });
    expect(signals.every((signal) => signal.aborted)).toBe(true);
    expectValidHistory(output.messages);
    expect(output.messages.at(-1)).toMatchObject({
      content: [
        { toolCallId: 'w1', result: 'cancelled: stop', isError: true },
        { toolCallId: 'w2', result: 'cancelled: stop', isError: true },
        { toolCallId: 'a', result: '2' },
      ],
    });
    expect(eventsOf(events, 'tool.result')).toHaveLength(3);
  });

  it('during the retrying backoff stops the retry', async () => {
    const { output, requests, states } = await runConversation(
      [{ error: Object.assign(new Error('busy'), { status: 503 }) }, { text: 'never' }],
      {
        retry: { maxRetries: 2, initialDelayMs: 5_000, maxDelayMs: 5_000, jitter: false },
        onStart: (actor) => {
          actor.subscribe((snapshot) => {
            if (snapshot.matches('retrying')) actor.send({ type: 'cancel' });
          });
        },
      },
    );
    expect(states).toContain('"retrying"');
    expect(output).toMatchObject({ status: 'halted', reason: 'cancelled' });
    expect(requests).toHaveLength(1);
  });

  it('from idle halts at once', async () => {
    const machine = createConversationMachine({ provider: handlerProvider(scriptedModel([]).handler) });
    const actor = createActor(machine, { input: {} }).start();
    actor.send({ type: 'cancel' });
    expect(await toPromise(actor)).toMatchObject({ status: 'halted', reason: 'cancelled', text: '', messages: [] });
  });
});

describe('approvals', () => {
  const guarded = defineTool({
    name: 'transfer',
    parameters: z.object({ amount: z.number() }),
    needsApproval: ({ amount }) => amount > 100,
    execute: ({ amount }) => `sent ${amount}`,
  });

  it('waits in awaitingApproval until every call that needs approval is approved or denied', async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'small', name: 'transfer', args: { amount: 5 } },
          { id: 'big', name: 'transfer', args: { amount: 500 } },
          { id: 'huge', name: 'transfer', args: { amount: 5000 } },
        ],
      },
      { text: 'done' },
    ]);
    const actor = createActor(createConversationMachine({ provider: handlerProvider(model.handler), tools: [guarded] }), {
      input: {},
    }).start();
    const requested: string[] = [];
    const rejected: string[] = [];
    actor.on('tool.approval.requested', (event) => requested.push(event.toolCallId));
    actor.on('event.rejected', (event) => rejected.push(event.message));
    actor.send({ type: 'user.message', content: 'pay' });
    await waitFor(actor, (snapshot) => snapshot.matches('awaitingApproval'));
    expect(requested).toEqual(['big', 'huge']);
    actor.send({ type: 'tool.approve', toolCallId: 'nope' });
    expect(rejected[0]).toMatch(/no tool call "nope" is waiting for approval/);
    actor.send({ type: 'tool.approve', toolCallId: 'big' });
    expect(actor.getSnapshot().matches('awaitingApproval')).toBe(true);
    actor.send({ type: 'tool.deny', toolCallId: 'huge', reason: 'too much' });
    const output = await toPromise(actor);
    expect(output.status).toBe('done');
    expect(output.messages[2]).toMatchObject({
      content: [
        { toolCallId: 'small', result: 'sent 5' },
        { toolCallId: 'big', result: 'sent 500' },
        { toolCallId: 'huge', result: 'denied by user: too much', isError: true },
      ],
    });
  });

  it('a snapshot taken while awaiting approval restores and continues', async () => {
    const turns = [{ toolCalls: [{ id: 'big', name: 'transfer', args: { amount: 500 } }] }, { text: 'restored fine' }];
    const first = scriptedModel(turns);
    const machine = createConversationMachine({ provider: handlerProvider(first.handler), tools: [guarded] });
    const actor = createActor(machine, { input: {} }).start();
    actor.send({ type: 'user.message', content: 'pay' });
    await waitFor(actor, (snapshot) => snapshot.matches('awaitingApproval'));
    const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot())) as unknown;
    actor.stop();

    const second = scriptedModel(turns.slice(1));
    const restoredMachine = createConversationMachine({ provider: handlerProvider(second.handler), tools: [guarded] });
    const restored = createActor(restoredMachine, { snapshot: persisted as never, input: {} }).start();
    restored.send({ type: 'tool.approve', toolCallId: 'big' });
    const output = await toPromise(restored);
    expect(output).toMatchObject({ status: 'done', text: 'restored fine' });
    expectValidHistory(output.messages);
  });
});

describe('maxConcurrentTools', () => {
  it('runs at most N calls at once and still appends results in call order', async () => {
    let running = 0;
    let peak = 0;
    const work = defineTool({
      name: 'work',
      parameters: z.object({ ms: z.number() }),
      execute: async ({ ms }) => {
        running++;
        peak = Math.max(peak, running);
        await sleep(ms);
        running--;
        return ms;
      },
    });
    const calls = [30, 5, 20, 1, 10].map((ms, index) => ({ id: `w${index}`, name: 'work', args: { ms } }));
    const { output } = await runConversation([{ toolCalls: calls }, { text: 'ok' }], { tools: [work], maxConcurrentTools: 2 });
    expect(peak).toBe(2);
    expect(output.messages[2]).toMatchObject({ content: calls.map((call) => ({ toolCallId: call.id, result: String(call.args.ms) })) });
  });
});

describe('snapshots are plain JSON at every point (docs/behaviour.md "Save and restore")', () => {
  it('every snapshot of a run with tools, a retry and approval survives JSON round-trip', async () => {
    const guarded = defineTool({ name: 'guarded', parameters: z.object({}), needsApproval: true, execute: () => 'ok' });
    const model = scriptedModel([
      { error: Object.assign(new Error('busy'), { status: 503 }) },
      {
        toolCalls: [
          { id: 'g', name: 'guarded', args: {} },
          { id: 'a', name: 'add', args: { a: 1, b: 2 } },
        ],
      },
      { text: 'done' },
    ]);
    const machine = createConversationMachine({
      provider: handlerProvider(model.handler),
      tools: [guarded, add],
      retry: { initialDelayMs: 1, maxDelayMs: 1 },
    });
    const actor = createActor(machine, { input: {} });
    const problems: string[] = [];
    actor.subscribe((snapshot) => {
      const persisted = actor.getPersistedSnapshot();
      const text = JSON.stringify(persisted);
      if (JSON.stringify(JSON.parse(text)) !== text) problems.push(`not stable JSON in ${JSON.stringify(snapshot.value)}`);
      if (snapshot.matches('awaitingApproval')) queueMicrotask(() => actor.send({ type: 'tool.approve', toolCallId: 'g' }));
    });
    actor.start();
    actor.send({ type: 'user.message', content: 'go' });
    const output = await toPromise(actor);
    expect(output.status).toBe('done');
    expect(problems).toEqual([]);
  });
});

// XState persists no delayed events and runs no entry actions on restore; without re-arming, a run
// restored in a timed state would wait forever (a hanging tool would never time out).
describe('timers survive a snapshot restore', () => {
  const silent = (request: { signal: AbortSignal }) =>
    (async function* () {
      await new Promise<void>((resolve) => request.signal.addEventListener('abort', () => resolve(), { once: true }));
    })();

  it('an idempotent tool that hangs in a restored run runs again and still times out, with a fresh deadline', async () => {
    let executions = 0;
    const hang = defineTool({
      name: 'hang',
      parameters: z.object({}),
      idempotent: true,
      timeoutMs: 150,
      execute: () => {
        executions += 1;
        return new Promise<never>(() => undefined);
      },
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'h', name: 'hang', args: {} }] }, { text: 'gave up' }]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools: [hang] });
    const first = createActor(machine, { input: {} }).start();
    first.send({ type: 'user.message', content: 'go' });
    await waitFor(first, (snapshot) => snapshot.matches('executingTools'));
    const persisted: unknown = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();
    await sleep(60);
    const restoredAt = Date.now();
    const restored = createActor(machine, { snapshot: persisted as never, input: {} }).start();
    const output = await toPromise(restored);
    expect(output.status).toBe('done');
    expect(output.messages[2]).toMatchObject({
      role: 'tool',
      content: [{ toolCallId: 'h', result: resultTexts.timedOut('hang', 150), isError: true }],
    });
    // The restored run runs the idempotent call again, once, with its whole timeout (it started afresh).
    expect(executions).toBe(2);
    expect(Date.now() - restoredAt).toBeGreaterThanOrEqual(149);
    expectValidHistory(output.messages);
  });

  it('a machine built by machine.provide(...) keeps its timers across a restore too', async () => {
    const hang = defineTool({
      name: 'hang',
      parameters: z.object({}),
      idempotent: true,
      timeoutMs: 150,
      execute: () => new Promise<never>(() => undefined),
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'h', name: 'hang', args: {} }] }, { text: 'gave up' }]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools: [hang] }).provide({});
    const first = createActor(machine, { input: {} }).start();
    first.send({ type: 'user.message', content: 'go' });
    await waitFor(first, (snapshot) => snapshot.matches('executingTools'));
    const persisted: unknown = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();
    const restored = createActor(machine, { snapshot: persisted as never, input: {} }).start();
    const output = await toPromise(restored);
    expect(output.messages[2]).toMatchObject({
      role: 'tool',
      content: [{ toolCallId: 'h', result: resultTexts.timedOut('hang', 150), isError: true }],
    });
  });

  it('a restored request that stays silent times out and is retried', async () => {
    const model = scriptedModel([silent, silent, { text: 'answered' }]);
    const machine = createConversationMachine({
      provider: handlerProvider(model.handler),
      requestTimeoutMs: 40,
      retry: { initialDelayMs: 1, maxDelayMs: 1, jitter: false },
    });
    const first = createActor(machine, { input: {} }).start();
    first.send({ type: 'user.message', content: 'go' });
    await waitFor(first, (snapshot) => snapshot.matches('requesting') && model.requests.length === 1);
    const persisted: unknown = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();
    const restored = createActor(machine, { snapshot: persisted as never, input: {} });
    const retries: Array<{ code: string | undefined }> = [];
    restored.on('request.retry', (event) => retries.push({ code: event.error.code }));
    restored.start();
    const output = await toPromise(restored);
    expect(output).toMatchObject({ status: 'done', text: 'answered' });
    expect(retries).toEqual([{ code: 'timeout' }]);
    expect(model.requests).toHaveLength(3);
  });

  it('a run restored during a retry backoff goes on to the next attempt', async () => {
    const model = scriptedModel([{ error: Object.assign(new Error('busy'), { status: 503 }) }, { text: 'second try' }]);
    const machine = createConversationMachine({
      provider: handlerProvider(model.handler),
      retry: { initialDelayMs: 80, maxDelayMs: 80, jitter: false },
    });
    const first = createActor(machine, { input: {} }).start();
    first.send({ type: 'user.message', content: 'go' });
    await waitFor(first, (snapshot) => snapshot.matches('retrying'));
    const persisted: unknown = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();
    const output = await toPromise(createActor(machine, { snapshot: persisted as never, input: {} }).start());
    expect(output).toMatchObject({ status: 'done', text: 'second try' });
    expect(model.requests).toHaveLength(2);
  });
});

describe('bad input is rejected without harm', () => {
  it('an empty or non-string user.message is rejected with an event; the run stays idle', async () => {
    const model = scriptedModel([{ text: 'ok' }]);
    const actor = createActor(createConversationMachine({ provider: handlerProvider(model.handler) }), { input: {} }).start();
    const rejected: Array<{ eventType: string; message: string }> = [];
    actor.on('event.rejected', (event) => rejected.push(event));
    actor.send({ type: 'user.message', content: '' });
    actor.send({ type: 'user.message', content: '   ' });
    actor.send({ type: 'user.message', content: 42 as never });
    actor.send({ type: 'user.message', content: [] });
    actor.send({ type: 'user.message' } as never);
    expect(rejected).toHaveLength(5);
    expect(rejected[0]?.message).toMatch(/non-empty string/);
    expect(actor.getSnapshot().value).toBe('idle');
    actor.send({ type: 'user.message', content: [{ type: 'text', text: 'real question' }] });
    expect(await toPromise(actor)).toMatchObject({ status: 'done', text: 'ok' });
  });

  it('a second user.message during a run is rejected, not queued', async () => {
    const gate = deferred();
    const model = scriptedModel([
      () =>
        (async function* () {
          await gate.promise;
          yield* turnChunks({ text: 'answer' });
        })(),
    ]);
    const actor = createActor(createConversationMachine({ provider: handlerProvider(model.handler) }), { input: {} }).start();
    const rejected: string[] = [];
    actor.on('event.rejected', (event) => rejected.push(event.message));
    actor.send({ type: 'user.message', content: 'first' });
    actor.send({ type: 'user.message', content: 'second' });
    actor.send({ type: 'tool.approve', toolCallId: 'x' });
    gate.resolve();
    const output = await toPromise(actor);
    expect(rejected).toHaveLength(2);
    expect(rejected[0]).toMatch(/user\.message is not accepted while the run is \{"requesting":"waiting"\}/);
    expect(output.messages.filter((message) => message.role === 'user')).toHaveLength(1);
  });

  it('malformed input messages end the run in error naming the problem, without throwing', async () => {
    const model = scriptedModel([]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler) });
    const bad = [
      { role: 'user', content: 'ok' },
      { role: 'robot', content: 'hi' },
    ] as unknown as Message[];
    const output = await toPromise(createActor(machine, { input: { messages: bad } }).start());
    expect(output.status).toBe('error');
    expect(output.error?.message).toBe('input.messages[1]: role must be one of system, user, assistant, tool; got "robot"');
    expect(output.messages).toEqual(bad);
    expect(model.requests).toHaveLength(0);
  });

  it('events sent to a finished actor do nothing harmful', async () => {
    const { actor, output } = await runConversation([{ text: 'bye' }]);
    for (const event of [
      { type: 'user.message', content: 'more' },
      { type: 'cancel' },
      { type: 'tool.approve', toolCallId: 'x' },
      { type: 'tool.deny', toolCallId: 'x' },
    ] as const) {
      actor.send(event);
    }
    expect(actor.getSnapshot().status).toBe('done');
    expect(actor.getSnapshot().output).toEqual(output);
  });

  it('a handler that returns something that is not a stream ends in error, not a crash', async () => {
    const machine = createConversationMachine({ provider: handlerProvider((() => 'not a stream') as never) });
    const actor = createActor(machine, { input: {} }).start();
    actor.send({ type: 'user.message', content: 'hi' });
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'error', error: { retryable: false } });
    expect(output.error?.message).toMatch(/AsyncIterable/);
  });
});

describe('resource bounds', () => {
  it('caps tool output fed back to the model, with a visible marker, on a character boundary', async () => {
    const big = defineTool({ name: 'big', parameters: z.object({}), execute: () => 'é'.repeat(10_000) });
    const fails = defineTool({
      name: 'fails',
      parameters: z.object({}),
      execute: () => {
        throw new Error('x'.repeat(5_000));
      },
    });
    const { output } = await runConversation(
      [
        {
          toolCalls: [
            { id: 'b', name: 'big', args: {} },
            { id: 'f', name: 'fails', args: {} },
          ],
        },
        { text: 'ok' },
      ],
      {
        tools: [big, fails],
        maxToolResultBytes: 1_000,
      },
    );
    const results = output.messages[2];
    if (results?.role !== 'tool') throw new Error('expected tool results');
    const [bigResult, failResult] = results.content.map((part) => String(part.result));
    expect(bigResult?.startsWith('é'.repeat(500))).toBe(true);
    expect(bigResult).toContain('…[truncated: 19000 of 20000 bytes not shown]');
    expect(bigResult).not.toContain('\uFFFD');
    expect(failResult).toMatch(/^Error: x+\n…\[truncated: \d+ of 5007 bytes not shown\]$/);
  });

  it('refuses tool arguments over maxToolArgsBytes without running the tool', async () => {
    let executed = false;
    const echo = defineTool({
      name: 'echo',
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => {
        executed = true;
        return text;
      },
    });
    const { output } = await runConversation(
      [{ toolCalls: [{ id: 'e', name: 'echo', args: { text: 'y'.repeat(5_000) } }] }, { text: 'ok' }],
      {
        tools: [echo],
        maxToolArgsBytes: 1_000,
      },
    );
    expect(executed).toBe(false);
    expect(output.messages[2]).toMatchObject({
      content: [{ isError: true, result: expect.stringMatching(/too large: 5011 bytes \(limit 1000\)/) }],
    });
    expect(JSON.stringify(output.messages)).not.toContain('yyyyyyyyyy');
  });
});

describe('the run’s final text', () => {
  it('is the last response’s text, also when that response is empty', async () => {
    const { output } = await runConversation(
      [
        { toolCalls: [{ id: 'c', name: 'add', args: { a: 1, b: 1 } }], text: 'Let me add. ' },
        { text: '', finishReason: 'length' },
      ],
      { tools: [add] },
    );
    expect(output).toMatchObject({ status: 'done', text: '', finishReason: 'length' });
    expect(output.messages).toHaveLength(3);
  });

  it('at the cap is the text that came with the calls that were not run', async () => {
    const { output } = await runConversation([{ toolCalls: [{ id: 'c', name: 'add', args: { a: 1, b: 1 } }], text: 'One more try.' }], {
      tools: [add],
      maxToolIterations: 0,
    });
    expect(output).toMatchObject({ status: 'halted', reason: 'max_iterations', text: 'One more try.' });
  });
});

describe('options reach the run', () => {
  it('retry: false makes one attempt only', async () => {
    const { output, requests } = await runConversation([{ error: Object.assign(new Error('busy'), { status: 503 }) }, { text: 'never' }], {
      retry: false,
    });
    expect(requests).toHaveLength(1);
    expect(output).toMatchObject({ status: 'error', error: { status: 503, retryable: true } });
  });

  it('input.sessionData is handed to the provider on every request, and stays in the snapshot', async () => {
    const seen: unknown[] = [];
    const model = scriptedModel([{ toolCalls: [{ id: 'c', name: 'add', args: { a: 1, b: 2 } }] }, { text: 'ok' }]);
    const machine = createConversationMachine({
      provider: handlerProvider((request) => {
        seen.push(request.sessionData);
        return model.handler(request);
      }),
      tools: [add],
    });
    const actor = createActor(machine, { input: { sessionData: { tenant: 'acme' } } }).start();
    actor.send({ type: 'user.message', content: 'go' });
    expect(await toPromise(actor)).toMatchObject({ status: 'done' });
    expect(seen).toEqual([{ tenant: 'acme' }, { tenant: 'acme' }]);
    expect(JSON.stringify(actor.getPersistedSnapshot())).toContain('"tenant":"acme"');
  });

  it('one machine serves many conversations: each tool call gets its own run\'s sessionData (README "Per-run data")', async () => {
    const calls: Array<{ user: unknown; toolCallId: string }> = [];
    const whoami = defineTool({
      name: 'whoami',
      parameters: { type: 'object', properties: {} },
      execute: (_args, { sessionData, toolCallId }) => {
        calls.push({ user: (sessionData as { userId: string }).userId, toolCallId });
        return (sessionData as { userId: string }).userId;
      },
    });
    const machine = createConversationMachine({
      provider: handlerProvider(({ messages }) => {
        const last = messages.at(-1);
        return last?.role === 'tool'
          ? turnChunks({ text: `you are ${String(last.content)}` })
          : turnChunks({ toolCalls: [{ id: `call-${messages.length}`, name: 'whoami', args: {} }] });
      }),
      tools: [whoami],
    });
    const users = ['u1', 'u2', 'u3'];
    const outputs = await Promise.all(
      users.map((userId) => {
        const actor = createActor(machine, { input: { sessionData: { userId } } }).start();
        actor.send({ type: 'user.message', content: 'who am I?' });
        return toPromise(actor);
      }),
    );
    expect(outputs.map((output) => output.text)).toEqual(['you are u1', 'you are u2', 'you are u3']);
    expect(calls.map((call) => call.user).sort()).toEqual(users);
  });

  it('a sessionData that is not plain JSON ends the run in error naming where, before any request', async () => {
    let requests = 0;
    const machine = createConversationMachine({
      provider: handlerProvider(() => {
        requests += 1;
        return (async function* () {})();
      }),
    });
    class Pool {}
    for (const [sessionData, expected] of [
      [
        { userId: 'u1', db: new Pool() },
        'input.sessionData.db must be plain JSON (null, boolean, number, string, array or plain object), got a Pool instance',
      ],
      [
        { retry: () => 1 },
        'input.sessionData.retry must be plain JSON (null, boolean, number, string, array or plain object), got a function',
      ],
      [
        { ids: [1, 2n] },
        'input.sessionData.ids[1] must be plain JSON (null, boolean, number, string, array or plain object), got a bigint',
      ],
    ] as const) {
      const actor = createActor(machine, { input: { messages: [], sessionData } }).start();
      const output = await toPromise(actor);
      expect(output).toMatchObject({ status: 'error', error: { name: 'InvalidInputError', message: expected, retryable: false } });
    }
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const output = await toPromise(createActor(machine, { input: { sessionData: cyclic } }).start());
    expect(output.error?.message).toBe(
      'input.sessionData.self must be plain JSON (null, boolean, number, string, array or plain object), got a circular reference',
    );
    expect(requests).toBe(0);
  });
});

describe('the context stays small (docs/performance.md)', () => {
  it('has at most 18 top-level keys at every step, with every option on: past that V8 makes each copy a slow dictionary object', async () => {
    const keys: number[] = [];
    const { output } = await runConversation(
      [
        { toolCalls: [{ id: 'c1', name: 'add', args: { a: 1, b: 2 } }] },
        { error: Object.assign(new Error('busy'), { status: 503 }) },
        { text: '{"sum":3}' },
      ],
      {
        tools: [add],
        prices: { scripted: { input: 1, output: 1 } },
        output: { schema: z.object({ sum: z.number() }) },
        onStart: (actor) => actor.subscribe((snapshot) => keys.push(Object.keys(snapshot.context).length)),
      },
    );
    expect(output).toMatchObject({ status: 'done', object: { sum: 3 } });
    expect(Math.max(...keys)).toBeLessThanOrEqual(18);
  });
});
