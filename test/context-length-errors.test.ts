/**
 * "Context length exceeded" through the real SDKs over real HTTP (a local wire server): OpenAI Chat
 * and Responses answer a 400 with the code `context_length_exceeded` (Responses may also fail the
 * response in-band), Anthropic a 400 saying "prompt is too long". Each becomes `context_length`,
 * not retried, so the machine can compact instead of failing or retrying the same prompt.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { toProviderError } from '../src/model/errors/classify-error.js';
import { isContextLengthError, mentionsContextLength, reportsContextLength } from '../src/model/errors/context-length.js';
import { ProviderError } from '../src/model/errors/provider-error.js';
import type { Message } from '../src/model/messages.js';
import type { ProviderEvent, ProviderRequest } from '../src/model/provider.js';
import { anthropicProvider } from '../src/providers/anthropic/index.js';
import { classifyResponseFailure } from '../src/providers/errors/classify-response-failure.js';
import { openaiProvider } from '../src/providers/openai/index.js';
import { inBandError, responsesStream } from './support/responses-events.js';
import { anthropicSse, jsonResponse, startWireServer, type WireServer, type WireStep } from './support/wire-server.js';

const openaiKey = 'sk-context-length-test-0123456789';
const anthropicKey = 'sk-ant-api03-context-length-test-0123456789';

const servers: WireServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function serve(steps: WireStep[]): Promise<WireServer> {
  const server = await startWireServer(steps);
  servers.push(server);
  return server;
}

const history: Message[] = [{ role: 'user', content: 'A very long question…' }];
const request = (): ProviderRequest => ({ messages: history, tools: [], signal: new AbortController().signal });

async function failure(stream: AsyncIterable<ProviderEvent>): Promise<ProviderError> {
  try {
    for await (const _event of stream) {
      // drain
    }
  } catch (error) {
    expect(ProviderError.isInstance(error), `expected a ProviderError, got ${String(error)}`).toBe(true);
    return error as ProviderError;
  }
  throw new Error('expected the stream to fail');
}

const openaiTooLong = {
  error: {
    message:
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.",
    type: 'invalid_request_error',
    param: 'messages',
    code: 'context_length_exceeded',
  },
};

const responsesTooLong = {
  error: {
    message: 'Your input exceeds the context window of this model. Please adjust your input and try again.',
    type: 'invalid_request_error',
    param: 'input',
    code: 'context_length_exceeded',
  },
};

const anthropicTooLong = {
  type: 'error',
  error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' },
};

describe('OpenAI Chat Completions: 400 context_length_exceeded', () => {
  it('streamed and not streamed, the provider throws context_length, not retryable, status kept', async () => {
    const wire = await serve([jsonResponse(400, openaiTooLong), jsonResponse(400, openaiTooLong)]);
    for (const stream of [true, false]) {
      const provider = openaiProvider({ model: 'gpt-4o-mini', apiKey: openaiKey, baseURL: `${wire.url}/v1`, stream });
      const error = await failure(provider.stream(request()));
      expect(error).toMatchObject({ code: 'context_length', retryable: false, status: 400 });
      expect(error.message).toContain('maximum context length');
      expect(isContextLengthError(error)).toBe(true);
    }
    expect(wire.requests).toHaveLength(2);
  });

  it('the SDK error as thrown: toProviderError classifies it, isContextLengthError reads it unclassified', async () => {
    const wire = await serve([jsonResponse(400, openaiTooLong)]);
    const client = new OpenAI({ apiKey: openaiKey, baseURL: `${wire.url}/v1`, maxRetries: 0 });
    const thrown = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((thrown as object).constructor.name).toBe('BadRequestError');
    expect(isContextLengthError(thrown)).toBe(true);
    expect(toProviderError(thrown)).toMatchObject({ code: 'context_length', retryable: false, status: 400 });
  });

  it('x-should-retry: true does not make it retryable: the same prompt overflows again', async () => {
    const wire = await serve([jsonResponse(400, openaiTooLong, { 'x-should-retry': 'true' })]);
    const provider = openaiProvider({ model: 'gpt-4o-mini', apiKey: openaiKey, baseURL: `${wire.url}/v1` });
    expect(await failure(provider.stream(request()))).toMatchObject({ code: 'context_length', retryable: false });
  });

  it('another 400 stays bad_request', async () => {
    const wire = await serve([
      jsonResponse(400, { error: { message: 'Invalid value for messages', type: 'invalid_request_error', param: 'messages', code: null } }),
    ]);
    const provider = openaiProvider({ model: 'gpt-4o-mini', apiKey: openaiKey, baseURL: `${wire.url}/v1` });
    const error = await failure(provider.stream(request()));
    expect(error).toMatchObject({ code: 'bad_request', retryable: false, status: 400 });
    expect(isContextLengthError(error)).toBe(false);
  });
});

describe('OpenAI Responses: context_length_exceeded as a 400 and in-band', () => {
  const responses = (wire: WireServer) =>
    openaiProvider({ api: 'responses', model: 'gpt-5-mini', apiKey: openaiKey, baseURL: `${wire.url}/v1` });

  it('HTTP 400', async () => {
    const wire = await serve([jsonResponse(400, responsesTooLong)]);
    const error = await failure(responses(wire).stream(request()));
    expect(error).toMatchObject({ code: 'context_length', retryable: false, status: 400 });
    expect(error.message).toContain('context window');
  });

  it('response.failed with code context_length_exceeded', async () => {
    const wire = await serve([
      responsesStream({ items: [], status: 'failed', error: { code: 'context_length_exceeded', message: responsesTooLong.error.message } }),
    ]);
    const error = await failure(responses(wire).stream(request()));
    expect(error).toMatchObject({ code: 'context_length', retryable: false });
    expect(error.message).toContain('(context_length_exceeded)');
  });

  it('an error event inside the 200 stream, nested (the SDK throws) and flat (the SDK yields it)', async () => {
    const body = { type: 'invalid_request_error', code: 'context_length_exceeded', message: responsesTooLong.error.message };
    const wire = await serve([inBandError(body), inBandError(body, true)]);
    expect(await failure(responses(wire).stream(request()))).toMatchObject({ code: 'context_length', retryable: false });
    expect(await failure(responses(wire).stream(request()))).toMatchObject({ code: 'context_length', retryable: false });
  });

  it('a failure that says it only in words, under a code of its own', () => {
    const error = classifyResponseFailure({ code: 'invalid_prompt', message: 'Your input exceeds the context window of this model.' }, 'x');
    expect(error).toMatchObject({ code: 'context_length', retryable: false });
  });
});

describe('Anthropic: 400 "prompt is too long"', () => {
  const anthropic = (wire: WireServer, stream = true) =>
    anthropicProvider({ model: 'claude-haiku-4-5', apiKey: anthropicKey, baseURL: wire.url, maxTokens: 1024, stream });

  it('streamed and not streamed, the provider throws context_length, not retryable, status kept', async () => {
    const wire = await serve([jsonResponse(400, anthropicTooLong), jsonResponse(400, anthropicTooLong)]);
    for (const stream of [true, false]) {
      const error = await failure(anthropic(wire, stream).stream(request()));
      expect(error).toMatchObject({ code: 'context_length', retryable: false, status: 400 });
      expect(error.message).toContain('prompt is too long');
      expect(isContextLengthError(error)).toBe(true);
    }
    expect(wire.requests).toHaveLength(2);
  });

  it('the prompt and max_tokens together over the limit', async () => {
    const wire = await serve([
      jsonResponse(400, {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000' },
      }),
    ]);
    expect(await failure(anthropic(wire).stream(request()))).toMatchObject({ code: 'context_length', retryable: false, status: 400 });
  });

  it('an error event inside a 200 stream', async () => {
    const wire = await serve([
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
            usage: { input_tokens: 1, output_tokens: 1 },
          },
        },
        anthropicTooLong,
      ]),
    ]);
    const error = await failure(anthropic(wire).stream(request()));
    expect(error).toMatchObject({ code: 'context_length', retryable: false });
    expect(error.status).toBeUndefined();
  });

  it('another 400 stays bad_request', async () => {
    const wire = await serve([
      jsonResponse(400, { type: 'error', error: { type: 'invalid_request_error', message: 'messages: roles must alternate' } }),
    ]);
    expect(await failure(anthropic(wire).stream(request()))).toMatchObject({ code: 'bad_request', retryable: false });
  });
});

describe('isContextLengthError and the words', () => {
  it('a classified error is decided by its code alone', () => {
    expect(isContextLengthError({ name: 'BadRequestError', message: 'prompt is too long', retryable: false, code: 'context_length' })).toBe(
      true,
    );
    expect(isContextLengthError({ name: 'BadRequestError', message: 'prompt is too long', retryable: false, code: 'bad_request' })).toBe(
      false,
    );
    expect(isContextLengthError(new ProviderError('x', { code: 'context_length', retryable: false }))).toBe(true);
    expect(isContextLengthError(undefined)).toBe(false);
  });

  it('words with a status other than 400, 413 or 422 are something else', () => {
    expect(reportsContextLength({ status: 429, message: "This model's maximum context length is 8192 tokens" })).toBe(false);
    expect(toProviderError(Object.assign(new Error('maximum context length'), { status: 500 }))).toMatchObject({ code: 'server' });
    expect(reportsContextLength({ status: 413, message: 'prompt is too long' })).toBe(true);
  });

  it('a handler error that says whether to retry keeps that, with the code', () => {
    const error = toProviderError(Object.assign(new Error('prompt is too long'), { status: 400, retryable: false }));
    expect(error).toMatchObject({ code: 'context_length', retryable: false, status: 400 });
  });

  it('the words of other servers', () => {
    for (const text of [
      "This endpoint's maximum context length is 32768 tokens. However, you requested about 40000 tokens.",
      'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).',
      'the request exceeds the available context size, try increasing it',
      'context_length_exceeded',
      'The model returned the following errors: Input Tokens Exceeded: Number of input tokens exceeds maximum length. Please update the input to try again.',
      'Input is too long for requested model.',
    ]) {
      expect(mentionsContextLength(text), text).toBe(true);
    }
    expect(mentionsContextLength('max_tokens is too large: 50000')).toBe(false);
  });
});
