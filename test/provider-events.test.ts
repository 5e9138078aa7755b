/**
 * A provider of the user's own may yield anything: an event the machine cannot read fails the
 * request with a clear error (not retried), and the run ends in `error` naming it — never an actor
 * error, an uncaught exception or a lost history.
 */
import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { createConversationMachine, type Provider, type RunOutput } from '../src/index.js';
import { recordRequest } from '../src/actors/request-step.js';
import type { StepJournal } from '../src/actors/step-journal.js';
import { providerEventProblem } from '../src/model/provider-event-problem.js';

const usage = { inputTokens: 3, outputTokens: 2, totalTokens: 5 };

describe('providerEventProblem', () => {
  it('passes the events a provider yields, and event types it does not know', () => {
    expect(providerEventProblem({ type: 'text.delta', delta: 'Hi' })).toBeUndefined();
    expect(providerEventProblem({ type: 'reasoning.delta', delta: '' })).toBeUndefined();
    expect(providerEventProblem({ type: 'tool.call.delta', toolCallId: 'c1', name: 'add', argsDelta: '{"a"' })).toBeUndefined();
    expect(providerEventProblem({ type: 'tool.call.delta', toolCallId: 'c1', argsDelta: '1}' })).toBeUndefined();
    expect(providerEventProblem({ type: 'vendor.note', anything: true })).toBeUndefined();
    expect(
      providerEventProblem({
        type: 'finish',
        content: [
          { type: 'reasoning', text: 'think', signature: 's' },
          { type: 'redacted-reasoning', data: 'opaque' },
          { type: 'text', text: 'Hello' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'add', argsText: '{}' },
        ],
        finishReason: 'tool-calls',
        usage: { ...usage, cachedInputTokens: 1 },
      }),
    ).toBeUndefined();
  });

  it('names what is wrong', () => {
    expect(providerEventProblem(null)).toBe('null, not an event { type, … }');
    expect(providerEventProblem({ type: 'text.delta' })).toBe('a text.delta event without a string delta');
    expect(providerEventProblem({ type: 'tool.call.delta', toolCallId: 'c1' })).toMatch(/argsDelta/);
    expect(providerEventProblem({ type: 'finish' })).toBe('a finish event whose content is not a list of parts');
    expect(providerEventProblem({ type: 'finish', content: [{ type: 'image' }], finishReason: 'stop', usage })).toMatch(
      /content\[0\] of type "image"; expected text, reasoning, redacted-reasoning or tool-call/,
    );
    expect(
      providerEventProblem({ type: 'finish', content: [{ type: 'tool-call', toolCallId: 'c1' }], finishReason: 'stop', usage }),
    ).toMatch(/content\[0\] \(tool-call\) without string toolCallId, toolName and argsText/);
    expect(providerEventProblem({ type: 'finish', content: [], usage })).toBe('a finish event without a string finishReason');
    expect(providerEventProblem({ type: 'finish', content: [], finishReason: 'stop', usage: { inputTokens: 1 } })).toMatch(/usage is not/);
    expect(
      providerEventProblem({ type: 'finish', content: [], finishReason: 'stop', usage: { ...usage, totalTokens: Number.NaN } }),
    ).toMatch(/usage is not/);
  });
});

describe('a provider that yields what the machine cannot read', () => {
  const yielding = (events: unknown[], calls: { count: number }): Provider =>
    ({
      name: 'own',
      model: 'own-model',
      async *stream() {
        calls.count++;
        for (const event of events) yield event as never;
      },
    }) as Provider;

  it.each([
    [
      'a finish without content',
      [
        { type: 'text.delta', delta: 'Hel' },
        { type: 'finish', finishReason: 'stop', usage },
      ],
      /whose content is not a list/,
    ],
    ['a part that is null', [{ type: 'finish', content: [null], finishReason: 'stop', usage }], /content\[0\] that is not an object/],
    ['a delta that is a number', [42], /yielded 42, not an event/],
  ])('%s: the run ends in error naming it, not retried, the history kept, nothing thrown', async (_name, events, message) => {
    const thrown: unknown[] = [];
    const onThrown = (reason: unknown) => thrown.push(reason);
    process.on('unhandledRejection', onThrown);
    process.on('uncaughtException', onThrown);
    try {
      const calls = { count: 0 };
      const machine = createConversationMachine({ provider: yielding(events, calls), retry: { maxRetries: 3, initialDelayMs: 1 } });
      const actor = createActor(machine, { input: { messages: [{ role: 'user', content: 'Earlier.' }] } }).start();
      actor.send({ type: 'user.message', content: 'Now?' });
      const output = (await toPromise(actor)) as RunOutput;
      expect(output.status).toBe('error');
      expect(output.error?.message).toMatch(message);
      expect(output.error?.message).toMatch(/^the provider yielded /);
      expect(calls.count).toBe(1);
      expect(output.messages.map((entry) => entry.content)).toEqual(['Earlier.', 'Now?']);
      expect(thrown).toEqual([]);
    } finally {
      process.off('unhandledRejection', onThrown);
      process.off('uncaughtException', onThrown);
    }
  });
});

describe('provider events sent by someone else', () => {
  it('are turned away while the request runs (event.rejected naming what was wrong); the real response is taken', async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const provider = {
      name: 'own',
      model: 'own-model',
      async *stream() {
        yield { type: 'text.delta', delta: 'Hel' };
        await gate;
        yield { type: 'text.delta', delta: 'lo' };
        yield { type: 'finish', content: [{ type: 'text', text: 'Hello' }], finishReason: 'stop', usage };
      },
    } as Provider;
    const actor = createActor(createConversationMachine({ provider }), { input: { messages: [] } });
    const rejected: Array<{ eventType: string; message: string }> = [];
    actor.on('event.rejected', (event) => rejected.push(event));
    actor.start();
    actor.send({ type: 'user.message', content: 'Hi' });
    await new Promise((resolve) => setTimeout(resolve, 10));
    for (const forged of [
      { type: 'provider.delta' },
      { type: 'provider.delta', deltas: [null] },
      { type: 'provider.finish' },
      { type: 'provider.finish', content: [{ type: 'text' }], finishReason: 'stop', usage },
    ])
      actor.send(forged as never);
    release();
    const output = (await toPromise(actor)) as RunOutput;
    expect(output.status).toBe('done');
    expect(output.text).toBe('Hello');
    expect(rejected.map((event) => event.eventType)).toEqual(['provider.delta', 'provider.delta', 'provider.finish', 'provider.finish']);
    expect(rejected[0]?.message).toBe('provider.delta must carry { deltas: [provider events] }; got deltas undefined, not a list');
    expect(rejected[1]?.message).toMatch(/got null, not an event/);
    expect(rejected[2]?.message).toMatch(
      /^provider.finish must carry a response \{ content, finishReason, usage \}; got a finish event whose content/,
    );
    expect(rejected[3]?.message).toMatch(/content\[0\] \(text\) without a string text/);
  });
});

describe('a journaled request (a durable engine records the step)', () => {
  it('records a malformed event as the request failing, naming it, not retryable; the deltas before it are kept', async () => {
    const provider = {
      name: 'own',
      model: 'own-model',
      async *stream() {
        yield { type: 'text.delta', delta: 'Hel' };
        yield { type: 'finish', content: [{ type: 'tool-call', toolCallId: 'c1' }], finishReason: 'tool-calls', usage };
      },
    } as Provider;
    const streamed: unknown[] = [];
    const journal: StepJournal = {
      step: async (_step, action, signal) => ({ status: 'done', value: await action(signal) }),
      streamed: (event) => streamed.push(event),
    };
    const record = await recordRequest(provider, { messages: [], tools: [] }, 1_000, journal, new AbortController().signal);
    expect(record.events).toEqual([{ type: 'text.delta', delta: 'Hel' }]);
    expect(streamed).toEqual([{ type: 'text.delta', delta: 'Hel' }]);
    expect(record.error).toMatchObject({
      message: 'the provider yielded a finish event with content[0] (tool-call) without string toolCallId, toolName and argsText',
      retryable: false,
    });
  });
});
