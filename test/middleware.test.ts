/**
 * Request middleware (docs/tracing-and-shaping.md): composition, its contract, and the built-ins — history
 * truncation, one reasoning effort for both wires (through the real SDKs over HTTP), and
 * system-prompt injection from sessionData.
 */
import { describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import {
  anthropicProvider,
  createConversationMachine,
  defineTool,
  handlerProvider,
  InvalidOptionsError,
  injectSystemPrompt,
  type Message,
  MiddlewareError,
  openaiProvider,
  type RequestMiddleware,
  reasoningEffort,
  truncateHistory,
  truncateMessages,
} from '../src/index.js';
import { expectValidHistory, runConversation } from './support/run-conversation.js';
import { scriptedModel, turnChunks } from './support/scripted-model.js';
import { anthropicSse, openaiSse, startWireServer } from './support/wire-server.js';

const user = (content: string): Message => ({ role: 'user', content });
const answer = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });
const call = (id: string): Message => ({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: id, toolName: 'add', args: {} }] });
const result = (id: string): Message => ({
  role: 'tool',
  content: [{ type: 'tool-result', toolCallId: id, toolName: 'add', result: '5' }],
});

describe('truncateMessages', () => {
  const history: Message[] = [
    { role: 'system', content: 'Keep me.' },
    user('q1'),
    answer('a1'),
    user('q2'),
    call('c1'),
    result('c1'),
    answer('a2'),
    user('q3'),
    call('c2'),
    result('c2'),
  ];

  it('keeps the system messages and the newest turns that fit, starting at a user message', () => {
    expect(truncateMessages(history, { maxMessages: 7 })).toEqual([history[0], ...history.slice(3)]);
    expect(truncateMessages(history, { maxMessages: 6 })).toEqual([history[0], ...history.slice(7)]);
    expect(truncateMessages(history, { maxMessages: 100 })).toBe(history);
  });

  it('never separates a tool call from its result, and never drops the latest user turn', () => {
    for (let maxMessages = 1; maxMessages <= 10; maxMessages++) {
      const kept = truncateMessages(history, { maxMessages });
      expectValidHistory(kept.filter((message) => message.role !== 'system'));
      expect(kept.find((message) => message.role !== 'system')?.role).toBe('user');
      expect(kept).toContain(history[7]);
    }
  });

  it('counts tokens with the given counter', () => {
    const countTokens = (message: Message) => (message.role === 'tool' ? 100 : 1);
    expect(truncateMessages(history, { maxTokens: 104, countTokens })).toEqual([history[0], ...history.slice(7)]);
    expect(truncateMessages(history, { maxTokens: 205, countTokens })).toEqual([history[0], ...history.slice(3)]);
  });

  it('rejects bad options naming them', () => {
    expect(() => truncateHistory({})).toThrow(/truncateHistory\(options\): expected maxMessages or maxTokens/);
    expect(() => truncateHistory({ maxMessages: 0 })).toThrow(/truncateHistory\.maxMessages: expected an integer ≥ 1/);
    expect(() => truncateHistory({ maxTokens: 10, countTokens: 3 as never })).toThrow(InvalidOptionsError);
    expect(() => truncateHistory({ maxTokens: 10, countTokens: 3 as never })).toThrow(
      /truncateHistory\.countTokens: expected a function \(message\) => number, got 3/,
    );
    expect(() => truncateHistory(null as never)).toThrow(
      /truncateHistory\(options\): expected an object \{ maxMessages\?, maxTokens\?, countTokens\? \}, got null/,
    );
    expect(() => truncateHistory({ maxTokens: 1.5 })).toThrow(/truncateHistory\.maxTokens: expected an integer ≥ 1, got 1\.5/);
  });
});

describe('middleware around the provider request', () => {
  it('runs in order, the first outermost, and sees the events coming back', async () => {
    const order: string[] = [];
    const tag = (name: string): RequestMiddleware =>
      async function* (request, next) {
        order.push(`${name}:before`);
        for await (const event of next(request)) {
          if (event.type === 'finish') order.push(`${name}:finish`);
          yield event;
        }
      };
    const { output } = await runConversation([{ text: 'ok' }], { middleware: [tag('outer'), tag('inner')] });
    expect(output.status).toBe('done');
    expect(order).toEqual(['outer:before', 'inner:before', 'inner:finish', 'outer:finish']);
  });

  it('shortens only the request: the run keeps its whole history', async () => {
    const previous: Message[] = [user('q1'), answer('a1'), user('q2'), answer('a2')];
    const { output, requests } = await runConversation([{ text: 'a3' }], {
      messages: previous,
      content: 'q3',
      middleware: [truncateHistory({ maxMessages: 1 })],
    });
    expect(requests[0]!.messages).toEqual([{ role: 'user', content: 'q3' }]);
    expect(output.messages).toHaveLength(6);
  });

  it('a middleware that calls next twice ends the run in error naming it, and is not retried', async () => {
    const twice: RequestMiddleware = (request, next) => {
      next(request);
      return next(request);
    };
    const { output, requests } = await runConversation([{ text: 'never' }], { middleware: [twice] });
    expect(output).toMatchObject({ status: 'error', error: { retryable: false } });
    expect(output.error?.message).toBe('middleware[0]: called next() twice for one request; retries belong to the `retry` option');
    expect(requests).toHaveLength(0);
    expect(MiddlewareError.isInstance(new MiddlewareError(0, 'x'))).toBe(true);
  });

  it('a middleware that returns no event stream ends the run in error naming it', async () => {
    const broken = (() => 42) as unknown as RequestMiddleware;
    const { output } = await runConversation([{ text: 'never' }], { middleware: [broken] });
    expect(output.error?.message).toBe('middleware[0]: must return an async iterable of provider events (next(request)), got number');
  });

  it('a middleware that throws fails the attempt like a provider error; the history is intact', async () => {
    const { output } = await runConversation([{ text: 'never' }], {
      messages: [user('q1'), answer('a1')],
      middleware: [
        () => {
          throw Object.assign(new Error('vector store down'), { status: 503 });
        },
      ],
      retry: false,
    });
    expect(output).toMatchObject({ status: 'error', error: { message: 'vector store down', status: 503 } });
    expect(output.messages).toEqual([user('q1'), answer('a1'), user('hello')]);
  });

  it('options are checked at creation', () => {
    const provider = handlerProvider(() => turnChunks({ text: 'x' }));
    expect(() => createConversationMachine({ provider, middleware: 'no' as never })).toThrow(
      /Invalid option middleware: expected an array/,
    );
    expect(() => createConversationMachine({ provider, middleware: [42 as never] })).toThrow(
      /Invalid option middleware\[0\]: expected a function/,
    );
  });

  it('injectSystemPrompt adds per-conversation text from sessionData', async () => {
    const model = scriptedModel([{ text: 'Hello Ada' }]);
    const machine = createConversationMachine({
      provider: handlerProvider(model.handler),
      system: 'You are a support agent.',
      middleware: [injectSystemPrompt(({ sessionData }) => `The customer is ${(sessionData as { name: string }).name}.`)],
    });
    const actor = createActor(machine, { input: { sessionData: { name: 'Ada' } } }).start();
    actor.send({ type: 'user.message', content: 'hi' });
    await toPromise(actor);
    expect(model.requests[0]!.messages[0]).toEqual({ role: 'system', content: 'You are a support agent.\n\nThe customer is Ada.' });
    expect(() => injectSystemPrompt('text' as never)).toThrow(InvalidOptionsError);
    expect(() => injectSystemPrompt(() => 'x', { position: 'middle' as never })).toThrow(/injectSystemPrompt\.position/);
    expect(() => injectSystemPrompt(() => 'x', { position: 'middle' as never })).toThrow(
      /injectSystemPrompt\.position: expected 'append' \| 'prepend' \| 'replace', got "middle"/,
    );
    expect(() => injectSystemPrompt(() => 'x', null as never)).toThrow(
      /injectSystemPrompt\(options\): expected an object \{ position\? \}, got null/,
    );
    expect(() => injectSystemPrompt('text' as never)).toThrow(
      /injectSystemPrompt\(build\): expected a function \(request\) => string, got "text"/,
    );
  });
});

describe('reasoningEffort: one effort, both wires (real SDKs over HTTP)', () => {
  it('OpenAI gets reasoning_effort; a provider option wins', async () => {
    const chunk = {
      id: 'c',
      object: 'chat.completion.chunk',
      model: 'o4-mini',
      choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }],
    };
    const server = await startWireServer([openaiSse([chunk]), openaiSse([chunk])]);
    try {
      for (const providerEffort of [undefined, 'high'] as const) {
        const machine = createConversationMachine({
          provider: openaiProvider({
            model: 'o4-mini',
            apiKey: 'sk-test',
            baseURL: `${server.url}/v1`,
            ...(providerEffort ? { reasoningEffort: providerEffort } : {}),
          }),
          middleware: [reasoningEffort('low')],
        });
        const actor = createActor(machine, { input: {} }).start();
        actor.send({ type: 'user.message', content: 'think' });
        expect((await toPromise(actor)).status).toBe('done');
      }
      expect(server.requests.map((request) => (request.body as { reasoning_effort?: string }).reasoning_effort)).toEqual(['low', 'high']);
    } finally {
      await server.close();
    }
  });

  it('Anthropic gets a thinking budget below max_tokens, chosen per request from sessionData', async () => {
    const events = anthropicSse([
      {
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [],
          usage: { input_tokens: 5, output_tokens: 1 },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } },
      { type: 'message_stop' },
    ]);
    const server = await startWireServer([events, events, events]);
    try {
      for (const [maxTokens, plan] of [
        [32_000, 'pro'],
        [4_096, 'pro'],
        [1_024, 'free'],
      ] as const) {
        const machine = createConversationMachine({
          provider: anthropicProvider({ model: 'claude-sonnet-4-5', maxTokens, apiKey: 'sk-ant-test', baseURL: server.url }),
          middleware: [reasoningEffort(({ sessionData }) => ((sessionData as { plan: string }).plan === 'pro' ? 'high' : 'low'))],
        });
        const actor = createActor(machine, { input: { sessionData: { plan } } }).start();
        actor.send({ type: 'user.message', content: 'think' });
        expect((await toPromise(actor)).status).toBe('done');
      }
      expect(server.requests.map((request) => (request.body as { thinking?: unknown }).thinking)).toEqual([
        { type: 'enabled', budget_tokens: 24_576 },
        { type: 'enabled', budget_tokens: 4_095 },
        undefined,
      ]);
    } finally {
      await server.close();
    }
  });

  it('rejects an unknown effort', () => {
    expect(() => reasoningEffort('extreme' as never)).toThrow(/reasoningEffort\(effort\): expected minimal \| low \| medium \| high/);
    expect(() => reasoningEffort(3 as never)).toThrow(
      /^Invalid option reasoningEffort\(effort\): expected minimal \| low \| medium \| high or a function \(request\) => effort, got 3$/,
    );
    // An effort a function chooses is checked per request.
    const chooser = reasoningEffort(() => 'extreme' as never);
    const request = { messages: [], tools: [], signal: new AbortController().signal };
    expect(() => chooser(request, () => (async function* () {})())).toThrow(
      /^Invalid option reasoningEffort\(effort\): expected minimal \| low \| medium \| high, got "extreme"$/,
    );
  });
});

describe('tools still run under middleware', () => {
  it('a tool loop completes with truncation on, history valid', async () => {
    const add = defineTool({ name: 'add', parameters: { type: 'object', properties: {} }, execute: () => 5 });
    const { output } = await runConversation(
      [{ toolCalls: [{ id: 't1', name: 'add', args: {} }] }, { toolCalls: [{ id: 't2', name: 'add', args: {} }] }, { text: 'done' }],
      { tools: [add], middleware: [truncateHistory({ maxMessages: 2 })] },
    );
    expect(output).toMatchObject({ status: 'done', iterations: 2 });
    expectValidHistory(output.messages);
  });
});
