/**
 * `serveViewer` and `loopbackOnly` (docs/observe.md "The viewer"): the one viewer handler over
 * several sources at once, served on a port by node:http; refused arguments named; `close()`
 * frees the port and cuts a stream the handler did not end; the loopback guard lets in this
 * machine's names, the name it was bound to, and everyone for an all-interfaces bind.
 */
import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import {
  createConversationHost,
  createConversationMachine,
  emptyUsage,
  InvalidOptionsError,
  memoryStore,
  type Provider,
} from '../src/index.js';
import { createViewerHandler, serveViewer } from '../src/observe/inspect/index.js';
import { loopbackOnly } from '../src/observe/inspect/viewer/loopback.js';

/** A model that answers every request with the same text. */
const saying = (text: string): Provider => ({
  name: 'fixed',
  async *stream() {
    yield { type: 'text.delta', delta: text };
    yield { type: 'finish', content: [{ type: 'text', text }], finishReason: 'stop', usage: emptyUsage() };
  },
});

describe('serveViewer', () => {
  it('serves one handler over a host and an actor side by side, on the port asked for', async () => {
    const machine = createConversationMachine({ provider: saying('hello') });
    const host = createConversationHost({ machine, store: memoryStore() });
    await host.send('stored-1', { type: 'user.message', content: 'hi' });
    await host.result('stored-1');
    const actor = createActor(machine, { input: { messages: [] } });
    const viewer = createViewerHandler([host, actor], { title: 'both' });
    const served = await serveViewer(viewer);
    try {
      expect(served.url).toBe(`http://127.0.0.1:${served.port}/`);
      actor.start();
      actor.send({ type: 'user.message', content: 'hi' });
      await toPromise(actor);
      const listed = (await (await fetch(`${served.url}api/conversations`)).json()) as Array<{ id: string; status: string }>;
      expect(listed.map(({ id, status }) => [id, status]).sort()).toEqual([
        ['run-1', 'done'],
        ['stored-1', 'done'],
      ]);
      const page = await fetch(served.url);
      expect(await page.text()).toContain('<title>both</title>');
      const again = await serveViewer(viewer, { port: served.port }).catch((error: unknown) => error);
      expect(again).toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      viewer.close();
      await served.close();
      await host.close();
    }
  });

  it('close() frees the port, cutting after a second a stream the handler did not end', async () => {
    const machine = createConversationMachine({ provider: saying('hello') });
    const host = createConversationHost({ machine, store: memoryStore() });
    await host.send('c-1', { type: 'user.message', content: 'hi' });
    await host.result('c-1');
    // A handler served by hand, never closed: its host's stream stays open until the server cuts it.
    const served = await serveViewer(createViewerHandler(host));
    const stream = await fetch(`${served.url}api/conversations/c-1/events`);
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    const started = performance.now();
    await served.close();
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
    await expect(
      (async () => {
        for (;;) if ((await reader.read()).done) return;
      })(),
    ).rejects.toThrow();
    const reused = await serveViewer(createViewerHandler(host), { port: served.port });
    expect(reused.port).toBe(served.port);
    await reused.close();
    await host.close();
  });

  it('names what it refuses', async () => {
    await expect(serveViewer(5 as never)).rejects.toThrow(InvalidOptionsError);
    await expect(serveViewer(5 as never)).rejects.toThrow(/handler: expected a viewer handler from createViewerHandler/);
    await expect(serveViewer(createViewerHandler(), { port: 70_000 })).rejects.toThrow(
      /port: expected an integer from 0 \(a free port\) to 65535/,
    );
    await expect(serveViewer(createViewerHandler(), { host: '' })).rejects.toThrow(/host: expected a host name or IP address/);
    expect(() => createViewerHandler([5 as never])).toThrow(/source\[0\]: expected a ConversationHost/);
  });
});

describe('loopbackOnly', () => {
  const asked = (host: string) => new Request('http://viewer/', { headers: { host } });
  it("lets in this machine's loopback names and the name the server was bound to, nothing else", () => {
    const local = loopbackOnly();
    expect(['127.0.0.1:4400', 'localhost:4400', 'LOCALHOST', '[::1]:4400'].map((host) => local(asked(host)))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(local(asked('evil.example:4400'))).toBe(false);
    expect(local(asked('192.168.1.20:4400'))).toBe(false);
    const bound = loopbackOnly('192.168.1.20');
    expect(bound(asked('192.168.1.20:4400'))).toBe(true);
    expect(bound(asked('evil.example'))).toBe(false);
    expect(loopbackOnly('fe80::1')(asked('[fe80::1]:4400'))).toBe(true);
  });

  it('an all-interfaces bind lets every name in, on purpose', () => {
    expect(loopbackOnly('0.0.0.0')(asked('evil.example'))).toBe(true);
    expect(loopbackOnly('::')(asked('anything'))).toBe(true);
  });
});
