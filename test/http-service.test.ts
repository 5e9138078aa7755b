/**
 * examples/http-service as a process (docs/http-service.md): the Hono app on actorloop/http over a
 * SQLite file, started with `--port 0`. Offline by default: a refund waits for approval, is
 * approved over HTTP and the run finishes, its events followed as SSE; every /api request needs
 * the bearer token (the one in API_TOKEN, or the one it prints when none is set); killed mid-run
 * and started again on the same file it resumes the run; SIGTERM ends open streams with `resume`
 * and exits 0.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ConversationView } from '../src/index.js';
import { type Answer, deltasOf, openEvents, type SseMessage, until } from './support/http-service.js';
import { openaiSse, startWireServer, type WireStep } from './support/wire-server.js';

const root = join(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'actorloop-http-service-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The environment without anything that would make the service go live, or set its token. */
const offline: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !/^(OPENAI|ANTHROPIC)_(API_KEY|BASE_URL|MODEL)$|^API_TOKEN$|^PORT$|^DB_PATH$/.test(name)),
);

/** Starts examples/http-service/main.ts; resolves with its URL once it listens. */
async function startProcess(db: string, env: NodeJS.ProcessEnv) {
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

async function call(url: string, token: string | undefined, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) as Record<string, unknown> };
}

const view = async (url: string, token: string, id: string) =>
  (await call(url, token, 'GET', `/api/conversations/${id}`)).json() as unknown as ConversationView;
const isState = (status: string) => (all: SseMessage[]) =>
  all.some((message) => message.event === 'state' && message.data.status === status);

describe('examples/http-service as a process', { timeout: 60_000 }, () => {
  it('offline, with API_TOKEN: a refund waits for approval, is approved, the run finishes; events followed; every /api route needs the token', async () => {
    const token = 'example-token-1';
    const service = await startProcess(join(work, 'offline.db'), { ...offline, API_TOKEN: token });
    expect(service.lines[0]).toMatch(/^actorloop example "http-service" — OFFLINE: a SCRIPTED model \(handlerProvider/);
    expect(service.lines.join('\n')).not.toContain(token);
    const { url } = service;

    expect((await call(url, undefined, 'GET', '/health')).json()).toEqual({ status: 'ok' });
    for (const wrong of [undefined, 'not-the-token']) {
      const refused = await call(url, wrong, 'POST', '/api/conversations/c-1/messages', { content: 'Please refund order B-7' });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('content-type')).toBe('application/problem+json');
    }
    expect((await call(url, undefined, 'GET', '/api/openapi.json')).json()).toMatchObject({ openapi: '3.1.0' });

    const events = openEvents(url, '/api/conversations/c-1/events', { authorization: `Bearer ${token}` });
    expect((await events.status).status).toBe(200);
    const started = await call(url, token, 'POST', '/api/conversations/c-1/messages', { content: 'Please refund order B-7' });
    expect(started.status).toBe(202);
    await until(async () => (await view(url, token, 'c-1')).status === 'awaitingApproval', 'the approval');
    expect((await view(url, token, 'c-1')).pendingApprovals).toEqual([
      { toolCallId: 'call_1_0', name: 'issue_refund', args: { orderId: 'B-7' } },
    ]);
    await events.until(isState('awaitingApproval'), 'the approval on the stream');
    expect((await call(url, token, 'POST', '/api/conversations/c-1/approve', { toolCallId: 'call_1_0' })).status).toBe(200);
    await events.until(isState('done'), 'the end of the run');
    const end = events.messages.find((message) => message.event === 'state' && message.data.status === 'done');
    expect(end?.data).toMatchObject({ output: { text: 'Done: refunded order B-7: €80.', iterations: 2 } });
    expect(deltasOf(events.messages)).toContain('Done: refunded order B-7: €80.');
    const done = await view(url, token, 'c-1');
    expect(done.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    const history = (await call(url, token, 'GET', '/api/conversations/c-1/history')).json() as {
      entries: Array<{ event: { type: string } }>;
    };
    expect(history.entries.map((entry) => entry.event.type)).toEqual(
      expect.arrayContaining(['user.message', 'tool.call', 'tool.result', 'tool.approve', 'run.ended']),
    );

    // SIGTERM: the open stream ends telling its client to resume, and the process exits cleanly.
    service.child.kill('SIGTERM');
    await events.ended;
    expect(events.messages.at(-1)).toMatchObject({ event: 'resume', data: { reason: 'host_closed' } });
    expect(await service.exit).toBe('code 0');
    expect(service.stderr()).toBe('');
  });

  it('without API_TOKEN it makes a token for the run, prints it, and takes only that one', async () => {
    const service = await startProcess(join(work, 'token.db'), offline);
    const printed = service.lines.map((line) => /^API_TOKEN is not set: this run accepts the token (\S+)$/.exec(line)?.[1]).find(Boolean);
    expect(printed).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect((await call(service.url, undefined, 'GET', '/api/conversations/x-1')).status).toBe(401);
    expect((await call(service.url, printed, 'GET', '/api/conversations/x-1')).status).toBe(404);
  });

  it('killed mid-run and started again on the same file, it resumes the conversation and finishes it', async () => {
    const textStep = (text: string): WireStep =>
      openaiSse([
        {
          id: 'c1',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'gpt-test',
          choices: [{ index: 0, delta: { role: 'assistant', content: text }, finish_reason: null }],
        },
        {
          id: 'c1',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'gpt-test',
          choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
        },
      ]);
    const wire = await startWireServer([
      // The first request hangs until the process that made it dies.
      async (_request, control) => {
        await control.clientClosed;
      },
      textStep('Order A-1 is a punched-card reader.'),
    ]);
    cleanups.push(() => wire.close());
    const db = join(work, 'restart.db');
    const token = 'example-token-2';
    const live = { ...offline, API_TOKEN: token, OPENAI_BASE_URL: `${wire.url}/v1`, OPENAI_API_KEY: 'sk-test', OPENAI_MODEL: 'gpt-test' };
    const first = await startProcess(db, live);
    expect(first.lines[0]).toMatch(/^actorloop example "http-service" — LIVE: gpt-test at http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect((await call(first.url, token, 'POST', '/api/conversations/survivor/messages', { content: 'What is order A-1?' })).status).toBe(
      202,
    );
    await until(() => wire.requests.length === 1, 'the first request');
    first.child.kill('SIGKILL');
    expect(await first.exit).toBe('SIGKILL');

    const second = await startProcess(db, live);
    expect(second.lines).toContain(`[recover] ${db}: resumed 1 (survivor), failed 0`);
    await until(async () => (await view(second.url, token, 'survivor')).status === 'done', 'survivor done');
    expect((await view(second.url, token, 'survivor')).messages).toEqual([
      { role: 'user', content: 'What is order A-1?' },
      { role: 'assistant', content: [{ type: 'text', text: 'Order A-1 is a punched-card reader.' }] },
    ]);
    // The request was made again, with the same history; the stream of the finished run replays.
    expect(wire.requests).toHaveLength(2);
    const sent = wire.requests.map((request) => (request.body as { messages: unknown }).messages);
    expect(sent[1]).toEqual(sent[0]);
    const replay = openEvents(second.url, '/api/conversations/survivor/events', { authorization: `Bearer ${token}` });
    await replay.until(isState('done'), 'the run replayed');
    expect(deltasOf(replay.messages)).toBe('Order A-1 is a punched-card reader.');
    replay.leave();
    second.child.kill('SIGTERM');
    expect(await second.exit).toBe('code 0');
  });
});
