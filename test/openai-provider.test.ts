import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { createConversationMachine } from '../src/machines/chart/conversation.js';
import { InvalidOptionsError } from '../src/errors/invalid-options-error.js';
import { ProviderError } from '../src/model/errors/provider-error.js';
import type { Message } from '../src/model/messages.js';
import { openaiProvider, type OpenAIClientLike, type OpenAIProviderOptions } from '../src/providers/openai/index.js';
import type { ProviderEvent, ProviderRequest, ToolDescription } from '../src/model/provider.js';
import {
  cassetteSteps,
  closedPortUrl,
  jsonResponse,
  loadCassette,
  openaiSse,
  startWireServer,
  type WireServer,
  type WireStep,
} from './support/wire-server.js';

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/openai');
const fixture = (name: string) => cassetteSteps(loadCassette(path.join(fixtures, `${name}.json`)));

const apiKey = 'sk-test-0123456789abcdef';
const weatherTool: ToolDescription = {
  name: 'weather',
  description: 'Weather for a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
};

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(steps: WireStep[], options?: { chunkDelayMs?: number }): Promise<WireServer> {
  server = await startWireServer(steps, options);
  return server;
}

function request(overrides: Partial<ProviderRequest> = {}): ProviderRequest {
  return { messages: [{ role: 'user', content: 'Hi' }], tools: [], signal: new AbortController().signal, ...overrides };
}

function provider(wire: WireServer, options: Partial<OpenAIProviderOptions> = {}) {
  return openaiProvider({ model: 'gpt-4o-mini', apiKey, baseURL: `${wire.url}/v1`, ...options });
}

async function collect(stream: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function failure(stream: AsyncIterable<ProviderEvent>): Promise<ProviderError> {
  try {
    await collect(stream);
  } catch (error) {
    expect(ProviderError.isInstance(error), `expected a ProviderError, got ${String(error)}`).toBe(true);
    return error as ProviderError;
  }
  throw new Error('expected the stream to fail');
}

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null, extra: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-x',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, delta, finish_reason: finishReason }],
  ...extra,
});

describe('openaiProvider: streaming', () => {
  it('streams text deltas and finishes with the whole text and usage (cached, reasoning)', async () => {
    const wire = await serve(fixture('text-stream'));
    const events = await collect(provider(wire).stream(request({ system: 'Be terse.' })));
    expect(events).toEqual([
      { type: 'text.delta', delta: 'Hello' },
      { type: 'text.delta', delta: ', ' },
      { type: 'text.delta', delta: 'world.' },
      {
        type: 'finish',
        content: [{ type: 'text', text: 'Hello, world.' }],
        finishReason: 'stop',
        rawFinishReason: 'stop',
        usage: { inputTokens: 1200, outputTokens: 40, totalTokens: 1240, cachedInputTokens: 1024, reasoningTokens: 16 },
        model: 'gpt-4o-mini-2024-07-18',
        responseId: 'chatcmpl-test1',
      },
    ]);
  });

  it('sends model, system first, messages, tools, params, reasoning_effort and stream_options', async () => {
    const wire = await serve(fixture('text-stream'));
    const history: Message[] = [
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'not sent on this wire' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool-call', toolCallId: 'call_1', toolName: 'weather', args: { city: 'Paris' } },
        ],
      },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'weather', result: { temp: 12 } }] },
    ];
    await collect(
      provider(wire, {
        params: { temperature: 0, max_completion_tokens: 99, stream: false, stream_options: { extra: 1 } },
        reasoningEffort: 'low',
        strict: true,
      }).stream(request({ system: 'Be terse.', messages: history, tools: [weatherTool] })),
    );
    const sent = wire.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${apiKey}`);
    expect(sent.body).toEqual({
      model: 'gpt-4o-mini',
      temperature: 0,
      max_completion_tokens: 99,
      reasoning_effort: 'low',
      stream: true,
      stream_options: { extra: 1, include_usage: true },
      messages: [
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp":12}' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'weather', description: 'Weather for a city', parameters: weatherTool.inputSchema, strict: true },
        },
      ],
    });
  });

  it('sends reasoning back as reasoning_content only when asked to (DeepSeek, llama.cpp)', async () => {
    const wire = await serve([...fixture('text-stream'), ...fixture('text-stream')]);
    const history: Message[] = [
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Need the ' },
          { type: 'reasoning', text: 'tool.' },
          { type: 'tool-call', toolCallId: 'call_1', toolName: 'weather', args: { city: 'Oslo' } },
        ],
      },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'weather', result: 'cold' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Cold.' }] },
      { role: 'user', content: 'Thanks' },
    ];
    await collect(provider(wire, { sendReasoning: true }).stream(request({ system: 'S', messages: history })));
    await collect(provider(wire).stream(request({ system: 'S', messages: history })));
    const withReasoning = (wire.requests[0]!.body as { messages: unknown[] }).messages;
    const without = (wire.requests[1]!.body as { messages: unknown[] }).messages;
    expect(withReasoning).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: null,
        reasoning_content: 'Need the tool.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'cold' },
      { role: 'assistant', content: 'Cold.' },
      { role: 'user', content: 'Thanks' },
    ]);
    expect(JSON.stringify(without)).not.toContain('reasoning_content');
    expect(without).toHaveLength(withReasoning.length);
  });

  it('leaves `tools` out when the run has none', async () => {
    const wire = await serve(fixture('text-stream'));
    await collect(provider(wire).stream(request()));
    expect(wire.requests[0]!.body).not.toHaveProperty('tools');
    expect(wire.requests[0]!.body).not.toHaveProperty('reasoning_effort');
  });

  it('assembles parallel tool calls by index with their ids and argument text', async () => {
    const wire = await serve(fixture('parallel-tools-stream'));
    const events = await collect(provider(wire).stream(request({ tools: [weatherTool] })));
    expect(events.filter((event) => event.type === 'tool.call.delta')).toEqual([
      { type: 'tool.call.delta', toolCallId: 'call_weather_1', name: 'weather', argsDelta: '' },
      { type: 'tool.call.delta', toolCallId: 'call_weather_1', argsDelta: '{"city":' },
      { type: 'tool.call.delta', toolCallId: 'call_time_2', name: 'time', argsDelta: '' },
      { type: 'tool.call.delta', toolCallId: 'call_weather_1', argsDelta: '"Paris"}' },
      { type: 'tool.call.delta', toolCallId: 'call_time_2', argsDelta: '{"zone":"CET"}' },
    ]);
    expect(events.at(-1)).toEqual({
      type: 'finish',
      content: [
        { type: 'tool-call', toolCallId: 'call_weather_1', toolName: 'weather', argsText: '{"city":"Paris"}' },
        { type: 'tool-call', toolCallId: 'call_time_2', toolName: 'time', argsText: '{"zone":"CET"}' },
      ],
      finishReason: 'tool-calls',
      rawFinishReason: 'tool_calls',
      usage: { inputTokens: 80, outputTokens: 30, totalTokens: 110, cachedInputTokens: 0, reasoningTokens: 0 },
      model: 'gpt-4o-mini-2024-07-18',
      responseId: 'chatcmpl-test1',
    });
  });

  it('handles the compatible servers’ quirks: empty Azure chunk, comments, reasoning_content, one-delta tool call, usage on finish', async () => {
    const wire = await serve(fixture('compatible-quirks-stream'));
    const events = await collect(provider(wire, { model: 'deepseek-reasoner' }).stream(request({ tools: [weatherTool] })));
    expect(events).toEqual([
      { type: 'reasoning.delta', delta: 'The user wants ' },
      { type: 'reasoning.delta', delta: 'the weather.' },
      { type: 'tool.call.delta', toolCallId: 'call_groq_1', name: 'weather', argsDelta: '{"city":"Oslo"}' },
      {
        type: 'finish',
        content: [
          { type: 'reasoning', text: 'The user wants the weather.' },
          { type: 'tool-call', toolCallId: 'call_groq_1', toolName: 'weather', argsText: '{"city":"Oslo"}' },
        ],
        finishReason: 'tool-calls',
        rawFinishReason: 'tool_calls',
        usage: { inputTokens: 50, outputTokens: 20, totalTokens: 70, reasoningTokens: 9 },
        model: 'gpt-4o-mini-2024-07-18',
        responseId: 'chatcmpl-test1',
      },
    ]);
  });

  it('reads OpenRouter’s `reasoning` field as reasoning', async () => {
    const wire = await serve([openaiSse([chunk({ reasoning: 'hmm' }), chunk({ content: 'ok' }, 'stop')])]);
    const events = await collect(provider(wire).stream(request()));
    expect(events.map((event) => event.type)).toEqual(['reasoning.delta', 'text.delta', 'finish']);
  });

  it('tells parallel calls apart by id when a server gives them all index 0', async () => {
    const wire = await serve([
      openaiSse([
        chunk({ tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'weather', arguments: '{"city":"A"}' } }] }),
        chunk({ tool_calls: [{ index: 0, id: 'b', type: 'function', function: { name: 'weather', arguments: '{"city":"B"}' } }] }),
        chunk({}, 'tool_calls'),
      ]),
    ]);
    const events = await collect(provider(wire).stream(request({ tools: [weatherTool] })));
    const finish = events.at(-1);
    expect(finish?.type === 'finish' && finish.content).toEqual([
      { type: 'tool-call', toolCallId: 'a', toolName: 'weather', argsText: '{"city":"A"}' },
      { type: 'tool-call', toolCallId: 'b', toolName: 'weather', argsText: '{"city":"B"}' },
    ]);
  });

  it('maps length and content_filter finish reasons', async () => {
    const wire = await serve([openaiSse([chunk({ content: 'cut' }, 'length')]), openaiSse([chunk({}, 'content_filter')])]);
    const length = (await collect(provider(wire).stream(request()))).at(-1);
    const filtered = (await collect(provider(wire).stream(request()))).at(-1);
    expect(length).toMatchObject({ type: 'finish', finishReason: 'length', content: [{ type: 'text', text: 'cut' }] });
    expect(filtered).toMatchObject({ type: 'finish', finishReason: 'content-filter', content: [] });
  });
});

describe('openaiProvider: non-streaming', () => {
  it('maps a chat.completion to the same events: reasoning, text, tool calls, finish with usage', async () => {
    const wire = await serve(fixture('nonstream-tools'));
    const events = await collect(provider(wire, { stream: false, model: 'deepseek-reasoner' }).stream(request({ tools: [weatherTool] })));
    expect(events).toEqual([
      { type: 'reasoning.delta', delta: 'Need the weather tool.' },
      { type: 'text.delta', delta: 'Let me check.' },
      { type: 'tool.call.delta', toolCallId: 'call_ns_1', name: 'weather', argsDelta: '{"city":"Rome"}' },
      {
        type: 'finish',
        content: [
          { type: 'reasoning', text: 'Need the weather tool.' },
          { type: 'text', text: 'Let me check.' },
          { type: 'tool-call', toolCallId: 'call_ns_1', toolName: 'weather', argsText: '{"city":"Rome"}' },
        ],
        finishReason: 'tool-calls',
        rawFinishReason: 'tool_calls',
        usage: { inputTokens: 1200, outputTokens: 40, totalTokens: 1240, cachedInputTokens: 1024, reasoningTokens: 16 },
      },
    ]);
    expect(wire.requests[0]!.body).toMatchObject({ stream: false });
    expect(wire.requests[0]!.body).not.toHaveProperty('stream_options');
  });

  it('finishes an empty `length` completion with no content', async () => {
    const wire = await serve([
      jsonResponse(200, {
        id: 'x',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-5-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'length' }],
        usage: { prompt_tokens: 5, completion_tokens: 10, total_tokens: 15, completion_tokens_details: { reasoning_tokens: 10 } },
      }),
    ]);
    const events = await collect(provider(wire, { stream: false }).stream(request()));
    expect(events).toEqual([
      {
        type: 'finish',
        content: [],
        finishReason: 'length',
        rawFinishReason: 'length',
        usage: { inputTokens: 5, outputTokens: 10, totalTokens: 15, reasoningTokens: 10 },
      },
    ]);
  });
});

describe('openaiProvider: clients and options', () => {
  it('uses a client passed in, with its retries switched off per request', async () => {
    const wire = await serve([jsonResponse(500, { error: { message: 'boom', type: 'server_error' } }), ...fixture('text-stream')]);
    const client = new OpenAI({ apiKey, baseURL: `${wire.url}/v1` }); // default maxRetries: 2
    const error = await failure(openaiProvider({ model: 'gpt-4o-mini', client }).stream(request()));
    expect(error).toMatchObject({ code: 'server', retryable: true, status: 500 });
    expect(wire.requests).toHaveLength(1);
  });

  it('accepts any object shaped like the client', async () => {
    const calls: unknown[] = [];
    const client: OpenAIClientLike = {
      chat: {
        completions: {
          async create(body, options) {
            calls.push({ body, options });
            return (async function* () {
              yield chunk({ content: 'hi' }, 'stop');
            })();
          },
        },
      },
    };
    const events = await collect(openaiProvider({ model: 'm', client, name: 'wrapped' }).stream(request()));
    expect(events.at(-1)).toMatchObject({ type: 'finish', content: [{ type: 'text', text: 'hi' }] });
    expect(calls[0]).toMatchObject({ options: { maxRetries: 0 } });
    expect(openaiProvider({ model: 'm', client, name: 'wrapped' }).name).toBe('wrapped');
  });

  it('rejects wrong options at creation, naming the option and never echoing the key', () => {
    expect(() => openaiProvider({ model: '' })).toThrow(InvalidOptionsError);
    expect(() => openaiProvider({ model: 'm', stream: 'yes' as unknown as boolean })).toThrow(/openaiProvider\.stream/);
    expect(() => openaiProvider({ model: 'm', reasoningEffort: 'huge' as 'low' })).toThrow(/reasoningEffort/);
    expect(() => openaiProvider({ model: 'm', client: {} as OpenAIClientLike })).toThrow(/openaiProvider\.client/);
    expect(() => openaiProvider({ model: 'm', sendReasoning: 1 as unknown as boolean })).toThrow(/openaiProvider\.sendReasoning/);
    const secret = { toString: () => apiKey };
    expect(() => openaiProvider({ model: 'm', apiKey: secret as unknown as string })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining(apiKey) as unknown }),
    );
    expect(() => openaiProvider({ model: 'm', apiKey: 42 as unknown as string })).toThrow(
      expect.objectContaining({ option: 'openaiProvider.apiKey', message: 'Invalid option openaiProvider.apiKey: expected a string' }),
    );
    const bad: Array<[unknown, string, RegExp]> = [
      [null, 'openaiProvider(options)', /openaiProvider\(options\): expected an options object with at least `model`, got null/],
      [{ model: '' }, 'openaiProvider.model', /openaiProvider\.model: expected a non-empty model id string, got ""/],
      [{ model: 'm', baseURL: 8080 }, 'openaiProvider.baseURL', /openaiProvider\.baseURL: expected a URL string, got 8080/],
      [
        { model: 'm', params: [] },
        'openaiProvider.params',
        /openaiProvider\.params: expected an object of request parameters, got an array/,
      ],
      [{ model: 'm', strict: 'yes' }, 'openaiProvider.strict', /openaiProvider\.strict: expected a boolean, got "yes"/],
    ];
    for (const [options, option, message] of bad) {
      expect(() => openaiProvider(options as OpenAIProviderOptions), JSON.stringify(options)).toThrow(expect.objectContaining({ option }));
      expect(() => openaiProvider(options as OpenAIProviderOptions), JSON.stringify(options)).toThrow(message);
    }
  });

  it('fails without an API key as a non-retryable error (the SDK needs one)', async () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      const error = await failure(openaiProvider({ model: 'm', baseURL: 'http://127.0.0.1:9/v1' }).stream(request()));
      expect(error.retryable).toBe(false);
      expect(error.message).toMatch(/OPENAI_API_KEY|apiKey/);
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });

  it('a run without a key ends `error` saying what to set, on both APIs and with an empty key', async () => {
    const saved = process.env.OPENAI_API_KEY;
    try {
      for (const [env, options] of [
        [undefined, { model: 'gpt-4o-mini' }],
        ['', { model: 'gpt-4o-mini', api: 'responses' }],
        ['sk-unused', { model: 'gpt-4o-mini', apiKey: '' }],
      ] as const) {
        if (env === undefined) delete process.env.OPENAI_API_KEY;
        else process.env.OPENAI_API_KEY = env;
        const actor = createActor(createConversationMachine({ provider: openaiProvider(options) }), { input: { messages: [] } }).start();
        actor.send({ type: 'user.message', content: 'Hi' });
        const output = await toPromise(actor);
        expect(output.status).toBe('error');
        expect(output.error).toMatchObject({ code: 'authentication', retryable: false });
        // An empty key is refused before the SDK sees it (older SDKs would send it); no key at all, by the SDK.
        expect(output.error?.message).toMatch(
          env === undefined
            ? /^openaiProvider has no API key: set OPENAI_API_KEY or pass `apiKey`; an OpenAI-compatible server that needs no key takes its `baseURL` and any `apiKey`, e\.g\. 'none'\. \(The SDK said: .+\)$/
            : /^openaiProvider has no API key: set OPENAI_API_KEY or pass `apiKey`; an OpenAI-compatible server that needs no key takes its `baseURL` and any `apiKey`, e\.g\. 'none'\.$/,
        );
      }
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
  });

  it('never lets the API key through an error, even when the server echoes it', async () => {
    const wire = await serve([
      jsonResponse(401, {
        error: { message: `Incorrect API key provided: ${apiKey}.`, type: 'invalid_request_error', code: 'invalid_api_key' },
      }),
      openaiSse([{ error: { message: `bad key ${apiKey}`, code: 500 } }]),
    ]);
    for (let attempt = 0; attempt < 2; attempt++) {
      const error = await failure(provider(wire).stream(request()));
      expect(error.message).not.toContain(apiKey);
      expect(String((error.cause as Error).message)).not.toContain(apiKey);
      expect(JSON.stringify((error.cause as { error?: unknown }).error)).not.toContain(apiKey);
      expect(error.message).toContain('[redacted]');
    }
  });
});

describe('openaiProvider: keys from a client or the environment stay secret too', () => {
  const echo = (key: string) =>
    jsonResponse(401, { error: { message: `Incorrect API key provided: ${key}.`, type: 'invalid_request_error' } });

  it('redacts the key of a client passed in', async () => {
    const wire = await serve([echo('sk-client-key-123456')]);
    const client = new OpenAI({ apiKey: 'sk-client-key-123456', baseURL: `${wire.url}/v1` });
    const error = await failure(openaiProvider({ model: 'm', client }).stream(request()));
    expect(error.message).not.toContain('sk-client-key-123456');
  });

  it('redacts a key read from OPENAI_API_KEY', async () => {
    const wire = await serve([echo('sk-environment-key-987654')]);
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = 'sk-environment-key-987654';
    try {
      const error = await failure(openaiProvider({ model: 'm', baseURL: `${wire.url}/v1` }).stream(request()));
      expect(error).toMatchObject({ status: 401, code: 'authentication' });
      expect(error.message).not.toContain('sk-environment-key-987654');
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
  });
});

describe('openaiProvider: failures over the wire', () => {
  it('classifies HTTP errors from the SDK', async () => {
    const wire = await serve([
      jsonResponse(429, { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after-ms': '1500' }),
      jsonResponse(400, { error: { message: 'bad', type: 'invalid_request_error', code: null } }),
    ]);
    expect(await failure(provider(wire).stream(request()))).toMatchObject({
      code: 'rate_limit',
      retryable: true,
      status: 429,
      retryAfterMs: 1500,
    });
    expect(await failure(provider(wire).stream(request()))).toMatchObject({ code: 'bad_request', retryable: false, status: 400 });
  });

  it('classifies an in-band error chunk inside a 200 stream', async () => {
    const wire = await serve([
      openaiSse([chunk({ content: 'partial' }), { error: { message: 'upstream overloaded', code: 502 } }]),
      openaiSse([chunk({ content: 'x' }), { error: { message: 'Token limit reached', code: 400 } }]),
    ]);
    expect(await failure(provider(wire).stream(request()))).toMatchObject({ code: 'server', retryable: true, status: 502 });
    expect(await failure(provider(wire).stream(request()))).toMatchObject({ code: 'bad_request', retryable: false, status: 400 });
  });

  it('connection refused is a retryable network error', async () => {
    const url = await closedPortUrl();
    const error = await failure(openaiProvider({ model: 'm', apiKey, baseURL: `${url}/v1` }).stream(request()));
    expect(error).toMatchObject({ code: 'network', retryable: true });
  });

  it('a reset before the response is a retryable network error', async () => {
    const wire = await serve([(_request, control) => void control.socket.destroy()]);
    expect(await failure(provider(wire).stream(request()))).toMatchObject({ code: 'network', retryable: true });
  });

  it('a reset mid-stream is a retryable network error, after the deltas already seen', async () => {
    const wire = await serve([
      async (_request, control) => {
        control.res.writeHead(200, { 'content-type': 'text/event-stream' });
        control.res.write(`data: ${JSON.stringify(chunk({ content: 'Hel' }))}\n\n`);
        await control.sleep(20);
        control.socket.destroy();
      },
    ]);
    const seen: ProviderEvent[] = [];
    const error = await failure(
      (async function* () {
        for await (const event of provider(wire).stream(request())) {
          seen.push(event);
          yield event;
        }
      })(),
    );
    expect(seen).toEqual([{ type: 'text.delta', delta: 'Hel' }]);
    expect(error).toMatchObject({ code: 'network', retryable: true });
  });

  it('a stream that ends without finish_reason or [DONE] is a retryable incomplete stream', async () => {
    const wire = await serve([openaiSse([chunk({ content: 'Hel' })], { done: false })]);
    expect(await failure(provider(wire).stream(request()))).toMatchObject({ code: 'incomplete_stream', retryable: true });
  });

  it('a malformed SSE data line is a retryable incomplete stream', async () => {
    const wire = await serve([
      {
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        body: `data: ${JSON.stringify(chunk({ content: 'a' }))}\n\ndata: {"id":"x","choi\n\n`,
      },
    ]);
    // The SDK logs the bad line to stderr before it throws.
    expect(await failure(provider(wire).stream(request()))).toMatchObject({ code: 'incomplete_stream', retryable: true });
  });

  it('a non-streamed body cut short is retryable', async () => {
    const wire = await serve([
      async (_request, control) => {
        control.res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
        control.res.write('{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"content":"Hel');
        await control.sleep(20);
        control.socket.destroy();
      },
      {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: '{"id":"x","object":"chat.completion","choices":[{"index":0,"message":',
      },
    ]);
    const cut = await failure(provider(wire, { stream: false }).stream(request()));
    expect(cut.retryable).toBe(true);
    expect(['network', 'incomplete_stream']).toContain(cut.code);
    const truncated = await failure(provider(wire, { stream: false }).stream(request()));
    expect(truncated).toMatchObject({ code: 'incomplete_stream', retryable: true });
  });

  it('aborting the signal before the first byte fails as aborted and closes the connection', async () => {
    const wire = await serve([async (_request, control) => control.sleep(5_000)]);
    const controller = new AbortController();
    const stream = provider(wire).stream(request({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    expect(await failure(stream)).toMatchObject({ code: 'aborted', retryable: false });
    await wire.waitForRequestSocketClosed(0);
  });

  it('aborting the signal mid-stream fails as aborted (not as a complete or truncated response) and closes the connection', async () => {
    const wire = await serve([
      async (_request, control) => {
        control.res.writeHead(200, { 'content-type': 'text/event-stream' });
        control.res.write(`data: ${JSON.stringify(chunk({ content: 'Hel' }))}\n\n`);
        await control.sleep(5_000);
      },
    ]);
    const controller = new AbortController();
    const events: ProviderEvent[] = [];
    let caught: unknown;
    try {
      for await (const event of provider(wire).stream(request({ signal: controller.signal }))) {
        events.push(event);
        controller.abort();
      }
    } catch (error) {
      caught = error;
    }
    expect(events).toEqual([{ type: 'text.delta', delta: 'Hel' }]);
    expect(caught).toMatchObject({ code: 'aborted', retryable: false });
    await wire.waitForRequestSocketClosed(0);
  });

  it('stopping iteration early (the machine leaving the state) closes the connection', async () => {
    const wire = await serve([
      async (_request, control) => {
        control.res.writeHead(200, { 'content-type': 'text/event-stream' });
        control.res.write(`data: ${JSON.stringify(chunk({ content: 'Hel' }))}\n\n`);
        await control.sleep(5_000);
      },
    ]);
    for await (const event of provider(wire).stream(request())) {
      expect(event).toEqual({ type: 'text.delta', delta: 'Hel' });
      break;
    }
    await wire.waitForRequestSocketClosed(0);
  });
});
