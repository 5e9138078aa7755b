/**
 * `openaiProvider({ api: 'responses' })` through the real `openai` SDK over real HTTP: the request
 * it builds in each mode, the events it makes of Responses streams and bodies, and its failures.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { createConversationMachine } from '../src/machines/chart/conversation.js';
import { reasoningEffort } from '../src/middleware/reasoning-effort.js';
import { InvalidOptionsError } from '../src/errors/invalid-options-error.js';
import { ProviderError } from '../src/model/errors/provider-error.js';
import type { Message } from '../src/model/messages.js';
import { isOpenAIReasoningModel, openaiProvider, type OpenAIResponsesProviderOptions } from '../src/providers/openai/index.js';
import type { OpenAIResponsesClientLike } from '../src/providers/openai-responses/wire-types.js';
import type { ProviderEvent, ProviderRequest, ToolDescription } from '../src/model/provider.js';
import { inBandError, responsesEvents, responsesJson, responsesStream, textAnswer } from './support/responses-events.js';
import { anthropicSse, closedPortUrl, jsonResponse, startWireServer, type WireServer, type WireStep } from './support/wire-server.js';

const apiKey = 'sk-test-responses-0123456789';
const weatherTool: ToolDescription = {
  name: 'weather',
  description: 'Weather for a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(steps: WireStep[]): Promise<WireServer> {
  server = await startWireServer(steps);
  return server;
}

function request(overrides: Partial<ProviderRequest> = {}): ProviderRequest {
  return { messages: [{ role: 'user', content: 'Hi' }], tools: [], signal: new AbortController().signal, ...overrides };
}

function provider(wire: WireServer, options: Partial<OpenAIResponsesProviderOptions> = {}) {
  return openaiProvider({ api: 'responses', model: 'gpt-5-mini', apiKey, baseURL: `${wire.url}/v1`, ...options });
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

const finishOf = (events: ProviderEvent[]) => {
  const finish = events.at(-1);
  if (finish?.type !== 'finish') throw new Error('no finish event');
  return finish;
};
const deltas = (events: ProviderEvent[], type: 'text.delta' | 'reasoning.delta') =>
  events.flatMap((event) => (event.type === type ? [event.delta] : [])).join('');

describe('openaiProvider({ api: "responses" }): the request', () => {
  it('stateless by default: store false, the whole history as input, instructions, flat tools with strict false, SDK retries off', async () => {
    const wire = await serve([textAnswer('Sunny.')]);
    const history: Message[] = [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'weather', args: { city: 'Paris' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'weather', result: { sky: 'clear' } }] },
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'And tomorrow?' }] },
    ];
    await collect(
      provider(wire, { model: 'gpt-4o' }).stream(request({ system: 'You are terse.', messages: history, tools: [weatherTool] })),
    );
    expect(wire.requests[0]!.path).toBe('/v1/responses');
    expect(wire.requests[0]!.headers['x-stainless-retry-count']).toBe('0');
    expect(wire.requests[0]!.body).toEqual({
      model: 'gpt-4o',
      instructions: 'You are terse.',
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '{"sky":"clear"}' },
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'input_text', text: 'And tomorrow?' }] },
      ],
      tools: [{ type: 'function', name: 'weather', description: 'Weather for a city', parameters: weatherTool.inputSchema, strict: false }],
      store: false,
      stream: true,
    });
  });

  it('asks reasoning models for encrypted reasoning, merges include and reasoning with params, keeps params', async () => {
    const wire = await serve([textAnswer('a'), textAnswer('b'), textAnswer('c')]);
    await collect(
      provider(wire, {
        reasoningEffort: 'low',
        reasoningSummary: 'auto',
        strict: true,
        params: {
          include: ['message.output_text.logprobs'],
          reasoning: { effort: 'high' },
          max_output_tokens: 500,
          text: { verbosity: 'low' },
        },
      }).stream(request({ tools: [weatherTool] })),
    );
    expect(wire.requests[0]!.body).toMatchObject({
      include: ['message.output_text.logprobs', 'reasoning.encrypted_content'],
      reasoning: { effort: 'low', summary: 'auto' },
      max_output_tokens: 500,
      text: { verbosity: 'low' },
      tools: [{ strict: true }],
      store: false,
    });
    // gpt-4o refuses encrypted content ("Encrypted content is not supported with this model").
    await collect(provider(wire, { model: 'gpt-4o' }).stream(request()));
    expect(wire.requests[1]!.body).not.toHaveProperty('include');
    expect(wire.requests[1]!.body).not.toHaveProperty('reasoning');
    await collect(provider(wire, { model: 'my-azure-deployment', encryptedReasoning: true }).stream(request()));
    expect(wire.requests[2]!.body).toMatchObject({ include: ['reasoning.encrypted_content'] });
  });

  it('tells reasoning models by their id', () => {
    for (const model of [
      'o1',
      'o3-mini',
      'o4-mini-2025-04-16',
      'gpt-5',
      'gpt-5-nano',
      'gpt-5.6-sol',
      'openai/gpt-5-mini',
      'codex-mini-latest',
    ]) {
      expect(isOpenAIReasoningModel(model), model).toBe(true);
    }
    for (const model of ['gpt-4o', 'gpt-4.1-nano', 'gpt-5-chat-latest', 'gpt-5.1-chat-latest', 'chatgpt-4o-latest', 'omni-moderation']) {
      expect(isOpenAIReasoningModel(model), model).toBe(false);
    }
  });

  it('previousResponseId: store true, previous_response_id of the last stored response, only the messages after it', async () => {
    const wire = await serve([textAnswer('first'), textAnswer('second')]);
    const chained = provider(wire, { previousResponseId: true });
    const first = finishOf(await collect(chained.stream(request({ system: 'Terse.' }))));
    const history: Message[] = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: first.content as Message['content'] & [] },
      { role: 'user', content: 'Again' },
    ];
    await collect(chained.stream(request({ system: 'Terse.', messages: history })));
    const [one, two] = wire.requests.map((sent) => sent.body as Record<string, unknown>);
    expect(one).toMatchObject({ store: true, instructions: 'Terse.', input: [{ role: 'user', content: 'Hi' }] });
    expect(one).not.toHaveProperty('previous_response_id');
    expect(one).not.toHaveProperty('include');
    const responseId = (first.content[0] as { providerMetadata?: { openai?: { responseId?: string } } }).providerMetadata?.openai
      ?.responseId;
    expect(responseId).toMatch(/^resp_/);
    // Instructions are not carried over by previous_response_id: they go again.
    expect(two).toEqual({
      model: 'gpt-5-mini',
      instructions: 'Terse.',
      input: [{ role: 'user', content: 'Again' }],
      store: true,
      previous_response_id: responseId,
      stream: true,
    });
  });

  it('store: true keeps ids, and sends reasoning without encrypted content by id, its follower by id too', async () => {
    const wire = await serve([textAnswer('ok')]);
    const history: Message[] = [
      { role: 'user', content: 'Count' },
      {
        role: 'assistant',
        content: [
          {
            type: 'reasoning',
            text: 'one\n\ntwo',
            providerMetadata: { openai: { itemId: 'rs_1', responseId: 'resp_1', summary: ['one', 'two'] } },
          },
          { type: 'text', text: '3', providerMetadata: { openai: { itemId: 'msg_1', responseId: 'resp_1', phase: 'final_answer' } } },
        ],
      },
      { role: 'user', content: 'Again' },
    ];
    await collect(provider(wire, { store: true, encryptedReasoning: false }).stream(request({ messages: history })));
    expect((wire.requests[0]!.body as { input: unknown[] }).input).toEqual([
      { role: 'user', content: 'Count' },
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [
          { type: 'summary_text', text: 'one' },
          { type: 'summary_text', text: 'two' },
        ],
      },
      {
        type: 'message',
        id: 'msg_1',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: '3', annotations: [] }],
        phase: 'final_answer',
      },
      { role: 'user', content: 'Again' },
    ]);
    expect(wire.requests[0]!.body).toMatchObject({ store: true });
  });
});

describe('openaiProvider({ api: "responses" }): streams', () => {
  it('text, reasoning summary parts joined by a blank line, encrypted reasoning kept, usage with cached and reasoning tokens', async () => {
    const wire = await serve([
      responsesStream({
        items: [
          { type: 'reasoning', summary: ['**Plan**\n\nAdd them.', '**Check**\n\nFive.'], encrypted: 'gAAAA-enc-1' },
          { type: 'message', text: '2 + 3 = 5.', phase: 'final_answer' },
        ],
        usage: { input: 40, output: 90, cached: 16, reasoning: 64 },
      }),
    ]);
    const events = await collect(provider(wire).stream(request()));
    const finish = finishOf(events);
    expect(finish.content).toEqual([
      {
        type: 'reasoning',
        text: '**Plan**\n\nAdd them.\n\n**Check**\n\nFive.',
        providerMetadata: { openai: { encryptedContent: 'gAAAA-enc-1', summary: ['**Plan**\n\nAdd them.', '**Check**\n\nFive.'] } },
      },
      { type: 'text', text: '2 + 3 = 5.', providerMetadata: { openai: { phase: 'final_answer' } } },
    ]);
    expect(deltas(events, 'reasoning.delta')).toBe('**Plan**\n\nAdd them.\n\n**Check**\n\nFive.');
    expect(deltas(events, 'text.delta')).toBe('2 + 3 = 5.');
    expect(finish).toMatchObject({ finishReason: 'stop', rawFinishReason: 'completed' });
    expect(finish.usage).toEqual({ inputTokens: 40, outputTokens: 90, totalTokens: 130, cachedInputTokens: 16, reasoningTokens: 64 });
  });

  it('function calls: deltas keyed by call_id with the name first, commentary phase kept, finish tool-calls', async () => {
    const wire = await serve([
      responsesStream({
        items: [
          { type: 'message', text: 'Looking it up.', phase: 'commentary' },
          { type: 'function_call', callId: 'call_a', name: 'weather', args: '{"city":"Paris"}', chunks: ['{"city"', ':"Paris"}'] },
          { type: 'function_call', callId: 'call_b', name: 'weather', args: '{"city":"Rome"}' },
        ],
      }),
    ]);
    const events = await collect(provider(wire).stream(request({ tools: [weatherTool] })));
    expect(events.filter((event) => event.type === 'tool.call.delta' && event.toolCallId === 'call_a')).toEqual([
      { type: 'tool.call.delta', toolCallId: 'call_a', name: 'weather', argsDelta: '' },
      { type: 'tool.call.delta', toolCallId: 'call_a', argsDelta: '{"city"' },
      { type: 'tool.call.delta', toolCallId: 'call_a', argsDelta: ':"Paris"}' },
    ]);
    const finish = finishOf(events);
    expect(finish.content).toEqual([
      { type: 'text', text: 'Looking it up.', providerMetadata: { openai: { phase: 'commentary' } } },
      { type: 'tool-call', toolCallId: 'call_a', toolName: 'weather', argsText: '{"city":"Paris"}' },
      { type: 'tool-call', toolCallId: 'call_b', toolName: 'weather', argsText: '{"city":"Rome"}' },
    ]);
    expect(finish.finishReason).toBe('tool-calls');
  });

  it('response.incomplete: a call cut off at max_output_tokens is dropped, a whole one kept, finish length', async () => {
    const wire = await serve([
      responsesStream({
        status: 'incomplete',
        items: [
          { type: 'reasoning', encrypted: 'gAAAA-enc-2' },
          { type: 'function_call', callId: 'call_whole', name: 'weather', args: '{"city":"Paris"}' },
          { type: 'function_call', callId: 'call_cut', name: 'weather', args: '{"city":"Ro', status: 'incomplete' },
        ],
      }),
    ]);
    const finish = finishOf(await collect(provider(wire).stream(request({ tools: [weatherTool] }))));
    expect(finish.content).toEqual([
      { type: 'reasoning', text: '', providerMetadata: { openai: { encryptedContent: 'gAAAA-enc-2' } } },
      { type: 'tool-call', toolCallId: 'call_whole', toolName: 'weather', argsText: '{"city":"Paris"}' },
    ]);
    expect(finish).toMatchObject({ finishReason: 'length', rawFinishReason: 'max_output_tokens' });
  });

  it('a refusal is text, and the finish says refusal; content_filter is content-filter', async () => {
    const wire = await serve([
      responsesStream({ items: [{ type: 'message', text: "I can't help with that.", refusal: true }] }),
      responsesStream({
        status: 'incomplete',
        incompleteReason: 'content_filter',
        items: [{ type: 'message', text: 'Partial', status: 'incomplete' }],
      }),
    ]);
    const refused = await collect(provider(wire).stream(request()));
    expect(finishOf(refused)).toMatchObject({ finishReason: 'refusal', content: [{ type: 'text', text: "I can't help with that." }] });
    expect(deltas(refused, 'text.delta')).toBe("I can't help with that.");
    const filtered = finishOf(await collect(provider(wire).stream(request())));
    expect(filtered).toMatchObject({
      finishReason: 'content-filter',
      rawFinishReason: 'content_filter',
      content: [{ type: 'text', text: 'Partial' }],
    });
  });

  it('a server that sends no deltas still yields deltas that add up to the content', async () => {
    const events = responsesEvents({
      items: [
        { type: 'reasoning', summary: ['Think.'], encrypted: 'enc' },
        { type: 'message', text: 'Done.' },
        { type: 'function_call', callId: 'call_x', name: 'weather', args: '{"city":"Oslo"}' },
      ],
    }).filter((event) => !event.type.endsWith('.delta'));
    const wire = await serve([anthropicSse(events)]);
    const streamed = await collect(provider(wire).stream(request({ tools: [weatherTool] })));
    expect(deltas(streamed, 'reasoning.delta')).toBe('Think.');
    expect(deltas(streamed, 'text.delta')).toBe('Done.');
    expect(streamed.filter((event) => event.type === 'tool.call.delta')).toEqual([
      { type: 'tool.call.delta', toolCallId: 'call_x', name: 'weather', argsDelta: '' },
      { type: 'tool.call.delta', toolCallId: 'call_x', argsDelta: '{"city":"Oslo"}' },
    ]);
  });

  it('the encrypted content kept is the one of output_item.done, not of .added or of the terminal response', async () => {
    const events = responsesEvents({
      items: [
        { type: 'reasoning', encrypted: 'enc-done' },
        { type: 'message', text: 'x' },
      ],
    }).map((event) => {
      if (event.type === 'response.output_item.added' && (event.item as { type: string }).type === 'reasoning') {
        return { ...event, item: { ...(event.item as object), encrypted_content: 'enc-added' } };
      }
      if (event.type === 'response.completed') {
        const response = event.response as { output: Array<Record<string, unknown>> };
        return {
          ...event,
          response: {
            ...response,
            output: response.output.map((item) => (item.type === 'reasoning' ? { ...item, encrypted_content: 'enc-terminal' } : item)),
          },
        };
      }
      return event;
    });
    const wire = await serve([anthropicSse(events)]);
    const finish = finishOf(await collect(provider(wire).stream(request())));
    expect(finish.content[0]).toEqual({ type: 'reasoning', text: '', providerMetadata: { openai: { encryptedContent: 'enc-done' } } });
  });
});

describe('openaiProvider({ api: "responses" }): non-streamed', () => {
  it('maps a response body to the same events: deltas per part, then finish', async () => {
    const wire = await serve([
      responsesJson({
        items: [
          { type: 'reasoning', summary: ['Plan.'], encrypted: 'enc-json' },
          { type: 'function_call', callId: 'call_j', name: 'weather', args: '{"city":"Lima"}' },
        ],
        usage: { input: 7, output: 3 },
      }),
    ]);
    const events = await collect(provider(wire, { stream: false }).stream(request({ tools: [weatherTool] })));
    expect(wire.requests[0]!.body).toMatchObject({ stream: false });
    expect(events).toEqual([
      { type: 'reasoning.delta', delta: 'Plan.' },
      { type: 'tool.call.delta', toolCallId: 'call_j', name: 'weather', argsDelta: '' },
      { type: 'tool.call.delta', toolCallId: 'call_j', argsDelta: '{"city":"Lima"}' },
      {
        type: 'finish',
        content: [
          { type: 'reasoning', text: 'Plan.', providerMetadata: { openai: { encryptedContent: 'enc-json' } } },
          { type: 'tool-call', toolCallId: 'call_j', toolName: 'weather', argsText: '{"city":"Lima"}' },
        ],
        finishReason: 'tool-calls',
        rawFinishReason: 'completed',
        usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10, cachedInputTokens: 0, reasoningTokens: 0 },
        model: 'gpt-5-mini-2025-08-07',
        responseId: expect.stringMatching(/^resp_/) as unknown,
      },
    ]);
  });

  it('a body with status failed is classified by its code', async () => {
    const wire = await serve([
      jsonResponse(200, {
        id: 'resp_f',
        status: 'failed',
        output: [],
        error: { code: 'server_error', message: 'The server had an error.' },
      }),
      jsonResponse(200, { id: 'resp_g', status: 'failed', output: [], error: { code: 'invalid_prompt', message: 'Invalid prompt.' } }),
    ]);
    expect(await failure(provider(wire, { stream: false }).stream(request()))).toMatchObject({ code: 'server', retryable: true });
    expect(await failure(provider(wire, { stream: false }).stream(request()))).toMatchObject({ code: 'bad_request', retryable: false });
  });
});

describe('openaiProvider({ api: "responses" }): failures', () => {
  it('a history whose providerMetadata.openai is malformed fails as a bad request naming the field; nothing is sent', async () => {
    const wire = await serve([]);
    const history: ProviderRequest['messages'] = [
      { role: 'user', content: 'Hi' },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: '', providerMetadata: { openai: { encryptedContent: 42 } } },
          { type: 'text', text: 'Hello.' },
        ],
      },
      { role: 'user', content: 'Again' },
    ];
    const error = await failure(provider(wire).stream(request({ messages: history })));
    expect(error).toMatchObject({ code: 'bad_request', retryable: false });
    expect(error.message).toBe('messages[1].content[0].providerMetadata.openai.encryptedContent must be a string');
    expect(wire.requests).toHaveLength(0);
  });

  it('response.failed is classified by its code: server_error and rate_limit_exceeded are retryable', async () => {
    const wire = await serve([
      responsesStream({ items: [], status: 'failed', error: { code: 'server_error', message: 'The server had an error.' } }),
      responsesStream({ items: [], status: 'failed', error: { code: 'rate_limit_exceeded', message: 'Slow down.' } }),
      responsesStream({ items: [], status: 'failed', error: { code: 'invalid_image', message: 'Bad image.' } }),
    ]);
    expect(await failure(provider(wire).stream(request()))).toMatchObject({ code: 'server', retryable: true });
    expect(await failure(provider(wire).stream(request()))).toMatchObject({ code: 'rate_limit', retryable: true });
    const bad = await failure(provider(wire).stream(request()));
    expect(bad).toMatchObject({ code: 'bad_request', retryable: false });
    expect(bad.message).toContain('Bad image.');
  });

  it('an error event, nested (the SDK throws) or flat (the SDK yields it), is classified', async () => {
    const wire = await serve([
      inBandError({ type: 'server_error', code: 'server_error', message: 'Overloaded, try again.' }),
      inBandError({ type: 'insufficient_quota', code: 'insufficient_quota', message: 'You exceeded your current quota.' }),
      inBandError({ type: 'server_error', code: 'server_error', message: 'Flat form.' }, true),
    ]);
    expect(await failure(provider(wire).stream(request()))).toMatchObject({ code: 'server', retryable: true });
    expect(await failure(provider(wire).stream(request()))).toMatchObject({ code: 'rate_limit', retryable: false });
    expect(await failure(provider(wire).stream(request()))).toMatchObject({
      code: 'server',
      retryable: true,
      message: expect.stringContaining('Flat form.'),
    });
  });

  it('a stream without a terminal event is a retryable incomplete stream', async () => {
    const wire = await serve([responsesStream({ items: [{ type: 'message', text: 'Half an answer' }], cutAfter: 6 })]);
    expect(await failure(provider(wire).stream(request()))).toMatchObject({ code: 'incomplete_stream', retryable: true });
  });

  it('HTTP errors: 400, 401, 429 with retry-after-ms, 503; the key never shows', async () => {
    const wire = await serve([
      jsonResponse(400, { error: { message: 'Bad input', type: 'invalid_request_error', param: 'input', code: null } }),
      jsonResponse(401, {
        error: { message: `Incorrect API key provided: ${apiKey}.`, type: 'invalid_request_error', code: 'invalid_api_key' },
      }),
      jsonResponse(429, { error: { message: 'Rate limit', type: 'tokens', code: 'rate_limit_exceeded' } }, { 'retry-after-ms': '250' }),
      jsonResponse(503, { error: { message: 'Unavailable', type: 'server_error' } }),
    ]);
    expect(await failure(provider(wire).stream(request()))).toMatchObject({ status: 400, code: 'bad_request', retryable: false });
    const unauthorized = await failure(provider(wire).stream(request()));
    expect(unauthorized).toMatchObject({ status: 401, code: 'authentication', retryable: false });
    expect(unauthorized.message).not.toContain(apiKey);
    expect(await failure(provider(wire).stream(request()))).toMatchObject({
      status: 429,
      code: 'rate_limit',
      retryable: true,
      retryAfterMs: 250,
    });
    expect(await failure(provider(wire).stream(request()))).toMatchObject({ status: 503, code: 'server', retryable: true });
  });

  it('connection refused is a retryable network error', async () => {
    const refused = openaiProvider({ api: 'responses', model: 'gpt-5-mini', apiKey, baseURL: `${await closedPortUrl()}/v1` });
    expect(await failure(refused.stream(request()))).toMatchObject({ code: 'network', retryable: true });
  });

  it('aborting mid-stream fails as aborted and closes the connection', async () => {
    const wire = await serve([
      async (_request, control) => {
        control.res.writeHead(200, { 'content-type': 'text/event-stream' });
        control.res.write(anthropicSse(responsesEvents({ items: [{ type: 'message', text: 'Partial' }] }).slice(0, 5)).body);
        await control.sleep(10_000);
      },
    ]);
    const controller = new AbortController();
    const events: ProviderEvent[] = [];
    const error = await failure(
      (async function* () {
        for await (const event of provider(wire).stream(request({ signal: controller.signal }))) {
          events.push(event);
          if (event.type === 'text.delta') controller.abort();
          yield event;
        }
      })(),
    );
    expect(error).toMatchObject({ code: 'aborted', retryable: false });
    expect(events.some((event) => event.type === 'finish')).toBe(false);
    await wire.waitForRequestSocketClosed(0);
  });
});

describe('openaiProvider({ api: "responses" }): clients and options', () => {
  it('uses a client passed in (new OpenAI), its retries off per request', async () => {
    const wire = await serve([jsonResponse(500, { error: { message: 'boom', type: 'server_error' } }), textAnswer('x')]);
    const client = new OpenAI({ apiKey, baseURL: `${wire.url}/v1` }); // default maxRetries: 2
    const error = await failure(openaiProvider({ api: 'responses', model: 'gpt-5-mini', client }).stream(request()));
    expect(error).toMatchObject({ code: 'server', retryable: true, status: 500 });
    expect(wire.requests).toHaveLength(1);
  });

  it('accepts any object shaped like the client', async () => {
    const calls: unknown[] = [];
    const client: OpenAIResponsesClientLike = {
      responses: {
        async create(body, options) {
          calls.push({ body, options });
          return (async function* () {
            yield* responsesEvents({ items: [{ type: 'message', text: 'hi' }] });
          })();
        },
      },
    };
    const events = await collect(openaiProvider({ api: 'responses', model: 'm', client, name: 'wrapped' }).stream(request()));
    expect(finishOf(events).content).toEqual([{ type: 'text', text: 'hi' }]);
    expect(calls[0]).toMatchObject({ options: { maxRetries: 0 } });
  });

  it('rejects wrong options at creation, naming the option and what was expected', () => {
    const base = { api: 'responses' as const, model: 'gpt-5-mini' };
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...base, api: 'completions' }, /openaiProvider\.api: expected 'chat'.*'responses'/],
      [{ ...base, store: 'yes' }, /openaiProvider\.store: expected a boolean/],
      [{ ...base, previousResponseId: 1 }, /openaiProvider\.previousResponseId/],
      [{ ...base, previousResponseId: true, store: false }, /openaiProvider\.store: expected true or no value with previousResponseId/],
      [{ ...base, reasoningSummary: 'short' }, /openaiProvider\.reasoningSummary: expected auto \| concise \| detailed/],
      [{ ...base, sendReasoning: true }, /openaiProvider\.sendReasoning: expected no value with api: 'responses'/],
      [{ model: 'gpt-4o', store: true }, /openaiProvider\.store: expected no value unless api: 'responses'/],
      [
        { ...base, client: { chat: { completions: { create() {} } } } },
        /openaiProvider\.client: expected an OpenAI client \(with responses\.create\)/,
      ],
      [{ ...base, params: { store: true } }, /openaiProvider\.params\.store: expected the `store` option/],
      [{ ...base, params: { previous_response_id: 'resp_1' } }, /openaiProvider\.params\.previous_response_id/],
      [{ ...base, params: { background: true } }, /openaiProvider\.params\.background/],
      [{ ...base, params: { include: 'reasoning.encrypted_content' } }, /openaiProvider\.params\.include: expected an array of strings/],
      [{ ...base, name: '' }, /openaiProvider\.name/],
      [{ ...base, encryptedReasoning: 'on' }, /openaiProvider\.encryptedReasoning: expected a boolean, got "on"/],
      [
        { ...base, params: { reasoning: 'high' } },
        /openaiProvider\.params\.reasoning: expected an object such as \{ effort, summary \}, got "high"/,
      ],
      [{ ...base, params: { conversation: 'conv_1' } }, /openaiProvider\.params\.conversation: expected no `conversation`/],
    ];
    for (const [options, message] of bad) {
      expect(() => openaiProvider(options as unknown as OpenAIResponsesProviderOptions), JSON.stringify(options)).toThrow(
        InvalidOptionsError,
      );
      expect(() => openaiProvider(options as unknown as OpenAIResponsesProviderOptions), JSON.stringify(options)).toThrow(message);
    }
  });
});

describe('openaiProvider({ api: "responses" }) in a run: structured answers, middleware, failed attempts, traces', () => {
  const report = z.object({ city: z.string(), celsius: z.number() });

  it('a structured answer goes as text.format json_schema, and the answer becomes output.object', async () => {
    const wire = await serve([textAnswer('{"city":"Oslo","celsius":-3}')]);
    const machine = createConversationMachine({
      provider: provider(wire, { params: { text: { verbosity: 'low' } } }),
      output: { schema: report, name: 'weather_report', strict: true },
    });
    const actor = createActor(machine, { input: {} }).start();
    actor.send({ type: 'user.message', content: 'Weather in Oslo?' });
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'done', object: { city: 'Oslo', celsius: -3 } });
    expect((wire.requests[0]!.body as { text: unknown }).text).toMatchObject({
      verbosity: 'low',
      format: { type: 'json_schema', name: 'weather_report', strict: true, schema: { type: 'object' } },
    });
  });

  it('a text.format of the user wins over the machine’s', async () => {
    const wire = await serve([textAnswer('{"city":"Oslo","celsius":-3}')]);
    const mine = { type: 'json_schema', name: 'mine', schema: { type: 'object' }, strict: false };
    const machine = createConversationMachine({
      provider: provider(wire, { params: { text: { format: mine } } }),
      output: { schema: report, name: 'weather_report' },
    });
    const actor = createActor(machine, { input: {} }).start();
    actor.send({ type: 'user.message', content: 'Weather in Oslo?' });
    await toPromise(actor);
    expect((wire.requests[0]!.body as { text: unknown }).text).toEqual({ format: mine });
  });

  it('reasoningEffort middleware sets reasoning.effort and asks for encrypted reasoning; the provider’s own effort wins', async () => {
    const wire = await serve([textAnswer('a'), textAnswer('b')]);
    for (const own of [undefined, 'high'] as const) {
      const machine = createConversationMachine({
        provider: provider(wire, { model: 'my-azure-deployment', ...(own ? { reasoningEffort: own } : {}) }),
        middleware: [reasoningEffort('low')],
      });
      const actor = createActor(machine, { input: {} }).start();
      actor.send({ type: 'user.message', content: 'Hi' });
      await toPromise(actor);
    }
    expect(wire.requests.map((sent) => (sent.body as { reasoning?: { effort?: string } }).reasoning?.effort)).toEqual(['low', 'high']);
    expect(wire.requests[0]!.body).toMatchObject({ include: ['reasoning.encrypted_content'] });
  });

  it('finish names the answering model and the response; request.finished carries them', async () => {
    const wire = await serve([textAnswer('hi', { id: 'resp_named' })]);
    const machine = createConversationMachine({ provider: provider(wire) });
    expect(provider(wire).model).toBe('gpt-5-mini');
    const actor = createActor(machine, { input: {} });
    const finished: unknown[] = [];
    actor.on('request.finished', (event) => finished.push({ model: event.model, responseId: event.responseId }));
    actor.start().send({ type: 'user.message', content: 'Hi' });
    await toPromise(actor);
    expect(finished).toEqual([{ model: 'gpt-5-mini-2025-08-07', responseId: 'resp_named' }]);
  });

  it('a failed response that reported usage is counted apart (failedUsage), and the retry succeeds', async () => {
    const failed = responsesStream({
      items: [],
      status: 'failed',
      error: { code: 'server_error', message: 'The server had an error.' },
      usage: { input: 30, output: 4 },
      failedUsage: true,
    });
    const wire = await serve([failed, textAnswer('Back.', { usage: { input: 30, output: 2 } })]);
    const machine = createConversationMachine({
      provider: provider(wire),
      retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 1, jitter: false },
    });
    const actor = createActor(machine, { input: {} }).start();
    actor.send({ type: 'user.message', content: 'Hi' });
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'done', text: 'Back.' });
    expect(output.failedUsage).toEqual({ inputTokens: 30, outputTokens: 4, totalTokens: 34, cachedInputTokens: 0, reasoningTokens: 0 });
    expect(output.usage).toEqual({ inputTokens: 30, outputTokens: 2, totalTokens: 32, cachedInputTokens: 0, reasoningTokens: 0 });
  });
});
