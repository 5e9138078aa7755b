/**
 * The Responses wire under a whole conversation: the real `openai` SDK over real sockets, failures
 * injected by the wire server (or recorded), the machine classifying, retrying and keeping the
 * history valid; cancel closing the connection; and what a response cut off at the token limit
 * does to a run.
 */
import path from 'node:path';
import { createActor, toPromise } from 'xstate';
import { afterEach, describe, expect, it } from 'vitest';
import { createConversationMachine } from '../src/machines/chart/conversation.js';
import type { ConversationOptions } from '../src/machines/chart/options.js';
import type { Message } from '../src/model/messages.js';
import { openaiProvider, type OpenAIResponsesProviderOptions } from '../src/providers/openai/index.js';
import { defineTool } from '../src/tools/define-tool.js';
import { expectValidHistory } from './support/history.js';
import { inBandError, responsesEvents, responsesStream, textAnswer } from './support/responses-events.js';
import {
  anthropicSse,
  cassetteSteps,
  closedPortUrl,
  hasRecordedFixtures,
  jsonResponse,
  loadCassette,
  missingRecordedFixturesNote,
  recordedFixturesDir,
  startWireServer,
  type WireServer,
  type WireStep,
} from './support/wire-server.js';

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The first events of an answer (created, in_progress, the message added, one delta), written raw. */
const head = anthropicSse(responsesEvents({ items: [{ type: 'message', text: 'Partial answer', chunks: ['Partial '] }] }).slice(0, 5)).body;

/** Writes the head of a stream, then does `then` to the connection. */
function partialThen(then: 'reset' | 'end' | 'stall' | 'garble'): WireStep {
  return async (_request, control) => {
    control.res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    control.res.write(head);
    await control.sleep(20);
    if (then === 'reset') control.socket.resetAndDestroy();
    else if (then === 'end') control.res.end();
    else if (then === 'garble')
      control.res.end('event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":\n\n');
    else await control.sleep(10_000);
  };
}

const executed: Array<{ toolCallId: string; args: unknown }> = [];
const weather = defineTool({
  name: 'weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  execute: ({ city }, { toolCallId }) => {
    executed.push({ toolCallId, args: { city } });
    return `sunny in ${String(city)}`;
  },
});

async function run(
  steps: WireStep[] | { url: string },
  options: Partial<ConversationOptions> = {},
  providerOptions: Partial<OpenAIResponsesProviderOptions> = {},
) {
  executed.length = 0;
  let baseURL: string;
  if (Array.isArray(steps)) {
    server = await startWireServer(steps);
    baseURL = `${server.url}/v1`;
  } else {
    baseURL = `${steps.url}/v1`;
  }
  const machine = createConversationMachine({
    provider: openaiProvider({ api: 'responses', model: 'gpt-5-mini', apiKey: 'sk-faults', baseURL, ...providerOptions }),
    tools: [weather],
    retry: { maxRetries: 2, initialDelayMs: 5, maxDelayMs: 20, jitter: false },
    requestTimeoutMs: 2_000,
    ...options,
  });
  const actor = createActor(machine, { input: { messages: [] } });
  const retries: Array<{ attempt: number; delayMs: number; discardPartial: boolean; code?: string }> = [];
  const textDeltas: string[] = [];
  const toolCalls: string[] = [];
  actor.on('request.retry', (event) =>
    retries.push({ attempt: event.attempt, delayMs: event.delayMs, discardPartial: event.discardPartial, code: event.error.code }),
  );
  actor.on('text.delta', (event) => textDeltas.push(event.delta));
  actor.on('tool.call', (event) => toolCalls.push(event.toolCallId));
  actor.start();
  actor.send({ type: 'user.message', content: 'Hi' });
  const output = await toPromise(actor);
  expectValidHistory(output.messages);
  return { output, retries, textDeltas, toolCalls };
}

const onlyUserAndAnswer = (text: string): Message[] => [
  { role: 'user', content: 'Hi' },
  { role: 'assistant', content: [{ type: 'text', text }] },
];

describe('Responses wire: network faults through a conversation', () => {
  it('connection refused: a network error, retried per policy, then error with a valid history', async () => {
    const { output, retries } = await run({ url: await closedPortUrl() });
    expect(output.status).toBe('error');
    expect(output.error).toMatchObject({ retryable: true, code: 'network' });
    expect(retries.map((retry) => retry.code)).toEqual(['network', 'network']);
    expect(output.messages).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it('a reset before any byte is retried; nothing to discard', async () => {
    const { output, retries } = await run([(_request, control) => void control.socket.resetAndDestroy(), textAnswer('Hello.')]);
    expect(output).toMatchObject({ status: 'done', text: 'Hello.' });
    expect(retries).toEqual([expect.objectContaining({ code: 'network', discardPartial: false })]);
  });

  it('a reset mid-stream is retried with discardPartial, and the partial text stays out of the history', async () => {
    const { output, retries, textDeltas } = await run([partialThen('reset'), textAnswer('Hello.', { usage: { input: 12, output: 3 } })]);
    expect(output).toMatchObject({ status: 'done', text: 'Hello.' });
    expect(retries).toEqual([expect.objectContaining({ code: 'network', discardPartial: true })]);
    expect(textDeltas.join('')).toBe('Partial Hello.');
    expect(output.messages).toEqual(onlyUserAndAnswer('Hello.'));
    expect(output.usage).toEqual({ inputTokens: 12, outputTokens: 3, totalTokens: 15, cachedInputTokens: 0, reasoningTokens: 0 });
  });

  it('a stream that ends without response.completed, .incomplete or .failed is retried', async () => {
    const { output, retries } = await run([partialThen('end'), textAnswer('Whole.')]);
    expect(output).toMatchObject({ status: 'done', text: 'Whole.' });
    expect(retries).toEqual([expect.objectContaining({ code: 'incomplete_stream', discardPartial: true })]);
  });

  it('a malformed SSE data line is retried', async () => {
    const { output, retries } = await run([partialThen('garble'), textAnswer('Clean.')]);
    expect(output).toMatchObject({ status: 'done', text: 'Clean.' });
    expect(retries).toEqual([expect.objectContaining({ code: 'incomplete_stream', discardPartial: true })]);
  });

  it('a stream that stalls longer than requestTimeoutMs times out, closes that connection and is retried', async () => {
    const { output, retries } = await run([partialThen('stall'), textAnswer('Resumed.')], { requestTimeoutMs: 150 });
    expect(output).toMatchObject({ status: 'done', text: 'Resumed.' });
    expect(retries).toEqual([expect.objectContaining({ code: 'timeout', discardPartial: true })]);
    await server!.waitForRequestSocketClosed(0);
  });

  it('a 429 with retry-after-ms, then one with retry-after in seconds, wait at least that long', async () => {
    const { output, retries } = await run([
      jsonResponse(429, { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after-ms': '60' }),
      jsonResponse(429, { error: { message: 'slow down', type: 'tokens', code: 'rate_limit_exceeded' } }, { 'retry-after': '0.08' }),
      textAnswer('Done.'),
    ]);
    expect(output).toMatchObject({ status: 'done', text: 'Done.' });
    expect(retries.map((retry) => retry.code)).toEqual(['rate_limit', 'rate_limit']);
    expect(retries[0]!.delayMs).toBeGreaterThanOrEqual(60);
    expect(retries[1]!.delayMs).toBeGreaterThanOrEqual(80);
  });

  it('response.failed with server_error inside a 200 stream is retried, discarding what was streamed', async () => {
    const failed = responsesEvents({
      items: [{ type: 'message', text: 'Half' }],
      status: 'failed',
      error: { code: 'server_error', message: 'oops' },
    });
    const { output, retries } = await run([anthropicSse(failed), textAnswer('Fine.')]);
    expect(output).toMatchObject({ status: 'done', text: 'Fine.' });
    expect(retries).toEqual([expect.objectContaining({ code: 'server', discardPartial: true })]);
    expect(output.messages).toEqual(onlyUserAndAnswer('Fine.'));
  });

  it('an error event with server_error is retried; one with insufficient_quota ends the run at once', async () => {
    const retried = await run([inBandError({ type: 'server_error', code: 'server_error', message: 'try again' }), textAnswer('Back.')]);
    expect(retried.output).toMatchObject({ status: 'done', text: 'Back.' });
    expect(retried.retries).toEqual([expect.objectContaining({ code: 'server' })]);
    await server?.close();
    server = undefined;
    const quota = await run([
      inBandError({ type: 'insufficient_quota', code: 'insufficient_quota', message: 'You exceeded your current quota.' }),
    ]);
    expect(quota.output).toMatchObject({ status: 'error', error: { code: 'rate_limit', retryable: false } });
    expect(quota.retries).toEqual([]);
  });

  it('401 fails at once, without a retry', async () => {
    const { output, retries } = await run([
      jsonResponse(401, {
        error: { message: 'Incorrect API key provided: sk-f***ts.', type: 'invalid_request_error', code: 'invalid_api_key' },
      }),
    ]);
    expect(output.error).toMatchObject({ status: 401, retryable: false, code: 'authentication' });
    expect(retries).toEqual([]);
    expect(server!.requests).toHaveLength(1);
  });

  it('5xx until retries run out ends in error after maxRetries + 1 requests', async () => {
    const failing = jsonResponse(503, { error: { message: 'unavailable', type: 'server_error' } });
    const { output, retries } = await run([failing, failing], {
      retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 1, jitter: false },
    });
    expect(output.error).toMatchObject({ status: 503, retryable: true });
    expect(retries).toHaveLength(1);
    expect(server!.requests).toHaveLength(2);
  });

  it('a fault in the second request of a tool loop is retried with the same request, and the loop completes', async () => {
    const call = responsesStream({
      items: [
        { type: 'reasoning', encrypted: 'enc-1' },
        { type: 'function_call', callId: 'call_w', name: 'weather', args: '{"city":"Paris"}' },
      ],
    });
    const { output, retries } = await run([call, partialThen('reset'), textAnswer('Sunny in Paris.')]);
    expect(output).toMatchObject({ status: 'done', text: 'Sunny in Paris.', iterations: 1 });
    expect(retries).toEqual([expect.objectContaining({ code: 'network', discardPartial: true })]);
    expect(output.messages).toEqual([
      { role: 'user', content: 'Hi' },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: '', providerMetadata: { openai: { encryptedContent: 'enc-1' } } },
          { type: 'tool-call', toolCallId: 'call_w', toolName: 'weather', args: { city: 'Paris' } },
        ],
      },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_w', toolName: 'weather', result: 'sunny in Paris' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Sunny in Paris.' }] },
    ]);
    expect(server!.requests[2]!.body).toEqual(server!.requests[1]!.body);
    expect((server!.requests[1]!.body as { input: unknown[] }).input).toEqual([
      { role: 'user', content: 'Hi' },
      { type: 'reasoning', summary: [], encrypted_content: 'enc-1' },
      { type: 'function_call', call_id: 'call_w', name: 'weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_w', output: 'sunny in Paris' },
    ]);
  });
});

describe('Responses wire: a response cut off at max_output_tokens', () => {
  it('a function call whose arguments were cut is never executed: the run ends done with finishReason length', async () => {
    const cut = responsesStream({
      status: 'incomplete',
      items: [
        { type: 'reasoning', encrypted: 'enc-cut' },
        { type: 'message', text: 'Let me check.' },
        { type: 'function_call', callId: 'call_cut', name: 'weather', args: '{"city":"Par', status: 'incomplete' },
      ],
    });
    const { output, toolCalls } = await run([cut]);
    expect(executed).toEqual([]);
    expect(toolCalls).toEqual([]);
    expect(output).toMatchObject({ status: 'done', finishReason: 'length', text: 'Let me check.', iterations: 0 });
    expect(output.messages.at(-1)).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: '', providerMetadata: { openai: { encryptedContent: 'enc-cut' } } },
        { type: 'text', text: 'Let me check.' },
      ],
    });
  });

  it('the calls that came whole before the cut run, and the loop goes on', async () => {
    const cut = responsesStream({
      status: 'incomplete',
      items: [
        { type: 'function_call', callId: 'call_whole', name: 'weather', args: '{"city":"Oslo"}' },
        { type: 'function_call', callId: 'call_cut', name: 'weather', args: '{"ci', status: 'incomplete' },
      ],
    });
    const { output, toolCalls } = await run([cut, textAnswer('Sunny in Oslo.')]);
    expect(toolCalls).toEqual(['call_whole']);
    expect(executed).toEqual([{ toolCallId: 'call_whole', args: { city: 'Oslo' } }]);
    expect(output).toMatchObject({ status: 'done', finishReason: 'stop', text: 'Sunny in Oslo.', iterations: 1 });
    const sent = (server!.requests[1]!.body as { input: Array<{ call_id?: string }> }).input;
    expect(sent.filter((item) => item.call_id === 'call_cut')).toEqual([]);
  });
});

describe('Responses wire: cancel closes the HTTP connection', () => {
  async function cancellable(step: WireStep) {
    server = await startWireServer([step]);
    const machine = createConversationMachine({
      provider: openaiProvider({ api: 'responses', model: 'gpt-5-mini', apiKey: 'sk-cancel', baseURL: `${server.url}/v1` }),
      retry: false,
    });
    return createActor(machine, { input: { messages: [] } });
  }

  it('during a stream: the run ends halted/cancelled and the server sees its socket close', async () => {
    const actor = await cancellable(partialThen('stall'));
    actor.on('text.delta', () => actor.send({ type: 'cancel', reason: 'user left' }));
    actor.start();
    actor.send({ type: 'user.message', content: 'Hi' });
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'halted', reason: 'cancelled' });
    expectValidHistory(output.messages);
    await server!.waitForRequestSocketClosed(0);
  });

  it('before the first byte: the socket closes too', async () => {
    const actor = await cancellable(async (_request, control) => control.sleep(10_000));
    actor.on('request.started', () => setTimeout(() => actor.send({ type: 'cancel' }), 50));
    actor.start();
    actor.send({ type: 'user.message', content: 'Hi' });
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'halted', reason: 'cancelled' });
    await server!.waitForRequestSocketClosed(0);
  });
});

describe.skipIf(!hasRecordedFixtures)('Responses wire: recorded failures through a run', () => {
  const cassette = (name: string) => loadCassette(path.join(recordedFixturesDir, `openai-responses/${name}.json`));

  it('in-band insufficient_quota (vercel-gpt-5-nano-stream-error-insufficient-quota): error at once, no retry', async () => {
    const { output, retries } = await run(cassetteSteps(cassette('vercel-gpt-5-nano-stream-error-insufficient-quota')));
    expect(output).toMatchObject({ status: 'error', error: { code: 'rate_limit', retryable: false } });
    expect(output.error?.message).toContain('You exceeded your current quota');
    expect(retries).toEqual([]);
    expect(server!.requests).toHaveLength(1);
  });

  it('400 context_length_exceeded (rubyllm-error-400-context-length-exceeded): error at once, history kept', async () => {
    const { output, retries } = await run(cassetteSteps(cassette('rubyllm-error-400-context-length-exceeded')), {}, { stream: false });
    expect(output).toMatchObject({ status: 'error', error: { status: 400, code: 'context_length', retryable: false } });
    expect(retries).toEqual([]);
    expect(output.messages).toEqual([{ role: 'user', content: 'Hi' }]);
  });
});

if (!hasRecordedFixtures) console.warn(missingRecordedFixturesNote);
