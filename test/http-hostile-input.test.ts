/**
 * actorloop/http against hostile input (docs/http.md "Statuses and problems"): the corpus of
 * test/support/http-corpus.ts — malformed JSON, 100,000-deep nesting, bodies over the limit (with
 * and without a length, endless), wrong media types, prototype keys, invalid UTF-8, huge and odd
 * ids, unknown routes and methods, slow bodies, bad Last-Event-IDs, fields of the wrong kind and
 * fields no route takes — sent to the Fetch API handler itself and over real sockets through
 * `toNodeListener`. Every answer is problem+json with the status, type and field expected, never a
 * 500, never a stack trace; the stored conversations are byte for byte what they were, the host
 * emitted nothing, and Object.prototype is untouched.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerClientError, problemTypePrefix } from '../src/http/index.js';
import { createConversationHost, createConversationMachine, memoryStore } from '../src/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { findJsonProblem } from '../src/util/json-problem.js';
import { type CorpusBody, type CorpusEntry, corpusLimits, hostileCorpus } from './support/http-corpus.js';
import { call, conversationalModel, type Service, startService, storeContent, tools, until } from './support/http-service.js';

const work = mkdtempSync(join(tmpdir(), 'actorloop-http-hostile-'));
const corpus = hostileCorpus();
let service: Service;
let before: string;
const emitted: unknown[] = [];
const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort();
const counts = { handler: new Map<number, number>(), socket: new Map<number, number>() };

beforeAll(async () => {
  service = await startService({ store: sqliteStore({ path: join(work, 'conversations.db') }), handler: corpusLimits });
  service.server.on('clientError', answerClientError);
  await call(service.url, 'POST', '/conversations/done-1/messages', { body: { content: 'say hello' } });
  await call(service.url, 'POST', '/conversations/waiting-1/messages', { body: { content: 'refund W-1' } });
  // What the store holds, not the host's view: the writes must have landed before the snapshot.
  await until(async () => (await service.store.load('done-1'))?.status === 'done', 'done-1 done');
  await until(async () => (await service.store.load('waiting-1'))?.status === 'awaitingApproval', 'waiting-1 waiting');
  before = await storeContent(service.store);
  service.host.subscribeAll((event, id) => emitted.push({ id, event }));
});

afterAll(async () => {
  await service.close();
  rmSync(work, { recursive: true, force: true });
});

type Outcome = { status: number; contentType: string; allow: string | null; connection: string | null; body: string; pulled?: number };

/** Sends an entry to the Fetch API handler itself. */
async function toHandler(entry: CorpusEntry): Promise<Outcome> {
  let pulled = 0;
  const { body } = entry;
  const headers = new Headers(entry.headers);
  let init: RequestInit & { duplex?: 'half' } = { method: entry.method, headers };
  if (typeof body === 'string' || body instanceof Uint8Array) {
    const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
    if (bytes.byteLength > 0) headers.set('content-length', String(bytes.byteLength));
    init = { ...init, body: bytes };
  } else if (body !== undefined) {
    init = { ...init, body: streamOf(body, (bytes) => (pulled += bytes)), duplex: 'half' };
  }
  const response = await service.handler(new Request(`http://127.0.0.1${entry.path}`, init));
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    allow: response.headers.get('allow'),
    connection: null,
    body: await response.text(),
    pulled,
  };
}

function streamOf(body: Exclude<CorpusBody, string | Uint8Array>, counted: (bytes: number) => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  if ('endless' in body) {
    return new ReadableStream({
      pull(controller) {
        counted(body.endless);
        controller.enqueue(new Uint8Array(body.endless).fill(0x78));
      },
    });
  }
  if ('stall' in body) {
    let stop: () => void = () => undefined;
    return new ReadableStream({
      start(controller) {
        controller.enqueue(encoder.encode(body.stall.sent));
      },
      pull: () => new Promise<void>((resolve) => (stop = resolve)),
      cancel: () => stop(),
    });
  }
  let index = 0;
  return new ReadableStream({
    async pull(controller) {
      await new Promise((resolve) => setTimeout(resolve, body.drip.every));
      controller.enqueue(encoder.encode(body.drip.bytes[index++ % body.drip.bytes.length]));
    },
  });
}

/** Sends an entry over a socket of its own, through toNodeListener. */
function toSocket(entry: CorpusEntry): Promise<Outcome> {
  const { body } = entry;
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...entry.headers };
    const bytes = typeof body === 'string' ? Buffer.from(body) : body instanceof Uint8Array ? Buffer.from(body) : undefined;
    if (bytes) headers['content-length'] = bytes.byteLength;
    else if (typeof body === 'object' && !(body instanceof Uint8Array) && 'stall' in body && body.stall.declared >= 0)
      headers['content-length'] = body.stall.declared;
    let answered = false;
    let timer: ReturnType<typeof setInterval> | undefined;
    const request = httpRequest(`${service.url}${entry.path}`, { method: entry.method, headers, agent: false }, (response) => {
      answered = true;
      clearInterval(timer);
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (piece: string) => (text += piece));
      response.on('end', () => {
        request.destroy();
        resolve({
          status: response.statusCode ?? 0,
          contentType: String(response.headers['content-type'] ?? ''),
          allow: (response.headers.allow as string | undefined) ?? null,
          connection: (response.headers.connection as string | undefined) ?? null,
          body: text,
        });
      });
    });
    request.on('error', (error) => {
      if (!answered) reject(error);
    });
    if (bytes) return void request.end(bytes);
    if (body === undefined || typeof body === 'string' || body instanceof Uint8Array) return void request.end();
    if ('stall' in body) return void request.write(body.stall.sent);
    if ('endless' in body) {
      const chunk = Buffer.alloc(body.endless, 0x78);
      const more = () => {
        while (!answered && request.write(chunk));
        if (!answered) request.once('drain', more);
      };
      return more();
    }
    let index = 0;
    timer = setInterval(() => request.write(body.drip.bytes[index++ % body.drip.bytes.length] as string), body.drip.every);
  });
}

/** What an answer should have been, or where it went wrong. */
function judge(entry: CorpusEntry, outcome: Outcome): string[] {
  const problems: string[] = [];
  if (outcome.status !== entry.expect.status) problems.push(`status ${outcome.status}, expected ${entry.expect.status}`);
  if (!outcome.contentType.startsWith('application/problem+json')) problems.push(`content-type ${outcome.contentType}`);
  if (entry.expect.status === 405 && !outcome.allow) problems.push('no allow header');
  if (entry.method === 'HEAD') return problems;
  let problem: Record<string, unknown>;
  try {
    problem = JSON.parse(outcome.body) as Record<string, unknown>;
  } catch {
    return [...problems, `not JSON: ${outcome.body.slice(0, 100)}`];
  }
  if (problem.type !== `${problemTypePrefix}${entry.expect.type}`) problems.push(`type ${String(problem.type)}`);
  if (problem.status !== outcome.status) problems.push(`body status ${String(problem.status)}`);
  if (typeof problem.title !== 'string' || typeof problem.detail !== 'string' || problem.detail === '') problems.push('no title or detail');
  const detail = String(problem.detail);
  if (detail.length > 400) problems.push(`a detail of ${detail.length} characters`);
  if (/\n\s+at |node_modules|\.ts:\d/.test(outcome.body)) problems.push('a stack trace');
  if (entry.expect.field !== undefined && problem.field !== entry.expect.field) problems.push(`field ${String(problem.field)}`);
  if (entry.expect.field !== undefined && !detail.startsWith(`${entry.expect.field}: expected`))
    problems.push(`detail "${detail.slice(0, 80)}"`);
  return problems;
}

const categories = [...new Set(corpus.map((entry) => entry.category))];

describe('the hostile-input corpus', () => {
  it(`has ${corpus.length} requests in ${categories.length} categories`, () => {
    expect(corpus.length).toBeGreaterThanOrEqual(300);
    expect(new Set(corpus.map((entry) => `${entry.category} ${entry.name} ${entry.only ?? ''}`)).size).toBe(corpus.length);
  });

  for (const mode of ['handler', 'socket'] as const) {
    describe(`sent to the ${mode === 'handler' ? 'Fetch API handler' : 'node:http server (toNodeListener)'}`, () => {
      for (const category of categories) {
        const entries = corpus.filter((entry) => entry.category === category && (entry.only === undefined || entry.only === mode));
        if (entries.length === 0) continue;
        it(`${category} (${entries.length})`, async () => {
          const wrong: Array<{ name: string; problems: string[] }> = [];
          for (const entry of entries) {
            const outcome = mode === 'handler' ? await toHandler(entry) : await toSocket(entry);
            counts[mode].set(outcome.status, (counts[mode].get(outcome.status) ?? 0) + 1);
            const problems = judge(entry, outcome);
            // Reading stopped at the limit: at most one piece past it was pulled.
            const { body } = entry;
            if (outcome.pulled !== undefined && typeof body === 'object' && !(body instanceof Uint8Array) && 'endless' in body) {
              if (outcome.pulled > corpusLimits.maxBodyBytes + 2 * body.endless) problems.push(`pulled ${outcome.pulled} bytes`);
            }
            if (mode === 'socket' && (entry.expect.status === 413 || entry.expect.status === 408) && outcome.connection !== 'close') {
              problems.push(`connection: ${outcome.connection}`);
            }
            if (problems.length > 0) wrong.push({ name: entry.name, problems });
          }
          expect(wrong).toEqual([]);
        }, 60_000);
      }
    });
  }

  it('left every stored conversation as it was, the host silent and Object.prototype untouched', async () => {
    expect(await storeContent(service.store)).toBe(before);
    expect(emitted).toEqual([]);
    expect(service.reported).toEqual([]);
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const summary = (mode: 'handler' | 'socket') =>
      [...counts[mode]]
        .sort(([a], [b]) => a - b)
        .map(([status, count]) => `${status}: ${count}`)
        .join(', ');
    console.log(`hostile corpus: ${corpus.length} requests; handler ${summary('handler')}; socket ${summary('socket')}`);
    expect(counts.handler.has(500)).toBe(false);
    expect(counts.socket.has(500)).toBe(false);
  });
});

describe('what the corpus lets through stays plain data', () => {
  it('a sessionData with __proto__, constructor and prototype keys is stored as data: nothing reaches a prototype', async () => {
    const sessionData = JSON.parse(
      '{"__proto__": {"polluted": 1}, "constructor": {"prototype": {"polluted": 2}}, "nested": [{"__proto__": null}]}',
    );
    const answer = await call(service.url, 'POST', '/conversations/proto-1/messages', {
      body: '{"content": "say hi", "sessionData": {"__proto__": {"polluted": 1}, "constructor": {"prototype": {"polluted": 2}}, "nested": [{"__proto__": null}]}}',
    });
    expect(answer.status).toBe(202);
    await until(async () => (await service.host.get('proto-1'))?.status === 'done', 'proto-1 done');
    const stored = await service.store.load('proto-1');
    const context = (JSON.parse(stored?.snapshot ?? '{}') as { context: { sessionData: unknown } }).context;
    expect(JSON.stringify(context.sessionData)).toBe(JSON.stringify(sessionData));
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a sessionData 64 levels deep (the limit) is taken; findJsonProblem walks 100,000 levels without overflowing and names the limit', async () => {
    const answer = await call(service.url, 'POST', '/conversations/deep-1/messages', {
      body: `{"content": "say hi", "sessionData": ${'['.repeat(63)}${']'.repeat(63)}}`,
    });
    expect(answer.status).toBe(202);
    let deep: unknown = 1;
    for (let level = 0; level < 100_000; level++) deep = { a: deep };
    expect(findJsonProblem(deep, 'sessionData')).toMatch(
      /^sessionData\.a\.a.*…\(\d+ levels\)….* must be plain JSON nested at most 1000 levels deep$/,
    );
    // The host itself refuses it with a clear error rather than overflowing when it writes the run.
    const machine = createConversationMachine({ provider: conversationalModel(), tools });
    const host = createConversationHost({ machine, store: memoryStore() });
    await expect(host.send('deep-2', { type: 'user.message', content: 'hi' }, { sessionData: deep })).rejects.toThrow(
      /nested at most 1000 levels/,
    );
    await host.close().catch(() => undefined);
  });
});
