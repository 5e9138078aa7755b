/**
 * actorloop/ai-sdk: an AI SDK language model as a provider (DESIGN §17), through the real provider
 * package `@ai-sdk/google` over real HTTP to a local server speaking the Gemini API's own framing
 * (`:streamGenerateContent?alt=sse`). Streaming text, reasoning and tool calls; thought signatures
 * kept in the history and sent back byte for byte; media parts; usage with cache tokens; errors
 * classified for the machine and never retried inside the adapter; a cancel closing the socket;
 * fallback between an adapter provider and a native one.
 */
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { createConversationMachine, defineTool, InvalidOptionsError, openaiProvider, type Message } from '../src/index.js';
import { aiSdkError, aiSdkProvider } from '../src/providers/ai-sdk/index.js';
import { toAiSdkPrompt } from '../src/providers/ai-sdk/to-ai-sdk-prompt.js';
import { expectValidHistory } from './support/run-conversation.js';
import { serveEachTest } from './support/serve-each-test.js';
import { closedPortUrl, jsonResponse, openaiSse, type WireServer, type WireStep } from './support/wire-server.js';

const serve = serveEachTest();

/** A Gemini SSE stream: one `data:` line per chunk, no `[DONE]`. */
function geminiSse(chunks: unknown[]): WireStep {
  return {
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    body: chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`).join(''),
  };
}

const usage = (prompt: number, output: number, extra: Record<string, number> = {}) => ({
  usageMetadata: { promptTokenCount: prompt, candidatesTokenCount: output, totalTokenCount: prompt + output, ...extra },
});
const candidate = (parts: unknown[], finishReason?: string) => ({
  candidates: [{ content: { parts, role: 'model' }, index: 0, ...(finishReason ? { finishReason } : {}) }],
});

const signature = 'CsYBAY89a1/thought-signature-of-the-call==';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

function google(server: WireServer) {
  return createGoogleGenerativeAI({ apiKey: 'test-key', baseURL: `${server.url}/v1beta` })('gemini-2.5-flash');
}

async function run(
  server: WireServer,
  content = 'What is 2+3?',
  extra: Parameters<typeof createConversationMachine>[0] extends infer O ? Partial<O> : never = {},
) {
  const machine = createConversationMachine({ provider: aiSdkProvider(google(server)), tools: [add], retry: false, ...extra });
  const actor = createActor(machine, { input: {} }).start();
  actor.send({ type: 'user.message', content });
  return toPromise(actor);
}

describe('aiSdkProvider with @ai-sdk/google', () => {
  it('a tool loop: the call with its thought signature, the result, the answer; the signature goes back byte for byte', async () => {
    const server = await serve([
      geminiSse([
        { ...candidate([{ text: 'Thinking about sums.', thought: true, thoughtSignature: 'c2lnLXRob3VnaHQ=' }]), ...usage(20, 5) },
        {
          ...candidate([{ functionCall: { name: 'add', args: { a: 2, b: 3 } }, thoughtSignature: signature }], 'STOP'),
          ...usage(20, 12, { thoughtsTokenCount: 7 }),
        },
      ]),
      geminiSse([
        { ...candidate([{ text: '2 + 3 = ' }]) },
        { ...candidate([{ text: '5.' }], 'STOP'), ...usage(40, 4, { cachedContentTokenCount: 16 }) },
      ]),
    ]);
    const output = await run(server);
    expect(output.status, JSON.stringify(output.error)).toBe('done');
    expect(output.text).toBe('2 + 3 = 5.');
    expectValidHistory(output.messages);
    const call = (output.messages[1] as Extract<Message, { role: 'assistant' }>).content.find((part) => part.type === 'tool-call');
    expect(call).toMatchObject({
      toolName: 'add',
      args: { a: 2, b: 3 },
      providerMetadata: { 'ai-sdk': { google: { thoughtSignature: signature } } },
    });
    // The second request carries the call back with its signature, exactly, and the function's response.
    const sent = server.requests[1]?.body as { contents: Array<{ role: string; parts: Array<Record<string, unknown>> }> };
    const modelTurn = sent.contents.find((turn) => turn.role === 'model');
    // The thought (with its own signature) and the call (with its) go back as they came.
    expect(modelTurn?.parts).toEqual([
      { text: 'Thinking about sums.', thought: true, thoughtSignature: 'c2lnLXRob3VnaHQ=' },
      { functionCall: { id: expect.any(String) as unknown, name: 'add', args: { a: 2, b: 3 } }, thoughtSignature: signature },
    ]);
    expect(server.requests[1]?.rawBody).toContain(JSON.stringify(signature));
    expect(JSON.stringify(sent.contents.at(-1))).toContain('"functionResponse"');
    // Usage: input counts its cached part; output counts the thoughts (Gemini bills them as output), reported apart too.
    expect(output.usage).toMatchObject({ inputTokens: 60, outputTokens: 23, cachedInputTokens: 16, reasoningTokens: 7 });
    // The wire server keeps the path without its query (`?alt=sse`).
    expect(server.requests[0]?.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
  });

  it('an image part goes as inlineData; the system prompt as systemInstruction', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const server = await serve([geminiSse([{ ...candidate([{ text: 'A pixel.' }], 'STOP'), ...usage(300, 3) }])]);
    const machine = createConversationMachine({ provider: aiSdkProvider(google(server)), system: 'Be brief.', retry: false });
    const actor = createActor(machine, { input: {} }).start();
    actor.send({
      type: 'user.message',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image', data: png, mediaType: 'image/png' },
      ],
    });
    expect((await toPromise(actor)).text).toBe('A pixel.');
    const body = server.requests[0]?.body as { contents: unknown[]; systemInstruction: unknown };
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data: png } }] },
    ]);
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
  });

  it('errors are classified for the machine: 429 retried after retry-after, 400 not retried, a cut stream retried', async () => {
    const tooMany = jsonResponse(
      429,
      { error: { code: 429, message: 'Resource exhausted.', status: 'RESOURCE_EXHAUSTED' } },
      { 'retry-after': '0' },
    );
    const answer = geminiSse([{ ...candidate([{ text: 'ok' }], 'STOP'), ...usage(5, 1) }]);
    const server = await serve([tooMany, answer]);
    const retried = await run(server, 'hi', { retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5, jitter: false } });
    expect(retried.status, JSON.stringify(retried.error)).toBe('done');
    expect(
      server.requests.map((request) => request.path),
      JSON.stringify(retried),
    ).toHaveLength(2);

    const bad = await serve([
      jsonResponse(400, { error: { code: 400, message: 'Invalid JSON payload received.', status: 'INVALID_ARGUMENT' } }),
    ]);
    const refused = await run(bad, 'hi', { retry: { maxRetries: 3, initialDelayMs: 1, maxDelayMs: 5, jitter: false } });
    expect(refused).toMatchObject({ status: 'error', error: { status: 400, retryable: false, code: 'bad_request' } });
    expect(bad.requests).toHaveLength(1);

    const cut = await serve([geminiSse([{ ...candidate([{ text: 'part' }]) }]), answer]);
    const resumed = await run(cut, 'hi', { retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5, jitter: false } });
    expect(resumed.status).toBe('done');
    expect(cut.requests).toHaveLength(2);
  });

  it('falls back from the adapter to a native provider, and from a native one to the adapter', async () => {
    const down = jsonResponse(503, { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } });
    const gemini = await serve([down, geminiSse([{ ...candidate([{ text: 'from gemini' }], 'STOP'), ...usage(5, 2) }])]);
    const openai = await serve([
      openaiSse([
        {
          id: 'c',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'gpt-4o',
          choices: [{ index: 0, delta: { content: 'from openai' }, finish_reason: 'stop' }],
        },
      ]),
      jsonResponse(503, { error: { message: 'overloaded', type: 'server_error' } }),
    ]);
    const native = openaiProvider({ model: 'gpt-4o', apiKey: 'sk', baseURL: `${openai.url}/v1` });
    const first = await run(gemini, 'hi', { provider: [aiSdkProvider(google(gemini)), native] });
    expect(first.text).toBe('from openai');
    const second = await run(gemini, 'hi', { provider: [native, aiSdkProvider(google(gemini))] });
    expect(second.text).toBe('from gemini');
  });

  it('nothing listening: a network error, retried by the machine and then the run ends in error', async () => {
    const url = await closedPortUrl();
    const model = createGoogleGenerativeAI({ apiKey: 'test-key', baseURL: `${url}/v1beta` })('gemini-2.5-flash');
    const retries: unknown[] = [];
    const machine = createConversationMachine({
      provider: aiSdkProvider(model),
      retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 2, jitter: false },
    });
    const actor = createActor(machine, { input: {} });
    actor.on('request.retry', (event) => retries.push(event));
    actor.start();
    actor.send({ type: 'user.message', content: 'hi' });
    expect(await toPromise(actor)).toMatchObject({ status: 'error', error: { code: 'network', retryable: true } });
    expect(retries).toHaveLength(1);
  });

  it("an error part in the model's stream fails the request, classified", async () => {
    // The specification's own error part, as a provider package emits it for an in-band failure.
    const model = {
      specificationVersion: 'v3' as const,
      provider: 'fake.chat',
      modelId: 'm',
      doStream: async () => ({
        stream: new ReadableStream({
          start(controller) {
            controller.enqueue({ type: 'text-start', id: 't' });
            controller.enqueue({ type: 'text-delta', id: 't', delta: 'par' });
            controller.enqueue({ type: 'error', error: Object.assign(new Error('overloaded'), { statusCode: 529, isRetryable: true }) });
            controller.close();
          },
        }),
      }),
    };
    const actor = createActor(createConversationMachine({ provider: aiSdkProvider(model), retry: false }), { input: {} }).start();
    actor.send({ type: 'user.message', content: 'hi' });
    expect(await toPromise(actor)).toMatchObject({ status: 'error', error: { status: 529, retryable: true, message: 'overloaded' } });
  });

  it('a cancel while the answer streams closes the connection', async () => {
    const server = await serve([
      {
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        body: `data: ${JSON.stringify(candidate([{ text: 'slow' }]))}\r\n\r\n`,
        holdOpen: true,
      } as WireStep,
    ]);
    const machine = createConversationMachine({ provider: aiSdkProvider(google(server)), retry: false });
    const actor = createActor(machine, { input: {} }).start();
    actor.on('text.delta', () => actor.send({ type: 'cancel', reason: 'enough' }));
    actor.send({ type: 'user.message', content: 'hi' });
    expect(await toPromise(actor)).toMatchObject({ status: 'halted', reason: 'cancelled' });
  });
});

describe('the adapter itself', () => {
  it('refuses what is not a model of a specification version it reads, naming what it expected', () => {
    expect(() => aiSdkProvider({} as never)).toThrow(InvalidOptionsError);
    expect(() => aiSdkProvider({ specificationVersion: 'v1', provider: 'x', modelId: 'y', doStream: () => undefined } as never)).toThrow(
      /'v2' \(ai 5's provider packages\), 'v3' \(ai 6's\) or 'v4' \(ai 7's\)/,
    );
  });

  it("classifies the AI SDK's APICallError by status, retry-after and body; a failed fetch is a network error", () => {
    const apiError = (fields: Record<string, unknown>) => Object.assign(new Error('boom'), { name: 'AI_APICallError', ...fields });
    expect(aiSdkError(apiError({ statusCode: 429, responseHeaders: { 'retry-after': '2' }, isRetryable: true }))).toMatchObject({
      code: 'rate_limit',
      retryable: true,
      retryAfterMs: 2000,
    });
    expect(aiSdkError(apiError({ statusCode: 400, isRetryable: false, responseBody: '{"error":{"message":"x"}}' }))).toMatchObject({
      code: 'bad_request',
      retryable: false,
    });
    expect(aiSdkError(apiError({ statusCode: 503, isRetryable: true }))).toMatchObject({ retryable: true, status: 503 });
    expect(aiSdkError(apiError({ isRetryable: true, cause: new TypeError('fetch failed') }))).toMatchObject({
      code: 'network',
      retryable: true,
    });
  });

  it('a garbled or cut answer is an incomplete stream; a 200 with a failure underneath is classified by that failure', () => {
    for (const name of ['AI_JSONParseError', 'AI_InvalidResponseDataError'])
      expect(aiSdkError(Object.assign(new Error('bad chunk'), { name }))).toMatchObject({ code: 'incomplete_stream', retryable: true });
    // provider-utils wraps a connection dropped mid-body as "Failed to process successful response", status 200.
    const dropped = Object.assign(new Error('Failed to process successful response'), {
      name: 'AI_APICallError',
      statusCode: 200,
      isRetryable: false,
    });
    expect(
      aiSdkError(Object.assign(dropped, { cause: Object.assign(new TypeError('terminated'), { cause: { code: 'ECONNRESET' } }) })),
    ).toMatchObject({
      retryable: true,
    });
    expect(
      aiSdkError(Object.assign(new Error('Failed to process successful response'), { statusCode: 200, cause: new Error('?') })),
    ).toMatchObject({
      code: 'incomplete_stream',
      retryable: true,
    });
  });

  it("Bedrock's 403 UnrecognizedClientException is a bad key (authentication), its AccessDenied a permission", () => {
    const bedrock = (type: string) =>
      Object.assign(new Error('denied'), {
        name: 'AI_APICallError',
        statusCode: 403,
        isRetryable: false,
        responseHeaders: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/` },
      });
    expect(aiSdkError(bedrock('UnrecognizedClientException'))).toMatchObject({ code: 'authentication', status: 403, retryable: false });
    expect(aiSdkError(bedrock('AccessDeniedException'))).toMatchObject({ code: 'permission', status: 403 });
  });

  it('the prompt: v4 wraps file data; a native wire’s reasoning is left out; a tool result with an image goes as content', () => {
    const history: Message[] = [
      { role: 'user', content: [{ type: 'image', data: 'https://example.com/a.png' }] },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'native thinking', signature: 'anthropic-sig' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'shot', args: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'shot',
            result: '[image]',
            content: [{ type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' }],
          },
        ],
      },
    ];
    const v3 = toAiSdkPrompt(history, undefined, 'v3');
    expect(v3[0]).toEqual({ role: 'user', content: [{ type: 'file', data: new URL('https://example.com/a.png'), mediaType: 'image/*' }] });
    expect(v3[1]).toEqual({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'shot', input: {} }] });
    expect(v3[2]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c1',
          toolName: 'shot',
          output: { type: 'content', value: [{ type: 'image-data', data: 'iVBORw0KGgo=', mediaType: 'image/png' }] },
        },
      ],
    });
    const v4 = toAiSdkPrompt(history, undefined, 'v4');
    expect(v4[0]).toEqual({
      role: 'user',
      content: [{ type: 'file', data: { type: 'url', url: new URL('https://example.com/a.png') }, mediaType: 'image/*' }],
    });
  });
});
