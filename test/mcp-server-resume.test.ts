/**
 * Resumable Streamable HTTP streams of `serveMcp`: the official SDK client reaches the server through
 * a TCP proxy the test can sever, so the SSE stream of a call in progress is cut as a network would
 * cut it. The client reconnects on its own with `Last-Event-ID`; it must get the progress it missed
 * and the rest, and the result, each exactly once — and the run must go on meanwhile (a dropped
 * connection is not a cancellation). Then a pinned conversation (`conversationId`) shared by two
 * sessions: a call that comes while the other's run goes waits for it (bounded, cancellable). The
 * model is the planned OpenAI server through `openaiProvider`.
 */
import { createServer, connect as connectTcp, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createConversationHost, createConversationMachine, defineTool, memoryStore, type ConversationHost } from '../src/index.js';
import { openaiProvider } from '../src/providers/openai/index.js';
import { serveMcp, type ServedMcp } from '../src/protocols/mcp/index.js';
import type { PlanStep } from './support/planned-model.js';
import { type PlannedAnswer, type PlannedWireServer, startPlannedWireServer } from './support/planned-wire-server.js';

function plan(step: PlanStep): PlannedAnswer {
  if (step.lastUser === 'pinned wait' && step.round < 1) return { toolCalls: [{ id: 'call_wait_pinned', name: 'wait', args: { n: 4 } }] };
  if (step.lastUser === 'one wait' && step.round < 1) return { toolCalls: [{ id: 'call_wait_once', name: 'wait', args: { n: 3 } }] };
  if (step.lastUser === 'two waits' && step.round < 2) {
    return { toolCalls: [{ id: `call_wait_${step.round}`, name: 'wait', args: { n: step.round + 1 } }] };
  }
  return { text: `done after ${step.round} waits (turn ${step.turn})` };
}

/** A gate per `wait` call, opened by the test. */
const gates: Array<{ open: () => void; opened: Promise<void> }> = [];
let waitsStarted = 0;
const gate = (index: number) => {
  while (gates.length <= index) {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    gates.push({ open, opened });
  }
  return gates[index] as (typeof gates)[number];
};

/**
 * A TCP proxy in front of the MCP server. It can sever the connection that carries a `tools/call`
 * POST (its SSE answer with it), and hold back connections that resume with `Last-Event-ID` until
 * told, so the test decides what happens while the client is away.
 */
type Proxy = {
  url: string;
  cutCall(): void;
  /** The `Last-Event-ID` headers of the resuming requests seen so far. */
  resumes: string[];
  /** How many resuming requests' responses the server ended (the last chunk of a chunked body). */
  resumesEnded: number;
  holdResumes: boolean;
  releaseResumes(): void;
  close(): Promise<void>;
};

async function startProxy(target: URL): Promise<Proxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket; call: boolean }>();
  const held: Array<() => void> = [];
  const proxy: Proxy = {
    url: '',
    resumes: [],
    resumesEnded: 0,
    holdResumes: false,
    cutCall() {
      for (const pair of pairs) {
        if (!pair.call) continue;
        pair.client.destroy();
        pair.upstream.destroy();
      }
    },
    releaseResumes() {
      proxy.holdResumes = false;
      for (const go of held.splice(0)) go();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const { client, upstream } of pairs) {
          client.destroy();
          upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((client) => {
    const upstream = connectTcp(Number(target.port), target.hostname);
    const pair = { client, upstream, call: false, resume: false };
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    upstream.pipe(client);
    upstream.on('data', (chunk: Buffer) => {
      if (pair.resume && chunk.toString().endsWith('0\r\n\r\n')) proxy.resumesEnded++;
    });
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      if (text.includes('"method":"tools/call"')) pair.call = true;
      const resume = /^last-event-id: *(.+)$/im.exec(text)?.[1]?.trim();
      if (resume !== undefined) {
        proxy.resumes.push(resume);
        pair.resume = true;
      }
      if (resume !== undefined && proxy.holdResumes) {
        client.pause();
        held.push(() => {
          upstream.write(chunk);
          client.resume();
        });
        return;
      }
      upstream.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${target.pathname}`;
  return proxy;
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

let wire: PlannedWireServer;
let host: ConversationHost;
let served: ServedMcp;
let proxy: Proxy;
const reported: unknown[] = [];
const clients: Client[] = [];

async function connect(): Promise<Client> {
  const client = new Client({ name: 'resume-test', version: '1.0.0' });
  // Disconnections are expected here; the client reports them to onerror, which must not throw.
  client.onerror = () => undefined;
  await client.connect(
    new StreamableHTTPClientTransport(new URL(proxy.url), {
      reconnectionOptions: { initialReconnectionDelay: 20, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1.5, maxRetries: 5 },
    }),
  );
  clients.push(client);
  return client;
}

beforeAll(async () => {
  wire = await startPlannedWireServer(plan);
  const wait = defineTool({
    name: 'wait',
    description: 'Waits for the test to open its gate.',
    parameters: z.object({ n: z.number() }),
    execute: async ({ n }) => {
      waitsStarted++;
      await gate(n - 1).opened;
      return `gate ${n} opened`;
    },
  });
  host = createConversationHost({
    machine: createConversationMachine({
      provider: openaiProvider({ model: 'gpt-test', apiKey: 'sk-test', baseURL: `${wire.url}/v1` }),
      tools: [wait],
    }),
    store: memoryStore(),
  });
  served = serveMcp(host, { name: 'resumable', version: '1.0.0', onError: (error) => reported.push(error) });
  const { url } = await served.listen();
  proxy = await startProxy(new URL(url));
});

afterAll(async () => {
  for (const { open } of gates) open();
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await served?.close();
  await host?.close();
  await proxy?.close();
  await wire?.close();
});

describe('serveMcp: resumable Streamable HTTP streams', () => {
  it('a client whose SSE stream is cut mid-call reconnects with Last-Event-ID and gets the missed progress, the rest and the result, once each', async () => {
    const client = await connect();
    const progress: Array<{ progress: number; message?: string }> = [];
    const messages = () => progress.map(({ message }) => message);
    const call = client.callTool({ name: 'ask', arguments: { message: 'two waits' } }, undefined, {
      onprogress: ({ progress: value, message }) => progress.push({ progress: value, ...(message ? { message } : {}) }),
    });
    await until(() => messages().includes('calling tool wait'), 'the first wait is reported');

    // The network drops the call's stream; while the client is away, the first wait ends and the second starts.
    proxy.holdResumes = true;
    proxy.cutCall();
    await until(() => proxy.resumes.length > 0, 'the client tries to resume');
    gate(0).open();
    await until(() => waitsStarted === 2, 'the run goes on to the second wait');
    const missedWhileAway = messages().length;
    proxy.releaseResumes();

    // The replay brings what was missed; what follows comes live on the resumed stream.
    await until(() => messages().filter((message) => message === 'calling tool wait').length === 2, 'the missed progress is replayed');
    gate(1).open();
    const result = await call;

    expect((result.content as Array<{ text?: string }>)[0]?.text).toBe('done after 2 waits (turn 1)');
    expect(messages()).toEqual([
      'round 1: asking the model',
      'calling tool wait',
      'tool wait answered',
      'round 2: asking the model',
      'calling tool wait',
      'tool wait answered',
      'round 3: asking the model',
    ]);
    expect(progress.map(({ progress: value }) => value)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(missedWhileAway).toBe(2);
    // The client resumed from the last event it had, an id of the cut stream.
    expect(proxy.resumes[0]).toMatch(/^[0-9a-f-]{36}\/\d+$/);
    // Not a cancellation: the run finished, its conversation is done, each wait ran once.
    const [summary] = await host.list();
    expect(summary?.status).toBe('done');
    expect(waitsStarted).toBe(2);
    // The session goes on over a new connection.
    expect((await client.callTool({ name: 'ask', arguments: { message: 'and now?' } })).content).toEqual([
      { type: 'text', text: 'done after 0 waits (turn 2)' },
    ]);
    expect(reported).toEqual([]);
  });

  it('replays a result that came while the client was away, and ends the resumed stream after it', async () => {
    const client = await connect();
    const progress: string[] = [];
    const call = client.callTool({ name: 'ask', arguments: { message: 'one wait' } }, undefined, {
      onprogress: ({ message }) => progress.push(message ?? ''),
    });
    await until(() => progress.includes('calling tool wait'), 'the wait is reported');
    const resumesBefore = proxy.resumes.length;
    const endedBefore = proxy.resumesEnded;
    proxy.holdResumes = true;
    proxy.cutCall();
    await until(() => proxy.resumes.length > resumesBefore, 'the client tries to resume');
    gate(2).open();
    await until(
      async () => (await host.list()).filter(({ status }) => status === 'done').length === 2,
      'the run ends while the client is away',
    );
    proxy.releaseResumes();

    const result = await call;
    expect(result.content).toEqual([{ type: 'text', text: 'done after 1 waits (turn 1)' }]);
    expect(progress).toEqual(['round 1: asking the model', 'calling tool wait', 'tool wait answered', 'round 2: asking the model']);
    // The replayed stream ended with the response: the server holds nothing open for a finished request.
    await until(() => proxy.resumesEnded === endedBefore + 1, 'the resumed stream ends');
    expect(reported).toEqual([]);
  });

  it('answers a Last-Event-ID it cannot replay from with a 400 that says why, not a replay with a hole', async () => {
    const client = await connect();
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId as string;
    for (const lastEventId of ['not-an-id', '00000000-0000-0000-0000-000000000000/1', '_GET_stream/999999']) {
      const response = await fetch(proxy.url, {
        headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'last-event-id': lastEventId },
      });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { message: string } };
      expect(body.error.message).toContain(`cannot resume: the events after Last-Event-ID ${JSON.stringify(lastEventId)} are not kept`);
    }
    expect(reported).toEqual([]);
  });

  it('refuses resumability bounds that are not positive integers, naming the option', () => {
    expect(() => serveMcp(host, { name: 'x', version: '1', resumability: { retentionMs: -5 } })).toThrow(/resumability\.retentionMs/);
    expect(() => serveMcp(host, { name: 'x', version: '1', resumability: { maxEventsPerStream: 1.5 } })).toThrow(
      /resumability\.maxEventsPerStream/,
    );
  });
});

describe('serveMcp: a pinned conversation shared by sessions', () => {
  it('a call that comes while the run goes waits for it (bounded, cancellable, never cancelling that run), then continues the conversation', async () => {
    const seen: Array<{ transport: string; sessionId?: string }> = [];
    const pinned = serveMcp(host, {
      name: 'pinned',
      version: '1.0.0',
      conversationId: (session) => {
        seen.push(session);
        return 'shared';
      },
      waitForRunMs: 300,
      onError: (error) => reported.push(error),
    });
    const { url } = await pinned.listen();
    const open = async () => {
      const client = new Client({ name: 'pinned-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      clients.push(client);
      return client;
    };
    try {
      const [a, b] = [await open(), await open()];
      expect(seen).toEqual([
        { transport: 'http', sessionId: expect.any(String) },
        { transport: 'http', sessionId: expect.any(String) },
      ]);
      const running = a.callTool({ name: 'ask', arguments: { message: 'pinned wait' } });
      await until(async () => (await host.get('shared'))?.status === 'running' && waitsStarted === 4, 'the first call waits in its tool');

      // Past waitForRunMs: an error result that says why; nothing was sent.
      const startedAt = Date.now();
      const timedOut = await b.callTool({ name: 'ask', arguments: { message: 'hi' } });
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(290);
      expect(timedOut.isError).toBe(true);
      expect((timedOut.content as Array<{ text?: string }>)[0]?.text).toMatch(
        /^the run could not start: the conversation "shared" was still running after waiting 300 ms for its run to end/,
      );

      // Cancelled by the client while waiting: the wait ends, the run it waited for goes on.
      const aborter = new AbortController();
      const progress: string[] = [];
      const cancelled = b
        .callTool({ name: 'ask', arguments: { message: 'hi' } }, undefined, {
          signal: aborter.signal,
          onprogress: ({ message }) => progress.push(message ?? ''),
        })
        .then(
          () => 'answered',
          () => 'cancelled',
        );
      await until(() => progress.includes('waiting for the run in progress in conversation "shared" to end'), 'the call says it waits');
      aborter.abort('stop waiting');
      expect(await cancelled).toBe('cancelled');
      expect((await host.get('shared'))?.status).toBe('running');

      // Within the wait: sent once the run ends, on the same conversation.
      const waitingProgress: string[] = [];
      const waiting = b.callTool({ name: 'ask', arguments: { message: 'then this' } }, undefined, {
        onprogress: ({ message }) => waitingProgress.push(message ?? ''),
      });
      await until(() => waitingProgress.length > 0, 'the next call waits');
      expect(waitingProgress).toEqual(['waiting for the run in progress in conversation "shared" to end']);
      gate(3).open();
      expect((await running).content).toEqual([{ type: 'text', text: 'done after 1 waits (turn 1)' }]);
      // Turn 2: neither the timed-out nor the cancelled call sent its message.
      expect((await waiting).content).toEqual([{ type: 'text', text: 'done after 0 waits (turn 2)' }]);
      expect(waitingProgress).toEqual(['waiting for the run in progress in conversation "shared" to end', 'round 1: asking the model']);
      expect(waitsStarted).toBe(4);
    } finally {
      await pinned.close();
    }
    expect(reported).toEqual([]);
  });

  it('refuses a conversationId or waitForRunMs it cannot use, naming the option', async () => {
    expect(() => serveMcp(host, { name: 'x', version: '1', conversationId: '' })).toThrow(/conversationId/);
    expect(() => serveMcp(host, { name: 'x', version: '1', waitForRunMs: -1 })).toThrow(/waitForRunMs/);
    const served = serveMcp(host, { name: 'x', version: '1', conversationId: () => ' padded' });
    try {
      await expect(served.connectStdio({ stdin: new PassThrough(), stdout: new PassThrough() })).rejects.toThrow(/conversationId/);
    } finally {
      await served.close();
    }
  });
});
