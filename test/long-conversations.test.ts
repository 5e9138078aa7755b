/**
 * Long conversations under control (DESIGN §12), with real actors: budgets over the run and its
 * agent tree, guardrails as actors with a timeout, steering (`queue`, `user.interrupt`) and
 * provider fallback — the last across wires through the real SDKs over HTTP. The chart's side of
 * each (every exit of every new state) is proven in test/graph.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import {
  agentTool,
  anthropicProvider,
  createConversationMachine,
  defineTool,
  handlerProvider,
  InvalidOptionsError,
  openaiProvider,
  type ConversationEmittedEvent,
  type ConversationOptions,
  type Guardrail,
  type Message,
  type Provider,
} from '../src/index.js';
import { deferred, eventsOf, expectValidHistory, runConversation } from './support/run-conversation.js';
import { scriptedModel, type ScriptedTurn } from './support/scripted-model.js';
import { expectValidForBothWires } from './support/history.js';
import { anthropicSse, jsonResponse, startWireServer, type WireServer } from './support/wire-server.js';

const fastRetry = { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5, jitter: false };

const lookup = defineTool({
  name: 'lookup',
  description: 'Look something up',
  parameters: { type: 'object', properties: { q: { type: 'string' } } },
  execute: ({ q }) => `found ${String(q)}`,
});

/** A tool round per turn, then an answer: `turns` tool rounds in all. */
const toolTurns = (rounds: number, answer = 'done'): ScriptedTurn[] => [
  ...Array.from({ length: rounds }, (_, index) => ({ toolCalls: [{ id: `call_${index}`, name: 'lookup', args: { q: `q${index}` } }] })),
  { text: answer },
];

function start(options: Partial<ConversationOptions> & { provider: ConversationOptions['provider'] }, content = 'hello') {
  const machine = createConversationMachine({ retry: fastRetry, ...options });
  const actor = createActor(machine, { input: { messages: [] } });
  const events: ConversationEmittedEvent[] = [];
  actor.on('*', (event) => events.push(event));
  actor.start();
  actor.send({ type: 'user.message', content });
  return { actor, events, done: toPromise(actor) };
}

const servers: WireServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe('budget', () => {
  it('maxTotalTokens: the response that crosses it halts the run (budget) and its calls get results naming the limit', async () => {
    // Each scripted response costs 15 tokens: 15, 30, then 45 ≥ 40.
    const { output, events, requests } = await runConversation(toolTurns(5), { tools: [lookup], budget: { maxTotalTokens: 40 } });
    expect(output).toMatchObject({ status: 'halted', reason: 'budget', budget: { limit: 'maxTotalTokens', max: 40, used: 45 } });
    expect(requests).toHaveLength(3);
    expectValidForBothWires(output.messages);
    const results = output.messages.at(-1);
    expect(results?.role === 'tool' && results.content.map((part) => [part.result, part.isError])).toEqual([
      ['not executed: the run reached its budget (maxTotalTokens)', true],
    ]);
    expect(eventsOf(events, 'tool.result').at(-1)).toMatchObject({ toolCallId: 'call_2', isError: true });
  });

  it('a final answer that crosses it still ends done: nothing more is spent', async () => {
    const { output } = await runConversation(toolTurns(1), { tools: [lookup], budget: { maxTotalTokens: 20 } });
    expect(output).toMatchObject({ status: 'done', text: 'done', usage: { totalTokens: 30 } });
    expect(output.budget).toBeUndefined();
  });

  it('no request starts once the budget is spent: failed attempts count too', async () => {
    const failing = { error: Object.assign(new Error('unavailable'), { status: 503 }) };
    // The first answer fits (15); the next request fails twice, then the budget is re-checked before each attempt.
    const turns: ScriptedTurn[] = [{ toolCalls: [{ id: 'call_a', name: 'lookup', args: {} }] }, failing, failing, { text: 'never' }];
    const { output, requests } = await runConversation(turns, { tools: [lookup], budget: { maxTotalTokens: 15 } });
    expect(output).toMatchObject({ status: 'halted', reason: 'budget', budget: { limit: 'maxTotalTokens', used: 15 } });
    expect(requests).toHaveLength(1);
    expectValidHistory(output.messages);
  });

  it('maxCostUsd prices with the built-in table (or `prices`), and refuses a model it cannot price at creation', async () => {
    const model = scriptedModel(toolTurns(5));
    // gpt-4o-mini: 10 input tokens at $0.15/M + 5 output at $0.60/M = $0.0000045 a response.
    const provider: Provider = { ...handlerProvider(model.handler), model: 'gpt-4o-mini' };
    const { done } = start({ provider, tools: [lookup], budget: { maxCostUsd: 0.00001 } });
    const output = await done;
    expect(output).toMatchObject({ status: 'halted', reason: 'budget', budget: { limit: 'maxCostUsd', max: 0.00001 } });
    expect(output.budget?.used).toBeCloseTo(0.0000135, 10);
    expect(output.cost?.total).toBeCloseTo(0.0000135, 10);
    expect(model.requests).toHaveLength(3);

    expect(() => createConversationMachine({ provider: handlerProvider(model.handler), budget: { maxCostUsd: 1 } })).toThrow(
      /Invalid option provider: expected a provider whose model has a price \(budget.maxCostUsd needs one\)/,
    );
    expect(() => createConversationMachine({ provider: { ...provider, model: 'my-finetune' }, budget: { maxCostUsd: 1 } })).toThrow(
      /my-finetune/,
    );
    // `prices` extends the table.
    expect(() =>
      createConversationMachine({
        provider: { ...provider, model: 'my-finetune' },
        budget: { maxCostUsd: 1 },
        prices: { 'my-finetune': { input: 1, output: 2 } },
      }),
    ).not.toThrow();
  });

  it('maxDurationMs: the time limit ends the run wherever it is, the running tool stopped and answered', async () => {
    const stopped = deferred<string>();
    const hang = defineTool({
      name: 'hang',
      description: 'Never ends on its own',
      parameters: { type: 'object', properties: {} },
      execute: (_args, { signal }) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => {
            stopped.resolve('aborted');
            reject(signal.reason);
          }),
        ),
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'call_hang', name: 'hang', args: {} }] }]);
    const { done, events } = start({ provider: handlerProvider(model.handler), tools: [hang], budget: { maxDurationMs: 150 } });
    const output = await done;
    expect(await stopped.promise).toBe('aborted');
    expect(output).toMatchObject({ status: 'halted', reason: 'budget', budget: { limit: 'maxDurationMs', max: 150 } });
    expect(output.budget!.used).toBeGreaterThanOrEqual(150);
    expectValidForBothWires(output.messages);
    expect(eventsOf(events, 'tool.result')).toEqual([
      expect.objectContaining({
        toolCallId: 'call_hang',
        isError: true,
        result: 'not executed: the run reached its budget (maxDurationMs)',
      }),
    ]);
  });

  it('the time limit survives a restore: a run persisted mid-tool and restored still stops at its deadline', async () => {
    const hang = defineTool({
      name: 'hang',
      description: 'Never ends on its own',
      parameters: { type: 'object', properties: {} },
      idempotent: true,
      execute: (_args, { signal }) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'call_hang', name: 'hang', args: {} }] }]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools: [hang], budget: { maxDurationMs: 300 } });
    const startedAt = Date.now();
    const first = createActor(machine, { input: {} }).start();
    first.send({ type: 'user.message', content: 'go' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const persisted = first.getPersistedSnapshot();
    first.stop();
    // Down past the deadline: restored, the run is out of time at once. A deadline counted again
    // from the restore would keep it running 300 ms more — a margin no loaded machine eats up.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, startedAt + 350 - Date.now())));
    const restoredAt = Date.now();
    const second = createActor(machine, { snapshot: JSON.parse(JSON.stringify(persisted)) }).start();
    const output = await toPromise(second);
    expect(output).toMatchObject({ status: 'halted', reason: 'budget', budget: { limit: 'maxDurationMs' } });
    expect(Date.now() - restoredAt).toBeLessThan(300);
    expectValidHistory(output.messages);
  });

  it('over an agent tree: a child gets what is left and stops itself; a child spending past it halts the root at once', async () => {
    // The child makes tool rounds of 15 tokens each; the root has 40.
    const childModel = scriptedModel(toolTurns(6, 'child done'));
    const child = createConversationMachine({ provider: handlerProvider(childModel.handler), tools: [lookup], retry: fastRetry });
    const rootModel = scriptedModel([{ toolCalls: [{ id: 'call_ask', name: 'ask', args: { prompt: 'dig' } }] }, { text: 'root done' }]);
    const { done, events } = start({
      provider: handlerProvider(rootModel.handler),
      tools: [agentTool(child, { name: 'ask' })],
      budget: { maxTotalTokens: 40 },
    });
    const output = await done;
    // Root 15 + child: 15 left → the child halts itself after its second response (30 ≥ 25); the root then sees 45.
    expect(output).toMatchObject({ status: 'halted', reason: 'budget', budget: { limit: 'maxTotalTokens', max: 40 } });
    expect(output.budget!.used).toBeGreaterThanOrEqual(40);
    expect(childModel.requests.length).toBeLessThanOrEqual(2);
    expectValidForBothWires(output.messages);
    const finished = eventsOf(events, 'agent.finished')[0];
    expect(finished?.output.status).toBe('halted');
    expect(rootModel.requests).toHaveLength(1);
  });

  it('bad budgets are options errors naming the option', () => {
    const provider = handlerProvider(scriptedModel([]).handler);
    for (const [budget, path] of [
      [{ maxTotalTokens: -1 }, 'budget.maxTotalTokens'],
      [{ maxTotalTokens: Number.POSITIVE_INFINITY }, 'budget.maxTotalTokens'],
      [{ maxCostUsd: Number.NaN }, 'budget.maxCostUsd'],
      [{ maxDurationMs: 0 }, 'budget.maxDurationMs'],
      ['lots', 'budget'],
    ] as const) {
      let thrown: unknown;
      try {
        createConversationMachine({ provider, budget: budget as never });
      } catch (error) {
        thrown = error;
      }
      expect(InvalidOptionsError.isInstance(thrown), JSON.stringify(budget)).toBe(true);
      expect((thrown as Error).message).toContain(`Invalid option ${path}:`);
    }
  });
});

describe('guardrails', () => {
  const blocklist = (name: string, word: string): Guardrail => ({
    name,
    check: (text) => (text.includes(word) ? { tripped: true, reason: `mentions ${word}` } : { tripped: false }),
  });

  it('an input guardrail that trips halts the run before any request, naming it', async () => {
    const { output, requests, events } = await runConversation([{ text: 'never' }], {
      content: 'tell me about bananas',
      guardrails: { input: [blocklist('fruit', 'banana')] },
    });
    expect(output).toMatchObject({
      status: 'halted',
      reason: 'guardrail',
      guardrail: { name: 'fruit', phase: 'input', reason: 'mentions banana' },
    });
    expect(requests).toHaveLength(0);
    expect(eventsOf(events, 'guardrail.checked')).toEqual([
      { type: 'guardrail.checked', name: 'fruit', phase: 'input', tripped: true, reason: 'mentions banana' },
    ]);
  });

  it('output guardrails check the final answer before done, in order; the first to trip halts', async () => {
    const seen: string[] = [];
    const spy: Guardrail = {
      name: 'spy',
      check: (text, { messages }) => {
        seen.push(`${text}|${messages.length}`);
        return { tripped: false };
      },
    };
    const passed = await runConversation([{ text: 'all fine' }], { guardrails: { output: [spy, blocklist('secret', 'password')] } });
    expect(passed.output.status).toBe('done');
    expect(seen).toEqual(['all fine|2']);
    expect(eventsOf(passed.events, 'guardrail.checked').map((event) => [event.name, event.tripped])).toEqual([
      ['spy', false],
      ['secret', false],
    ]);
    const tripped = await runConversation([{ text: 'the password is hunter2' }], {
      guardrails: { output: [spy, blocklist('secret', 'password')] },
    });
    expect(tripped.output).toMatchObject({ status: 'halted', reason: 'guardrail', guardrail: { name: 'secret', phase: 'output' } });
    // The answer was given (and streamed): it stays in the history, nothing is lost.
    expect(tripped.output.messages.at(-1)).toMatchObject({ role: 'assistant' });
  });

  it('a guardrail that throws, returns nonsense or times out ends the run in error, never a silent pass', async () => {
    const thrower: Guardrail = {
      name: 'thrower',
      check: () => {
        throw new Error('classifier down');
      },
    };
    const nonsense: Guardrail = { name: 'nonsense', check: () => 'yes' as never };
    let aborted = false;
    const slow: Guardrail = {
      name: 'slow',
      timeoutMs: 50,
      check: (_text, { signal }) => new Promise(() => signal.addEventListener('abort', () => (aborted = true))),
    };
    const threw = await runConversation([{ text: 'x' }], { guardrails: { input: [thrower] } });
    expect(threw.output).toMatchObject({
      status: 'error',
      error: { name: 'GuardrailError', code: 'guardrail_error', message: 'input guardrail "thrower" failed: classifier down' },
    });
    const odd = await runConversation([{ text: 'x' }], { guardrails: { output: [nonsense] } });
    expect(odd.output.error?.message).toBe(
      'output guardrail "nonsense" failed: guardrail "nonsense" returned "yes"; expected { tripped: boolean, reason? }',
    );
    const timedOut = await runConversation([{ text: 'x' }], { guardrails: { input: [slow] } });
    expect(timedOut.output).toMatchObject({
      status: 'error',
      error: { code: 'guardrail_timeout', message: 'input guardrail "slow" did not answer within 50 ms' },
    });
    expect(aborted).toBe(true);
    expect(timedOut.requests).toHaveLength(0);
  });

  it('a guardrail may call a model itself', async () => {
    const judge = scriptedModel([{ text: 'UNSAFE: asks for a weapon' }]);
    const judgeMachine = createConversationMachine({ provider: handlerProvider(judge.handler) });
    const moderated: Guardrail = {
      name: 'moderation',
      check: async (text) => {
        const actor = createActor(judgeMachine, { input: {} }).start();
        actor.send({ type: 'user.message', content: `Is this safe? ${text}` });
        const verdict = await toPromise(actor);
        return { tripped: verdict.text.startsWith('UNSAFE'), reason: verdict.text };
      },
    };
    const { output, requests } = await runConversation([{ text: 'never' }], {
      guardrails: { input: [moderated] },
      content: 'build me a weapon',
    });
    expect(output).toMatchObject({ status: 'halted', reason: 'guardrail', guardrail: { reason: 'UNSAFE: asks for a weapon' } });
    expect(requests).toHaveLength(0);
    expect(judge.requests[0]?.messages.at(-1)).toMatchObject({ content: 'Is this safe? build me a weapon' });
  });

  it('bad guardrails are options errors naming the option', () => {
    const provider = handlerProvider(scriptedModel([]).handler);
    expect(() => createConversationMachine({ provider, guardrails: { input: [{ name: 'x' } as never] } })).toThrow(
      /Invalid option guardrails\.input\[0\]\.check: expected a function check/,
    );
    expect(() => createConversationMachine({ provider, guardrails: { output: [{ check: () => ({ tripped: false }) } as never] } })).toThrow(
      /Invalid option guardrails\.output\[0\]\.name/,
    );
    expect(() =>
      createConversationMachine({ provider, guardrails: { input: [{ name: 'x', check: () => ({ tripped: false }), timeoutMs: -5 }] } }),
    ).toThrow(/guardrails\.input\[0\]\.timeoutMs/);
  });
});

describe('steering', () => {
  it("'queue': a message sent while tools run joins the history after the round's results, then the model answers it", async () => {
    const release = deferred();
    const slow = defineTool({
      name: 'slow',
      description: 'slow',
      parameters: { type: 'object', properties: {} },
      execute: async () => {
        await release.promise;
        return 'slow result';
      },
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'call_slow', name: 'slow', args: {} }] }, { text: 'answered both' }]);
    const { actor, events, done } = start({ provider: handlerProvider(model.handler), tools: [slow], steering: 'queue' });
    await waitForEvent(events, 'tool.started');
    actor.send({ type: 'user.message', content: 'also, in metric please' });
    expect(eventsOf(events, 'user.message.queued')).toEqual([
      { type: 'user.message.queued', content: 'also, in metric please', queued: 1 },
    ]);
    release.resolve();
    const output = await done;
    expect(output.status).toBe('done');
    expect(model.requests[1]!.messages.slice(-2)).toEqual([
      expect.objectContaining({ role: 'tool' }),
      { role: 'user', content: 'also, in metric please' },
    ]);
    expectValidForBothWires(output.messages);
  });

  it("'queue': a message sent as the final answer streams gets its own request instead of being lost", async () => {
    const model = scriptedModel([(request) => slowText('first answer', request.signal), { text: 'second answer' }]);
    const { actor, events, done } = start({ provider: handlerProvider(model.handler), steering: 'queue' });
    await waitForEvent(events, 'text.delta');
    actor.send({ type: 'user.message', content: 'and one more thing' });
    const output = await done;
    expect(output).toMatchObject({ status: 'done', text: 'second answer' });
    expect(output.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it("'queue' through a durable host: a queued message is stored, and after a restart the recovered run answers it", async () => {
    const { createConversationHost, memoryStore } = await import('../src/index.js');
    const shared = memoryStore();
    const started = deferred();
    const hang = defineTool({
      name: 'slow',
      description: 'slow',
      parameters: { type: 'object', properties: {} },
      idempotent: true,
      execute: () => {
        started.resolve();
        return new Promise<string>(() => undefined);
      },
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'call_slow', name: 'slow', args: {} }] }]);
    const machineOf = (provider: Provider) => createConversationMachine({ provider, tools: [hang], steering: 'queue', toolTimeoutMs: 200 });
    const first = createConversationHost({
      machine: machineOf(handlerProvider(model.handler)),
      store: { ...shared, close: async () => undefined },
    });
    await first.send('c', { type: 'user.message', content: 'start' });
    await started.promise;
    await first.send('c', { type: 'user.message', content: 'and this, please' });
    const stored = JSON.parse((await shared.load('c'))!.snapshot) as { context: { control: { queued: unknown[] } } };
    expect(stored.context.control.queued).toEqual(['and this, please']);
    await first.close().catch(() => undefined);

    const later = scriptedModel([{ text: 'answered the queued message' }]);
    const second = createConversationHost({ machine: machineOf(handlerProvider(later.handler)), store: shared });
    expect((await second.recover()).resumed).toEqual(['c']);
    const output = await second.result('c');
    expect(output).toMatchObject({ status: 'done', text: 'answered the queued message' });
    expect(later.requests[0]!.messages.at(-1)).toEqual({ role: 'user', content: 'and this, please' });
    expectValidForBothWires(output.messages);
    await second.close();
  });

  it("the default ('reject') turns a message during a run away with event.rejected", async () => {
    const model = scriptedModel([(request) => slowText('busy', request.signal)]);
    const { actor, events, done } = start({ provider: handlerProvider(model.handler) });
    await waitForEvent(events, 'text.delta');
    actor.send({ type: 'user.message', content: 'hello?' });
    expect(eventsOf(events, 'event.rejected')[0]?.message).toMatch(/^user.message is not accepted while the run is/);
    expect((await done).messages).toHaveLength(2);
  });

  it('user.interrupt aborts the request in flight (partial output discarded) and continues with the message', async () => {
    let signal: AbortSignal | undefined;
    const model = scriptedModel([
      (request) => {
        signal = request.signal;
        return slowText('a long answer that goes on', request.signal);
      },
      { text: 'short answer' },
    ]);
    const { actor, events, done } = start({ provider: handlerProvider(model.handler) });
    await waitForEvent(events, 'text.delta');
    actor.send({ type: 'user.interrupt', content: 'stop, be brief' });
    const output = await done;
    expect(signal?.aborted).toBe(true);
    expect(eventsOf(events, 'request.interrupted')).toEqual([{ type: 'request.interrupted', state: 'requesting', discardPartial: true }]);
    expect(output).toMatchObject({ status: 'done', text: 'short answer' });
    expect(output.messages).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'user', content: 'stop, be brief' },
      expect.objectContaining({ role: 'assistant' }),
    ]);
  });

  it('user.interrupt during a tool round stops the tools (their signals fire); each call gets a result', async () => {
    let toolSignal: AbortSignal | undefined;
    const hang = defineTool({
      name: 'hang',
      description: 'hangs',
      parameters: { type: 'object', properties: {} },
      execute: (_args, { signal }) => {
        toolSignal = signal;
        return new Promise(() => {});
      },
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'call_hang', name: 'hang', args: {} }] }, { text: 'ok, changed course' }]);
    const { actor, events, done } = start({ provider: handlerProvider(model.handler), tools: [hang] });
    await waitForEvent(events, 'tool.started');
    actor.send({ type: 'user.interrupt', content: 'never mind that' });
    const output = await done;
    expect(toolSignal?.aborted).toBe(true);
    expect(output).toMatchObject({ status: 'done', text: 'ok, changed course' });
    expect(eventsOf(events, 'tool.result')).toEqual([
      expect.objectContaining({ toolCallId: 'call_hang', isError: true, result: 'cancelled: the user interrupted the run' }),
    ]);
    expectValidForBothWires(output.messages);
  });

  it('an empty interrupt is rejected like an empty message, and nothing is lost', async () => {
    const model = scriptedModel([(request) => slowText('busy answer', request.signal)]);
    const { actor, events, done } = start({ provider: handlerProvider(model.handler) });
    await waitForEvent(events, 'text.delta');
    actor.send({ type: 'user.interrupt', content: '  ' });
    expect(eventsOf(events, 'event.rejected')[0]).toMatchObject({ eventType: 'user.interrupt' });
    expect((await done).text).toBe('busy answer');
  });
});

describe('fallback', () => {
  const unavailable = { error: Object.assign(new Error('unavailable'), { status: 503 }) };

  it('when the retries on one provider are used up on a retryable error, the next takes the same request', async () => {
    const primary = scriptedModel([unavailable, unavailable, unavailable]);
    const secondary = scriptedModel([{ text: 'from the secondary' }]);
    const { events, done } = start({
      provider: [
        { ...handlerProvider(primary.handler), name: 'primary' },
        { ...handlerProvider(secondary.handler), name: 'secondary' },
      ],
    });
    const output = await done;
    expect(output).toMatchObject({ status: 'done', text: 'from the secondary' });
    expect(primary.requests).toHaveLength(3);
    expect(secondary.requests[0]!.messages).toEqual(primary.requests[0]!.messages);
    expect(eventsOf(events, 'provider.fallback')).toEqual([
      {
        type: 'provider.fallback',
        from: 'primary',
        to: 'secondary',
        error: expect.objectContaining({ code: 'server', status: 503 }),
        discardPartial: false,
      },
    ]);
    expect(eventsOf(events, 'request.started').map((event) => [event.provider, event.attempt])).toEqual([
      ['primary', 1],
      ['primary', 2],
      ['primary', 3],
      ['secondary', 1],
    ]);
  });

  it('a fatal error does not fall back, and the last provider failing ends the run in error', async () => {
    const unauthorized = scriptedModel([{ error: Object.assign(new Error('bad key'), { status: 401 }) }]);
    const unused = scriptedModel([{ text: 'never' }]);
    const fatal = await start({ provider: [handlerProvider(unauthorized.handler), handlerProvider(unused.handler)] }).done;
    expect(fatal).toMatchObject({ status: 'error', error: { code: 'authentication' } });
    expect(unused.requests).toHaveLength(0);

    const first = scriptedModel([unavailable, unavailable, unavailable]);
    const second = scriptedModel([unavailable, unavailable, unavailable]);
    const exhausted = await start({ provider: [handlerProvider(first.handler), handlerProvider(second.handler)] }).done;
    expect(exhausted).toMatchObject({ status: 'error', error: { code: 'server' } });
    expect(second.requests).toHaveLength(3);
  });

  it('each new request starts with the first provider again', async () => {
    const primary = scriptedModel([unavailable, unavailable, unavailable, { text: 'primary is back' }]);
    const secondary = scriptedModel([{ toolCalls: [{ id: 'call_1', name: 'lookup', args: {} }] }]);
    const output = await start({ provider: [handlerProvider(primary.handler), handlerProvider(secondary.handler)], tools: [lookup] }).done;
    expect(output).toMatchObject({ status: 'done', text: 'primary is back' });
    expect(primary.requests).toHaveLength(4);
  });

  it('OpenAI → Anthropic through the real SDKs: the history stays valid across wires', async () => {
    // Down for the whole run: each request tries it first (twice), then falls back.
    const openai = await startWireServer(
      Array.from({ length: 4 }, () => jsonResponse(500, { error: { message: 'server error', type: 'server_error' } })),
    );
    servers.push(openai);
    const anthropic = await startWireServer([
      anthropicSse([
        {
          type: 'message_start',
          message: {
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            model: 'claude-haiku-4-5',
            content: [],
            stop_reason: null,
            usage: { input_tokens: 12, output_tokens: 1 },
          },
        },
        { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"q":"tides"}' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } },
        { type: 'message_stop' },
      ]),
      anthropicSse([
        {
          type: 'message_start',
          message: {
            id: 'msg_2',
            type: 'message',
            role: 'assistant',
            model: 'claude-haiku-4-5',
            content: [],
            stop_reason: null,
            usage: { input_tokens: 30, output_tokens: 1 },
          },
        },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'High tide at noon.' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 6 } },
        { type: 'message_stop' },
      ]),
    ]);
    servers.push(anthropic);
    const { done, events } = start({
      provider: [
        openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: `${openai.url}/v1` }),
        anthropicProvider({ model: 'claude-haiku-4-5', apiKey: 'sk-ant-test', baseURL: anthropic.url, maxTokens: 256 }),
      ],
      tools: [lookup],
      retry: { ...fastRetry, maxRetries: 1 },
    });
    const output = await done;
    expect(output).toMatchObject({ status: 'done', text: 'High tide at noon.' });
    expect(openai.requests).toHaveLength(4);
    expect(anthropic.requests).toHaveLength(2);
    // Anthropic gets the history the failed OpenAI requests were asked with, then its own tool round.
    expect(JSON.parse(anthropic.requests[1]!.rawBody).messages.map((message: { role: string }) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
    ]);
    expect(eventsOf(events, 'provider.fallback')[0]).toMatchObject({ from: 'openai:gpt-4o-mini', to: 'anthropic:claude-haiku-4-5' });
    expectValidForBothWires(output.messages);
  });

  it('an empty provider list is an options error', () => {
    expect(() => createConversationMachine({ provider: [] })).toThrow(
      /Invalid option provider: expected a Provider or a non-empty array of providers/,
    );
    expect(() => createConversationMachine({ provider: [handlerProvider(scriptedModel([]).handler), 'nope' as never] })).toThrow(
      /Invalid option provider\[1\]: expected a Provider/,
    );
  });
});

describe('context window', () => {
  /** An earlier conversation: six turns of question and answer (about 40 tokens each). */
  const earlier = Array.from({ length: 6 }, (_, index) => [
    { role: 'user' as const, content: `question ${index}: ${'tell me about the tides '.repeat(5)}` },
    { role: 'assistant' as const, content: [{ type: 'text' as const, text: `answer ${index}: ${'the moon pulls the sea '.repeat(5)}` }] },
  ]).flat();
  const isSummaryRequest = (request: { messages: Array<{ role: string; content?: unknown }> }) =>
    request.messages[0]?.role === 'system' && String(request.messages[0]?.content).startsWith('You summarize the earlier part');

  it("'summarize': a prompt over the window is compacted first — the oldest messages become a summary, the last keepLast stay", async () => {
    const model = scriptedModel([
      { text: 'The user asked six questions about tides; the moon pulls the sea.' },
      { text: 'Spring tides are the largest.' },
    ]);
    const { actor, events, done } = startWith(model, { context: { maxInputTokens: 200, keepLast: 2 } }, earlier, 'What are spring tides?');
    const output = await done;
    expect(output).toMatchObject({ status: 'done', text: 'Spring tides are the largest.' });
    expect(isSummaryRequest(model.requests[0]!)).toBe(true);
    expect(model.requests[0]!.tools).toEqual([]);
    const compacted = eventsOf(events, 'context.compacted');
    expect(compacted).toEqual([
      {
        type: 'context.compacted',
        removedMessages: 11,
        keptMessages: 2,
        beforeTokens: expect.any(Number),
        afterTokens: expect.any(Number),
        cause: 'window',
      },
    ]);
    expect(compacted[0]!.afterTokens).toBeLessThan(compacted[0]!.beforeTokens);
    // The request after: the summary, then the kept tail (the last answer and the new question).
    expect(model.requests[1]!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(String(model.requests[1]!.messages[0]!.content)).toContain('The user asked six questions about tides');
    expect(output.messages).toHaveLength(4);
    // The summary's tokens are the run's too.
    expect(output.usage.totalTokens).toBe(30);
    expectValidForBothWires(output.messages);
    expect(actor.getSnapshot().status).toBe('done');
  });

  it("'drop' and a strategy function replace the oldest messages without a request; a tool call never loses its result", async () => {
    const withTools = [
      ...earlier.slice(0, 4),
      {
        role: 'assistant' as const,
        content: [{ type: 'tool-call' as const, toolCallId: 'call_old', toolName: 'lookup', args: { q: 'tides' } }],
      },
      {
        role: 'tool' as const,
        content: [{ type: 'tool-result' as const, toolCallId: 'call_old', toolName: 'lookup', result: 'found tides' }],
      },
      ...earlier.slice(4),
    ];
    const dropped = scriptedModel([{ text: 'ok' }]);
    const drop = await startWith(dropped, { context: { maxInputTokens: 150, keepLast: 3, strategy: 'drop' } }, withTools, 'next?').done;
    expect(drop.status).toBe('done');
    expect(dropped.requests).toHaveLength(1);
    expectValidForBothWires(drop.messages);
    let given: unknown[] = [];
    const strategyModel = scriptedModel([{ text: 'ok' }]);
    const custom = await startWith(
      strategyModel,
      {
        context: {
          maxInputTokens: 150,
          keepLast: 4,
          strategy: (oldest) => {
            given = oldest;
            return [{ role: 'user', content: `(${oldest.length} earlier messages, kept by my own strategy)` }];
          },
        },
      },
      withTools,
      'next?',
    ).done;
    expect(custom.status).toBe('done');
    expect(strategyModel.requests[0]!.messages[0]).toEqual({
      role: 'user',
      content: `(${given.length} earlier messages, kept by my own strategy)`,
    });
    // The tail starts at a user message or an assistant message, never at a tool result without its call.
    expect(strategyModel.requests[0]!.messages.findIndex((message) => message.role === 'tool')).not.toBe(1);
    expectValidForBothWires(custom.messages);
  });

  it("a provider's context-length error compacts once and the request is made again; a second one fails as before", async () => {
    const tooLong = () => ({
      error: Object.assign(
        new Error("This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens."),
        {
          status: 400,
          error: { code: 'context_length_exceeded', type: 'invalid_request_error', param: 'messages' },
        },
      ),
    });
    // A window far above the estimate: only the provider's error makes the run compact.
    const recovered = scriptedModel([tooLong(), { text: 'short summary' }, { text: 'answered after compaction' }]);
    const { events, done } = startWith(recovered, { context: { maxInputTokens: 100_000, keepLast: 2 } }, earlier, 'and now?');
    const output = await done;
    expect(output).toMatchObject({ status: 'done', text: 'answered after compaction' });
    expect(eventsOf(events, 'context.compacted')[0]).toMatchObject({ cause: 'context_length', removedMessages: 11 });
    expect(eventsOf(events, 'request.retry')).toEqual([]);

    const twice = scriptedModel([tooLong(), { text: 'short summary' }, tooLong()]);
    const failed = await startWith(twice, { context: { maxInputTokens: 100_000, keepLast: 2 } }, earlier, 'and now?').done;
    expect(failed).toMatchObject({ status: 'error', error: { code: 'context_length' } });
    expect(twice.requests).toHaveLength(3);
    expectValidForBothWires(failed.messages);
  });

  it('a summary that comes back empty ends the run in error naming compaction, the history untouched; a failing summary is retried', async () => {
    const empty = scriptedModel([{ text: '   ' }]);
    const history = [...earlier];
    const output = await startWith(empty, { context: { maxInputTokens: 200, keepLast: 2 } }, history, 'next?').done;
    expect(output).toMatchObject({ status: 'error', error: { name: 'CompactionError', code: 'compaction_failed' } });
    expect(output.error?.message).toBe('compaction: the summary is empty: the model answered with no text; the history was left as it was');
    expect(output.messages).toEqual([...history, { role: 'user', content: 'next?' }]);

    const unavailable = { error: Object.assign(new Error('unavailable'), { status: 503 }) };
    const flaky = scriptedModel([unavailable, { text: 'a summary' }, { text: 'fine' }]);
    const retried = await startWith(flaky, { context: { maxInputTokens: 200, keepLast: 2 } }, earlier, 'next?').done;
    expect(retried).toMatchObject({ status: 'done', text: 'fine' });
    const down = scriptedModel([unavailable, unavailable, unavailable]);
    const failed = await startWith(down, { context: { maxInputTokens: 200, keepLast: 2 } }, earlier, 'next?').done;
    expect(failed).toMatchObject({ status: 'error', error: { code: 'server' } });
    expect(failed.error?.message).toMatch(/^compaction: .*the history was left as it was$/);
  });

  it('on a durable host the log keeps what compaction removed: nothing is lost', async () => {
    const { createConversationHost, memoryStore } = await import('../src/index.js');
    const store = memoryStore();
    const model = scriptedModel([{ text: 'summary of the start' }, { text: 'done' }]);
    const host = createConversationHost({
      machine: createConversationMachine({ provider: handlerProvider(model.handler), context: { maxInputTokens: 200, keepLast: 2 } }),
      store,
    });
    await store.save({
      id: 'c',
      schemaVersion: 5,
      machineId: 'conversation',
      status: 'done',
      snapshot: JSON.stringify(finishedSnapshot(earlier)),
      revision: 1,
      owner: 'x',
      updatedAt: 1,
    });
    await host.send('c', { type: 'user.message', content: 'next?' });
    await host.result('c');
    const log = await store.readLog('c');
    const compacted = log.map(({ event }) => event).find((event) => event.type === 'context.compacted');
    expect(compacted && 'removed' in compacted ? compacted.removed : []).toEqual(earlier.slice(0, 11));
    await host.close();
  });

  it('bad context options are options errors naming the option', () => {
    const provider = handlerProvider(scriptedModel([]).handler);
    expect(() => createConversationMachine({ provider, context: { maxInputTokens: 10, keepLast: 6 } })).toThrow(
      /Invalid option context\.maxInputTokens: expected a number of tokens > 30: the system prompt and tool descriptions \(about 0 tokens\) and the 6 kept messages/,
    );
    expect(() => createConversationMachine({ provider, context: { maxInputTokens: 1000, strategy: 'forget' as never } })).toThrow(
      /Invalid option context\.strategy: expected 'summarize', 'drop' or a function/,
    );
    expect(() => createConversationMachine({ provider, context: { maxInputTokens: -1 } })).toThrow(
      /Invalid option context\.maxInputTokens/,
    );
    expect(() => createConversationMachine({ provider, context: { maxInputTokens: 1000, keepLast: -1 } })).toThrow(
      /Invalid option context\.keepLast/,
    );
  });
});

describe('no crash paths', () => {
  it('budgets, guardrails, steering and fallback together never leave an unhandled rejection', async () => {
    // test/support/no-crash.ts fails the test on anything that escapes.
    const thrower: Guardrail = { name: 'thrower', check: async () => Promise.reject(new Error('down')) };
    const broken = await runConversation([{ text: 'x' }], {
      guardrails: { output: [thrower] },
      steering: 'queue',
      budget: { maxTotalTokens: 10 },
    });
    expect(broken.output.status).toBe('error');
    const spent = await runConversation(toolTurns(3), {
      tools: [lookup],
      budget: { maxTotalTokens: 16, maxDurationMs: 5_000 },
      steering: 'queue',
    });
    expect(spent.output.reason).toBe('budget');
  });
});

/** A run of `model` over `history` with `options`, asked `content`. */
function startWith(model: ReturnType<typeof scriptedModel>, options: Partial<ConversationOptions>, history: Message[], content: string) {
  const machine = createConversationMachine({ provider: handlerProvider(model.handler), retry: fastRetry, ...options });
  const actor = createActor(machine, { input: { messages: history } });
  const events: ConversationEmittedEvent[] = [];
  actor.on('*', (event) => events.push(event));
  actor.start();
  actor.send({ type: 'user.message', content });
  return { actor, events, done: toPromise(actor) };
}

/** A persisted snapshot of a finished run with this history, as a host stores it. */
function finishedSnapshot(messages: Message[]) {
  const machine = createConversationMachine({ provider: handlerProvider(scriptedModel([]).handler) });
  const actor = createActor(machine, { input: { messages } }).start();
  actor.send({ type: 'cancel' });
  return actor.getPersistedSnapshot();
}

/** Streams `text` slowly (a piece every 20 ms) until aborted. */
async function* slowText(text: string, signal: AbortSignal) {
  const { turnChunks } = await import('./support/scripted-model.js');
  for await (const chunk of turnChunks({ text })) {
    if (signal.aborted) throw signal.reason;
    await new Promise((resolve) => setTimeout(resolve, 20));
    yield chunk;
  }
}

async function waitForEvent(events: ConversationEmittedEvent[], type: ConversationEmittedEvent['type']): Promise<void> {
  for (let tries = 0; tries < 500 && !events.some((event) => event.type === type); tries++)
    await new Promise((resolve) => setTimeout(resolve, 5));
  expect(
    events.some((event) => event.type === type),
    `waiting for ${type}`,
  ).toBe(true);
}
