/**
 * Network faults under a whole conversation: the real `openai` SDK over real sockets, failures
 * injected by the wire server, and the machine classifying, retrying and keeping the history valid.
 */
import path from 'node:path';
import { createActor, toPromise } from 'xstate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createConversationMachine } from '../src/machines/chart/conversation.js';
import type { ConversationOptions } from '../src/machines/chart/options.js';
import type { Message } from '../src/model/messages.js';
import { openaiProvider } from '../src/providers/openai/index.js';
import { defineTool } from '../src/tools/define-tool.js';
import { expectValidHistory } from './support/history.js';
import { fetchOption, replayTransports } from './support/transports.js';
import {
  cassetteSteps,
  closedPortUrl,
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

let server: WireServer | undefined;
// Every fault runs over both transports: the SDK's default fetch and createNodeFetch.
const transports = replayTransports();
let transport = transports[0]!;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
  id: 'chatcmpl-fault',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, delta, finish_reason: finishReason }],
});
const usageChunk = {
  id: 'chatcmpl-fault',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [],
  usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
};
const answer = (text: string) => openaiSse([chunk({ role: 'assistant', content: text }), chunk({}, 'stop'), usageChunk]);
const sseLine = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;

/** Writes a partial stream, then does `then` to the connection. */
function partialThen(then: 'reset' | 'end' | 'stall' | 'garble'): WireStep {
  return async (_request, control) => {
    control.res.writeHead(200, { 'content-type': 'text/event-stream' });
    control.res.write(sseLine(chunk({ role: 'assistant', content: 'Partial ' })));
    await control.sleep(20);
    if (then === 'reset') control.socket.resetAndDestroy();
    else if (then === 'end') control.res.end();
    else if (then === 'garble') control.res.end('data: {"id":"chatcmpl-fault","choices":[{"index"\n\n');
    else await control.sleep(10_000);
  };
}

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: ({ a, b }) => String(Number(a) + Number(b)),
});

async function run(steps: WireStep[] | { url: string }, options: Partial<ConversationOptions> = {}, content = 'Hi') {
  let baseURL: string;
  if (Array.isArray(steps)) {
    server = await startWireServer(steps);
    baseURL = `${server.url}/v1`;
  } else {
    baseURL = `${steps.url}/v1`;
  }
  const machine = createConversationMachine({
    provider: openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-faults', baseURL, ...fetchOption(transport) }),
    tools: [add],
    retry: { maxRetries: 2, initialDelayMs: 5, maxDelayMs: 20, jitter: false },
    requestTimeoutMs: 2_000,
    ...options,
  });
  const actor = createActor(machine, { input: { messages: [] } });
  const retries: Array<{ attempt: number; delayMs: number; discardPartial: boolean; code?: string }> = [];
  const started: Array<{ iteration: number; attempt: number }> = [];
  const textDeltas: string[] = [];
  actor.on('request.retry', (event) =>
    retries.push({ attempt: event.attempt, delayMs: event.delayMs, discardPartial: event.discardPartial, code: event.error.code }),
  );
  actor.on('request.started', (event) => started.push({ iteration: event.iteration, attempt: event.attempt }));
  actor.on('text.delta', (event) => textDeltas.push(event.delta));
  actor.start();
  actor.send({ type: 'user.message', content });
  const output = await toPromise(actor);
  expectValidHistory(output.messages);
  return { output, retries, started, textDeltas, actor };
}

const onlyUserAndAnswer = (text: string): Message[] => [
  { role: 'user', content: 'Hi' },
  { role: 'assistant', content: [{ type: 'text', text }] },
];

describe.each(transports)('network faults through a conversation ($name)', (each) => {
  beforeEach(() => {
    transport = each;
  });
  it('connection refused: classified network error, retried per policy, then error with a valid history', async () => {
    const { output, retries, started } = await run({ url: await closedPortUrl() });
    expect(output.status).toBe('error');
    expect(output.error).toMatchObject({ retryable: true, code: 'network' });
    expect(retries.map((retry) => retry.code)).toEqual(['network', 'network']);
    expect(started).toHaveLength(3);
    expect(output.messages).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it('a reset before any byte is retried; the retry does not discard anything', async () => {
    const { output, retries } = await run([(_request, control) => void control.socket.resetAndDestroy(), answer('Hello.')]);
    expect(output).toMatchObject({ status: 'done', text: 'Hello.' });
    expect(retries).toEqual([expect.objectContaining({ code: 'network', discardPartial: false })]);
    expect(output.messages).toEqual(onlyUserAndAnswer('Hello.'));
  });

  it('a reset mid-stream is retried with discardPartial, and the partial text stays out of the history', async () => {
    const { output, retries, textDeltas } = await run([partialThen('reset'), answer('Hello.')]);
    expect(output).toMatchObject({ status: 'done', text: 'Hello.' });
    expect(retries).toEqual([expect.objectContaining({ code: 'network', discardPartial: true })]);
    expect(textDeltas).toEqual(['Partial ', 'Hello.']);
    expect(output.messages).toEqual(onlyUserAndAnswer('Hello.'));
    expect(output.usage).toEqual({ inputTokens: 10, outputTokens: 2, totalTokens: 12 });
  });

  it('a stream that ends without finish_reason or [DONE] is retried', async () => {
    const { output, retries } = await run([partialThen('end'), answer('Whole.')]);
    expect(output).toMatchObject({ status: 'done', text: 'Whole.' });
    expect(retries).toEqual([expect.objectContaining({ code: 'incomplete_stream', discardPartial: true })]);
  });

  it('a malformed SSE data line is retried', async () => {
    const { output, retries } = await run([partialThen('garble'), answer('Clean.')]);
    expect(output).toMatchObject({ status: 'done', text: 'Clean.' });
    expect(retries).toEqual([expect.objectContaining({ code: 'incomplete_stream', discardPartial: true })]);
  });

  it('a first byte later than requestTimeoutMs times out, closes that connection and is retried', async () => {
    const slow: WireStep = async (_request, control) => {
      await control.sleep(5_000);
      if (!control.socket.destroyed) await control.respond(answer('Too late.'));
    };
    const { output, retries } = await run([slow, answer('In time.')], { requestTimeoutMs: 150 });
    expect(output).toMatchObject({ status: 'done', text: 'In time.' });
    expect(retries).toEqual([expect.objectContaining({ code: 'timeout', discardPartial: false })]);
    await server!.waitForRequestSocketClosed(0);
  });

  it('a stream that stalls longer than requestTimeoutMs between events times out and is retried', async () => {
    const { output, retries } = await run([partialThen('stall'), answer('Resumed.')], { requestTimeoutMs: 150 });
    expect(output).toMatchObject({ status: 'done', text: 'Resumed.' });
    expect(retries).toEqual([expect.objectContaining({ code: 'timeout', discardPartial: true })]);
    await server!.waitForRequestSocketClosed(0);
  });

  it('a 429 with retry-after-ms waits at least that long', async () => {
    const { output, retries } = await run([
      jsonResponse(429, { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after-ms': '60' }),
      answer('Done.'),
    ]);
    expect(output).toMatchObject({ status: 'done', text: 'Done.' });
    expect(retries).toHaveLength(1);
    expect(retries[0]!.code).toBe('rate_limit');
    expect(retries[0]!.delayMs).toBeGreaterThanOrEqual(60);
  });

  it('a 429 whose retry-after exceeds maxRetryAfterMs ends the run at once, saying the cap is why', async () => {
    const { output, retries } = await run(
      [
        jsonResponse(429, { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after': '120' }),
        answer('Never asked.'),
      ],
      { retry: { maxRetries: 2, initialDelayMs: 5, maxRetryAfterMs: 30_000 } },
    );
    expect(output.status).toBe('error');
    expect(output.error).toMatchObject({ status: 429, retryable: true, code: 'rate_limit' });
    expect(output.error?.message).toMatch(/^429 .*slow down.* — retry-after 120 s exceeds retry\.maxRetryAfterMs \(30 s\); not retried$/);
    expect(retries).toEqual([]);
    expect(server!.requests).toHaveLength(1);
  });

  it('a retry-after within maxRetryAfterMs is waited out, and a 429 after the last retry does not blame the cap', async () => {
    const limited = (wait: Record<string, string>) =>
      jsonResponse(429, { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } }, wait);
    const { output, retries } = await run([limited({ 'retry-after-ms': '100' }), limited({ 'retry-after': '120' })], {
      retry: { maxRetries: 1, initialDelayMs: 5, maxRetryAfterMs: 200 },
    });
    expect(retries.map((retry) => retry.delayMs)).toEqual([100]);
    expect(output.error?.message).toMatch(/slow down/);
    expect(output.error?.message).not.toContain('maxRetryAfterMs');
  });

  it('an in-band 5xx error chunk inside a 200 stream is retried', async () => {
    const { output, retries } = await run([
      openaiSse([chunk({ content: 'x' }), { error: { code: 502, message: 'upstream' } }]),
      answer('Fine.'),
    ]);
    expect(output).toMatchObject({ status: 'done', text: 'Fine.' });
    expect(retries).toEqual([expect.objectContaining({ code: 'server', discardPartial: true })]);
  });

  it('401 fails at once, without a retry', async () => {
    const { output, retries } = await run([
      jsonResponse(401, {
        error: { message: 'Incorrect API key provided: sk-f***ts.', type: 'invalid_request_error', code: 'invalid_api_key' },
      }),
    ]);
    expect(output.status).toBe('error');
    expect(output.error).toMatchObject({ status: 401, retryable: false, code: 'authentication' });
    expect(retries).toEqual([]);
    expect(server!.requests).toHaveLength(1);
  });

  it('5xx until retries run out ends in error after maxRetries + 1 requests', async () => {
    const failing = jsonResponse(503, { error: { message: 'unavailable', type: 'server_error' } });
    const { output, retries } = await run([failing, failing], {
      retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 1, jitter: false },
    });
    expect(output.status).toBe('error');
    expect(output.error).toMatchObject({ status: 503, retryable: true });
    expect(retries).toHaveLength(1);
    expect(server!.requests).toHaveLength(2);
  });

  it('a fault in the second request of a tool loop is retried and the loop completes with a valid history', async () => {
    const toolCall = openaiSse([
      chunk({
        role: 'assistant',
        tool_calls: [{ index: 0, id: 'call_add', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }],
      }),
      chunk({}, 'tool_calls'),
      usageChunk,
    ]);
    const { output, retries } = await run([toolCall, partialThen('reset'), answer('5')], {}, 'What is 2+3?');
    expect(output).toMatchObject({ status: 'done', text: '5', iterations: 1 });
    expect(retries).toEqual([expect.objectContaining({ code: 'network', discardPartial: true })]);
    expect(output.messages).toEqual([
      { role: 'user', content: 'What is 2+3?' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_add', toolName: 'add', args: { a: 2, b: 3 } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_add', toolName: 'add', result: '5' }] },
      { role: 'assistant', content: [{ type: 'text', text: '5' }] },
    ]);
    // The retried request carries the tool result again, unchanged.
    expect(server!.requests[2]!.body).toEqual(server!.requests[1]!.body);
  });
});

describe.each(transports)('cancel closes the HTTP connection ($name)', (each) => {
  beforeEach(() => {
    transport = each;
  });
  async function startCancellable(step: WireStep) {
    server = await startWireServer([step]);
    const machine = createConversationMachine({
      provider: openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-cancel', baseURL: `${server.url}/v1`, ...fetchOption(transport) }),
      retry: false,
    });
    const actor = createActor(machine, { input: { messages: [] } });
    return actor;
  }

  it('during a stream: the run ends halted/cancelled and the server sees its socket close', async () => {
    const actor = await startCancellable(partialThen('stall'));
    actor.on('text.delta', () => actor.send({ type: 'cancel', reason: 'user left' }));
    actor.start();
    actor.send({ type: 'user.message', content: 'Hi' });
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'halted', reason: 'cancelled' });
    expectValidHistory(output.messages);
    await server!.waitForRequestSocketClosed(0);
  });

  it('before the first byte: the socket closes too', async () => {
    const actor = await startCancellable(async (_request, control) => control.sleep(10_000));
    actor.on('request.started', () => setTimeout(() => actor.send({ type: 'cancel' }), 50));
    actor.start();
    actor.send({ type: 'user.message', content: 'Hi' });
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'halted', reason: 'cancelled' });
    await server!.waitForRequestSocketClosed(0);
  });
});

describe.skipIf(!hasRecordedFixtures)('recorded retries', () => {
  it('OpenRouter 429 ×3 (pydanticai-openrouter-429-retries): three attempts, then error rate_limit', async () => {
    const cassette = loadCassette(path.join(recordedFixturesDir, 'openai-compatible/pydanticai-openrouter-429-retries.json'));
    server = await startWireServer(cassetteSteps(cassette));
    const machine = createConversationMachine({
      provider: openaiProvider({ model: 'google/gemini-2.0-flash-exp:free', apiKey: 'sk-or', baseURL: `${server.url}/api/v1` }),
      retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5, jitter: false },
    });
    const actor = createActor(machine, { input: { messages: [] } }).start();
    const retries: number[] = [];
    actor.on('request.retry', (event) => retries.push(event.attempt));
    actor.send({ type: 'user.message', content: 'Hello' });
    const output = await toPromise(actor);
    expect(output.status).toBe('error');
    expect(output.error).toMatchObject({ status: 429, retryable: true, code: 'rate_limit' });
    expect(retries).toHaveLength(2);
    expect(server.requests.map((request) => request.path)).toEqual(cassette.interactions.map((interaction) => interaction.request.path));
  });
});
if (!hasRecordedFixtures) console.warn(missingRecordedFixturesNote);
