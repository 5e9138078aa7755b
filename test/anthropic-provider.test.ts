/**
 * anthropicProvider through the real `@anthropic-ai/sdk` over real HTTP (a local wire server),
 * plus the pure history conversion. Hand-written fixtures: test/fixtures/anthropic (see README).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, test } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { createConversationMachine } from '../src/machines/chart/conversation.js';
import { InvalidOptionsError } from '../src/errors/invalid-options-error.js';
import {
  anthropicProvider,
  emptyToolResultText,
  toAnthropicMessages,
  toAnthropicTools,
  type AnthropicProviderOptions,
} from '../src/providers/anthropic/index.js';
import { ProviderError } from '../src/model/errors/provider-error.js';
import type { Message } from '../src/model/messages.js';
import type { ProviderEvent, ProviderRequest, ToolDescription } from '../src/model/provider.js';
import { assistantMessageFrom } from './support/anthropic-recorded.js';
import { anthropicSse, jsonResponse, startWireServer, type WireServer, type WireStep } from './support/wire-server.js';

const fixturesDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/anthropic');
const fixture = (name: string) => readFileSync(path.join(fixturesDir, name), 'utf8');
const sse = (name: string) => ({ status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8' }, body: fixture(name) });
const json = (name: string) => ({ status: 200, headers: { 'content-type': 'application/json' }, body: fixture(name) });

const apiKey = 'sk-ant-api03-provider-test-secret-0123456789';
type FinishEvent = Extract<ProviderEvent, { type: 'finish' }>;

const servers: WireServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function serve(steps: WireStep[]): Promise<WireServer> {
  const server = await startWireServer(steps);
  servers.push(server);
  return server;
}

function providerFor(server: WireServer, options: Partial<AnthropicProviderOptions> = {}) {
  return anthropicProvider({ model: 'claude-haiku-4-5', apiKey, baseURL: server.url, maxTokens: 1024, ...options });
}

const weatherTool: ToolDescription = {
  name: 'weather',
  description: 'Weather of a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

function request(messages: Message[], extra: Partial<ProviderRequest> = {}): ProviderRequest {
  return { messages, tools: [], signal: new AbortController().signal, ...extra };
}

async function run(provider: ReturnType<typeof anthropicProvider>, providerRequest: ProviderRequest) {
  const events: ProviderEvent[] = [];
  try {
    for await (const event of provider.stream(providerRequest)) events.push(event);
    return { events, error: undefined, finish: events.at(-1) as FinishEvent };
  } catch (error) {
    return { events, error, finish: undefined };
  }
}

function expectProviderError(error: unknown): ProviderError {
  expect(ProviderError.isInstance(error), `expected a ProviderError, got ${String(error)}`).toBe(true);
  return error as ProviderError;
}

const ask: Message[] = [{ role: 'user', content: 'Weather in Berlin?' }];

describe('toAnthropicMessages', () => {
  test('keeps the system prompt apart and joins system messages of the history into it', () => {
    const converted = toAnthropicMessages(
      [
        { role: 'system', content: 'Answer in German.' },
        { role: 'user', content: 'Hi' },
        { role: 'system', content: 'Be brief.' },
      ],
      'You are terse.',
    );
    expect(converted.system).toBe('You are terse.\n\nAnswer in German.\n\nBe brief.');
    expect(converted.messages).toEqual([{ role: 'user', content: 'Hi' }]);
    expect('system' in toAnthropicMessages([{ role: 'user', content: 'Hi' }])).toBe(false);
    expect('system' in toAnthropicMessages([{ role: 'user', content: 'Hi' }], '')).toBe(false);
  });

  test('groups consecutive tool results into one user message of tool_result blocks', () => {
    const { messages } = toAnthropicMessages([
      { role: 'user', content: 'Do three things' },
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'toolu_a', toolName: 'a', args: {} },
          { type: 'tool-call', toolCallId: 'toolu_b', toolName: 'b', args: {} },
          { type: 'tool-call', toolCallId: 'toolu_c', toolName: 'c', args: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'toolu_a', toolName: 'a', result: { sum: 5 } },
          { type: 'tool-result', toolCallId: 'toolu_b', toolName: 'b', result: 'boom', isError: true },
        ],
      },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'toolu_c', toolName: 'c', result: 'plain text', isError: false }] },
    ]);
    expect(messages).toHaveLength(3);
    expect(messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_a', content: '{"sum":5}' },
        { type: 'tool_result', tool_use_id: 'toolu_b', content: 'boom', is_error: true },
        { type: 'tool_result', tool_use_id: 'toolu_c', content: 'plain text' },
      ],
    });
  });

  test('an empty result still makes a valid tool_result (the API rejects empty content with is_error)', () => {
    const { messages } = toAnthropicMessages([
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 't1', toolName: 'x', result: '' },
          { type: 'tool-result', toolCallId: 't2', toolName: 'x', result: undefined, isError: true },
          { type: 'tool-result', toolCallId: 't3', toolName: 'x', result: '  \n' },
        ],
      },
    ]);
    expect(messages[0]?.content).toEqual([
      { type: 'tool_result', tool_use_id: 't1', content: emptyToolResultText },
      { type: 'tool_result', tool_use_id: 't2', content: emptyToolResultText, is_error: true },
      { type: 'tool_result', tool_use_id: 't3', content: emptyToolResultText },
    ]);
  });

  test('merges consecutive user-role messages so roles alternate, tool results first', () => {
    const { messages } = toAnthropicMessages([
      { role: 'user', content: 'one' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'two' },
          { type: 'text', text: '' },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 't1', toolName: 'x', args: { q: 1 } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 't1', toolName: 'x', result: 'r' }] },
      // A user-role notice after the results (as the doom-loop notice is) joins the same turn.
      { role: 'user', content: 'You are repeating yourself.' },
      { role: 'assistant', content: [{ type: 'text', text: 'Sorry.' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
    ]);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two' },
      ],
    });
    expect(messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: 'r' },
        { type: 'text', text: 'You are repeating yourself.' },
      ],
    });
    expect(messages[3]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Sorry.' },
        { type: 'text', text: 'Done.' },
      ],
    });
  });

  test('maps assistant content in order, signatures and redacted data verbatim, invalid arguments as {}', () => {
    const signature = 'EqQBCkYIBxgCKkCs+/=\u2028';
    const { messages } = toAnthropicMessages([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'think "hard" ✓', signature },
          { type: 'redacted-reasoning', data: 'EmwKAhgB+/==' },
          { type: 'text', text: 'Calling.' },
          { type: 'tool-call', toolCallId: 't1', toolName: 'weather', args: { city: 'Berlin' } },
          { type: 'tool-call', toolCallId: 't2', toolName: 'weather', args: '{"city": "Ber' },
          { type: 'tool-call', toolCallId: 't3', toolName: 'weather', args: [1, 2] },
          { type: 'tool-call', toolCallId: 't4', toolName: 'clock', args: null },
        ],
      },
    ]);
    expect(messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'think "hard" ✓', signature },
        { type: 'redacted_thinking', data: 'EmwKAhgB+/==' },
        { type: 'text', text: 'Calling.' },
        { type: 'tool_use', id: 't1', name: 'weather', input: { city: 'Berlin' } },
        { type: 'tool_use', id: 't2', name: 'weather', input: {} },
        { type: 'tool_use', id: 't3', name: 'weather', input: {} },
        { type: 'tool_use', id: 't4', name: 'clock', input: {} },
      ],
    });
  });

  test('drops what the API would reject: unsigned reasoning, empty text, assistant messages left empty', () => {
    const { messages } = toAnthropicMessages([
      { role: 'user', content: 'a' },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'from another provider' },
          { type: 'text', text: ' ' },
        ],
      },
      { role: 'user', content: 'b' },
    ]);
    expect(messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
    ]);
  });

  test('tools become name, description and input_schema', () => {
    expect(toAnthropicTools([weatherTool, { name: 'clock', description: '', inputSchema: { type: 'object', properties: {} } }])).toEqual([
      { name: 'weather', description: 'Weather of a city', input_schema: weatherTool.inputSchema },
      { name: 'clock', input_schema: { type: 'object', properties: {} } },
    ]);
  });
});

describe('anthropicProvider over the real SDK', () => {
  test('streams text and tool calls with pings between input_json_deltas; no-argument tools get {}', async () => {
    const server = await serve([sse('stream-tools-with-pings.sse')]);
    const { events, error } = await run(providerFor(server), request(ask, { tools: [weatherTool] }));
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'text.delta', delta: 'Checking both ' },
      { type: 'text.delta', delta: 'cities.' },
      { type: 'tool.call.delta', toolCallId: 'toolu_01FixtureWeatherBerlin01', name: 'weather', argsDelta: '' },
      { type: 'tool.call.delta', toolCallId: 'toolu_01FixtureWeatherBerlin01', argsDelta: '{"city": "Ber' },
      { type: 'tool.call.delta', toolCallId: 'toolu_01FixtureWeatherBerlin01', argsDelta: 'lin", "unit"' },
      { type: 'tool.call.delta', toolCallId: 'toolu_01FixtureWeatherBerlin01', argsDelta: ': "°C"}' },
      { type: 'tool.call.delta', toolCallId: 'toolu_01FixtureClockEmptyDelta1', name: 'clock', argsDelta: '' },
      { type: 'tool.call.delta', toolCallId: 'toolu_01FixtureDiceNoDeltas001', name: 'roll_dice', argsDelta: '' },
      {
        type: 'finish',
        content: [
          { type: 'text', text: 'Checking both cities.' },
          {
            type: 'tool-call',
            toolCallId: 'toolu_01FixtureWeatherBerlin01',
            toolName: 'weather',
            argsText: '{"city": "Berlin", "unit": "°C"}',
          },
          { type: 'tool-call', toolCallId: 'toolu_01FixtureClockEmptyDelta1', toolName: 'clock', argsText: '{}' },
          { type: 'tool-call', toolCallId: 'toolu_01FixtureDiceNoDeltas001', toolName: 'roll_dice', argsText: '{}' },
        ],
        finishReason: 'tool-calls',
        rawFinishReason: 'tool_use',
        // inputTokens counts every input token: 40 uncached + 2000 read from + 100 written to the cache.
        usage: { inputTokens: 2140, outputTokens: 87, totalTokens: 2227, cachedInputTokens: 2000, cacheCreationInputTokens: 100 },
        model: 'claude-haiku-4-5-20251001',
        responseId: 'msg_01FixtureToolsWithPings01',
      },
    ]);
  });

  test('builds the request: model, max_tokens, system, tools, thinking, extra params, stream', async () => {
    const server = await serve([sse('stream-thinking-redacted.sse')]);
    const provider = providerFor(server, {
      model: 'claude-sonnet-4-5',
      maxTokens: 4096,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      params: { stop_sequences: ['STOP'], metadata: { user_id: 'u-1' } },
    });
    await run(
      provider,
      request([{ role: 'system', content: 'Use metric units.' }, ...ask], { system: 'You are terse.', tools: [weatherTool] }),
    );
    expect(server.requests).toHaveLength(1);
    const received = server.requests[0]!;
    expect(received.method).toBe('POST');
    expect(received.path).toBe('/v1/messages');
    expect(received.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      system: 'You are terse.\n\nUse metric units.',
      messages: [{ role: 'user', content: 'Weather in Berlin?' }],
      tools: [{ name: 'weather', description: 'Weather of a city', input_schema: weatherTool.inputSchema }],
      thinking: { type: 'enabled', budget_tokens: 2048 },
      stop_sequences: ['STOP'],
      metadata: { user_id: 'u-1' },
      stream: true,
    });
    expect(`${received.headers.authorization ?? ''}${received.headers['x-api-key'] ?? ''}`).toContain(apiKey);
  });

  test('thinking and redacted thinking come back byte-identical in the next request', async () => {
    const server = await serve([sse('stream-thinking-redacted.sse'), sse('stream-thinking-redacted.sse')]);
    const provider = providerFor(server, { thinking: { type: 'enabled', budget_tokens: 1024 } });
    const first = await run(provider, request(ask));
    expect(first.error).toBeUndefined();
    const thinking = 'The user wrote "größer" — compare 2 ≥ 1;\n\ttabs, a line\u2028separator, a \\backslash and 😀.';
    const signature = 'EqQBCkYIBxgCKkCsZ+/fixture/Sig+Zz09AbCdEf==+/AAEC';
    const data = 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qyP+fixture+redacted/Data==';
    expect(first.finish?.content).toEqual([
      { type: 'reasoning', text: thinking, signature },
      { type: 'redacted-reasoning', data },
      { type: 'text', text: 'Größer: 2.' },
    ]);
    expect(
      first.events
        .filter((event) => event.type === 'reasoning.delta')
        .map((event) => (event as { delta: string }).delta)
        .join(''),
    ).toBe(thinking);

    const history: Message[] = [...ask, assistantMessageFrom(first.finish!.content), { role: 'user', content: 'And Paris?' }];
    // Through JSON, as a persisted snapshot would be.
    await run(provider, request(JSON.parse(JSON.stringify(history)) as Message[]));
    const sent = server.requests[1]!.body as { messages: Array<{ role: string; content: unknown }> };
    expect(sent.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking, signature },
        { type: 'redacted_thinking', data },
        { type: 'text', text: 'Größer: 2.' },
      ],
    });
    expect(server.requests[1]!.rawBody).toContain(JSON.stringify(signature));
    expect(server.requests[1]!.rawBody).toContain(JSON.stringify(data));
  });

  test('non-streaming mode maps messages.create to the same events', async () => {
    const server = await serve([json('message-thinking-redacted-tool.json'), json('message-thinking-redacted-tool.json')]);
    const provider = providerFor(server, { stream: false });
    const { events, error } = await run(provider, request(ask, { tools: [weatherTool] }));
    expect(error).toBeUndefined();
    expect((server.requests[0]!.body as { stream?: unknown }).stream).toBe(false);
    expect(events).toEqual([
      { type: 'reasoning.delta', delta: 'Need the weather; "quotes" and ünïcödé stay.' },
      { type: 'text.delta', delta: 'Let me check.' },
      {
        type: 'tool.call.delta',
        toolCallId: 'toolu_01FixtureNonStreamCall01',
        name: 'weather',
        argsDelta: '{"city":"Berlin","unit":"°C"}',
      },
      { type: 'tool.call.delta', toolCallId: 'toolu_01FixtureNonStreamNoArg1', name: 'clock', argsDelta: '{}' },
      {
        type: 'finish',
        content: [
          {
            type: 'reasoning',
            text: 'Need the weather; "quotes" and ünïcödé stay.',
            signature: 'ErUBCkYIBxgCKkB+fixture/nonstream/signature==',
          },
          { type: 'redacted-reasoning', data: 'EmwKAhgBEgy+fixture+redacted+nonstream==' },
          { type: 'text', text: 'Let me check.' },
          {
            type: 'tool-call',
            toolCallId: 'toolu_01FixtureNonStreamCall01',
            toolName: 'weather',
            argsText: '{"city":"Berlin","unit":"°C"}',
          },
          { type: 'tool-call', toolCallId: 'toolu_01FixtureNonStreamNoArg1', toolName: 'clock', argsText: '{}' },
        ],
        finishReason: 'tool-calls',
        rawFinishReason: 'tool_use',
        usage: { inputTokens: 2140, outputTokens: 87, totalTokens: 2227, cachedInputTokens: 2000, cacheCreationInputTokens: 100 },
        model: 'claude-sonnet-4-5-20250929',
        responseId: 'msg_01FixtureNonStreamMixed001',
      },
    ]);

    const finish = events.at(-1) as FinishEvent;
    const history: Message[] = [
      ...ask,
      assistantMessageFrom(finish.content),
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'toolu_01FixtureNonStreamCall01', toolName: 'weather', result: '15 °C' },
          { type: 'tool-result', toolCallId: 'toolu_01FixtureNonStreamNoArg1', toolName: 'clock', result: '', isError: true },
        ],
      },
    ];
    await run(provider, request(history, { tools: [weatherTool] }));
    const sent = server.requests[1]!.body as { messages: unknown[] };
    expect(sent.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          {
            type: 'thinking',
            thinking: 'Need the weather; "quotes" and ünïcödé stay.',
            signature: 'ErUBCkYIBxgCKkB+fixture/nonstream/signature==',
          },
          { type: 'redacted_thinking', data: 'EmwKAhgBEgy+fixture+redacted+nonstream==' },
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_01FixtureNonStreamCall01', name: 'weather', input: { city: 'Berlin', unit: '°C' } },
          { type: 'tool_use', id: 'toolu_01FixtureNonStreamNoArg1', name: 'clock', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01FixtureNonStreamCall01', content: '15 °C' },
          { type: 'tool_result', tool_use_id: 'toolu_01FixtureNonStreamNoArg1', content: emptyToolResultText, is_error: true },
        ],
      },
    ]);
  });

  test('non-streaming requests with a large max_tokens are not refused by the SDK', async () => {
    const server = await serve([json('message-thinking-redacted-tool.json')]);
    const { error } = await run(providerFor(server, { stream: false, maxTokens: 64_000 }), request(ask));
    expect(error).toBeUndefined();
  });

  test('an overloaded_error inside a 200 stream is a retryable error, after the partial output', async () => {
    const server = await serve([sse('stream-overloaded-error.sse')]);
    const { events, error } = await run(providerFor(server), request(ask));
    expect(events).toEqual([{ type: 'text.delta', delta: 'Partial answ' }]);
    const providerError = expectProviderError(error);
    expect(providerError.retryable).toBe(true);
    expect(providerError.code).toBe('overloaded');
    expect(providerError.message).toContain('Overloaded');
  });

  test('a stream cut before message_stop is an incomplete, retryable error', async () => {
    const server = await serve([sse('stream-cut-before-message-stop.sse')]);
    const { events, error } = await run(providerFor(server), request(ask));
    expect(events.every((event) => event.type !== 'finish')).toBe(true);
    const providerError = expectProviderError(error);
    expect(providerError.code).toBe('incomplete_stream');
    expect(providerError.retryable).toBe(true);
  });

  test('a connection reset in the middle of the stream is retryable', async () => {
    const body = fixture('stream-tools-with-pings.sse');
    const server = await serve([
      async (_request, control) => {
        control.res.writeHead(200, { 'content-type': 'text/event-stream' });
        control.res.write(body.slice(0, body.indexOf('event: content_block_stop')));
        await control.sleep(20);
        control.socket.destroy();
      },
    ]);
    const { events, error } = await run(providerFor(server), request(ask));
    expect(events.some((event) => event.type === 'text.delta')).toBe(true);
    const providerError = expectProviderError(error);
    expect(providerError.retryable).toBe(true);
  });

  test('aborting the signal mid-stream closes the connection and fails as aborted, not retryable', async () => {
    const controller = new AbortController();
    const body = fixture('stream-tools-with-pings.sse');
    const server = await serve([
      async (_request, control) => {
        control.res.writeHead(200, { 'content-type': 'text/event-stream' });
        control.res.write(body.slice(0, body.indexOf('event: content_block_stop')));
        await control.clientClosed;
      },
    ]);
    const events: ProviderEvent[] = [];
    let caught: unknown;
    try {
      for await (const event of providerFor(server).stream(request(ask, { signal: controller.signal }))) {
        events.push(event);
        if (event.type === 'text.delta') controller.abort();
      }
    } catch (error) {
      caught = error;
    }
    const providerError = expectProviderError(caught);
    expect(providerError.code).toBe('aborted');
    expect(providerError.retryable).toBe(false);
    await server.waitForClosedSockets(1);
  });

  const stopReasons = [
    ['end_turn', 'stop'],
    ['tool_use', 'tool-calls'],
    ['max_tokens', 'length'],
    ['stop_sequence', 'stop'],
    ['refusal', 'refusal'],
    ['pause_turn', 'pause'],
    ['model_context_window_exceeded', 'length'],
  ] as const;

  function streamEnding(stopReason: string) {
    return anthropicSse([
      {
        type: 'message_start',
        message: {
          id: 'msg_01Stop',
          type: 'message',
          role: 'assistant',
          model: 'claude-haiku-4-5',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 9, output_tokens: 1 },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: stopReason, stop_sequence: stopReason === 'stop_sequence' ? 'STOP' : null },
        usage: { output_tokens: 2 },
      },
      { type: 'message_stop' },
    ]);
  }

  function messageEnding(stopReason: string) {
    return jsonResponse(200, {
      id: 'msg_01Stop',
      type: 'message',
      role: 'assistant',
      model: 'claude-haiku-4-5',
      content: [{ type: 'text', text: 'ok' }],
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: 9, output_tokens: 2 },
    });
  }

  test.each(stopReasons)('stop reason %s becomes %s, streaming and not', async (raw, neutral) => {
    const server = await serve([streamEnding(raw), messageEnding(raw)]);
    const streamed = await run(providerFor(server), request(ask));
    const whole = await run(providerFor(server, { stream: false }), request(ask));
    for (const outcome of [streamed, whole]) {
      expect(outcome.error).toBeUndefined();
      expect(outcome.finish).toEqual({
        type: 'finish',
        content: [{ type: 'text', text: 'ok' }],
        finishReason: neutral,
        rawFinishReason: raw,
        usage: { inputTokens: 9, outputTokens: 2, totalTokens: 11 },
        model: 'claude-haiku-4-5',
        responseId: 'msg_01Stop',
      });
    }
  });

  test('usage: message_delta counters override message_start ones, null ones do not', async () => {
    const server = await serve([
      anthropicSse([
        {
          type: 'message_start',
          message: {
            id: 'msg_01Usage',
            type: 'message',
            role: 'assistant',
            model: 'claude-haiku-4-5',
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 5, cache_read_input_tokens: 300, cache_creation_input_tokens: 0, output_tokens: 1 },
          },
        },
        {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { input_tokens: 7, cache_read_input_tokens: null, cache_creation_input_tokens: 40, output_tokens: 12 },
        },
        { type: 'message_stop' },
      ]),
    ]);
    const { finish } = await run(providerFor(server), request(ask));
    expect(finish?.content).toEqual([]);
    expect(finish?.usage).toEqual({
      inputTokens: 347,
      outputTokens: 12,
      totalTokens: 359,
      cachedInputTokens: 300,
      cacheCreationInputTokens: 40,
    });
  });

  test.each([
    [529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, {}, 'overloaded', true],
    [
      429,
      { type: 'error', error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' } },
      { 'retry-after': '7' },
      'rate_limit',
      true,
    ],
    [500, { type: 'error', error: { type: 'api_error', message: 'Internal server error' } }, {}, 'server', true],
    [400, { type: 'error', error: { type: 'invalid_request_error', message: 'messages: roles must alternate' } }, {}, 'bad_request', false],
    [403, { type: 'error', error: { type: 'permission_error', message: 'no access' } }, {}, 'permission', false],
  ] as const)('HTTP %i is classified (%s) and tried once, without the SDK retrying', async (status, body, headers, code, retryable) => {
    const server = await serve([
      jsonResponse(status, body, headers),
      jsonResponse(status, body, headers),
      jsonResponse(status, body, headers),
    ]);
    const { error } = await run(providerFor(server), request(ask));
    const providerError = expectProviderError(error);
    expect(providerError.status).toBe(status);
    expect(providerError.code).toBe(code);
    expect(providerError.retryable).toBe(retryable);
    if (status === 429) expect(providerError.retryAfterMs).toBe(7000);
    expect(server.requests).toHaveLength(1);
  });

  test('a client of your own is used, with its retries switched off per request', async () => {
    const server = await serve([
      jsonResponse(503, { type: 'error', error: { type: 'api_error', message: 'unavailable' } }),
      jsonResponse(503, { type: 'error', error: { type: 'api_error', message: 'unavailable' } }),
      sse('stream-thinking-redacted.sse'),
    ]);
    const client = new Anthropic({ apiKey, baseURL: server.url, maxRetries: 2 });
    const provider = anthropicProvider({ model: 'claude-haiku-4-5', client, maxTokens: 256 });
    const { error } = await run(provider, request(ask));
    expect(expectProviderError(error).retryable).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  test('the API key never appears in errors or events', async () => {
    const server = await serve([
      (received, control) => {
        // A hostile or careless proxy that echoes the credentials back.
        const credentials = String(received.headers.authorization ?? received.headers['x-api-key']);
        return control.respond(
          jsonResponse(401, { type: 'error', error: { type: 'authentication_error', message: `invalid key ${credentials}` } }),
        );
      },
    ]);
    const { events, error } = await run(providerFor(server), request(ask));
    const providerError = expectProviderError(error);
    expect(providerError.code).toBe('authentication');
    expect(providerError.message).toContain('[redacted]');
    expect(providerError.message).not.toContain(apiKey);
    expect(String(providerError.stack)).not.toContain(apiKey);
    expect(JSON.stringify(events)).not.toContain(apiKey);
  });

  test('options are checked when the provider is created', () => {
    expect(() => anthropicProvider({ model: '', maxTokens: 10 })).toThrow(InvalidOptionsError);
    expect(() => anthropicProvider({ model: 'claude-haiku-4-5', maxTokens: 0 })).toThrow(/maxTokens/);
    expect(() => anthropicProvider({ model: 'claude-haiku-4-5', maxTokens: 1.5 })).toThrow(/maxTokens/);
    expect(() => anthropicProvider({ model: 'claude-haiku-4-5', maxTokens: 10, client: {} as Anthropic })).toThrow(/client/);
    const bad: Array<[unknown, string, RegExp]> = [
      [null, 'anthropicProvider(options)', /anthropicProvider\(options\): expected an options object with model and maxTokens, got null/],
      [{ model: ' ', maxTokens: 10 }, 'model', /model: expected a non-empty model id such as "claude-sonnet-4-5", got " "/],
      [
        { model: 'm', maxTokens: 10, structuredOutput: 'json' },
        'structuredOutput',
        /structuredOutput: expected 'auto' \| 'native' \| 'tool', got "json"/,
      ],
      [{ model: 'm', maxTokens: 10, timeoutMs: 0 }, 'timeoutMs', /timeoutMs: expected a positive number of milliseconds, got 0/],
      [{ model: 'm', maxTokens: 10, stream: 'no' }, 'stream', /stream: expected a boolean, got "no"/],
      [{ model: 'm', maxTokens: 10, apiKey: 42 }, 'apiKey', /^Invalid option apiKey: expected a string$/],
    ];
    for (const [options, option, message] of bad) {
      expect(() => anthropicProvider(options as AnthropicProviderOptions), JSON.stringify(options)).toThrow(
        expect.objectContaining({ option }),
      );
      expect(() => anthropicProvider(options as AnthropicProviderOptions), JSON.stringify(options)).toThrow(message);
    }
    expect(anthropicProvider({ model: 'claude-haiku-4-5', maxTokens: 10 }).name).toBe('anthropic');
  });
});

describe('anthropicProvider in a conversation machine', () => {
  test('a run without a key ends `error` saying what to set, the SDK’s own words kept', async () => {
    const saved = { key: process.env.ANTHROPIC_API_KEY, token: process.env.ANTHROPIC_AUTH_TOKEN };
    delete process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_AUTH_TOKEN;
    try {
      const server = await serve([sse('stream-thinking-redacted.sse')]);
      const machine = createConversationMachine({
        provider: anthropicProvider({ model: 'claude-haiku-4-5', baseURL: server.url, maxTokens: 1024 }),
      });
      const actor = createActor(machine, { input: { messages: [] } }).start();
      actor.send({ type: 'user.message', content: 'Hi' });
      const output = await toPromise(actor);
      expect(output.status).toBe('error');
      expect(output.error).toMatchObject({ code: 'authentication', retryable: false });
      expect(output.error?.message).toMatch(
        /^anthropicProvider has no API key: set ANTHROPIC_API_KEY \(or ANTHROPIC_AUTH_TOKEN\) or pass `apiKey`\. \(The SDK said: .+\)$/,
      );
      expect(server.requests).toHaveLength(0);
    } finally {
      for (const [name, value] of [
        ['ANTHROPIC_API_KEY', saved.key],
        ['ANTHROPIC_AUTH_TOKEN', saved.token],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  test('an in-stream overloaded_error and a cut stream are retried, discarding the partial output', async () => {
    const server = await serve([
      sse('stream-overloaded-error.sse'),
      sse('stream-cut-before-message-stop.sse'),
      sse('stream-thinking-redacted.sse'),
    ]);
    const machine = createConversationMachine({
      provider: providerFor(server),
      retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5, jitter: false },
    });
    const actor = createActor(machine, { input: { messages: [] } });
    const retries: Array<{ discardPartial: boolean; retryable: boolean }> = [];
    actor.on('request.retry', (event) => retries.push({ discardPartial: event.discardPartial, retryable: event.error.retryable }));
    actor.start();
    actor.send({ type: 'user.message', content: 'Which is bigger?' });
    const output = await toPromise(actor);
    expect(output.status).toBe('done');
    expect(output.text).toBe('Größer: 2.');
    expect(retries).toEqual([
      { discardPartial: true, retryable: true },
      { discardPartial: true, retryable: true },
    ]);
    expect(server.requests).toHaveLength(3);
    // The history keeps the signed thinking and the redacted block, ready for the next turn.
    expect(output.messages.at(-1)?.content).toEqual([
      expect.objectContaining({ type: 'reasoning', signature: 'EqQBCkYIBxgCKkCsZ+/fixture/Sig+Zz09AbCdEf==+/AAEC' }),
      { type: 'redacted-reasoning', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qyP+fixture+redacted/Data==' },
      { type: 'text', text: 'Größer: 2.' },
    ]);
  });

  test('a 429 whose retry-after exceeds maxRetryAfterMs ends the run at once, saying the cap is why', async () => {
    const limited = { type: 'error', error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' } };
    const server = await serve([jsonResponse(429, limited, { 'retry-after': '90' }), sse('stream-thinking-redacted.sse')]);
    const machine = createConversationMachine({
      provider: providerFor(server),
      retry: { maxRetries: 3, initialDelayMs: 1, jitter: false, maxRetryAfterMs: 1_500 },
    });
    const actor = createActor(machine, { input: { messages: [] } });
    const retries: unknown[] = [];
    actor.on('request.retry', (event) => retries.push(event));
    actor.start();
    actor.send({ type: 'user.message', content: 'Hi' });
    const output = await toPromise(actor);
    expect(output.status).toBe('error');
    expect(output.error).toMatchObject({ status: 429, retryable: true, code: 'rate_limit' });
    expect(output.error?.message).toMatch(
      /^429 .*exceeded your rate limit.* — retry-after 90 s exceeds retry\.maxRetryAfterMs \(1\.5 s\); not retried$/,
    );
    expect(retries).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  test('cancel closes the HTTP connection of a running stream', async () => {
    const body = fixture('stream-tools-with-pings.sse');
    const server = await serve([
      async (_request, control) => {
        control.res.writeHead(200, { 'content-type': 'text/event-stream' });
        control.res.write(body.slice(0, body.indexOf('event: content_block_stop')));
        await control.clientClosed;
      },
    ]);
    const actor = createActor(createConversationMachine({ provider: providerFor(server) }), { input: { messages: [] } });
    actor.on('text.delta', () => actor.send({ type: 'cancel', reason: 'user left' }));
    actor.start();
    actor.send({ type: 'user.message', content: 'Weather?' });
    const output = await toPromise(actor);
    expect(output.status).toBe('halted');
    expect(output.reason).toBe('cancelled');
    await server.waitForClosedSockets(1);
  });
});
