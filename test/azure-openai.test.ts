/**
 * Azure OpenAI through `openaiProvider({ client: new AzureOpenAI(…) })`, on both wires, with the
 * real `openai` SDK over real sockets: a local wire server stands in for
 * `https://<resource>.openai.azure.com` and checks that every request arrives on Azure's own path,
 * with Azure's `api-version` query and Azure's credentials, and the machine runs whole tool loops
 * over Azure's stream framing and classifies and retries Azure's errors itself.
 *
 * What the SDK (openai 5.11+, 6) sends for an `AzureOpenAI({ endpoint, apiVersion })` client:
 * - Chat Completions: `POST /openai/deployments/{deployment}/chat/completions?api-version=…`, the
 *   deployment being the client's `deployment` option, else the request's `model`;
 * - Responses: `POST /openai/responses?api-version=…` — `/responses` is not a deployment route in
 *   the SDK, so the client's `deployment` plays no part and the body's `model` names the deployment;
 * - `api-key: <key>` with `apiKey`; `Authorization: Bearer <token>` with `azureADTokenProvider`,
 *   which the SDK calls before every request.
 * Azure's v1 API (`/openai/v1/…`, no `api-version`) is spoken by the plain `OpenAI` client.
 * What these tests hold is what docs/providers.md "Azure OpenAI" promises.
 */
import { AzureOpenAI, OpenAI } from 'openai';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { createConversationMachine } from '../src/machines/chart/conversation.js';
import type { ConversationOptions } from '../src/machines/chart/options.js';
import type { RequestRetryEvent, RunOutput } from '../src/machines/names/types.js';
import { ProviderError } from '../src/model/errors/provider-error.js';
import type { Provider } from '../src/model/provider.js';
import { openaiProvider } from '../src/providers/openai/index.js';
import { defineTool } from '../src/tools/define-tool.js';
import { responsesStream, textAnswer } from './support/responses-events.js';
import {
  cassetteSteps,
  hasRecordedFixtures,
  jsonResponse,
  loadCassette,
  missingRecordedFixturesNote,
  openaiSse,
  recordedFixturesDir,
  startWireServer,
  type WireServer,
  type WireStep,
} from './support/wire-server.js';

const apiKey = 'azure-key-0123456789abcdef';
/** A dated GA version: Chat Completions on the deployment route. */
const chatApiVersion = '2024-10-21';
/** The Responses API on the dated route (`/openai/responses`) came with 2025-03-01-preview; this is the later preview Azure documents. */
const responsesApiVersion = '2025-04-01-preview';

let server: WireServer | undefined;
/** The URL of every request, query included (the wire server keeps only the path), and when it arrived. */
let seen: Array<{ url: URL; at: number }> = [];

afterEach(async () => {
  await server?.close();
  server = undefined;
  seen = [];
});

/** Serves `steps` in order, noting each request's full URL and arrival time first. */
async function serve(steps: WireStep[]): Promise<WireServer> {
  const noted = steps.map(
    (step): WireStep =>
      async (request, control) => {
        seen.push({ url: new URL(control.req.url ?? '/', 'http://127.0.0.1'), at: performance.now() });
        if (typeof step === 'function') await step(request, control);
        else await control.respond(step);
      },
  );
  server = await startWireServer(noted);
  return server;
}

/**
 * The resource endpoint for `new AzureOpenAI({ endpoint })` (the SDK appends `/openai`), written
 * without the portal's trailing slash: openai before 6.49 joins it as given (`…//openai/…`).
 */
const endpointOf = (wire: WireServer) => wire.url;

/** Request `index` went to `pathname` with exactly `?api-version=<version>` (or no query at all). */
function expectUrl(index: number, pathname: string, apiVersion: string | undefined) {
  const url = seen[index]?.url;
  expect(url?.pathname, `request #${index + 1}`).toBe(pathname);
  expect(url?.search, `request #${index + 1}`).toBe(apiVersion === undefined ? '' : `?api-version=${apiVersion}`);
}

/** Request `index` carried Azure's API key header and no bearer token. */
function expectApiKey(wire: WireServer, index: number) {
  const headers = wire.requests[index]?.headers ?? {};
  expect(headers['api-key']).toBe(apiKey);
  expect(headers.authorization).toBeUndefined();
  // The SDK did not retry on its own: every attempt is the machine's.
  expect(headers['x-stainless-retry-count']).toBe('0');
}

const weather = defineTool({
  name: 'weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  execute: ({ city }) => ({ city, celsius: -3, sky: 'clear' }),
});

type Run = { output: RunOutput; retries: RequestRetryEvent[] };

async function run(provider: Provider, options: Partial<ConversationOptions> = {}, content = 'Weather in Oslo?'): Promise<Run> {
  const machine = createConversationMachine({
    provider,
    tools: [weather],
    system: 'Be terse.',
    retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5, jitter: false },
    ...options,
  });
  const actor = createActor(machine, { input: { messages: [] } });
  const retries: RequestRetryEvent[] = [];
  actor.on('request.retry', (event) => retries.push(event));
  actor.start();
  actor.send({ type: 'user.message', content });
  const output = await toPromise(actor);
  return { output, retries };
}

// ---------------------------------------------------------------------------------------------
// Azure's Chat Completions stream framing, as Azure sends it (see the recorded
// openai-compatible/vercel-azure-gpt-5-nano-stream.json): a first chunk with no choices, empty
// `id`/`model`/`object` and the prompt's `prompt_filter_results`; `content_filter_results` on every
// choice; and, with the asynchronous filter, annotation chunks after the finish that carry
// `content_filter_offsets`, no `delta` and empty ids again.

const safe = { filtered: false, severity: 'safe' };
const completionFilter = { hate: safe, self_harm: safe, sexual: safe, violence: safe };
const promptFilterChunk = {
  choices: [],
  created: 0,
  id: '',
  model: '',
  object: '',
  prompt_filter_results: [
    { prompt_index: 0, content_filter_results: { ...completionFilter, jailbreak: { filtered: false, detected: false } } },
  ],
};

function azureChunk(id: string, choice: Record<string, unknown>, usage: Record<string, unknown> | null = null) {
  return {
    choices: [{ content_filter_results: {}, finish_reason: null, index: 0, logprobs: null, ...choice }],
    created: 1762317021,
    id,
    model: 'gpt-4o-2024-11-20',
    object: 'chat.completion.chunk',
    system_fingerprint: 'fp_ee1d74bde0',
    usage,
  };
}

function azureUsage(id: string, prompt: number, completion: number) {
  return {
    ...azureChunk(id, {}),
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}

/** Round 1: `weather({"city":"Oslo"})`, its arguments in pieces. */
const azureToolCall = openaiSse([
  promptFilterChunk,
  azureChunk('chatcmpl-az1', {
    delta: {
      content: null,
      refusal: null,
      role: 'assistant',
      tool_calls: [{ index: 0, id: 'call_az1', type: 'function', function: { name: 'weather', arguments: '' } }],
    },
  }),
  ...['{"ci', 'ty":"Os', 'lo"}'].map((piece) =>
    azureChunk('chatcmpl-az1', { delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] } }),
  ),
  azureChunk('chatcmpl-az1', { delta: {}, finish_reason: 'tool_calls' }),
  azureUsage('chatcmpl-az1', 80, 17),
]);

/** Round 2: the answer, filtered as it streams, then an asynchronous-filter annotation after the finish. */
const azureAnswer = (text: string) =>
  openaiSse([
    promptFilterChunk,
    azureChunk('chatcmpl-az2', { delta: { content: '', refusal: null, role: 'assistant' } }),
    ...text
      .split(/(?<= )/)
      .map((piece) => azureChunk('chatcmpl-az2', { content_filter_results: completionFilter, delta: { content: piece } })),
    azureChunk('chatcmpl-az2', { delta: {}, finish_reason: 'stop' }),
    {
      choices: [
        {
          content_filter_offsets: { check_offset: 0, start_offset: 0, end_offset: text.length },
          content_filter_results: completionFilter,
          finish_reason: null,
          index: 0,
        },
      ],
      created: 0,
      id: '',
      model: '',
      object: '',
    },
    azureUsage('chatcmpl-az2', 120, 9),
  ]);

const answer = 'Oslo: -3 °C, clear.';

/** The second request of a tool loop carries the call and its result (Chat Completions). */
function expectChatToolResultSent(wire: WireServer) {
  const body = wire.requests[1]?.body as { messages: Array<Record<string, unknown>> };
  expect(body.messages.slice(-2)).toEqual([
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_az1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }],
    },
    { role: 'tool', tool_call_id: 'call_az1', content: '{"city":"Oslo","celsius":-3,"sky":"clear"}' },
  ]);
}

describe('Azure OpenAI, Chat Completions: openaiProvider({ client: new AzureOpenAI(…) })', () => {
  it('runs a streamed tool loop on /openai/deployments/{deployment}/chat/completions?api-version with the api-key header, over Azure’s framing', async () => {
    const wire = await serve([azureToolCall, azureAnswer(answer)]);
    // The client is built as a team would build it: no maxRetries, so the SDK's default (2) is in place.
    const client = new AzureOpenAI({ endpoint: endpointOf(wire), apiKey, apiVersion: chatApiVersion, deployment: 'prod-gpt-4o' });
    const { output, retries } = await run(openaiProvider({ client, model: 'gpt-4o' }));

    expect(output).toMatchObject({ status: 'done', text: answer, iterations: 1 });
    expect(output.usage).toMatchObject({ inputTokens: 200, outputTokens: 26, totalTokens: 226 });
    expect(retries).toEqual([]);
    expect(wire.requests).toHaveLength(2);
    for (const index of [0, 1]) {
      expect(wire.requests[index]?.method).toBe('POST');
      expectUrl(index, '/openai/deployments/prod-gpt-4o/chat/completions', chatApiVersion);
      expectApiKey(wire, index);
    }
    // Azure routes by the path; the body's model is sent as given.
    expect(wire.requests[0]?.body).toMatchObject({ model: 'gpt-4o', stream: true, stream_options: { include_usage: true } });
    expectChatToolResultSent(wire);
    // The tool call and the answer are kept whole: nothing of the empty first chunk or the annotations leaks in.
    expect(output.messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: answer }] });
  });

  it('without `deployment` on the client, the provider’s `model` is the deployment in the path', async () => {
    const wire = await serve([azureToolCall, azureAnswer(answer)]);
    const client = new AzureOpenAI({ endpoint: endpointOf(wire), apiKey, apiVersion: chatApiVersion });
    const { output } = await run(openaiProvider({ client, model: 'my-gpt-4o-deployment' }));
    expect(output).toMatchObject({ status: 'done', text: answer });
    expectUrl(0, '/openai/deployments/my-gpt-4o-deployment/chat/completions', chatApiVersion);
    expectUrl(1, '/openai/deployments/my-gpt-4o-deployment/chat/completions', chatApiVersion);
    expect(wire.requests[0]?.body).toMatchObject({ model: 'my-gpt-4o-deployment' });
  });

  it('with an Entra ID token provider: Authorization: Bearer, a fresh token asked for on every request, no api-key', async () => {
    const wire = await serve([azureToolCall, azureAnswer(answer)]);
    let tokens = 0;
    const azureADTokenProvider = async () => `entra-token-${++tokens}`;
    const client = new AzureOpenAI({
      endpoint: endpointOf(wire),
      azureADTokenProvider,
      apiVersion: chatApiVersion,
      deployment: 'prod-gpt-4o',
    });
    const { output } = await run(openaiProvider({ client, model: 'gpt-4o' }));
    expect(output).toMatchObject({ status: 'done', text: answer, iterations: 1 });
    expect(tokens).toBe(2);
    for (const index of [0, 1]) {
      expectUrl(index, '/openai/deployments/prod-gpt-4o/chat/completions', chatApiVersion);
      expect(wire.requests[index]?.headers.authorization).toBe(`Bearer entra-token-${index + 1}`);
      expect(wire.requests[index]?.headers['api-key']).toBeUndefined();
    }
    expectChatToolResultSent(wire);
  });

  it.skipIf(!hasRecordedFixtures)(
    'replays a recorded Azure stream (gpt-5-nano: empty first chunk, filter results, reasoning usage)',
    async () => {
      const cassette = loadCassette(path.join(recordedFixturesDir, 'openai-compatible/vercel-azure-gpt-5-nano-stream.json'));
      const wire = await serve(cassetteSteps(cassette));
      const client = new AzureOpenAI({ endpoint: endpointOf(wire), apiKey, apiVersion: chatApiVersion, deployment: 'gpt-5-nano' });
      const models: Array<string | undefined> = [];
      const machine = createConversationMachine({ provider: openaiProvider({ client, model: 'gpt-5-nano' }) });
      const actor = createActor(machine, { input: { messages: [] } });
      actor.on('request.finished', (event) => models.push(event.model));
      actor.start();
      actor.send({ type: 'user.message', content: 'What is the capital of Denmark? One line.' });
      const output = await toPromise(actor);
      expect(output).toMatchObject({ status: 'done', text: 'Capital of Denmark.' });
      expect(output.usage).toEqual({ inputTokens: 15, outputTokens: 78, totalTokens: 93, cachedInputTokens: 0, reasoningTokens: 64 });
      // The first chunk's empty model does not hide the one that answered.
      expect(models).toEqual(['gpt-5-nano-2025-08-07']);
      expectUrl(0, '/openai/deployments/gpt-5-nano/chat/completions', chatApiVersion);
      expectApiKey(wire, 0);
    },
  );
});

// ---------------------------------------------------------------------------------------------
// The Responses API.

const responsesToolCall = responsesStream({
  items: [{ type: 'function_call', callId: 'call_r1', name: 'weather', args: '{"city":"Oslo"}', chunks: ['{"city"', ':"Oslo"}'] }],
  usage: { input: 60, output: 12 },
});

/** The second request of a tool loop carries the call and its result (Responses). */
function expectResponsesToolResultSent(wire: WireServer) {
  const body = wire.requests[1]?.body as { input: Array<Record<string, unknown>> };
  expect(body.input.slice(-2)).toEqual([
    { type: 'function_call', call_id: 'call_r1', name: 'weather', arguments: '{"city":"Oslo"}' },
    { type: 'function_call_output', call_id: 'call_r1', output: '{"city":"Oslo","celsius":-3,"sky":"clear"}' },
  ]);
}

describe('Azure OpenAI, Responses: openaiProvider({ api: "responses", client: new AzureOpenAI(…) })', () => {
  it('runs a streamed tool loop on /openai/responses?api-version with the api-key header; `model` is the deployment', async () => {
    const wire = await serve([responsesToolCall, textAnswer(answer, { usage: { input: 90, output: 8 } })]);
    const client = new AzureOpenAI({ endpoint: endpointOf(wire), apiKey, apiVersion: responsesApiVersion });
    const { output, retries } = await run(openaiProvider({ api: 'responses', client, model: 'gpt-5-mini-prod' }));

    expect(output).toMatchObject({ status: 'done', text: answer, iterations: 1 });
    expect(output.usage).toMatchObject({ inputTokens: 150, outputTokens: 20, totalTokens: 170 });
    expect(retries).toEqual([]);
    expect(wire.requests).toHaveLength(2);
    for (const index of [0, 1]) {
      expect(wire.requests[index]?.method).toBe('POST');
      expectUrl(index, '/openai/responses', responsesApiVersion);
      expectApiKey(wire, index);
      // Stateless, as on OpenAI: a `gpt-5…` deployment name reads as a reasoning model, whose reasoning comes back encrypted.
      expect(wire.requests[index]?.body).toMatchObject({
        model: 'gpt-5-mini-prod',
        store: false,
        stream: true,
        include: ['reasoning.encrypted_content'],
      });
    }
    expectResponsesToolResultSent(wire);
  });

  it('a `deployment` on the client does not route Responses: the path stays /openai/responses and `model` names the deployment', async () => {
    const wire = await serve([textAnswer('ok')]);
    const client = new AzureOpenAI({ endpoint: endpointOf(wire), apiKey, apiVersion: responsesApiVersion, deployment: 'chat-deployment' });
    const { output } = await run(openaiProvider({ api: 'responses', client, model: 'responses-deployment' }), {}, 'Hi');
    expect(output).toMatchObject({ status: 'done', text: 'ok' });
    expectUrl(0, '/openai/responses', responsesApiVersion);
    expect(wire.requests[0]?.body).toMatchObject({ model: 'responses-deployment' });
  });

  it('with an Entra ID token provider: Authorization: Bearer on every request, no api-key', async () => {
    const wire = await serve([responsesToolCall, textAnswer(answer)]);
    let tokens = 0;
    const azureADTokenProvider = async () => `entra-token-${++tokens}`;
    const client = new AzureOpenAI({ endpoint: endpointOf(wire), azureADTokenProvider, apiVersion: responsesApiVersion });
    const { output } = await run(openaiProvider({ api: 'responses', client, model: 'gpt-5-mini-prod' }));
    expect(output).toMatchObject({ status: 'done', text: answer, iterations: 1 });
    expect(tokens).toBe(2);
    for (const index of [0, 1]) {
      expectUrl(index, '/openai/responses', responsesApiVersion);
      expect(wire.requests[index]?.headers.authorization).toBe(`Bearer entra-token-${index + 1}`);
      expect(wire.requests[index]?.headers['api-key']).toBeUndefined();
    }
    expectResponsesToolResultSent(wire);
  });

  it('Azure’s v1 API (/openai/v1/responses, no api-version) through the plain OpenAI client, or the provider’s own with baseURL', async () => {
    const wire = await serve([responsesToolCall, textAnswer(answer), responsesToolCall, textAnswer(answer)]);
    const baseURL = `${wire.url}/openai/v1`;
    const passedIn = await run(openaiProvider({ api: 'responses', client: new OpenAI({ baseURL, apiKey }), model: 'gpt-5-mini-prod' }));
    const ownClient = await run(openaiProvider({ api: 'responses', baseURL, apiKey, model: 'gpt-5-mini-prod' }));
    for (const { output } of [passedIn, ownClient]) expect(output).toMatchObject({ status: 'done', text: answer, iterations: 1 });
    for (const index of [0, 1, 2, 3]) {
      expectUrl(index, '/openai/v1/responses', undefined);
      // The v1 API takes the key as a bearer token, which is what the OpenAI client sends.
      expect(wire.requests[index]?.headers.authorization).toBe(`Bearer ${apiKey}`);
    }
    expectResponsesToolResultSent(wire);
  });
});

// ---------------------------------------------------------------------------------------------
// Errors, as Azure sends them.

/** The error one provider request fails with, outside a machine. */
async function providerFailure(provider: Provider): Promise<ProviderError> {
  try {
    for await (const _event of provider.stream({
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [],
      signal: new AbortController().signal,
    }));
  } catch (error) {
    expect(ProviderError.isInstance(error), `expected a ProviderError, got ${String(error)}`).toBe(true);
    return error as ProviderError;
  }
  throw new Error('expected the request to fail');
}

/** Azure's 429: a `code` string of the status, the wait in words, and the wait in both headers. */
const rateLimited = (headers: Record<string, string>) =>
  jsonResponse(
    429,
    {
      error: {
        code: '429',
        message:
          'Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 1 second.',
      },
    },
    { 'x-ms-region': 'Sweden Central', 'apim-request-id': 'c0ffee00-0000-4000-8000-000000000429', ...headers },
  );

/** Azure's content-filter refusal of a prompt: a 400 with `code: "content_filter"` and the verdicts under `innererror`. */
const contentFiltered = jsonResponse(400, {
  error: {
    message:
      "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766",
    type: null,
    param: 'prompt',
    code: 'content_filter',
    status: 400,
    innererror: {
      code: 'ResponsibleAIPolicyViolation',
      content_filter_result: {
        ...completionFilter,
        jailbreak: { filtered: false, detected: false },
        violence: { filtered: true, severity: 'medium' },
      },
    },
  },
});

/** Azure's 401 for a wrong key or endpoint. */
const unauthorized = jsonResponse(401, {
  error: {
    code: '401',
    message:
      'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
  },
});

/** A provider on each wire, with a client the way a team builds it: the SDK's own retries left at their default. */
const wires = [
  {
    wire: 'Chat Completions',
    provider: (wire: WireServer) =>
      openaiProvider({
        client: new AzureOpenAI({ endpoint: endpointOf(wire), apiKey, apiVersion: chatApiVersion, deployment: 'prod-gpt-4o' }),
        model: 'gpt-4o',
      }),
    answer: () => azureAnswer(answer),
    path: '/openai/deployments/prod-gpt-4o/chat/completions',
    apiVersion: chatApiVersion,
  },
  {
    wire: 'Responses',
    provider: (wire: WireServer) =>
      openaiProvider({
        api: 'responses',
        client: new AzureOpenAI({ endpoint: endpointOf(wire), apiKey, apiVersion: responsesApiVersion }),
        model: 'gpt-5-mini-prod',
      }),
    answer: () => textAnswer(answer),
    path: '/openai/responses',
    apiVersion: responsesApiVersion,
  },
] as const;

describe.each(wires)('Azure OpenAI errors over $wire', ({ provider, answer: reply, path: route, apiVersion }) => {
  it('a 429 is retried by the machine after retry-after-ms (preferred to retry-after), never by the SDK', async () => {
    const wire = await serve([rateLimited({ 'retry-after-ms': '150', 'retry-after': '1' }), reply()]);
    const { output, retries } = await run(provider(wire), {}, 'Hi');
    expect(output).toMatchObject({ status: 'done', text: answer });
    expect(retries.map(({ attempt, delayMs, error }) => ({ attempt, delayMs, status: error.status, code: error.code }))).toEqual([
      { attempt: 2, delayMs: 150, status: 429, code: 'rate_limit' },
    ]);
    expect(wire.requests).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(150);
    for (const index of [0, 1]) {
      expectUrl(index, route, apiVersion);
      expectApiKey(wire, index);
    }
  });

  it('a 429 with only retry-after (seconds) waits that long', async () => {
    const wire = await serve([rateLimited({ 'retry-after': '1' }), reply()]);
    const { output, retries } = await run(provider(wire), {}, 'Hi');
    expect(output).toMatchObject({ status: 'done', text: answer });
    expect(retries.map(({ delayMs }) => delayMs)).toEqual([1000]);
    // Timers never fire early; the allowance is for the clock's own rounding.
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(995);
  });

  it('the machine’s retry policy holds with a client of default retries: maxRetries 0 means one request', async () => {
    const wire = await serve([rateLimited({ 'retry-after-ms': '10' }), rateLimited({ 'retry-after-ms': '10' }), reply()]);
    const { output, retries } = await run(provider(wire), { retry: { maxRetries: 0 } }, 'Hi');
    expect(output).toMatchObject({ status: 'error', error: { status: 429, code: 'rate_limit', retryable: true } });
    expect(retries).toEqual([]);
    expect(wire.requests).toHaveLength(1);
  });

  it('a content-filter 400 ends the run at once with a clear, non-retryable error', async () => {
    const wire = await serve([contentFiltered, reply()]);
    const { output, retries } = await run(provider(wire), {}, 'Something the filter refuses');
    expect(output.status).toBe('error');
    expect(output.error).toMatchObject({ status: 400, code: 'bad_request', retryable: false });
    expect(output.error?.message).toContain(
      "The response was filtered due to the prompt triggering Azure OpenAI's content management policy",
    );
    expect(retries).toEqual([]);
    expect(wire.requests).toHaveLength(1);
  });

  it('a content-filter 400 keeps Azure’s verdicts on the ProviderError’s cause, for code that wants to tell it apart', async () => {
    const wire = await serve([contentFiltered]);
    const error = await providerFailure(provider(wire));
    expect(error).toMatchObject({ code: 'bad_request', retryable: false, status: 400 });
    expect(error.cause).toMatchObject({
      code: 'content_filter',
      param: 'prompt',
      error: { innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { violence: { filtered: true } } } },
    });
  });

  it('a 401 is an authentication error, not retried, and the key is nowhere in the output', async () => {
    const wire = await serve([unauthorized, reply()]);
    const { output, retries } = await run(provider(wire), {}, 'Hi');
    expect(output).toMatchObject({ status: 'error', error: { status: 401, code: 'authentication', retryable: false } });
    expect(output.error?.message).toContain('Access denied due to invalid subscription key');
    expect(retries).toEqual([]);
    expect(wire.requests).toHaveLength(1);
    expect(JSON.stringify(output)).not.toContain(apiKey);
  });
});

if (!hasRecordedFixtures) console.warn(missingRecordedFixturesNote);
