/**
 * examples/http-service end to end over real HTTP (docs/http-service.md "Routes"): the service on a
 * SQLite file, its model the real `openai` SDK talking to the local wire server. An approval flow,
 * bad requests named, a client that leaves mid-stream (the run goes on, nothing leaks), a
 * conversation over several runs, and — as a process — a restart mid-run and the offline default.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { orderTools } from '../examples/http-service/orders.js';
import { HttpError } from '../examples/http-service/http-error.js';
import { createConversationService, errorResponse } from '../examples/http-service/service.js';
import {
  ActorloopError,
  ConversationConflictError,
  type ConversationHost,
  ConversationLoadError,
  ConversationNotFoundError,
  type ConversationView,
  createConversationHost,
  createConversationMachine,
  EventRejectedError,
  HostClosedError,
  InvalidOptionsError,
  openaiProvider,
  ProviderError,
} from '../src/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { countingHost } from './support/counting-host.js';
import { expectValidForBothWires } from './support/history.js';
import { deferred } from './support/run-conversation.js';
import { openaiSse, startWireServer, type WireServer, type WireStep } from './support/wire-server.js';

const root = join(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'actorloop-http-service-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// ---------------------------------------------------------------------------------------------
// What the model answers, as Chat Completions chunks.

let chunkSerial = 0;
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: `chatcmpl-${++chunkSerial}`,
  object: 'chat.completion.chunk',
  created: 1_700_000_000,
  model: 'gpt-test',
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const usageChunk = () => ({ ...chunk({}), choices: [], usage: { prompt_tokens: 30, completion_tokens: 6, total_tokens: 36 } });

function toolCallsStep(calls: Array<{ id: string; name: string; args: unknown }>): WireStep {
  return openaiSse([
    chunk({ role: 'assistant', content: null }),
    ...calls.map((call, index) =>
      chunk({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }],
      }),
    ),
    chunk({}, 'tool_calls'),
    usageChunk(),
  ]);
}

function textStep(text: string): WireStep {
  return openaiSse([
    chunk({ role: 'assistant', content: '' }),
    ...text.split(/(?<= )/).map((piece) => chunk({ content: piece })),
    chunk({}, 'stop'),
    usageChunk(),
  ]);
}

// ---------------------------------------------------------------------------------------------
// The service in this process, over real HTTP.

type Running = { url: string; wire: WireServer; host: ConversationHost; subscriptions: () => number; streams: () => number };
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let databases = 0;
async function startService(steps: WireStep[]): Promise<Running> {
  const wire = await startWireServer(steps);
  const machine = createConversationMachine({
    provider: openaiProvider({ model: 'gpt-test', apiKey: 'sk-test', baseURL: `${wire.url}/v1` }),
    tools: orderTools(),
    retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 5, jitter: false },
  });
  const real = createConversationHost({ machine, store: sqliteStore({ path: join(work, `service-${++databases}.db`) }) });
  // Counts the host subscriptions the service holds.
  const { host, subscriptions } = countingHost(real);
  const service = createConversationService({ host, heartbeatMs: 50 });
  const server: Server = createServer(service.handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanups.push(async () => {
    service.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await real.close();
    await wire.close();
  });
  return { url, wire, host: real, subscriptions, streams: () => service.openStreams() };
}

type Answer = {
  status: number;
  body: Record<string, unknown> & { error?: { message: string; field?: string; code?: string } };
  headers: Headers;
};
async function call(url: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${url}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Answer['body']) : {}, headers: response.headers };
}

/** Polls `GET /conversations/:id` until `check` holds. */
async function until(url: string, id: string, check: (view: ConversationView) => boolean, timeoutMs = 10_000): Promise<ConversationView> {
  const start = Date.now();
  for (;;) {
    const { status, body } = await call(url, 'GET', `/conversations/${id}`);
    if (status === 200 && check(body as unknown as ConversationView)) return body as unknown as ConversationView;
    if (Date.now() - start > timeoutMs) throw new Error(`conversation ${id} did not get there in ${timeoutMs} ms: ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

type SseMessage = { id: string; event: string; data: Record<string, unknown> };

/** An SSE client over node:http: the messages as they come, and a way to leave mid-stream. */
function openEvents(url: string, path: string) {
  const messages: SseMessage[] = [];
  const waiters: Array<() => void> = [];
  let buffer = '';
  const status = deferred<number>();
  const ended = deferred();
  const request = httpRequest(`${url}${path}`, { headers: { accept: 'text/event-stream' } }, (response) => {
    status.resolve(response.statusCode ?? 0);
    response.setEncoding('utf8');
    response.on('data', (text: string) => {
      buffer += text;
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields = Object.fromEntries(
          block
            .split('\n')
            .filter((line) => line !== '' && !line.startsWith(':'))
            .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
        );
        if (fields.data === undefined) continue;
        messages.push({ id: fields.id ?? '', event: fields.event ?? 'message', data: JSON.parse(fields.data) as Record<string, unknown> });
        for (const wake of waiters.splice(0)) wake();
      }
    });
    response.on('end', () => ended.resolve());
    response.on('error', () => ended.resolve());
  });
  request.on('error', () => ended.resolve());
  request.end();
  return {
    messages,
    status: status.promise,
    ended: ended.promise,
    /** Resolves with the first message (from now on, or already received) that `check` accepts. */
    async next(check: (message: SseMessage) => boolean, timeoutMs = 10_000): Promise<SseMessage> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = messages.find(check);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(`no such event in ${timeoutMs} ms; got ${messages.map((message) => message.event).join(', ')}`);
        await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), new Promise((resolve) => setTimeout(resolve, 50))]);
      }
    },
    leave: () => request.destroy(),
  };
}

const isState = (status: string) => (message: SseMessage) => message.event === 'state' && message.data.status === status;

describe('the HTTP service', () => {
  it('an approval flow: a refund waits, one call is approved and one denied over HTTP, the events stream and the run finishes', async () => {
    const service = await startService([
      toolCallsStep([
        { id: 'call_b', name: 'issue_refund', args: { orderId: 'B-7' } },
        { id: 'call_c', name: 'issue_refund', args: { orderId: 'C-3' } },
      ]),
      textStep('B-7 is refunded; the refund of C-3 was not approved.'),
    ]);
    const created = await call(service.url, 'POST', '/conversations', {
      id: 'c-1',
      content: 'Refund B-7 and C-3',
      sessionData: { user: 'ada' },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/conversations/c-1');
    expect(created.body).toMatchObject({ id: 'c-1', messages: [{ role: 'user', content: 'Refund B-7 and C-3' }] });

    const events = openEvents(service.url, '/conversations/c-1/events');
    expect(await events.status).toBe(200);
    const waiting = await until(service.url, 'c-1', (view) => view.status === 'awaitingApproval');
    expect(waiting.pendingApprovals).toEqual([
      { toolCallId: 'call_b', name: 'issue_refund', args: { orderId: 'B-7' } },
      { toolCallId: 'call_c', name: 'issue_refund', args: { orderId: 'C-3' } },
    ]);
    // The first message of the stream is where the conversation stands, with its history.
    expect(events.messages[0]).toMatchObject({ id: '1', event: 'state', data: { type: 'state', messages: [{ role: 'user' }] } });
    await events.next(isState('awaitingApproval'));

    const approved = await call(service.url, 'POST', '/conversations/c-1/approvals/call_b', { decision: 'approve' });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'awaitingApproval', pendingApprovals: [{ toolCallId: 'call_c' }] });
    const again = await call(service.url, 'POST', '/conversations/c-1/approvals/call_b', { decision: 'approve' });
    expect(again).toMatchObject({ status: 409, body: { error: { field: 'toolCallId', code: 'not_waiting' } } });
    const denied = await call(service.url, 'POST', '/conversations/c-1/approvals/call_c', { decision: 'deny', reason: 'over the limit' });
    expect(denied.status).toBe(200);

    const end = await events.next(isState('done'));
    expect(end.data).toMatchObject({
      value: 'done',
      output: { status: 'done', text: 'B-7 is refunded; the refund of C-3 was not approved.' },
    });
    expect(end.data).not.toHaveProperty('messages');
    expect(end.data.output).not.toHaveProperty('messages');
    const results = events.messages.filter((message) => message.event === 'tool.result').map((message) => message.data);
    expect(results).toHaveLength(2);
    expect(results).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ toolCallId: 'call_b', result: 'refunded order B-7: €80', isError: false }),
        expect.objectContaining({ toolCallId: 'call_c', result: 'denied by user: over the limit', isError: true }),
      ]),
    );
    expect(events.messages.map((message) => message.event)).toEqual(expect.arrayContaining(['text.delta', 'request.started', 'usage']));
    expect(events.messages.map((message) => Number(message.id))).toEqual(events.messages.map((_, index) => index + 1));

    const view = (await call(service.url, 'GET', '/conversations/c-1')).body as unknown as ConversationView;
    expect(view).toMatchObject({ status: 'done', value: 'done', pendingApprovals: [] });
    expect(view.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expectValidForBothWires(view.messages);
    // The model got both results, through the real SDK.
    expect(JSON.stringify(service.wire.requests[1]?.body)).toContain('denied by user: over the limit');
    events.leave();
    await events.ended;
  });

  it('bad requests get 400 naming the field, unknown ids 404, a busy conversation 409; nothing is lost', async () => {
    const hold = deferred();
    const service = await startService([
      async (_request, control) => {
        await hold.promise;
        await control.respond(textStep('Hello.') as Exclude<WireStep, (...args: never[]) => unknown>);
      },
    ]);
    const { url } = service;
    const bad: Array<[string, string, unknown, number, string]> = [
      ['POST', '/conversations', {}, 400, 'content'],
      ['POST', '/conversations', { content: '   ' }, 400, 'content'],
      ['POST', '/conversations', { content: 42 }, 400, 'content'],
      ['POST', '/conversations', { content: 'hi', id: 'has space' }, 400, 'id'],
      ['POST', '/conversations', { content: 'hi', id: 7 }, 400, 'id'],
      ['POST', '/conversations', { content: 'hi', sessionData: { user: 'ada' }, id: 'fine' }, 201, ''],
      ['POST', '/conversations', '{"content": "unterminated', 400, 'body'],
      ['POST', '/conversations', '[1, 2]', 400, 'body'],
      ['POST', '/conversations/fine/messages', { content: '' }, 400, 'content'],
      ['POST', '/conversations/fine/approvals/call_1', { decision: 'maybe' }, 400, 'decision'],
      ['POST', '/conversations/fine/approvals/call_1', { decision: 'deny', reason: 5 }, 400, 'reason'],
      ['POST', '/conversations/fine/cancel', { reason: false }, 400, 'reason'],
      ['GET', '/conversations/bad%ZZ', undefined, 400, 'id'],
      ['GET', '/conversations/a%20b', undefined, 400, 'id'],
    ];
    for (const [method, path, body, status, field] of bad) {
      const answer = await call(url, method, path, body);
      expect({ method, path, status: answer.status, field: answer.body.error?.field ?? '' }).toEqual({ method, path, status, field });
      if (status === 400) expect(answer.body.error?.message).toMatch(new RegExp(`^${field}: expected|^${field}: not a valid`));
    }
    const notFound: Array<[string, string, unknown, string]> = [
      ['GET', '/conversations/nobody', undefined, 'id'],
      ['GET', '/conversations/nobody/events', undefined, 'id'],
      ['POST', '/conversations/nobody/messages', { content: 'hi' }, 'id'],
      ['POST', '/conversations/nobody/approvals/call_1', { decision: 'approve' }, 'id'],
      ['POST', '/conversations/nobody/cancel', {}, 'id'],
      ['POST', '/conversations/fine/approvals/call_unknown', { decision: 'approve' }, 'toolCallId'],
    ];
    for (const [method, path, body, field] of notFound) {
      const answer = await call(url, method, path, body);
      expect({ path, status: answer.status, field: answer.body.error?.field }).toEqual({ path, status: 404, field });
    }
    expect((await call(url, 'GET', '/nothing')).status).toBe(404);
    const wrongMethod = await call(url, 'DELETE', '/conversations/fine');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
    const tooLarge = await call(url, 'POST', '/conversations', { content: 'x'.repeat(1024 * 1024 + 10) });
    expect(tooLarge).toMatchObject({ status: 413, body: { error: { field: 'body' } } });

    // The conversation is running: a second message is refused (409), and the id is taken.
    const busy = await call(url, 'POST', '/conversations/fine/messages', { content: 'are you there?' });
    expect(busy).toMatchObject({ status: 409, body: { error: { code: 'rejected' } } });
    const taken = await call(url, 'POST', '/conversations', { id: 'fine', content: 'again' });
    expect(taken).toMatchObject({ status: 409, body: { error: { field: 'id' } } });
    hold.resolve();
    const done = await until(url, 'fine', (view) => view.status === 'done');
    expect(done.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello.' }] },
    ]);
    expect(service.wire.requests).toHaveLength(1);
  });

  it('a client that leaves mid-stream: the run goes on, no stream or host subscription is left', async () => {
    const rest = deferred();
    const service = await startService([
      async (_request, control) => {
        control.res.writeHead(200, { 'content-type': 'text/event-stream' });
        control.res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'The answer ' }))}\n\n`);
        await rest.promise;
        for (const piece of [chunk({ content: 'is 42.' }), chunk({}, 'stop'), usageChunk()])
          control.res.write(`data: ${JSON.stringify(piece)}\n\n`);
        control.res.end('data: [DONE]\n\n');
      },
    ]);
    await call(service.url, 'POST', '/conversations', { id: 'long', content: 'What is the answer?' });
    const leaver = openEvents(service.url, '/conversations/long/events');
    await leaver.next((message) => message.event === 'text.delta');
    // Many more clients come and go while the answer streams.
    for (let index = 0; index < 30; index++) {
      const client = openEvents(service.url, '/conversations/long/events');
      await client.next((message) => message.event === 'state');
      client.leave();
      await client.ended;
    }
    const stayer = openEvents(service.url, '/conversations/long/events');
    await stayer.next((message) => message.event === 'state');
    expect(service.streams()).toBe(2);
    leaver.leave();
    await leaver.ended;
    for (let tries = 0; service.streams() > 1 && tries < 200; tries++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(service.streams()).toBe(1);
    expect(service.subscriptions()).toBe(1);
    expect((await call(service.url, 'GET', '/health')).body).toEqual({ status: 'ok', streams: 1 });

    rest.resolve();
    const end = await stayer.next(isState('done'));
    expect(end.data).toMatchObject({ output: { text: 'The answer is 42.' } });
    expect(leaver.messages.some(isState('done'))).toBe(false);
    stayer.leave();
    await stayer.ended;
    for (let tries = 0; service.streams() > 0 && tries < 200; tries++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(service.streams()).toBe(0);
    expect(service.subscriptions()).toBe(0);
    expect((await service.host.result('long')).text).toBe('The answer is 42.');
  });

  it('one stream follows a conversation over several runs; cancel ends a run', async () => {
    const hang = deferred();
    const service = await startService([
      textStep('First answer.'),
      async (_request, control) => {
        await Promise.race([hang.promise, control.clientClosed]);
      },
    ]);
    await call(service.url, 'POST', '/conversations', { id: 'multi', content: 'one' });
    const events = openEvents(service.url, '/conversations/multi/events');
    await until(service.url, 'multi', (view) => view.status === 'done');
    expect((await call(service.url, 'POST', '/conversations/multi/messages', { content: 'two' })).status).toBe(202);
    await events.next(isState('running'));
    const cancelled = await call(service.url, 'POST', '/conversations/multi/cancel', { reason: 'taking too long' });
    expect(cancelled).toMatchObject({ status: 200, body: { status: 'halted' } });
    const end = await events.next(isState('halted'));
    expect(end.data).toMatchObject({ output: { status: 'halted', reason: 'cancelled' } });
    const view = await until(service.url, 'multi', (current) => current.status === 'halted');
    expect(view.messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual(['one', 'two']);
    expectValidForBothWires(view.messages);
    events.leave();
    hang.resolve();
  });
});

// ---------------------------------------------------------------------------------------------
// The service as a process.

/** The environment without anything that would make the service go live. */
const offline: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !/^(OPENAI|ANTHROPIC)_(API_KEY|BASE_URL|MODEL)$/.test(name)),
);

/** Starts examples/http-service/main.ts; resolves with its URL once it listens. */
async function startProcess(db: string, env: NodeJS.ProcessEnv = offline) {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'examples/http-service/main.ts', '--port', '0', '--db', db], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stderr = '';
  child.stderr?.on('data', (text: Buffer) => {
    stderr += text.toString();
  });
  const exit = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? `code ${code}`)));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      const listening = /^listening on (http:\/\/\S+)$/.exec(line);
      if (listening?.[1]) resolve(listening[1]);
    });
    void exit.then((how) => reject(new Error(`the service exited (${how}) before listening:\n${lines.join('\n')}\n${stderr}`)));
  });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exit;
  });
  return { child, url, lines, exit, stderr: () => stderr };
}

describe('errorResponse: the status of each error class', () => {
  const rows: Array<[string, unknown, number, { message: string; field?: string; code?: string }]> = [
    ['HttpError', new HttpError(413, 'too large', { field: 'body' }), 413, { message: 'too large', field: 'body' }],
    [
      'InvalidOptionsError',
      new InvalidOptionsError('content', 'a non-empty string', ''),
      400,
      { message: 'Invalid option content: expected a non-empty string, got ""', field: 'content' },
    ],
    [
      'ConversationNotFoundError',
      new ConversationNotFoundError('c-1', 'nothing to approve'),
      404,
      { message: 'conversation "c-1" does not exist: nothing to approve', code: 'not_found' },
    ],
    [
      'EventRejectedError',
      new EventRejectedError({ conversationId: 'c-1', eventType: 'user.message', code: 'busy', message: 'running elsewhere' }),
      409,
      { message: 'conversation "c-1": running elsewhere', code: 'busy' },
    ],
    [
      'ConversationConflictError',
      new ConversationConflictError('c-1', 2, 3),
      409,
      { message: expect.stringContaining('changed by another writer') as string, code: 'conflict' },
    ],
    [
      'ConversationLoadError',
      new ConversationLoadError('c-1', 'corrupt', 'not JSON'),
      500,
      { message: 'stored conversation "c-1" cannot be loaded (corrupt): not JSON', code: 'corrupt' },
    ],
    ['HostClosedError', new HostClosedError('send'), 503, { message: 'the conversation host is closed: send', code: 'closing' }],
  ];
  for (const [name, error, status, body] of rows) {
    it(`${name} → ${status}`, () => {
      expect(errorResponse(error)).toEqual({ status, body: { error: body } });
    });
  }

  it('an error of another copy of actorloop is told by its class as well', () => {
    const fromAnotherCopy = Object.assign(new Error('conversation "c-1" does not exist: gone'), {
      name: 'ConversationNotFoundError',
      conversationId: 'c-1',
      [Symbol.for('actorloop.error.ActorloopError')]: true,
      [Symbol.for('actorloop.error.ConversationNotFoundError')]: true,
    });
    expect(errorResponse(fromAnotherCopy)).toEqual({
      status: 404,
      body: { error: { message: 'conversation "c-1" does not exist: gone', code: 'not_found' } },
    });
  });

  it('anything else is a 500 that says "internal error": no message, no stack, no class', () => {
    const unknown = [
      new Error('secret: /srv/keys/prod.pem'),
      new TypeError('cannot read properties of undefined'),
      new ProviderError('upstream said 401 for key sk-live-…', { code: 'authentication', retryable: false }),
      new (class OtherError extends ActorloopError {})('an actorloop error the table does not name'),
      'a thrown string',
      undefined,
    ];
    for (const error of unknown) {
      const answer = errorResponse(error);
      expect(answer).toEqual({ status: 500, body: { error: { message: 'internal error' } } });
      expect(JSON.stringify(answer)).not.toMatch(/secret|sk-live|\bat /);
    }
  });

  it('a closed host answers 503 (closing) over HTTP', async () => {
    const service = await startService([]);
    await service.host.close();
    const answer = await call(service.url, 'GET', '/conversations/anyone');
    expect(answer).toMatchObject({ status: 503, body: { error: { code: 'closing', message: expect.stringContaining('host is closed') } } });
  });
});

describe('the HTTP service as a process', { timeout: 60_000 }, () => {
  it('killed mid-run and started again on the same file, it resumes the conversation and finishes it', async () => {
    const wire = await startWireServer([
      // The first request hangs until the process that made it dies.
      async (_request, control) => {
        await control.clientClosed;
      },
      textStep('Order A-1 is a punched-card reader.'),
    ]);
    cleanups.push(() => wire.close());
    const db = join(work, 'restart.db');
    const live = { ...offline, OPENAI_BASE_URL: `${wire.url}/v1`, OPENAI_API_KEY: 'sk-test', OPENAI_MODEL: 'gpt-test' };
    const first = await startProcess(db, live);
    expect(first.lines[0]).toMatch(/^actorloop example "http-service" — LIVE: gpt-test at http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const created = await call(first.url, 'POST', '/conversations', { id: 'survivor', content: 'What is order A-1?' });
    expect(created).toMatchObject({ status: 201, body: { status: 'running' } });
    const events = openEvents(first.url, '/conversations/survivor/events');
    await events.next((message) => message.event === 'state');
    for (let tries = 0; wire.requests.length < 1 && tries < 500; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(wire.requests).toHaveLength(1);

    first.child.kill('SIGKILL');
    expect(await first.exit).toBe('SIGKILL');
    await events.ended;

    const second = await startProcess(db, live);
    expect(second.lines).toContain(`[recover] ${db}: resumed 1 (survivor), failed 0`);
    const done = await until(second.url, 'survivor', (view) => view.status === 'done');
    expect(done.messages).toEqual([
      { role: 'user', content: 'What is order A-1?' },
      { role: 'assistant', content: [{ type: 'text', text: 'Order A-1 is a punched-card reader.' }] },
    ]);
    // The request was made again, with the same history.
    expect(wire.requests).toHaveLength(2);
    const sent = wire.requests.map((request) => (request.body as { messages: unknown }).messages);
    expect(sent[1]).toEqual(sent[0]);
    second.child.kill('SIGTERM');
    expect(await second.exit).toBe('code 0');
  });

  it('offline by default: the scripted model looks the order up, the refund waits for approval over HTTP, then it is done', async () => {
    const service = await startProcess(join(work, 'offline.db'));
    expect(service.lines[0]).toMatch(/^actorloop example "http-service" — OFFLINE: a SCRIPTED model \(handlerProvider/);
    const created = await call(service.url, 'POST', '/conversations', { content: 'Please refund order B-7' });
    expect(created.status).toBe(201);
    const id = String(created.body.id);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const events = openEvents(service.url, `/conversations/${id}/events`);
    const waiting = await until(service.url, id, (view) => view.status === 'awaitingApproval');
    expect(waiting.pendingApprovals).toEqual([{ toolCallId: 'call_1_0', name: 'issue_refund', args: { orderId: 'B-7' } }]);
    expect((await call(service.url, 'POST', `/conversations/${id}/approvals/call_1_0`, { decision: 'approve' })).status).toBe(200);
    const end = await events.next(isState('done'));
    expect(end.data).toMatchObject({ output: { text: 'Done: refunded order B-7: €80.', iterations: 2 } });
    const view = await until(service.url, id, (current) => current.status === 'done');
    expect(view.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    // SIGTERM closes the open stream and exits cleanly.
    service.child.kill('SIGTERM');
    await events.ended;
    expect(await service.exit).toBe('code 0');
    expect(service.stderr()).toBe('');
  });
});
