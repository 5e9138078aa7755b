/**
 * `actorloop serve`: the conversation routes of actorloop/http on a local port, behind a bearer
 * token, as a process; conversations in a SQLite file outlive it, and a client following a stream
 * when it is stopped gets `event: resume` (docs/http.md, "A host that closes").
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { actorloop, type CliResult, startListening } from './support/cli-process.js';

const work = mkdtempSync(join(tmpdir(), 'actorloop-serve-'));
const running: Array<{ child: ChildProcess; done: Promise<CliResult> }> = [];

afterEach(async () => {
  for (const { child, done } of running.splice(0)) {
    child.kill('SIGTERM');
    await done;
  }
});

/** Starts `actorloop serve …args` and resolves with what it printed on stdout (`{ url, token? }`); stopped after each test. */
async function serve(args: string[], env: Record<string, string> = {}) {
  const started = startListening<{ url: string; token?: string }>(['serve', '--port', '0', ...args], env);
  const { printed, child, done } = await started;
  running.push({ child, done });
  return { ...printed, child, done };
}

async function readEvents(url: string, token: string, until: (text: string) => boolean): Promise<string> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!until(text)) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return text;
}

describe('actorloop serve', () => {
  it('serves the routes behind the token from --token: a conversation over HTTP with the offline model, stored in --db', async () => {
    const db = join(work, 'served.db');
    const token = 'local-token-0123456789';
    const { url, token: printed, child, done } = await serve(['--db', db, '--token', token]);
    expect(printed).toBeUndefined();
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    const refused = await fetch(`${url}/conversations/c1`, { headers: { authorization: 'Bearer wrong-token-0123456789' } });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(await refused.text()).not.toContain('c1"');
    expect((await fetch(`${url}/conversations/c1`)).status).toBe(403);

    const sent = await fetch(`${url}/conversations/c1/messages`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ content: 'what is 17*23?' }),
    });
    expect(sent.status).toBe(202);
    const events = await readEvents(`${url}/conversations/c1/events`, token, (text) => text.includes('"status":"done"'));
    expect(events).toMatch(/^id: \d+\.\d+\.[a-z0-9]+$/m);
    expect(events).toContain('event: tool.result');
    const view = (await (await fetch(`${url}/conversations/c1`, { headers })).json()) as {
      status: string;
      messages: Array<{ role: string }>;
    };
    expect(view.status).toBe('done');
    expect(view.messages.at(-1)?.role).toBe('assistant');
    const openApi = (await (await fetch(`${url}/openapi.json`)).json()) as { openapi: string; paths: Record<string, unknown> };
    expect(openApi.openapi).toMatch(/^3\.1/);
    expect(Object.keys(openApi.paths)).toContain('/chat');

    // A client still following when the server is stopped: docs/http.md promises it `event: resume` before the end.
    const open = await fetch(`${url}/conversations/c1/events?from=now`, { headers: { authorization: `Bearer ${token}` } });
    const reader = (open.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let following = decoder.decode((await reader.read()).value);
    expect(following).toBe('retry: 1000\n\n');
    child.kill('SIGINT');
    for (;;) {
      const { done: ended, value } = await reader.read();
      if (ended) break;
      following += decoder.decode(value, { stream: true });
    }
    expect(following).toMatch(/event: resume\ndata: \{"lastEventId":null,"reason":"host_closed"\}\n\n$/);
    const result = await done;
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('stopping');
    const store = sqliteStore({ path: db, create: false });
    expect((await store.load('c1'))?.status).toBe('done');
    await store.close();
  });

  it('stopped while a request is still coming in, it waits a grace for it, then cuts it and exits 0', async () => {
    const { url, token, child, done } = await serve([], { ACTORLOOP_TOKEN: 'grace-token-0123456789' });
    // A POST that announces a body and sends half of it: its answer can never be written.
    const { port, hostname } = new URL(url);
    const socket = connect(Number(port), hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /chat HTTP/1.1\r\nhost: ${hostname}\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"id":`,
    );
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.on('error', () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stoppedAt = performance.now();
    child.kill('SIGINT');
    const result = await done;
    await closed;
    expect(result.code).toBe(0);
    // Not before the grace (2 s) — the answer might still have been written — and not for ever.
    expect(performance.now() - stoppedAt).toBeGreaterThan(1_500);
    expect(performance.now() - stoppedAt).toBeLessThan(15_000);
  });

  it('takes the token from ACTORLOOP_TOKEN, or makes one up and prints it; refuses a short one', async () => {
    const fromEnvironment = await serve([], { ACTORLOOP_TOKEN: 'environment-token-0123456789' });
    expect(fromEnvironment.token).toBeUndefined();
    expect(
      (await fetch(`${fromEnvironment.url}/conversations/x`, { headers: { authorization: 'Bearer environment-token-0123456789' } })).status,
    ).toBe(404);

    const madeUp = await serve([]);
    expect(madeUp.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect((await fetch(`${madeUp.url}/conversations/x`, { headers: { authorization: `Bearer ${madeUp.token}` } })).status).toBe(404);
    expect(
      (await fetch(`${madeUp.url}/conversations/x`, { headers: { authorization: 'Bearer environment-token-0123456789' } })).status,
    ).toBe(403);

    const short = await actorloop(['serve', '--token', 'short']);
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('--token needs at least 16 printable characters');
    const taken = await actorloop(['serve', '--port', new URL(madeUp.url).port]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/EADDRINUSE|address already in use/);
    expect(taken.stderr).not.toMatch(/\n\s+at /);
  });
});
