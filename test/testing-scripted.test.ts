/**
 * `actorloop/testing`'s scripted provider, trajectories and matchers (DESIGN §19, docs/testing.md
 * "Scripted models and trajectories"): the provider drives the real conversation machine with real
 * tools, retries and cancels included; `expectTrajectory` passes and fails as documented, with its
 * diff; the matchers work with and without `.not`; `mediaOf` and `toHaveSentMedia` see the images
 * and files a real run sent (a user's, a tool's `toolContent`), where each came from; the page's
 * examples run here as tests.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type ConversationEmittedEvent,
  createConversationMachine,
  defineTool,
  InvalidOptionsError,
  type Message,
  type ProviderEvent,
  type ProviderRequest,
  type RunOutput,
  toolContent,
} from '../src/index.js';
import {
  expectTrajectory,
  matchers,
  mediaOf,
  type ScriptedTurn,
  scriptedProvider,
  toolCallsOf,
  TrajectoryMismatchError,
  type TrajectoryStep,
} from '../src/testing/index.js';

expect.extend(matchers);

const root = fileURLToPath(new URL('..', import.meta.url));

const weather = defineTool({
  name: 'weather',
  description: 'The weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => ({ city, sky: city === 'Paris' ? 'sunny' : 'rain' }),
});

const book = defineTool({
  name: 'book',
  description: 'Books a hotel',
  parameters: z.object({ hotel: z.string(), nights: z.number() }),
  execute: ({ hotel, nights }) => `Booked ${hotel} for ${nights} nights`,
});

/** One run of a machine on the provider to its end, with the events it emitted. */
async function run(
  provider: ReturnType<typeof scriptedProvider>,
  options: { prompt?: string; messages?: Message[]; retry?: { initialDelayMs: number } } = {},
) {
  const machine = createConversationMachine({ provider, tools: [weather, book], retry: options.retry ?? { initialDelayMs: 1 } });
  const actor = createActor(machine, { input: { prompt: options.prompt ?? 'Weather in Paris?', messages: options.messages ?? [] } });
  const events: ConversationEmittedEvent[] = [];
  actor.on('*', (event) => events.push(event));
  const output = await toPromise(actor.start());
  return { output, events };
}

const request = (messages: Message[] = [{ role: 'user', content: 'hi' }], signal = new AbortController().signal): ProviderRequest => ({
  messages,
  tools: [],
  signal,
});

async function eventsOf(provider: ReturnType<typeof scriptedProvider>, sent: ProviderRequest = request()): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const event of provider.stream(sent)) events.push(event);
  return events;
}

/** The InvalidOptionsError `create` throws. */
function refusal(create: () => unknown): InvalidOptionsError {
  try {
    create();
  } catch (error) {
    if (InvalidOptionsError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an InvalidOptionsError');
}

describe('scriptedProvider', () => {
  it('answers with text, streamed in small deltas, then a finish with stop and estimated usage', async () => {
    const provider = scriptedProvider([{ text: 'It is sunny in Paris today.' }]);
    const events = await eventsOf(provider);
    const deltas = events.filter((event) => event.type === 'text.delta');
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.map((event) => event.delta).join('')).toBe('It is sunny in Paris today.');
    expect(events.at(-1)).toMatchObject({
      type: 'finish',
      content: [{ type: 'text', text: 'It is sunny in Paris today.' }],
      finishReason: 'stop',
      model: 'scripted',
      usage: { outputTokens: 7, inputTokens: expect.any(Number), totalTokens: expect.any(Number) },
    });
    expect(provider).toMatchObject({ name: 'scripted', model: 'scripted', remaining: 0 });
  });

  it('a text answer ends a real run done, its text the final text', async () => {
    const provider = scriptedProvider([{ text: 'Sunny.' }], { name: 'fake', model: 'fake-1' });
    const { output, events } = await run(provider);
    expect(output).toMatchObject({ status: 'done', text: 'Sunny.', iterations: 0, finishReason: 'stop' });
    expect(output.usage.totalTokens).toBe(output.usage.inputTokens + output.usage.outputTokens);
    expect(
      events
        .filter((event) => event.type === 'text.delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe('Sunny.');
    expect(provider.name).toBe('fake');
  });

  it('a tool loop — call, result, answer — runs the real tool, and its trajectory is accepted', async () => {
    const provider = scriptedProvider([
      { text: 'Let me look.', toolCalls: [{ name: 'weather', args: { city: 'Paris' } }] },
      { text: 'It is sunny in Paris.' },
    ]);
    const { output } = await run(provider);
    expect(output).toMatchObject({ status: 'done', text: 'It is sunny in Paris.', iterations: 1 });
    expectTrajectory(output, [{ tool: 'weather', args: { city: 'Paris' }, result: { sky: 'sunny' } }]);
    expect(toolCallsOf(output)).toEqual([
      { tool: 'weather', args: { city: 'Paris' }, toolCallId: 'call_1_1', result: '{"city":"Paris","sky":"sunny"}' },
    ]);
    // The second request carries the tool's result: the provider recorded both.
    expect(provider.requests).toHaveLength(2);
    expect(provider.requests[1]?.messages.at(-1)).toMatchObject({ role: 'tool', content: [{ toolCallId: 'call_1_1' }] });
    expect(provider.requests[0]?.tools.map((tool) => tool.name)).toEqual(['weather', 'book']);
  });

  it('tool calls stream as deltas with the name first, and finish with tool-calls; ids given are kept', async () => {
    const provider = scriptedProvider([
      {
        toolCalls: [
          { name: 'weather', args: { city: 'A city with a long name' }, id: 'mine' },
          { name: 'book', argsText: '{"hotel":' },
        ],
      },
    ]);
    const events = await eventsOf(provider);
    const calls = events.filter((event) => event.type === 'tool.call.delta');
    expect(calls[0]).toMatchObject({ toolCallId: 'mine', name: 'weather' });
    expect(calls.filter((event) => event.toolCallId === 'mine').length).toBeGreaterThan(1);
    expect(
      calls
        .filter((event) => event.toolCallId === 'mine')
        .map((event) => event.argsDelta)
        .join(''),
    ).toBe('{"city":"A city with a long name"}');
    expect(events.at(-1)).toMatchObject({
      finishReason: 'tool-calls',
      content: [
        { type: 'tool-call', toolCallId: 'mine', toolName: 'weather', argsText: '{"city":"A city with a long name"}' },
        { type: 'tool-call', toolCallId: 'call_1_2', toolName: 'book', argsText: '{"hotel":' },
      ],
    });
  });

  it('malformed argument text goes back to the model as an error result, as from a real model', async () => {
    const provider = scriptedProvider([{ toolCalls: [{ name: 'weather', argsText: '{"city": "Par' }] }, { text: 'Sorry.' }]);
    const { output } = await run(provider);
    expect(output.status).toBe('done');
    expect(toolCallsOf(output)[0]).toMatchObject({ tool: 'weather', isError: true });
  });

  it('reasoning streams as reasoning deltas, comes first in the message, and counts as reasoning tokens', async () => {
    const provider = scriptedProvider([{ reasoning: 'The user asks about Paris.', text: 'Sunny.' }]);
    const { output, events } = await run(provider);
    expect(
      events
        .filter((event) => event.type === 'reasoning.delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe('The user asks about Paris.');
    expect(output.messages.at(-1)).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'The user asks about Paris.' },
        { type: 'text', text: 'Sunny.' },
      ],
    });
    expect(output.usage.reasoningTokens).toBe(7);
  });

  it('given usage and finish reason are reported as given; a missing total is their sum', async () => {
    const provider = scriptedProvider([
      { text: 'Cut', finishReason: 'length', usage: { inputTokens: 100, outputTokens: 5, cachedInputTokens: 80 } },
    ]);
    const { output } = await run(provider);
    expect(output.usage).toEqual({ inputTokens: 100, outputTokens: 5, totalTokens: 105, cachedInputTokens: 80 });
    expect(output.finishReason).toBe('length');
  });

  it('a 429 turn is retried by the machine (honouring retry-after-ms), then the next turn answers', async () => {
    const provider = scriptedProvider([
      { error: { status: 429, message: 'Rate limit reached', headers: { 'retry-after-ms': '3' } } },
      { text: 'Sunny.' },
    ]);
    const { output, events } = await run(provider, { retry: { initialDelayMs: 1 } });
    expect(output).toMatchObject({ status: 'done', text: 'Sunny.' });
    const retries = events.filter((event) => event.type === 'request.retry');
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ delayMs: 3, error: { status: 429, code: 'rate_limit', retryable: true } });
    expect(provider.requests).toHaveLength(2);
  });

  it('a 5xx after partial text is retried with the partial output discarded', async () => {
    const provider = scriptedProvider([{ text: 'It is', error: { status: 503, message: 'upstream reset' } }, { text: 'Sunny.' }]);
    const { output, events } = await run(provider);
    expect(output).toMatchObject({ status: 'done', text: 'Sunny.' });
    expect(events.find((event) => event.type === 'request.retry')).toMatchObject({ discardPartial: true, error: { status: 503 } });
  });

  it('a 400 turn ends the run error, not retried', async () => {
    const provider = scriptedProvider([{ error: { status: 400, message: 'Invalid request' } }, { text: 'never' }]);
    const { output } = await run(provider);
    expect(output).toMatchObject({
      status: 'error',
      error: { status: 400, retryable: false, message: 'Invalid request', code: 'bad_request' },
    });
    expect(provider.requests).toHaveLength(1);
    expect(provider.remaining).toBe(1);
  });

  it('a function turn answers from the request, and may be async', async () => {
    const provider = scriptedProvider([
      (sent) => ({ toolCalls: [{ name: 'weather', args: { city: String(sent.messages.length) } }] }),
      async (sent) => ({ text: `${sent.messages.length} messages` }),
    ]);
    const { output } = await run(provider);
    expect(output.text).toBe('3 messages');
    expectTrajectory(output, [{ tool: 'weather', args: { city: '1' } }]);
  });

  it('a function turn that returns a bad answer ends the run error, naming the turn and field', async () => {
    const provider = scriptedProvider([(() => ({ text: 42 })) as unknown as ScriptedTurn]);
    const { output } = await run(provider);
    expect(output.status).toBe('error');
    expect(output.error?.message).toBe('Invalid option turns[0](request).text: expected a string, got 42');
  });

  it('delayMs waits before answering; a cancelled run does not wait for it', async () => {
    const delayed = scriptedProvider([{ text: 'Late.', delayMs: 30 }]);
    const started = performance.now();
    await eventsOf(delayed);
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);

    const provider = scriptedProvider([{ text: 'Much later.', delayMs: 60_000 }]);
    const machine = createConversationMachine({ provider });
    const actor = createActor(machine, { input: { prompt: 'hello' } }).start();
    await expect.poll(() => provider.requests.length).toBe(1);
    const cancelledAt = performance.now();
    actor.send({ type: 'cancel' });
    const output = await toPromise(actor);
    expect(performance.now() - cancelledAt).toBeLessThan(1_000);
    expect(output).toMatchObject({ status: 'halted', reason: 'cancelled' });
    expect(provider.requests[0]?.signal.aborted).toBe(true);
  });

  it('an aborted request stops its delay at once with an AbortError', async () => {
    const controller = new AbortController();
    const provider = scriptedProvider([{ text: 'Late.', delayMs: 60_000 }]);
    const pending = eventsOf(provider, request(undefined, controller.signal));
    setTimeout(() => controller.abort(), 5);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('a request after the last turn ends the run error, naming the turns scripted and what it asked', async () => {
    const provider = scriptedProvider([{ toolCalls: [{ name: 'weather', args: { city: 'Paris' } }] }]);
    const { output } = await run(provider, { prompt: 'What is the weather like in Paris this weekend, and should I bring an umbrella?' });
    expect(output.status).toBe('error');
    expect(output.error).toMatchObject({ retryable: false });
    expect(output.error?.message).toBe(
      'scriptedProvider: no turn for request 2 (1 turn was scripted); its last user message: ' +
        '"What is the weather like in Paris this weekend, and should I bring an umbrella?", then the results of weather',
    );
    expect(provider.remaining).toBe(0);
  });

  it('bad turns are refused at creation, naming the turn and the field', () => {
    const bad = (turns: unknown) => refusal(() => scriptedProvider(turns as ScriptedTurn[]));
    expect(bad([{ text: 'ok' }, { toolCalls: { name: 'weather' } }]).message).toBe(
      'Invalid option turns[1].toolCalls: expected an array of tool calls { name, args?, argsText?, id? }, got an object',
    );
    expect(bad([{ toolCalls: [{ args: {} }] }]).option).toBe('turns[0].toolCalls[0].name');
    expect(bad([{ toolCalls: [{ name: 'weather', args: { when: new Date(0) } }] }]).message).toBe(
      'Invalid option turns[0].toolCalls[0].args.when: expected plain JSON (null, boolean, number, string, array or plain object), got a Date instance',
    );
    expect(bad([{ toolCalls: [{ name: 'weather', args: { city: Number.NaN } }] }]).option).toBe('turns[0].toolCalls[0].args.city');
    expect(bad([{ toolCalls: [{ name: 'weather', args: {}, argsText: '{}' }] }]).option).toBe('turns[0].toolCalls[0].argsText');
    expect(bad([{ text: 'a', delayMs: -1 }]).message).toBe(
      'Invalid option turns[0].delayMs: expected a number of milliseconds between 0 and 2147483647, got -1',
    );
    expect(bad([{ error: { status: 200, message: 'fine' } }]).option).toBe('turns[0].error.status');
    expect(bad([{ toolcalls: [] }]).message).toMatch(/^Invalid option turns\[0\]\.toolcalls: .*did you mean toolCalls\?$/);
    expect(bad([{ text: 'a', finishReason: 'done' }]).option).toBe('turns[0].finishReason');
    expect(bad([{ usage: { inputTokens: -1 } }]).option).toBe('turns[0].usage.inputTokens');
    expect(bad(['hello']).message).toBe(
      'Invalid option turns[0]: expected a turn { text?, reasoning?, toolCalls?, error?, delayMs?, usage?, finishReason? } or a function (request) => turn, got "hello"',
    );
    expect(bad({ text: 'a' }).message).toBe('Invalid option turns: expected an array of turns, got an object');
    expect(refusal(() => scriptedProvider([], { name: '' })).option).toBe('options.name');
  });

  it('records every request it receives, retries included, and counts the turns left', async () => {
    const provider = scriptedProvider([{ error: { status: 500, message: 'oops' } }, { text: 'One.' }, { text: 'Two.' }]);
    expect(provider.remaining).toBe(3);
    const first = await run(provider, { prompt: 'first' });
    expect(provider.requests.map((sent) => sent.messages.length)).toEqual([1, 1]);
    expect(provider.remaining).toBe(1);
    await run(provider, { prompt: 'second', messages: first.output.messages });
    expect(provider.requests.map((sent) => sent.messages.at(-1))).toEqual([
      { role: 'user', content: 'first' },
      { role: 'user', content: 'first' },
      { role: 'user', content: 'second' },
    ]);
    expect(provider.remaining).toBe(0);
  });
});

/** A history whose assistant made these calls, one round each, with the results given. */
function historyOf(...calls: Array<{ tool: string; args: unknown; result?: string; isError?: boolean }>): { messages: Message[] } {
  const messages: Message[] = [{ role: 'user', content: 'Plan a trip' }];
  for (const [index, call] of calls.entries()) {
    const toolCallId = `c${index + 1}`;
    messages.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId, toolName: call.tool, args: call.args }] });
    if (call.result !== undefined) {
      const part = { type: 'tool-result' as const, toolCallId, toolName: call.tool, result: call.result };
      messages.push({ role: 'tool', content: [call.isError ? { ...part, isError: true } : part] });
    }
  }
  return { messages };
}

const trip = historyOf(
  {
    tool: 'search',
    args: { city: 'Paris', dates: ['2025-06-01', '2025-06-03'], filters: { stars: 4, pool: true } },
    result: '["Ritz","Lutetia"]',
  },
  { tool: 'weather', args: { city: 'Paris' }, result: '{"sky":"sunny"}' },
  { tool: 'book', args: { hotel: 'Ritz', nights: 2 }, result: 'Booked Ritz for 2 nights' },
);

/** The message of the TrajectoryMismatchError `check` throws. */
function mismatch(check: () => void): string {
  try {
    check();
  } catch (error) {
    if (TrajectoryMismatchError.isInstance(error)) return error.message;
    throw error;
  }
  throw new Error('expected a TrajectoryMismatchError');
}

describe('expectTrajectory', () => {
  it('passes on the same calls in order, args matched as a subset at any depth', () => {
    expectTrajectory(trip, [{ tool: 'search' }, { tool: 'weather' }, { tool: 'book' }]);
    expectTrajectory(trip, [
      { tool: 'search', args: { city: 'Paris', filters: { pool: true } } },
      { tool: 'weather', args: { city: 'Paris' } },
      { tool: 'book', args: { hotel: 'Ritz', nights: 2 } },
    ]);
    expectTrajectory(trip, [{ tool: 'search', args: { dates: ['2025-06-01', '2025-06-03'] } }, { tool: 'weather' }, { tool: 'book' }]);
    expectTrajectory({ messages: [] }, []);
  });

  it('matches with predicates, patterns and asymmetric matchers, anywhere in the args', () => {
    expectTrajectory(trip, [
      { tool: 'search', args: (args: { dates: string[] }) => args.dates.length === 2 },
      { tool: 'weather', args: { city: /^par/i } },
      { tool: 'book', args: { hotel: expect.any(String), nights: (nights: number) => nights > 1 } },
    ]);
    expect(() => expectTrajectory(trip, [{ tool: 'search', args: () => false }, { tool: 'weather' }, { tool: 'book' }])).toThrow(
      TrajectoryMismatchError,
    );
  });

  it('matches results: as text, by pattern, or as the JSON the text holds', () => {
    expectTrajectory(trip, [
      { tool: 'search', result: ['Ritz', 'Lutetia'] },
      { tool: 'weather', result: { sky: 'sunny' } },
      { tool: 'book', result: /^Booked Ritz/ },
    ]);
    expect(
      mismatch(() => expectTrajectory(trip, [{ tool: 'search' }, { tool: 'weather', result: { sky: 'rain' } }, { tool: 'book' }])),
    ).toContain('step 2 (weather): result.sky: expected "rain", got "sunny"');
  });

  it('exact: false asks for the steps in order among the calls, others allowed between them', () => {
    expectTrajectory(trip, [{ tool: 'search' }, { tool: 'book', args: { hotel: 'Ritz' } }], { exact: false });
    expectTrajectory(trip, [{ tool: 'book' }], { exact: false });
    expectTrajectory(trip, [], { exact: false });
    expect(mismatch(() => expectTrajectory(trip, [{ tool: 'book' }, { tool: 'search' }], { exact: false }))).toMatchInlineSnapshot(`
      "expectTrajectory: step 2 (search) has no call
      expected 2 tool calls (these calls in this order, others allowed between them); the run made 3 tool calls:
          expected     │ actual
        · (other call) │ search {"city":"Paris","dates":["2025-06-01","2025-06-03"],"filters":{"stars":4,"pool"…
        · (other call) │ weather {"city":"Paris"}
        ✓ book         │ book {"hotel":"Ritz","nights":2}
        − search       │ (missing)"
    `);
  });

  it('a differing argument is named by its path, the calls beside the steps', () => {
    const message = mismatch(() =>
      expectTrajectory(trip, [{ tool: 'search', args: { city: 'Paris' } }, { tool: 'weather', args: { city: 'Lyon' } }, { tool: 'book' }]),
    );
    expect(message).toMatchInlineSnapshot(`
      "expectTrajectory: step 2 (weather): args.city: expected "Lyon", got "Paris"
      expected 3 tool calls (exactly these calls, in this order); the run made 3 tool calls:
          expected                │ actual
        ✓ search {"city":"Paris"} │ search {"city":"Paris","dates":["2025-06-01","2025-06-03"],"filters":{"stars":4,"pool"…
        ✗ weather {"city":"Lyon"} │ weather {"city":"Paris"}
            args.city: expected "Lyon", got "Paris"
        ✓ book                    │ book {"hotel":"Ritz","nights":2}"
    `);
  });

  it('an extra call, a missing step and a wrong tool are marked + / − / ✗', () => {
    expect(mismatch(() => expectTrajectory(trip, [{ tool: 'search' }, { tool: 'book' }]))).toMatchInlineSnapshot(`
      "expectTrajectory: call 2 (weather) was not expected
      expected 2 tool calls (exactly these calls, in this order); the run made 3 tool calls:
          expected │ actual
        ✓ search   │ search {"city":"Paris","dates":["2025-06-01","2025-06-03"],"filters":{"stars":4,"pool"…
        + (extra)  │ weather {"city":"Paris"}
        ✓ book     │ book {"hotel":"Ritz","nights":2}"
    `);
    expect(mismatch(() => expectTrajectory(trip, [{ tool: 'search' }, { tool: 'weather' }, { tool: 'book' }, { tool: 'pay' }]))).toContain(
      '− pay      │ (missing)',
    );
    expect(mismatch(() => expectTrajectory(trip, [{ tool: 'search' }, { tool: 'forecast' }, { tool: 'book' }]))).toContain(
      '  ✗ forecast │ weather {"city":"Paris"}\n      tool: expected "forecast", got "weather"',
    );
  });

  it('names the first difference inside arrays and nested objects, and a missing key', () => {
    const first = (args: TrajectoryStep['args']) =>
      mismatch(() => expectTrajectory(trip, [{ tool: 'search', args }, { tool: 'weather' }, { tool: 'book' }])).split('\n')[0];
    expect(first({ dates: ['2025-06-01'] })).toBe('expectTrajectory: step 1 (search): args.dates: expected 1 item, got 2');
    expect(first({ dates: ['2025-06-01', '2025-06-04'] })).toBe(
      'expectTrajectory: step 1 (search): args.dates[1]: expected "2025-06-04", got "2025-06-03"',
    );
    expect(first({ filters: { stars: 5 } })).toBe('expectTrajectory: step 1 (search): args.filters.stars: expected 5, got 4');
    expect(first({ budget: 100 })).toBe('expectTrajectory: step 1 (search): args.budget: expected 100, got nothing (no such key)');
    expect(first({ city: (city: string) => city === 'Rome' })).toBe(
      'expectTrajectory: step 1 (search): args.city: "Paris" does not satisfy the predicate',
    );
  });

  it('throws a TrajectoryMismatchError holding the steps, the calls and the first difference', () => {
    const steps = [{ tool: 'search' }];
    try {
      expectTrajectory(trip, steps);
      expect.unreachable();
    } catch (error) {
      expect(TrajectoryMismatchError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ name: 'TrajectoryMismatchError', steps, difference: 'call 2 (weather) was not expected' });
      expect((error as TrajectoryMismatchError).calls.map((call) => call.tool)).toEqual(['search', 'weather', 'book']);
    }
  });

  it('refuses what is not a history or not a list of steps', () => {
    expect(refusal(() => expectTrajectory({} as RunOutput, [])).message).toBe(
      'Invalid option toolCallsOf(output): expected a RunOutput, or an object with its messages, got an object',
    );
    expect(refusal(() => expectTrajectory(trip, [{ tool: '' }])).option).toBe('steps[0].tool');
    expect(refusal(() => expectTrajectory(trip, [{ tool: 'a', arg: {} } as TrajectoryStep])).option).toBe('steps[0].arg');
  });

  it('toolCallsOf: calls in order across rounds, each with its result and error mark', () => {
    const history = historyOf(
      { tool: 'weather', args: { city: 'Oz' }, result: 'Error: no such city', isError: true },
      { tool: 'book', args: {} },
    );
    expect(toolCallsOf(history)).toEqual([
      { tool: 'weather', args: { city: 'Oz' }, toolCallId: 'c1', result: 'Error: no such city', isError: true },
      { tool: 'book', args: {}, toolCallId: 'c2' },
    ]);
  });
});

describe('matchers', () => {
  const output: RunOutput = {
    status: 'halted',
    reason: 'max_iterations',
    text: 'I booked the Ritz.',
    messages: trip.messages,
    iterations: 3,
    usage: { inputTokens: 300, outputTokens: 50, totalTokens: 350 },
    failedUsage: { inputTokens: 40, outputTokens: 0, totalTokens: 40 },
    cost: { input: 0.002, cachedInput: 0, cacheWrite: 0, output: 0.001, total: 0.003, unpricedModels: [] },
  };

  it('toCallTool: a call of the tool, with args matching', () => {
    expect(output).toCallTool('weather');
    expect(output).toCallTool('book', { hotel: 'Ritz' });
    expect(output).not.toCallTool('pay');
    expect(output).not.toCallTool('book', { hotel: 'Lutetia' });
    expect(() => expect(output).toCallTool('book', { hotel: 'Lutetia' })).toThrow(
      'expected the run to call "book" with matching arguments; it called "search", "weather", "book"; the first of its calls differs: args.hotel: expected "Lutetia", got "Ritz"',
    );
    expect(() => expect(output).not.toCallTool('weather')).toThrow(
      'expected the run not to call "weather", but call 2 did: {"city":"Paris"}',
    );
  });

  it('toCallTools: the trajectory, its diff the message', () => {
    expect(output).toCallTools([{ tool: 'search' }, { tool: 'weather' }, { tool: 'book' }]);
    expect(output).toCallTools([{ tool: 'book' }], { exact: false });
    expect(output).not.toCallTools([{ tool: 'book' }]);
    expect(() => expect(output).toCallTools([{ tool: 'book' }])).toThrow('expectTrajectory: call 1 (search) was not expected');
    expect(() => expect(output).not.toCallTools([{ tool: 'book' }], { exact: false })).toThrow(
      "expected the tool calls not to match, but the run's tool calls match",
    );
  });

  it('toEndWith: the status, and the reason when given', () => {
    expect(output).toEndWith('halted');
    expect(output).toEndWith('halted', 'max_iterations');
    expect(output).not.toEndWith('done');
    expect(output).not.toEndWith('halted', 'cancelled');
    expect(() => expect(output).toEndWith('done')).toThrow('expected the run to end done; it ended halted (max_iterations)');
    expect(() => expect(output).not.toEndWith('halted')).toThrow('expected the run not to end halted, but it did');
  });

  it('toHaveText: the whole final text, or a pattern in it', () => {
    expect(output).toHaveText('I booked the Ritz.');
    expect(output).toHaveText(/ritz/i);
    expect(output).not.toHaveText('I booked');
    expect(output).not.toHaveText(/Lutetia/);
    expect(() => expect(output).toHaveText('I booked')).toThrow('expected the final text to be "I booked"; it is "I booked the Ritz."');
    expect(() => expect(output).not.toHaveText(/Ritz/g)).toThrow('expected the final text not to be text matching /Ritz/g');
  });

  it('toStayUnderTokens: the tokens in all, failed attempts included', () => {
    expect(output).toStayUnderTokens(390);
    expect(output).not.toStayUnderTokens(389);
    expect(() => expect(output).toStayUnderTokens(350)).toThrow(
      'expected the run to spend at most 350 tokens; it spent 390 (40 of them by failed attempts)',
    );
    expect(() => expect(output).not.toStayUnderTokens(1000)).toThrow('expected the run to spend more than 1000 tokens; it spent 390');
  });

  it('toCostAtMost: the cost, and a run without one throws either way', () => {
    expect(output).toCostAtMost(0.003);
    expect(output).not.toCostAtMost(0.002);
    expect(() => expect(output).toCostAtMost(0.001)).toThrow('expected the run to cost at most 0.001; it cost 0.003');
    const free = { ...output, cost: undefined };
    expect(() => expect(free).toCostAtMost(1)).toThrow(/toCostAtMost: expected a run with a cost: give the machine a `prices` table/);
    expect(() => expect(free).not.toCostAtMost(1)).toThrow(/toCostAtMost: expected a run with a cost/);
  });

  it('on a real run, priced', async () => {
    const provider = scriptedProvider([
      { toolCalls: [{ name: 'book', args: { hotel: 'Ritz', nights: 2 } }], usage: { inputTokens: 1_000, outputTokens: 100 } },
      { text: 'Booked.', usage: { inputTokens: 1_200, outputTokens: 10 } },
    ]);
    const machine = createConversationMachine({ provider, tools: [book], prices: { scripted: { input: 1, output: 2 } } });
    const real = await toPromise(createActor(machine, { input: { prompt: 'Book the Ritz' } }).start());
    expect(real).toEndWith('done');
    expect(real).toCallTools([{ tool: 'book', args: { nights: 2 }, result: 'Booked Ritz for 2 nights' }]);
    expect(real).toStayUnderTokens(2_310);
    expect(real).not.toStayUnderTokens(2_309);
    expect(real).toCostAtMost(0.0025);
    expect(real).not.toCostAtMost(0.0024);
  });

  it('a value that is not a run output throws, with or without .not', () => {
    expect(() => expect({ text: 'hi' }).toHaveText('hi')).toThrow(/expect\(output\)\.toHaveText: expected a RunOutput/);
    expect(() => expect(undefined).not.toEndWith('done')).toThrow(/expect\(output\)\.toEndWith: expected a RunOutput/);
  });
});

describe('media: mediaOf and toHaveSentMedia', () => {
  // A 1×1 PNG (68 bytes) and a small PDF (15 bytes).
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
  const pdf = Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64');
  const chart = defineTool({
    name: 'chart',
    description: "Draws a month's spending",
    parameters: z.object({ month: z.string() }),
    // Bytes, no media type: the run stores them as base64 and reads PNG from them.
    execute: ({ month }) =>
      toolContent([
        { type: 'text', text: `Spending in ${month}:` },
        { type: 'image', data: Buffer.from(png, 'base64') },
      ]),
  });

  /** A real run: a prompt with a PNG (base64) and a PDF; the model calls `chart`, then answers from what each request brought. */
  async function mediaRun() {
    const seen: string[][] = [];
    const provider = scriptedProvider([
      (request) => {
        seen.push(mediaOf(request, { latest: true }).map((medium) => `${medium.type} ${medium.mediaType}`));
        return { toolCalls: [{ name: 'chart', args: { month: 'May' } }] };
      },
      (request) => {
        const [drawn] = mediaOf(request, { latest: true });
        seen.push(mediaOf(request, { latest: true }).map((medium) => `${medium.type} ${medium.mediaType}`));
        return { text: `The ${drawn?.toolName} tool drew a ${drawn?.mediaType} of ${drawn?.byteLength} bytes.` };
      },
    ]);
    const machine = createConversationMachine({ provider, tools: [chart] });
    const prompt = [
      { type: 'text' as const, text: 'What did I spend in May?' },
      { type: 'image' as const, data: png, mediaType: 'image/png' },
      { type: 'file' as const, data: pdf, mediaType: 'application/pdf', filename: 'statement.pdf' },
    ];
    const output = await toPromise(createActor(machine, { input: { prompt } }).start());
    return { provider, output, seen };
  }

  const photo = {
    type: 'image',
    mediaType: 'image/png',
    role: 'user',
    messageIndex: 0,
    kind: 'base64',
    byteLength: 68,
    path: 'messages[0].content[1]',
    part: { type: 'image', data: png, mediaType: 'image/png' },
  };
  const statement = {
    type: 'file',
    mediaType: 'application/pdf',
    filename: 'statement.pdf',
    role: 'user',
    messageIndex: 0,
    kind: 'base64',
    byteLength: 15,
    path: 'messages[0].content[2]',
    part: { type: 'file', data: pdf, mediaType: 'application/pdf', filename: 'statement.pdf' },
  };
  const drawn = {
    type: 'image',
    mediaType: 'image/png',
    role: 'tool',
    messageIndex: 2,
    toolCallId: 'call_1_1',
    toolName: 'chart',
    kind: 'base64',
    byteLength: 68,
    path: 'messages[2].content[0].content[1]',
    part: { type: 'image', data: png, mediaType: 'image/png' },
  };

  it('a real run: the user’s image and PDF and the tool’s image, each where it came from; a function turn answers from them', async () => {
    const { provider, output, seen } = await mediaRun();
    expect(output.status).toBe('done');
    expect(output.text).toBe('The chart tool drew a image/png of 68 bytes.');
    // What each request brought: the prompt's two, then the tool round's one.
    expect(seen).toEqual([['image image/png', 'file application/pdf'], ['image image/png']]);
    // The second request carries the whole history: all three, with no `request`.
    expect(mediaOf(provider.requests[1] as ProviderRequest)).toEqual([photo, statement, drawn]);
    expect(mediaOf(provider.requests[0] as ProviderRequest)).toEqual([photo, statement]);
    // The provider: each medium once, at the first request that carried it.
    expect(mediaOf(provider)).toEqual([
      { ...photo, request: 0 },
      { ...statement, request: 0 },
      { ...drawn, request: 1 },
    ]);
    expect(mediaOf(provider, { latest: true })).toEqual([{ ...drawn, request: 1 }]);
    expect(mediaOf(provider, { role: 'user' }).map((medium) => medium.path)).toEqual(['messages[0].content[1]', 'messages[0].content[2]']);
    expect(mediaOf(provider.requests[1] as ProviderRequest, { role: 'tool' })).toEqual([drawn]);
  });

  it('every form of data: base64, a data: URL, bytes, a URL — its kind, media type (given, the URL’s, read from the bytes) and size', () => {
    const bytes = Buffer.from(png, 'base64');
    const sent = request([
      {
        role: 'user',
        content: [
          { type: 'image', data: png },
          { type: 'image', data: `data:image/png;base64,${png}` },
          { type: 'image', data: new Uint8Array(bytes) },
          { type: 'image', data: 'https://example.com/cat.jpg' },
          { type: 'file', data: `data:audio/wav;base64,${Buffer.from('RIFF....WAVE').toString('base64')}`, mediaType: 'audio/wav' },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'fetch', args: {} }] },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'fetch',
            result: '[file application/pdf]',
            content: [{ type: 'file', data: 'https://example.com/q3.pdf', mediaType: 'application/pdf' }],
          },
        ],
      },
    ]);
    const seen = mediaOf(sent).map(({ part, ...medium }) => medium);
    expect(seen).toEqual([
      {
        type: 'image',
        mediaType: 'image/png',
        role: 'user',
        messageIndex: 0,
        kind: 'base64',
        byteLength: 68,
        path: 'messages[0].content[0]',
      },
      {
        type: 'image',
        mediaType: 'image/png',
        role: 'user',
        messageIndex: 0,
        kind: 'data-url',
        byteLength: 68,
        path: 'messages[0].content[1]',
      },
      {
        type: 'image',
        mediaType: 'image/png',
        role: 'user',
        messageIndex: 0,
        kind: 'bytes',
        byteLength: 68,
        path: 'messages[0].content[2]',
      },
      { type: 'image', role: 'user', messageIndex: 0, kind: 'url', url: 'https://example.com/cat.jpg', path: 'messages[0].content[3]' },
      {
        type: 'file',
        mediaType: 'audio/wav',
        role: 'user',
        messageIndex: 0,
        kind: 'data-url',
        byteLength: 12,
        path: 'messages[0].content[4]',
      },
      {
        type: 'file',
        mediaType: 'application/pdf',
        role: 'tool',
        messageIndex: 2,
        toolCallId: 'c1',
        toolName: 'fetch',
        kind: 'url',
        url: 'https://example.com/q3.pdf',
        path: 'messages[2].content[0].content[0]',
      },
    ]);
    // The part itself, as the request holds it.
    expect(mediaOf(sent)[2]?.part.data).toBeInstanceOf(Uint8Array);
    // Only what came after the model's last answer: the tool's result.
    expect(mediaOf(sent, { latest: true }).map((medium) => medium.toolName)).toEqual(['fetch']);
    expect(mediaOf(request([{ role: 'user', content: 'no media' }]))).toEqual([]);
    expect(() => mediaOf(sent, { role: 'assistant' } as never)).toThrow(
      'Invalid option mediaOf options.role: expected "user" or "tool", got "assistant"',
    );
  });

  it('toHaveSentMedia passes on what reached the model, with and without .not, on the provider and on one request', async () => {
    const { provider } = await mediaRun();
    const [first, second] = provider.requests as [ProviderRequest, ProviderRequest];
    expect(provider).toHaveSentMedia();
    expect(provider).toHaveSentMedia({ role: 'user', type: 'file', filename: 'statement.pdf', byteLength: 15 });
    expect(provider).toHaveSentMedia({ role: 'tool', toolName: 'chart', toolCallId: 'call_1_1', mediaType: /^image\//, request: 1 });
    expect(provider).toHaveSentMedia([
      { role: 'user', type: 'image', mediaType: 'image/png' },
      { role: 'user', type: 'file', mediaType: 'application/pdf' },
      { role: 'tool', toolName: 'chart', byteLength: (n: number) => n < 1_000 },
    ]);
    expect(provider).not.toHaveSentMedia({ mediaType: 'image/jpeg' });
    expect(provider).not.toHaveSentMedia([{ type: 'image' }]);
    expect(first).toHaveSentMedia({ part: { filename: 'statement.pdf' } });
    expect(first).not.toHaveSentMedia({ role: 'tool' });
    expect(second).toHaveSentMedia({ path: 'messages[2].content[0].content[1]', kind: 'base64' });
    expect(second).toHaveSentMedia(expect.objectContaining({ toolName: 'chart' }));
    expect(request()).not.toHaveSentMedia();
    expect(request()).toHaveSentMedia([]);
    expect({ provider }).toEqual({ provider: expect.toHaveSentMedia({ toolName: 'chart' }) });
  });

  it('toHaveSentMedia fails naming what was sent, where, and how it differs', async () => {
    const { provider } = await mediaRun();
    const [first] = provider.requests as [ProviderRequest];
    const failure = (assert: () => void) => {
      try {
        assert();
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('expected the assertion to fail');
    };
    const lines = {
      photo: 'requests[0].messages[0].content[1]: image image/png, base64, 68 B (user message)',
      statement: 'requests[0].messages[0].content[2]: file "statement.pdf" application/pdf, base64, 15 B (user message)',
      drawn: 'requests[1].messages[2].content[0].content[1]: image image/png, base64, 68 B (result of chart, call_1_1)',
    };
    expect(failure(() => expect(provider).toHaveSentMedia({ role: 'tool', mediaType: 'image/jpeg' }))).toBe(
      [
        'expected the provider\'s 2 requests to carry a medium matching {"role":"tool","mediaType":"image/jpeg"}; they carry 3 media:',
        `  ✗ ${lines.photo}`,
        '      media[0].role: expected "tool", got "user"',
        `  ✗ ${lines.statement}`,
        '      media[1].role: expected "tool", got "user"',
        `  ✗ ${lines.drawn}`,
        '      media[2].mediaType: expected "image/jpeg", got "image/png"',
      ].join('\n'),
    );
    expect(failure(() => expect(provider).toHaveSentMedia([{ type: 'image' }, { type: 'file' }, { type: 'file' }]))).toBe(
      [
        'expected the provider\'s 2 requests to carry 3 media as listed, in order; media[2].type: expected "file", got "image"',
        'they carry 3 media:',
        `  ${lines.photo}`,
        `  ${lines.statement}`,
        `  ${lines.drawn}`,
      ].join('\n'),
    );
    expect(failure(() => expect(first).toHaveSentMedia([{ type: 'image' }]))).toBe(
      [
        'expected the request to carry 1 medium as listed, in order; media: expected 1 item, got 2',
        'it carries 2 media:',
        '  messages[0].content[1]: image image/png, base64, 68 B (user message)',
        '  messages[0].content[2]: file "statement.pdf" application/pdf, base64, 15 B (user message)',
      ].join('\n'),
    );
    expect(failure(() => expect(provider).not.toHaveSentMedia({ type: 'file' }))).toBe(
      `expected the provider's 2 requests not to carry a medium matching {"type":"file"}, but media[1] is one:\n  ${lines.statement}`,
    );
    expect(failure(() => expect(request()).toHaveSentMedia())).toBe('expected the request to carry an image or a file; it carries none');
    expect(failure(() => expect(request()).toHaveSentMedia({ type: 'image' }))).toBe(
      'expected the request to carry a medium matching {"type":"image"}; it carries none',
    );
  });

  it('docs/testing.md "Media: what the model was shown" shows the message toHaveSentMedia writes', async () => {
    const { provider } = await mediaRun();
    const shown = sectionBlocks('docs/testing.md', 'Scripted models and trajectories').find(
      (block) => block.language === 'text' && block.code.startsWith("expected the provider's"),
    );
    expect(() => expect(provider).toHaveSentMedia({ role: 'tool', mediaType: 'image/jpeg' })).toThrow(
      shown?.code.trimEnd() ?? 'no such block',
    );
  });

  it('toHaveSentMedia refuses what is no request or provider — a run output included — and an expectation that is none', async () => {
    const { output, provider } = await mediaRun();
    expect(() => expect(output).toHaveSentMedia()).toThrow(
      /^Invalid option expect\(received\)\.toHaveSentMedia: expected a ProviderRequest .* or a provider that records its requests \(a ScriptedProvider\), got an object$/,
    );
    expect(() => expect(undefined).not.toHaveSentMedia()).toThrow(/expect\(received\)\.toHaveSentMedia: expected a ProviderRequest/);
    expect(() => expect(provider).toHaveSentMedia('image/png' as never)).toThrow(
      /^Invalid option toHaveSentMedia\(expected\): expected nothing, an expectation \{ type\?, mediaType\?, .* or an array of them, got "image\/png"$/,
    );
  });
});

/** The fenced blocks of one section of a Markdown page (up to the next heading of its level or above). */
function sectionBlocks(file: string, heading: string): Array<{ language: string; code: string }> {
  const text = readFileSync(join(root, file), 'utf8');
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`${file} has no section "${heading}"`);
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map(([, language = '', code = '']) => ({ language, code }));
}

describe('docs/testing.md "Scripted models and trajectories"', async () => {
  const blocks = sectionBlocks('docs/testing.md', 'Scripted models and trajectories');

  it('shows the diff expectTrajectory writes for its example', () => {
    const shown = blocks.find((block) => block.language === 'text' && block.code.startsWith('expectTrajectory:'));
    const output = historyOf({ tool: 'search', args: { city: 'Lyon' } }, { tool: 'weather', args: { city: 'Lyon' } });
    expect(`${mismatch(() => expectTrajectory(output, [{ tool: 'search', args: { city: 'Paris' } }, { tool: 'book' }]))}\n`).toBe(
      shown?.code,
    );
  });

  // Every ts block of the section runs, as a module of this file: its `it`s are tests here.
  const folder = join(root, '.cache', 'docs-testing');
  mkdirSync(folder, { recursive: true });
  const code = blocks.filter((block) => block.language === 'ts');
  expect(code.length).toBeGreaterThanOrEqual(5);
  for (const [index, block] of code.entries()) {
    const file = join(folder, `scripted-${index}.ts`);
    writeFileSync(file, block.code);
    await import(file);
  }
});
