import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { classifyStatus, parseRetryAfter, toProviderError } from '../src/model/errors/classify-error.js';
import { ProviderError } from '../src/model/errors/provider-error.js';
import { closedPortUrl, jsonResponse, openaiSse, startWireServer, type WireServer, type WireStep } from './support/wire-server.js';

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The error the real SDK throws for a real HTTP exchange. */
async function sdkError(step: WireStep, options: { stream?: boolean; timeout?: number; signal?: AbortSignal } = {}): Promise<unknown> {
  server = await startWireServer([step]);
  const client = new OpenAI({
    apiKey: 'test-key',
    baseURL: `${server.url}/v1`,
    maxRetries: 0,
    ...(options.timeout ? { timeout: options.timeout } : {}),
  });
  try {
    if (options.stream) {
      const stream = await client.chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true },
        options.signal ? { signal: options.signal } : {},
      );
      for await (const _chunk of stream) {
        // drain
      }
    } else {
      await client.chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
        options.signal ? { signal: options.signal } : {},
      );
    }
  } catch (error) {
    return error;
  }
  throw new Error('expected the SDK to throw');
}

const errorBody = (message: string, type = 'invalid_request_error', code: string | null = null) => ({
  error: { message, type, param: null, code },
});

describe('toProviderError: HTTP statuses through the real openai SDK', () => {
  const cases: Array<[number, string, boolean, string]> = [
    [400, 'bad_request', false, 'BadRequestError'],
    [401, 'authentication', false, 'AuthenticationError'],
    [403, 'permission', false, 'PermissionDeniedError'],
    [404, 'not_found', false, 'NotFoundError'],
    [422, 'bad_request', false, 'UnprocessableEntityError'],
    [408, 'timeout', true, 'APIError'],
    [409, 'conflict', true, 'ConflictError'],
    [429, 'rate_limit', true, 'RateLimitError'],
    [500, 'server', true, 'InternalServerError'],
    [502, 'server', true, 'InternalServerError'],
    [503, 'server', true, 'InternalServerError'],
    [529, 'overloaded', true, 'InternalServerError'],
  ];
  for (const [status, code, retryable, sdkClass] of cases) {
    it(`${status} → ${code}, ${retryable ? 'retried' : 'not retried'}`, async () => {
      const thrown = await sdkError(
        jsonResponse(status, errorBody(`status ${status}`, status >= 500 ? 'server_error_like' : 'invalid_request_error')),
      );
      expect((thrown as object).constructor.name).toBe(sdkClass);
      const error = toProviderError(thrown);
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({ code, retryable, status });
      expect(error.message).toContain(`status ${status}`);
      expect(error.cause).toBe(thrown);
    });
  }

  it('also for a `stream: true` request answered with an error status', async () => {
    const error = toProviderError(
      await sdkError(jsonResponse(401, errorBody('no key', 'invalid_request_error', 'invalid_api_key')), { stream: true }),
    );
    expect(error).toMatchObject({ code: 'authentication', retryable: false, status: 401 });
  });

  it('429 honours retry-after in seconds', async () => {
    const error = toProviderError(await sdkError(jsonResponse(429, errorBody('slow', 'requests'), { 'retry-after': '3' })));
    expect(error).toMatchObject({ code: 'rate_limit', retryable: true, status: 429, retryAfterMs: 3000 });
  });

  it('429 prefers retry-after-ms', async () => {
    const error = toProviderError(
      await sdkError(jsonResponse(429, errorBody('slow', 'tokens'), { 'retry-after-ms': '1250.5', 'retry-after': '9' })),
    );
    expect(error).toMatchObject({ retryAfterMs: 1251 });
  });

  it('429 reads retry-after as an HTTP date', async () => {
    const date = new Date(Date.now() + 10_000).toUTCString();
    const error = toProviderError(await sdkError(jsonResponse(429, errorBody('slow'), { 'retry-after': date })));
    expect(error.retryAfterMs).toBeGreaterThan(8_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(10_000);
  });

  it('429 for a spent quota is not retried: waiting will not refill it', async () => {
    const error = toProviderError(
      await sdkError(jsonResponse(429, errorBody('You exceeded your current quota', 'insufficient_quota', 'insufficient_quota'))),
    );
    expect(error).toMatchObject({ code: 'rate_limit', retryable: false, status: 429 });
  });

  it('x-should-retry: false overrides a retryable status; true overrides a fatal one', async () => {
    expect(toProviderError(await sdkError(jsonResponse(500, errorBody('x'), { 'x-should-retry': 'false' })))).toMatchObject({
      status: 500,
      retryable: false,
    });
    expect(toProviderError(await sdkError(jsonResponse(400, errorBody('x'), { 'x-should-retry': 'true' })))).toMatchObject({
      status: 400,
      retryable: true,
    });
  });

  it('an Anthropic-style overloaded body is retried whatever the status', async () => {
    const thrown = await sdkError(jsonResponse(400, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
    expect(toProviderError(thrown)).toMatchObject({ code: 'overloaded', retryable: true });
  });
});

describe('toProviderError: in-band errors (HTTP 200 streams)', () => {
  it('OpenRouter numeric code 400 → bad request', async () => {
    const thrown = await sdkError(openaiSse([{ error: { code: 400, message: 'Token limit reached' } }]), { stream: true });
    expect((thrown as object).constructor.name).toBe('APIError');
    expect(toProviderError(thrown)).toMatchObject({ code: 'bad_request', retryable: false, status: 400 });
  });

  it('numeric code 429 / 502 → retried', async () => {
    expect(toProviderError(await sdkError(openaiSse([{ error: { code: 429, message: 'rate' } }]), { stream: true }))).toMatchObject({
      code: 'rate_limit',
      retryable: true,
    });
    expect(toProviderError(await sdkError(openaiSse([{ error: { code: 502, message: 'bad gateway' } }]), { stream: true }))).toMatchObject({
      code: 'server',
      retryable: true,
    });
  });

  it('typed server_error without a code → retried', async () => {
    const thrown = await sdkError(openaiSse([{ error: { type: 'server_error', message: 'The server had an error' } }]), { stream: true });
    expect(toProviderError(thrown)).toMatchObject({ code: 'server', retryable: true });
  });

  it('an Anthropic in-band overloaded_error body → overloaded, retried', () => {
    const thrown = Object.assign(new Error('Overloaded'), {
      error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    });
    expect(toProviderError(thrown)).toMatchObject({ code: 'overloaded', retryable: true });
  });

  it('an unknown in-band error → not retried', () => {
    expect(toProviderError(Object.assign(new Error('weird'), { error: { message: 'weird' } }))).toMatchObject({
      code: 'unknown',
      retryable: false,
    });
  });
});

describe('toProviderError: network, timeouts and aborts', () => {
  it('connection refused (a closed port) → network, retried, with ECONNREFUSED in the cause chain', async () => {
    const url = await closedPortUrl();
    const client = new OpenAI({ apiKey: 'k', baseURL: `${url}/v1`, maxRetries: 0 });
    const thrown = await client.chat.completions.create({ model: 'm', messages: [] }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((thrown as object).constructor.name).toBe('APIConnectionError');
    expect(JSON.stringify(causeCodes(thrown))).toContain('ECONNREFUSED');
    expect(toProviderError(thrown)).toMatchObject({ code: 'network', retryable: true });
  });

  it('a TCP reset (ECONNRESET) before the response → network, retried', async () => {
    const thrown = await sdkError((_request, control) => void control.socket.resetAndDestroy());
    expect(toProviderError(thrown)).toMatchObject({ code: 'network', retryable: true });
  });

  it('a reset mid-stream (undici "terminated") → network, retried', async () => {
    const thrown = await sdkError(
      async (_request, control) => {
        control.res.writeHead(200, { 'content-type': 'text/event-stream' });
        control.res.write('data: {"choices":[]}\n\n');
        await control.sleep(20);
        control.socket.resetAndDestroy();
      },
      { stream: true },
    );
    expect(toProviderError(thrown)).toMatchObject({ code: 'network', retryable: true });
  });

  it('the SDK’s own timeout (APIConnectionTimeoutError) → timeout, retried', async () => {
    const thrown = await sdkError(async (_request, control) => control.sleep(2_000), { timeout: 50 });
    expect((thrown as object).constructor.name).toBe('APIConnectionTimeoutError');
    expect(toProviderError(thrown)).toMatchObject({ code: 'timeout', retryable: true });
  });

  it('a user abort (APIUserAbortError) → aborted, not retried', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const thrown = await sdkError(async (_request, control) => control.sleep(2_000), { signal: controller.signal });
    expect((thrown as object).constructor.name).toBe('APIUserAbortError');
    expect(toProviderError(thrown)).toMatchObject({ code: 'aborted', retryable: false });
  });

  it('DOM AbortError and TimeoutError', () => {
    expect(toProviderError(new DOMException('aborted', 'AbortError'))).toMatchObject({ code: 'aborted', retryable: false });
    expect(toProviderError(new DOMException('timed out', 'TimeoutError'))).toMatchObject({ code: 'timeout', retryable: true });
  });

  it('node network error codes, directly or nested in causes', () => {
    for (const code of ['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND', 'UND_ERR_SOCKET']) {
      expect(toProviderError(Object.assign(new Error(code), { code }))).toMatchObject({ code: 'network', retryable: true });
    }
    const nested = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    expect(toProviderError(nested)).toMatchObject({ code: 'network', retryable: true });
    expect(toProviderError(new TypeError('terminated'))).toMatchObject({ code: 'network', retryable: true });
  });
});

describe('toProviderError: the handler contract and anything else thrown', () => {
  it('a plain object or Error with `status` is classified as that HTTP status', () => {
    expect(toProviderError({ status: 503, message: 'down' })).toMatchObject({
      code: 'server',
      retryable: true,
      status: 503,
      message: 'down',
    });
    expect(toProviderError({ status: 429 })).toMatchObject({ code: 'rate_limit', retryable: true });
    expect(toProviderError(Object.assign(new Error('nope'), { status: 400 }))).toMatchObject({
      code: 'bad_request',
      retryable: false,
      status: 400,
    });
    expect(toProviderError({ status: 404, headers: { 'Retry-After': '1' } })).toMatchObject({
      code: 'not_found',
      retryable: false,
      retryAfterMs: 1000,
    });
  });

  it('a boolean `retryable` decides for itself, also against the status', () => {
    expect(toProviderError(Object.assign(new Error('flaky'), { retryable: true }))).toMatchObject({ code: 'unknown', retryable: true });
    expect(toProviderError({ message: 'x', retryable: false, status: 503 })).toMatchObject({
      code: 'server',
      retryable: false,
      status: 503,
    });
    expect(toProviderError({ message: 'x', retryable: true, status: 400 })).toMatchObject({ code: 'bad_request', retryable: true });
  });

  it('a status outside 100–599 is ignored', () => {
    expect(toProviderError({ status: 0, message: 'x' })).toMatchObject({ code: 'unknown', retryable: false });
    expect(toProviderError({ status: 700, message: 'x' }).status).toBeUndefined();
  });

  it('any other error is not retried', () => {
    expect(toProviderError(new Error('bug'))).toMatchObject({ code: 'unknown', retryable: false, message: 'bug' });
    expect(toProviderError(new RangeError(''))).toMatchObject({ code: 'unknown', retryable: false, message: 'RangeError' });
  });

  it('non-Error throws become ProviderErrors with a readable message', () => {
    expect(toProviderError('plain string')).toMatchObject({ code: 'unknown', retryable: false, message: 'plain string' });
    expect(toProviderError(42).message).toBe('non-Error value thrown: 42');
    expect(toProviderError(undefined).message).toBe('non-Error value thrown: undefined');
    expect(toProviderError(null).message).toBe('non-Error value thrown: null');
    expect(toProviderError(Symbol('s')).retryable).toBe(false);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(toProviderError(circular).message).toContain('non-Error value thrown');
    expect(toProviderError(42).cause).toBe(42);
  });

  it('a ProviderError passes through unchanged', () => {
    const error = new ProviderError('x', { code: 'overloaded', retryable: true, status: 529 });
    expect(toProviderError(error)).toBe(error);
  });
});

describe('classifyStatus and parseRetryAfter', () => {
  it('maps every status class', () => {
    expect(classifyStatus(408)).toEqual({ code: 'timeout', retryable: true });
    expect(classifyStatus(409)).toEqual({ code: 'conflict', retryable: true });
    expect(classifyStatus(429)).toEqual({ code: 'rate_limit', retryable: true });
    expect(classifyStatus(529)).toEqual({ code: 'overloaded', retryable: true });
    expect(classifyStatus(504)).toEqual({ code: 'server', retryable: true });
    expect(classifyStatus(401)).toEqual({ code: 'authentication', retryable: false });
    expect(classifyStatus(403)).toEqual({ code: 'permission', retryable: false });
    expect(classifyStatus(404)).toEqual({ code: 'not_found', retryable: false });
    expect(classifyStatus(400)).toEqual({ code: 'bad_request', retryable: false });
    expect(classifyStatus(422)).toEqual({ code: 'bad_request', retryable: false });
  });

  it('reads Headers and plain records, seconds, milliseconds and dates', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after': '2' }))).toBe(2000);
    expect(parseRetryAfter({ 'Retry-After-Ms': '10' })).toBe(10);
    expect(parseRetryAfter({ 'retry-after': '0.5' })).toBe(500);
    expect(parseRetryAfter({ 'retry-after': 'Wed, 21 Oct 2015 07:28:10 GMT' }, Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(10_000);
    expect(parseRetryAfter({ 'retry-after': 'soon' })).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after-ms': '-5' })).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});

function causeCodes(error: unknown): unknown[] {
  const codes: unknown[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth++) {
    codes.push((current as { code?: unknown }).code);
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}
