/**
 * actorloop/http mounted as a service author mounts it, over real sockets on 127.0.0.1: in a Hono
 * app (`app.all('/api/*', (c) => handler(c.req.raw))`, served by @hono/node-server) and in plain
 * `node:http` through `toNodeListener`. The same scenario on both: a message, the view, the event
 * stream and a resume with Last-Event-ID, a client that leaves (the host stops being followed), a
 * large body streamed in, a problem answer, the OpenAPI document; and the app's own routes beside.
 */
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { type ConversationHandler, createConversationHandler, toNodeListener } from '../src/http/index.js';
import { createConversationHost, createConversationMachine, memoryStore } from '../src/index.js';
import { deferred } from './support/run-conversation.js';
import {
  authorized,
  call,
  conversationalModel,
  countingFollows,
  defaultReply,
  deltasOf,
  openEvents,
  type SseMessage,
  token,
  tools,
  until,
} from './support/http-service.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A host whose follows are counted, behind a handler under /api. */
function setup(gate: Promise<void>) {
  const store = memoryStore();
  const machine = createConversationMachine({
    provider: conversationalModel((text, results) =>
      text === 'story'
        ? async function* () {
            for (let index = 0; index < 20; index++) {
              yield { choices: [{ index: 0, delta: { content: `w${index} ` }, finish_reason: null }] };
              if (index === 9) await gate;
            }
            yield { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] };
          }
        : defaultReply(text, results),
    ),
    tools,
  });
  const real = createConversationHost({ machine, store });
  const { host, open } = countingFollows(real);
  const handler = createConversationHandler(host, {
    authorize: (request) => request.headers.get('authorization') === `Bearer ${token}`,
    basePath: '/api',
    store,
  });
  closers.push(() => real.close());
  return { handler, host: real, open };
}

const story = Array.from({ length: 20 }, (_, index) => `w${index} `).join('');

async function scenario(url: string, open: { count: number }, gate: { resolve: () => void }) {
  const created = await call(url, 'POST', '/api/conversations/m-1/messages', { body: { content: 'story' } });
  expect(created.status).toBe(202);
  expect((await call(url, 'GET', '/api/conversations/m-1')).json()).toMatchObject({ id: 'm-1', status: 'running' });

  const first = openEvents(url, '/api/conversations/m-1/events');
  await first.until((all) => all.filter((message) => message.event === 'text.delta').length === 10, 'ten words');
  expect(open.count).toBe(1);
  first.leave();
  await first.ended;
  // The client left: the handler stops following the conversation.
  await until(() => open.count === 0, 'the follow stopped');
  gate.resolve();
  const rest = openEvents(url, '/api/conversations/m-1/events', { 'last-event-id': first.messages.at(-1)?.id as string });
  const isEnd = (all: SseMessage[]) => all.some((message) => message.event === 'state' && message.data.status === 'done');
  await rest.until(isEnd, 'the rest');
  expect(deltasOf(first.messages) + deltasOf(rest.messages)).toBe(story);
  rest.leave();
  await rest.ended;
  await until(() => open.count === 0, 'the second follow stopped');

  // A large body, streamed in pieces, no content-length.
  const content = 'x'.repeat(900_000);
  const streamed = await new Promise<number>((resolve, reject) => {
    const request = httpRequest(
      `${url}/api/conversations/m-2/messages`,
      { method: 'POST', headers: { ...authorized, 'content-type': 'application/json' } },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('error', reject);
    const body = Buffer.from(JSON.stringify({ content }));
    for (let offset = 0; offset < body.length; offset += 65_536) request.write(body.subarray(offset, offset + 65_536));
    request.end();
  });
  expect(streamed).toBe(202);
  await until(async () => (await call(url, 'GET', '/api/conversations/m-2')).json().status === 'done', 'm-2 done');

  const refused = await call(url, 'GET', '/api/conversations/m-1', { headers: { authorization: 'Bearer wrong' } });
  expect(refused.status).toBe(403);
  expect(refused.headers.get('content-type')).toBe('application/problem+json');
  const document = await call(url, 'GET', '/api/openapi.json');
  expect(document.json()).toMatchObject({
    openapi: '3.1.0',
    paths: { '/api/conversations/{id}/messages': { post: { operationId: 'sendMessage' } } },
  });
}

describe('mounted', () => {
  it('in a Hono app (app.all("/api/*", (c) => handler(c.req.raw))), served by @hono/node-server', async () => {
    const gate = deferred();
    const { handler, open } = setup(gate.promise);
    const app = new Hono();
    app.get('/health', (c) => c.json({ ok: true }));
    app.all('/api/*', (c) => handler(c.req.raw));
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const started = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(started));
    });
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await scenario(url, open, gate);
    expect((await call(url, 'GET', '/health')).json()).toEqual({ ok: true });
    expect((await call(url, 'GET', '/elsewhere')).status).toBe(404);
  });

  it('in node:http through toNodeListener', async () => {
    const gate = deferred();
    const { handler, open } = setup(gate.promise);
    const server = createServer(toNodeListener(handler as ConversationHandler));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    await scenario(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, open, gate);
  });
});

describe('toNodeListener', () => {
  it('a handler that throws is answered 500 problem+json, reported; a body the handler does not read leaves the connection usable', async () => {
    const reported: unknown[] = [];
    const listener = toNodeListener(
      async (request) => {
        if (request.url.endsWith('/throw')) throw new Error('handler bug at /srv/secret');
        return new Response('fine', { status: 200 });
      },
      { onError: (error) => reported.push(error) },
    );
    const server = createServer(listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const failed = await fetch(`${url}/throw`);
    expect(failed.status).toBe(500);
    expect(failed.headers.get('content-type')).toBe('application/problem+json');
    expect(await failed.text()).not.toContain('secret');
    expect(reported).toHaveLength(1);
    // A body never read, then another request on the same keep-alive connection.
    for (let index = 0; index < 3; index++) {
      const answer = await fetch(`${url}/ignore`, { method: 'POST', body: 'x'.repeat(10_000) });
      expect(await answer.text()).toBe('fine');
    }
  });

  it("an answer's headers, body and end go out in one write; an event stream's headers go out before its first event", async () => {
    const events = new TransformStream<Uint8Array, Uint8Array>();
    const listener = toNodeListener(async (request) =>
      request.url.endsWith('/events')
        ? new Response(events.readable, { headers: { 'content-type': 'text/event-stream' } })
        : Response.json({ ok: true, text: 'x'.repeat(2_000) }),
    );
    const server = createServer(listener);
    let writes = 0;
    server.on('connection', (socket) => {
      // Each call hands the kernel one write (one `writev` for corked chunks).
      const counted = socket as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
      for (const name of ['_write', '_writev'] as const) {
        const original = counted[name].bind(socket);
        counted[name] = (...args: unknown[]) => {
          writes++;
          return original(...args);
        };
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (let index = 0; index < 3; index++) {
      const before = writes;
      const answer = await fetch(`${url}/answer`);
      expect(((await answer.json()) as { ok: boolean }).ok).toBe(true);
      expect(writes - before).toBe(1);
    }
    // Nothing written to the event stream yet: its client is connected all the same.
    const stream = await fetch(`${url}/events`);
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    const writer = events.writable.getWriter();
    await writer.write(new TextEncoder().encode('data: 1\n\n'));
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: 1\n\n');
    await writer.close();
    expect((await reader.read()).done).toBe(true);
  });
});
