/**
 * `recordTraffic` / `replayTraffic` (DESIGN §19, docs/testing.md "Recording and replaying real traffic"):
 * real traffic recorded through the real SDKs — `openai` via `openaiProvider`, `@anthropic-ai/sdk` via
 * `anthropicProvider`, `@ai-sdk/openai` and `@ai-sdk/google` via `aiSdkProvider` — from a local server
 * that plays a recorded fixture's bytes (read at test time), then replayed with that server stopped:
 * the same conversation ends `done` with the same output, a changed prompt ends it `error` naming the
 * difference, and the cassette holds no secret.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createActor, toPromise } from 'xstate';
import { afterAll, describe, expect, it } from 'vitest';
import {
  anthropicProvider,
  createConversationMachine,
  defineTool,
  InvalidOptionsError,
  openaiProvider,
  type Provider,
} from '../src/index.js';
import { aiSdkProvider } from '../src/providers/ai-sdk/index.js';
import {
  CassetteFormatError,
  CassetteMismatchError,
  CassetteMissingError,
  readCassette,
  recordTraffic,
  replayTraffic,
  type TrafficFetch,
} from '../src/testing/index.js';
import { recordedToolResults } from './support/openai-recorded.js';
import {
  hasRecordedFixtures,
  loadCassette,
  missingRecordedFixturesNote,
  recordedFixturesDir,
  startWireServer,
  type WireServer,
  type WireStep,
} from './support/wire-server.js';

if (!hasRecordedFixtures) console.warn(missingRecordedFixturesNote);

const root = mkdtempSync(path.join(tmpdir(), 'actorloop-cassettes-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let folders = 0;
/** A fresh, empty cassette folder per test. */
const freshDir = () => path.join(root, `t${++folders}`);

const fixture = (name: string) => loadCassette(path.join(recordedFixturesDir, `${name}.json`));
const fixtureSteps = (name: string): WireStep[] => fixture(name).interactions.map((interaction) => interaction.response);

/** Records through `run` against a local server playing `steps`, then stops the server. */
async function recordAgainst<T>(steps: WireStep[], run: (server: WireServer) => Promise<T>): Promise<{ result: T; server: WireServer }> {
  const server = await startWireServer(steps);
  try {
    return { result: await run(server), server };
  } finally {
    await server.close();
  }
}

type ConversationOptions = Parameters<typeof createConversationMachine>[0];

/** One user turn; retries off unless `options` sets them, so a test sees each request once. */
async function converse(provider: Provider, content: string, options: Partial<ConversationOptions> = {}) {
  const machine = createConversationMachine({ provider, retry: false, ...options });
  const actor = createActor(machine, { input: {} }).start();
  actor.send({ type: 'user.message', content });
  return toPromise(actor);
}

// The recorded OpenAI tool loop: system prompt, one `weather` call, the answer.
const toolLoop = 'openai/fantasy-gpt-4o-mini-tool-streaming';
const apiKey = 'sk-secret-test-key-0123456789abcdef';

function weatherTool() {
  const results = new Map<string, string>();
  for (const interaction of fixture(toolLoop).interactions) {
    for (const [id, result] of recordedToolResults(interaction.request.body)) results.set(id, result);
  }
  return defineTool({
    name: 'weather',
    description: 'Get weather information for a location',
    parameters: { type: 'object', properties: { location: { type: 'string', description: 'the city' } }, required: ['location'] },
    execute: (_args: unknown, { toolCallId }: { toolCallId: string }) => results.get(toolCallId) ?? 'unknown',
  });
}

function openaiOver(url: string, fetch: TrafficFetch, key = apiKey): Provider {
  return openaiProvider({ model: 'gpt-4o-mini', apiKey: key, baseURL: `${url}/v1`, fetch });
}

describe.skipIf(!hasRecordedFixtures)('recordTraffic / replayTraffic through openaiProvider (the openai SDK)', () => {
  it('records a tool loop, then replays it with the server stopped to the same output; a changed prompt ends the run error with the difference', async () => {
    const dir = freshDir();
    const record = recordTraffic({ dir, name: 'weather-tool-loop' });
    const { result: recorded, server } = await recordAgainst(fixtureSteps(toolLoop), (server) =>
      converse(openaiOver(server.url, record), "What's the weather in Florence,Italy?", {
        tools: [weatherTool()],
        system: 'You are a helpful assistant',
      }),
    );
    await record.flush();
    expect(recorded.status, JSON.stringify(recorded.error)).toBe('done');
    expect(recorded.text).toBe(
      fixture(toolLoop)
        .interactions[1]!.response.body.split('\n')
        .filter((line) => line.startsWith('data: {'))
        .map((line) => (JSON.parse(line.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '')
        .join(''),
    );
    expect(record.cassette).toBe(path.join(dir, 'weather-tool-loop.json'));
    expect(record.requests).toHaveLength(2);

    const cassette = readCassette(record.cassette);
    expect(cassette).toMatchObject({ provider: 'openai', framing: 'recorded' });
    expect(cassette.interactions.map((interaction) => interaction.request)).toEqual(
      server.requests.map((request) => ({ method: 'POST', path: '/v1/chat/completions', body: request.body })),
    );
    // Byte-exact: the bodies as the server sent them.
    expect(cassette.interactions.map((interaction) => interaction.response.body)).toEqual(
      fixture(toolLoop).interactions.map((interaction) => interaction.response.body),
    );

    // The same conversation, the server gone: only the cassette can answer.
    const replay = replayTraffic({ dir, name: 'weather-tool-loop' });
    const replayed = await converse(
      openaiOver(server.url, replay, 'sk-another-key-for-the-replay'),
      "What's the weather in Florence,Italy?",
      {
        tools: [weatherTool()],
        system: 'You are a helpful assistant',
      },
    );
    expect(replayed.status).toBe('done');
    expect(replayed.messages).toEqual(recorded.messages);
    expect(replayed.text).toBe(recorded.text);
    expect(replayed.usage).toEqual(recorded.usage);
    expect(replay.remaining()).toBe(0);
    expect(replay.mismatches).toEqual([]);

    // A changed prompt: the run ends error, naming the request, the field, both values; with the
    // default retry policy on, it is not retried.
    const strict = replayTraffic({ dir, name: 'weather-tool-loop' });
    const changed = await converse(openaiOver(server.url, strict), "What's the weather in Paris?", {
      tools: [weatherTool()],
      system: 'You are a helpful assistant',
      retry: {},
    });
    expect(changed.status).toBe('error');
    const message = changed.error?.message ?? '';
    expect(message).toContain('Cassette mismatch: request #1 differs from interactions[0]');
    expect(message).toContain(record.cassette);
    expect(message).toContain(
      `body.messages[1].content: expected "What's the weather in Florence,Italy?", received "What's the weather in Paris?"`,
    );
    expect(strict.requests).toHaveLength(1);
    expect(strict.mismatches).toHaveLength(1);
    expect(strict.mismatches[0]).toMatchObject({ request: 0, reason: 'different', differences: [{ path: 'body.messages[1].content' }] });
  });

  it('keeps keys, cookies and account ids out of the cassette', async () => {
    const dir = freshDir();
    const record = recordTraffic({ dir });
    const [response] = fixtureSteps('openai/fantasy-gpt-4o-mini-simple-streaming') as Array<{
      status: number;
      headers: Record<string, string>;
      body: string;
    }>;
    const withSecrets = {
      ...response!,
      headers: {
        ...response!.headers,
        'set-cookie': '__cf_bm=cookie-secret-value; path=/; HttpOnly',
        'openai-organization': 'org-SecretOrganization12345678',
        'openai-project': 'proj_SecretProject1234567890',
        'x-request-id': 'req_kept_123',
        'cf-ray': '8f00aa11bb22cc33-AMS',
      },
    };
    const { result } = await recordAgainst([withSecrets], (server) => converse(openaiOver(server.url, record), 'Say hi in Portuguese'));
    await record.flush();
    expect(result.status).toBe('done');

    const text = readFileSync(record.cassette, 'utf8');
    expect(record.cassette).toBe(path.join(dir, 'cassette.json'));
    for (const secret of [
      apiKey,
      'sk-secret',
      'cookie-secret',
      'set-cookie',
      'SecretOrganization',
      'SecretProject',
      'openai-organization',
      'authorization',
      'cf-ray',
    ])
      expect(text).not.toContain(secret);
    expect(readCassette(record.cassette).interactions[0]!.response.headers).toEqual({
      'content-type': 'text/event-stream; charset=utf-8',
      'x-request-id': 'req_kept_123',
    });
  });

  it("mode 'auto' records when the cassette is missing and replays once it exists; mode 'record' records afresh", async () => {
    const dir = freshDir();
    const name = 'openai/say-hi';
    const first = replayTraffic({ dir, name, mode: 'auto' });
    expect(first.mode).toBe('record');
    const { result: recorded, server } = await recordAgainst(fixtureSteps('openai/fantasy-gpt-4o-mini-simple-streaming'), (server) =>
      converse(openaiOver(server.url, first), 'Say hi in Portuguese'),
    );
    await first.flush();
    expect(recorded.status).toBe('done');

    const second = replayTraffic({ dir, name, mode: 'auto' });
    expect(second.mode).toBe('replay');
    const replayed = await converse(openaiOver(server.url, second), 'Say hi in Portuguese');
    expect(replayed.messages).toEqual(recorded.messages);

    // 'record' replaces the cassette, here with another recording.
    const again = replayTraffic({ dir, name, mode: 'record' });
    expect(again.mode).toBe('record');
    await recordAgainst(fixtureSteps('openai/rubyllm-gpt-5-nano-streaming-text'), (server) =>
      converse(openaiOver(server.url, again), 'Hello'),
    );
    await again.flush();
    expect(readCassette(again.cassette).interactions[0]!.response.body).toBe(
      fixture('openai/rubyllm-gpt-5-nano-streaming-text').interactions[0]!.response.body,
    );
  });

  it('a request more than the cassette holds ends the run error, naming how many were recorded', async () => {
    const dir = freshDir();
    const record = recordTraffic({ dir, name: 'one' });
    await recordAgainst(fixtureSteps('openai/fantasy-gpt-4o-mini-simple-streaming'), (server) =>
      converse(openaiOver(server.url, record), 'Say hi in Portuguese'),
    );
    await record.flush();

    const replay = replayTraffic({ dir, name: 'one' });
    const provider = openaiOver('http://127.0.0.1:9', replay);
    expect((await converse(provider, 'Say hi in Portuguese')).status).toBe('done');
    const extra = await converse(provider, 'Say hi in Portuguese');
    expect(extra.status).toBe('error');
    expect(extra.error?.message).toContain('Cassette exhausted: request #2 (POST /v1/chat/completions)');
    expect(extra.error?.message).toContain('recorded 1 interaction.');
    expect(replay.mismatches[0]).toMatchObject({ reason: 'exhausted', request: 1 });
  });

  it("match 'order' serves the n-th response to the n-th request, whatever it asks (the shared fixtures, recorded by other clients)", async () => {
    const name = 'openai/fantasy-gpt-4o-mini-simple-streaming';
    const replay = replayTraffic({ dir: recordedFixturesDir, name, match: 'order' });
    const output = await converse(openaiOver('https://api.openai.invalid', replay), 'Something else entirely');
    expect(output.status).toBe('done');
    expect(output.text).not.toBe('');
    expect(replay.remaining()).toBe(0);
  });
});

describe.skipIf(!hasRecordedFixtures)('recordTraffic / replayTraffic through anthropicProvider (the @anthropic-ai/sdk)', () => {
  it('records and replays a streamed answer; a changed prompt ends the run error with the difference', async () => {
    const dir = freshDir();
    const anthropic = (url: string, fetch: TrafficFetch) =>
      anthropicProvider({
        model: 'claude-haiku-4-5-20251001',
        maxTokens: 1024,
        apiKey: 'sk-ant-secret-key-0123456789abcdef',
        baseURL: url,
        fetch,
      });
    const record = recordTraffic({ dir, name: 'count' });
    const { result: recorded, server } = await recordAgainst(fixtureSteps('anthropic/rubyllm-haiku-4.5-streaming-text'), (server) =>
      converse(anthropic(server.url, record), 'Count from 1 to 3'),
    );
    await record.flush();
    expect(recorded.status, JSON.stringify(recorded.error)).toBe('done');
    const cassette = readCassette(record.cassette);
    expect(cassette.provider).toBe('anthropic');
    expect(cassette.interactions[0]!.response.body).toBe(
      fixture('anthropic/rubyllm-haiku-4.5-streaming-text').interactions[0]!.response.body,
    );
    expect(readFileSync(record.cassette, 'utf8')).not.toContain('sk-ant-secret');

    const replayed = await converse(anthropic(server.url, replayTraffic({ dir, name: 'count' })), 'Count from 1 to 3');
    expect(replayed.status).toBe('done');
    expect(replayed.messages).toEqual(recorded.messages);

    const changed = await converse(anthropic(server.url, replayTraffic({ dir, name: 'count' })), 'Count from 1 to 4');
    expect(changed.status).toBe('error');
    expect(changed.error?.message).toContain(
      'body.messages[0].content[0].text: expected "Count from 1 to 3", received "Count from 1 to 4"',
    );
  });
});

describe.skipIf(!hasRecordedFixtures)("recordTraffic / replayTraffic through aiSdkProvider (@ai-sdk/openai's fetch setting)", () => {
  it('records and replays a streamed answer; a changed prompt ends the run error with the difference', async () => {
    const dir = freshDir();
    const model = (url: string, fetch: TrafficFetch) =>
      aiSdkProvider(createOpenAI({ apiKey, baseURL: `${url}/v1`, fetch }).chat('gpt-4o-mini'));
    const record = recordTraffic({ dir, name: 'ai-sdk' });
    const { result: recorded, server } = await recordAgainst(fixtureSteps('openai/fantasy-gpt-4o-mini-simple-streaming'), (server) =>
      converse(model(server.url, record), 'Say hi in Portuguese'),
    );
    await record.flush();
    expect(recorded.status, JSON.stringify(recorded.error)).toBe('done');
    expect(readFileSync(record.cassette, 'utf8')).not.toContain(apiKey);

    const replayed = await converse(model(server.url, replayTraffic({ dir, name: 'ai-sdk' })), 'Say hi in Portuguese');
    expect(replayed.status).toBe('done');
    expect(replayed.messages).toEqual(recorded.messages);

    const changed = await converse(model(server.url, replayTraffic({ dir, name: 'ai-sdk' })), 'Say hello in Portuguese');
    expect(changed.status).toBe('error');
    expect(changed.error?.message).toContain(
      'body.messages[0].content: expected "Say hi in Portuguese", received "Say hello in Portuguese"',
    );
  });
});

describe("recordTraffic / replayTraffic through aiSdkProvider (@ai-sdk/google's fetch setting)", () => {
  // In the repository (test/fixtures/recorded/google), so this runs without the shared fixtures too.
  const gemini = loadCassette(
    path.join(import.meta.dirname, 'fixtures/recorded/google/fantasy-gemini-3-pro-preview-simple-streaming.json'),
  );

  it('records the query apart with the key out of it, replays, and a changed prompt ends the run error with the difference', async () => {
    const dir = freshDir();
    const key = 'AIzaSyD-secret-gemini-key-0123456789abcd';
    const model = (url: string, fetch: TrafficFetch) =>
      aiSdkProvider(createGoogleGenerativeAI({ apiKey: key, baseURL: `${url}/v1beta`, fetch })('gemini-3-pro-preview'));
    const record = recordTraffic({ dir, name: 'gemini' });
    const { result: recorded, server } = await recordAgainst(
      gemini.interactions.map((interaction) => interaction.response),
      (server) => converse(model(server.url, record), 'Say hi in Portuguese', { system: 'You are a helpful assistant' }),
    );
    await record.flush();
    expect(recorded.status, JSON.stringify(recorded.error)).toBe('done');
    const cassette = readCassette(record.cassette);
    expect(cassette.provider).toBe('google');
    expect(cassette.interactions[0]!.request).toMatchObject({
      path: '/v1beta/models/gemini-3-pro-preview:streamGenerateContent',
      query: 'alt=sse',
    });
    expect(cassette.interactions[0]!.response.body).toBe(gemini.interactions[0]!.response.body);
    expect(readFileSync(record.cassette, 'utf8')).not.toContain(key);

    const replayed = await converse(model(server.url, replayTraffic({ dir, name: 'gemini' })), 'Say hi in Portuguese', {
      system: 'You are a helpful assistant',
    });
    expect(replayed.messages).toEqual(recorded.messages);

    const changed = await converse(model(server.url, replayTraffic({ dir, name: 'gemini' })), 'Say hi in Spanish', {
      system: 'You are a helpful assistant',
    });
    expect(changed.status).toBe('error');
    expect(changed.error?.message).toContain(
      'body.contents[0].parts[0].text: expected "Say hi in Portuguese", received "Say hi in Spanish"',
    );
  });
});

describe('recordTraffic / replayTraffic with a plain fetch', () => {
  const sse = 'data: {"n":1}\n\ndata: {"n":2}\r\n\r\ndata: [DONE]\n\n';
  const post = (body: unknown, headers: Record<string, string> = {}) => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

  async function recordOne(dir: string, name: string, step: WireStep, url: (server: WireServer) => string, init: RequestInit) {
    const record = recordTraffic({ dir, name });
    await recordAgainst([step], async (server) => {
      const response = await record(url(server), init);
      return response.text();
    });
    await record.flush();
    return record;
  }

  it('replays the body byte-exact, a stream event by event, binary bodies as their bytes', async () => {
    const dir = freshDir();
    const stream = await recordOne(
      dir,
      'sse',
      { status: 200, headers: { 'content-type': 'text/event-stream' }, body: sse },
      (s) => `${s.url}/v1/x`,
      post({ a: 1 }),
    );
    expect(readCassette(stream.cassette).interactions[0]!.response.body).toBe(sse);

    const replay = replayTraffic({ dir, name: 'sse' });
    const response = await replay('https://example.invalid/v1/x', post({ a: 1 }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const chunks: string[] = [];
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) chunks.push(decoder.decode(chunk));
    expect(chunks).toEqual(['data: {"n":1}\n\n', 'data: {"n":2}\r\n\r\n', 'data: [DONE]\n\n']);

    const bytes = Buffer.from([0, 0, 0, 16, 0xff, 0xfe, 0x80, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const binary = await recordOne(
      dir,
      'binary',
      { status: 200, headers: { 'content-type': 'application/octet-stream' }, body: bytes.toString('base64'), bodyEncoding: 'base64' },
      (s) => `${s.url}/model/x/converse-stream`,
      post({}),
    );
    const recorded = readCassette(binary.cassette);
    expect(recorded.provider).toBe('bedrock');
    expect(recorded.interactions[0]!.response).toMatchObject({ bodyEncoding: 'base64', body: bytes.toString('base64') });
    const replayedBytes = new Uint8Array(
      await (await replayTraffic({ dir, name: 'binary' })('https://example.invalid/model/x/converse-stream', post({}))).arrayBuffer(),
    );
    expect(Buffer.from(replayedBytes).equals(bytes)).toBe(true);
  });

  it("replaces a key in the query (Gemini's key=) and in the body; a replay with another key still matches", async () => {
    const dir = freshDir();
    const key = 'AIzaSyA-secret-gemini-key-0123456789abcd';
    const record = await recordOne(
      dir,
      'gemini',
      { status: 200, headers: { 'content-type': 'application/json', 'x-goog-upload': 'dropped' }, body: '{"ok":true}' },
      (s) => `${s.url}/v1beta/models/gemini-2.5-flash:generateContent?alt=sse&key=${key}`,
      post(
        { contents: [{ text: `my key is ${key}` }], note: 'sk-proj-abcdefghijklmnopqrstuvwxyz' },
        { authorization: 'Bearer bearer-secret-0123456789' },
      ),
    );
    const text = readFileSync(record.cassette, 'utf8');
    expect(text).not.toContain(key);
    expect(text).not.toContain('bearer-secret');
    expect(text).not.toContain('sk-proj-');
    const cassette = readCassette(record.cassette);
    expect(cassette.provider).toBe('google');
    expect(cassette.interactions[0]!.request).toEqual({
      method: 'POST',
      path: '/v1beta/models/gemini-2.5-flash:generateContent',
      query: 'alt=sse&key=<API_KEY>',
      body: { contents: [{ text: 'my key is <API_KEY>' }], note: '<API_KEY>' },
    });
    expect(cassette.interactions[0]!.response.headers).toEqual({ 'content-type': 'application/json' });

    const other = 'AIzaSyB-another-gemini-key-9876543210zyxw';
    const replay = replayTraffic({ dir, name: 'gemini', onMismatch: 'reject' });
    const response = await replay(
      `https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent?alt=sse&key=${other}`,
      // Key order is not a difference.
      post({ note: 'sk-proj-zyxwvutsrqponmlkjihgfedcba', contents: [{ text: `my key is ${other}` }] }),
    );
    expect(await response.text()).toBe('{"ok":true}');
  });

  it("onMismatch: 'reject' rejects with CassetteMismatchError listing JSON paths, expected and received", async () => {
    const dir = freshDir();
    await recordOne(
      dir,
      'json',
      { status: 200, headers: { 'content-type': 'application/json' }, body: '{}' },
      (s) => `${s.url}/v1/chat/completions`,
      post({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], long: 'x'.repeat(300) }),
    );
    const replay = replayTraffic({ dir, name: 'json', onMismatch: 'reject' });
    const failure = await replay(
      'https://api.openai.com/v1/chat/completions?debug=1',
      post({
        model: 'gpt-4o',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'user', content: 'more' },
        ],
        long: `${'x'.repeat(250)}y`,
      }),
    ).catch((error: unknown) => error);
    expect(CassetteMismatchError.isInstance(failure)).toBe(true);
    const error = failure as CassetteMismatchError;
    expect(error.differences.map((difference) => difference.path)).toEqual(['query', 'body.model', 'body.messages[1]', 'body.long']);
    expect(error.differences[1]).toEqual({ path: 'body.model', expected: '"gpt-4o-mini"', received: '"gpt-4o"' });
    expect(error.differences[2]).toMatchObject({ expected: '(absent)' });
    expect(error.differences[3]!.received).toContain('(character 250 of 251)');
    expect(error.message).toContain('body.model: expected "gpt-4o-mini", received "gpt-4o"');
    // The cursor stays: the right request still gets the recorded answer.
    const right = await replay(
      'https://api.openai.com/v1/chat/completions',
      post({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], long: 'x'.repeat(300) }),
    );
    expect(await right.text()).toBe('{}');
  });

  it('an abort rejects the request, or errors the body while it is read, as a real fetch does', async () => {
    const dir = freshDir();
    await recordOne(
      dir,
      'sse',
      { status: 200, headers: { 'content-type': 'text/event-stream' }, body: sse },
      (s) => `${s.url}/v1/x`,
      post({}),
    );
    const replay = replayTraffic({ dir, name: 'sse', match: 'order' });
    const aborted = new AbortController();
    aborted.abort();
    await expect(replay('https://example.invalid/v1/x', { ...post({}), signal: aborted.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });

    const controller = new AbortController();
    const response = await replay('https://example.invalid/v1/x', { ...post({}), signal: controller.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('a missing or malformed cassette, or wrong options, fail at creation naming the file and the field', () => {
    const dir = freshDir();
    expect(() => replayTraffic({ dir, name: 'nothing' })).toThrow(CassetteMissingError);
    expect(() => replayTraffic({ dir, name: 'nothing' })).toThrow(`Cassette ${path.join(dir, 'nothing.json')} does not exist`);

    mkdirSync(dir, { recursive: true });
    const write = (name: string, content: unknown) =>
      writeFileSync(path.join(dir, `${name}.json`), typeof content === 'string' ? content : JSON.stringify(content));
    write('not-json', '{"provider": "openai", ');
    expect(() => replayTraffic({ dir, name: 'not-json' })).toThrow(/Cassette .*not-json\.json: not JSON/);
    write('bad-status', {
      provider: 'openai',
      interactions: [
        { request: { method: 'POST', path: '/v1/chat/completions', body: null }, response: { status: '200', headers: {}, body: '' } },
      ],
    });
    const bad = (() => {
      try {
        replayTraffic({ dir, name: 'bad-status' });
      } catch (error) {
        return error;
      }
    })();
    expect(CassetteFormatError.isInstance(bad)).toBe(true);
    expect(bad).toMatchObject({ file: path.join(dir, 'bad-status.json'), field: 'interactions[0].response.status' });
    expect((bad as Error).message).toContain(
      'field interactions[0].response.status: expected an HTTP status from 200 to 599, got a string ("200")',
    );
    write('no-body', {
      provider: 'openai',
      interactions: [{ request: { method: 'POST', path: '/v1/messages' }, response: { status: 200, headers: {}, body: '' } }],
    });
    expect(() => replayTraffic({ dir, name: 'no-body' })).toThrow('field interactions[0].request.body: missing');

    expect(() => replayTraffic({ dir, name: '../outside' })).toThrow(InvalidOptionsError);
    expect(() => replayTraffic({ dir, match: 'loose' } as never)).toThrow(
      "Invalid option match: expected 'exact' | 'order', got \"loose\"",
    );
    expect(() => recordTraffic({} as never)).toThrow(InvalidOptionsError);
    expect(() => recordTraffic({ dir, fecth: fetch } as never)).toThrow('did you mean fetch?');
  });
});
