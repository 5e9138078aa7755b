/**
 * `createNodeFetch` against a real local `node:http` server: what the provider SDKs rely on from a
 * `fetch` (streamed bodies, abort, decoding, redirects, network errors), keep-alive reuse, and the
 * provider options that take it. Whole recorded conversations also run over it in the three
 * conformance suites (test/support/transports.ts).
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync, brotliCompressSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../src/errors/invalid-options-error.js';
import { anthropicProvider } from '../src/providers/anthropic/index.js';
import { openaiProvider } from '../src/providers/openai/index.js';
import { createNodeFetch, type NodeFetch } from '../src/providers/transport/node-fetch.js';
import { redirectTarget } from '../src/providers/transport/redirect.js';
import { requestBodyOf, toHeaderRecord } from '../src/providers/transport/request-parts.js';
import { closedPortUrl } from './support/wire-server.js';

type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void | Promise<void>;
type TestServer = { url: string; connections: number; sockets: Set<Socket>; closedSockets: number; close(): Promise<void> };

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function serve(handler: Handler): Promise<TestServer> {
  const state = { connections: 0, closedSockets: 0, sockets: new Set<Socket>() };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => void handler(request, response, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('connection', (socket) => {
    state.connections++;
    state.sockets.add(socket);
    socket.on('close', () => {
      state.closedSockets++;
      state.sockets.delete(socket);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const result: TestServer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get connections() {
      return state.connections;
    },
    get closedSockets() {
      return state.closedSockets;
    },
    sockets: state.sockets,
    close: () => {
      for (const socket of state.sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  cleanup.push(() => result.close());
  return result;
}

function nodeFetch(options?: Parameters<typeof createNodeFetch>[0]): NodeFetch {
  const fetch = createNodeFetch(options);
  cleanup.push(() => fetch.close());
  return fetch;
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
};

describe('createNodeFetch', () => {
  it('sends method, headers and body, and answers with status, headers and body; connections are reused', async () => {
    const seen: Array<{ method: string; contentType: string | undefined; auth: string | undefined; body: string }> = [];
    const server = await serve((request, response, body) => {
      seen.push({ method: request.method ?? '', contentType: request.headers['content-type'], auth: request.headers.authorization, body });
      response.writeHead(201, { 'content-type': 'application/json', 'x-request-id': 'req_1' });
      response.end(JSON.stringify({ echoed: body }));
    });
    const fetch = nodeFetch();
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${server.url}/v1/things`, {
        method: 'POST',
        headers: new Headers({ Authorization: 'Bearer k', 'Content-Type': 'application/json' }),
        body: JSON.stringify({ i }),
      });
      expect(response.status).toBe(201);
      expect(response.ok).toBe(true);
      expect(response.url).toBe(`${server.url}/v1/things`);
      expect(response.headers.get('x-request-id')).toBe('req_1');
      expect(await response.json()).toEqual({ echoed: JSON.stringify({ i }) });
    }
    expect(seen).toEqual(
      [0, 1, 2].map((i) => ({ method: 'POST', contentType: 'application/json', auth: 'Bearer k', body: JSON.stringify({ i }) })),
    );
    expect(server.connections).toBe(1);
  });

  it('streams the body as it arrives, not when it ends', async () => {
    let sendRest!: () => void;
    const rest = new Promise<void>((resolve) => {
      sendRest = resolve;
    });
    const server = await serve(async (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: one\n\n');
      await rest;
      response.end('data: two\n\n');
    });
    const response = await nodeFetch()(`${server.url}/stream`);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    expect(decoder.decode((await reader.read()).value)).toBe('data: one\n\n');
    sendRest();
    let tail = '';
    for (let part = await reader.read(); !part.done; part = await reader.read()) tail += decoder.decode(part.value);
    expect(tail).toBe('data: two\n\n');
  });

  it('an abort while the body streams errors the body with the abort reason and closes the connection', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
    });
    const controller = new AbortController();
    const response = await nodeFetch()(`${server.url}/stream`, { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
    await until(() => server.closedSockets === 1);
  });

  it('an abort before the response rejects with an AbortError, and an aborted signal sends nothing', async () => {
    let requests = 0;
    const server = await serve(() => {
      requests++;
    });
    const fetch = nodeFetch();
    const controller = new AbortController();
    const pending = fetch(`${server.url}/slow`, { signal: controller.signal });
    await until(() => requests === 1);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await expect(fetch(`${server.url}/slow`, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    expect(requests).toBe(1);
  });

  it('cancelling the body closes the connection', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200);
      response.write('x'.repeat(1000));
    });
    const response = await nodeFetch()(`${server.url}/`);
    await response.body!.cancel();
    await until(() => server.closedSockets === 1);
  });

  it('decodes gzip and brotli bodies', async () => {
    const text = JSON.stringify({ hello: 'world'.repeat(50) });
    const server = await serve((request, response) => {
      const encoding = request.url === '/gzip' ? 'gzip' : 'br';
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding });
      response.end(encoding === 'gzip' ? gzipSync(text) : brotliCompressSync(text));
    });
    const fetch = nodeFetch();
    expect(await (await fetch(`${server.url}/gzip`)).text()).toBe(text);
    expect(await (await fetch(`${server.url}/br`)).text()).toBe(text);
  });

  it('follows redirects the way fetch does, and not with redirect: manual', async () => {
    const seen: string[] = [];
    const server = await serve((request, response, body) => {
      seen.push(`${request.method} ${request.url} ${body}`);
      if (request.url === '/see-other') response.writeHead(303, { location: '/final' }).end();
      else if (request.url === '/temporary') response.writeHead(307, { location: '/final' }).end();
      else response.writeHead(200).end('final');
    });
    const fetch = nodeFetch();
    const seeOther = await fetch(`${server.url}/see-other`, { method: 'POST', body: 'payload' });
    expect([seeOther.status, seeOther.redirected, seeOther.url, await seeOther.text()]).toEqual([
      200,
      true,
      `${server.url}/final`,
      'final',
    ]);
    const temporary = await fetch(`${server.url}/temporary`, { method: 'POST', body: 'payload' });
    expect(await temporary.text()).toBe('final');
    const manual = await fetch(`${server.url}/temporary`, { method: 'POST', body: 'payload', redirect: 'manual' });
    expect(manual.status).toBe(307);
    expect(seen).toEqual([
      'POST /see-other payload',
      'GET /final ',
      'POST /temporary payload',
      'POST /final payload',
      'POST /temporary payload',
    ]);
  });

  it('a redirect loop stops at maxRedirects, and redirect: error rejects, both as fetch failures', async () => {
    let requests = 0;
    const server = await serve((_request, response) => {
      requests++;
      response.writeHead(302, { location: '/again' }).end();
    });
    const fetch = nodeFetch({ maxRedirects: 3 });
    await expect(fetch(`${server.url}/loop`)).rejects.toMatchObject({ name: 'TypeError', cause: { message: 'more than 3 redirects' } });
    expect(requests).toBe(4);
    await expect(fetch(`${server.url}/loop`, { redirect: 'error' })).rejects.toMatchObject({
      name: 'TypeError',
      cause: { message: expect.stringContaining("redirect: 'error'") },
    });
  });

  it('a refused connection rejects with TypeError("fetch failed") carrying the cause; a cut body errors the stream', async () => {
    const refused = await nodeFetch()(`${await closedPortUrl()}/x`).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TypeError);
    expect(refused).toMatchObject({ message: 'fetch failed', cause: { code: 'ECONNREFUSED' } });

    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: partial\n\n', () => response.socket?.destroy());
    });
    const response = await nodeFetch()(`${server.url}/cut`);
    await expect(response.text()).rejects.toBeInstanceOf(TypeError);
  });

  it('a 204 has no body; bodies it does not write itself (form data) go to the global fetch', async () => {
    const server = await serve((request, response, body) => {
      if (request.url === '/empty') response.writeHead(204).end();
      else response.writeHead(200).end(`${request.headers['content-type']?.split(';')[0]}|${body.includes('name="field"')}`);
    });
    const fetch = nodeFetch();
    const empty = await fetch(`${server.url}/empty`, { method: 'DELETE' });
    expect([empty.status, empty.body]).toEqual([204, null]);
    const form = new FormData();
    form.set('field', 'value');
    expect(await (await fetch(`${server.url}/upload`, { method: 'POST', body: form })).text()).toBe('multipart/form-data|true');
  });

  it('close() closes the idle connections', async () => {
    const server = await serve((_request, response) => {
      response.end('ok');
    });
    const fetch = createNodeFetch();
    await (await fetch(`${server.url}/`)).text();
    expect(server.sockets.size).toBe(1);
    fetch.close();
    await until(() => server.sockets.size === 0);
  });

  it('rejects bad options with InvalidOptionsError naming them', () => {
    expect(() => createNodeFetch({ maxSockets: 0 })).toThrow(InvalidOptionsError);
    expect(() => createNodeFetch({ maxSockets: 1.5 })).toThrow(/maxSockets/);
    expect(() => createNodeFetch({ freeSocketTimeoutMs: -1 })).toThrow(/freeSocketTimeoutMs.*an integer ≥ 1/);
    expect(() => createNodeFetch('fast' as never)).toThrow(InvalidOptionsError);
    expect(() => createNodeFetch(null as never)).toThrow(
      /^Invalid option createNodeFetch\(options\): expected an options object, got null$/,
    );
    expect(() => createNodeFetch({ maxRedirects: -1 })).toThrow(
      /^Invalid option createNodeFetch\(\{ maxRedirects \}\): expected an integer ≥ 0, got -1$/,
    );
    expect(() => createNodeFetch({ maxFreeSockets: '8' as never })).toThrow(
      expect.objectContaining({
        option: 'createNodeFetch({ maxFreeSockets })',
        message: expect.stringContaining('expected an integer ≥ 1, got "8"') as unknown,
      }),
    );
    expect(() => openaiProvider({ model: 'm', fetch: 'node' as never })).toThrow(/openaiProvider\.fetch/);
    expect(() => anthropicProvider({ model: 'm', maxTokens: 10, fetch: 42 as never })).toThrow(/fetch/);
  });
});

describe('transport helpers', () => {
  it('request bodies: strings, bytes and URLSearchParams are written, others left to fetch', () => {
    expect(requestBodyOf(undefined)).toBeNull();
    expect(requestBodyOf('a')).toBe('a');
    expect(requestBodyOf(new Uint8Array([1, 2]))).toEqual(new Uint8Array([1, 2]));
    expect(requestBodyOf(new Uint16Array([1]))).toEqual(new Uint8Array([1, 0]));
    expect(requestBodyOf(new URLSearchParams({ a: '1' }))).toBe('a=1');
    expect(requestBodyOf(new FormData())).toBeUndefined();
    expect(requestBodyOf(new Blob(['x']))).toBeUndefined();
  });

  it('headers from every shape, lower-cased, repeated ones joined', () => {
    expect(
      toHeaderRecord([
        ['X-A', '1'],
        ['x-a', '2'],
      ]),
    ).toEqual({ 'x-a': '1, 2' });
    expect(toHeaderRecord({ Accept: 'json' })).toEqual({ accept: 'json' });
    expect(toHeaderRecord(new Headers({ 'X-B': 'b' }))).toEqual({ 'x-b': 'b' });
  });

  it('redirects: 303 and a POST under 301/302 become GET; 307/308 keep the method; others are not followed', () => {
    const from = new URL('http://h/a');
    expect(redirectTarget(303, '/b', from, 'POST')).toEqual({ url: new URL('http://h/b'), method: 'GET' });
    expect(redirectTarget(302, '/b', from, 'POST')?.method).toBe('GET');
    expect(redirectTarget(302, '/b', from, 'PUT')?.method).toBe('PUT');
    expect(redirectTarget(308, 'https://x/y', from, 'POST')).toEqual({ url: new URL('https://x/y'), method: 'POST' });
    expect(redirectTarget(200, '/b', from, 'GET')).toBeNull();
    expect(redirectTarget(301, undefined, from, 'GET')).toBeNull();
    expect(redirectTarget(301, 'ftp://x/', from, 'GET')).toBeNull();
  });
});
