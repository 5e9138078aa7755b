/**
 * One server of the SERVICE scenario (bench/service.ts), in a process of its own so its CPU is
 * measured alone (`process.cpuUsage()` here, read over IPC). Started with `child_process.fork` and
 * the side's settings as JSON in argv[2]; every side serves chats over `node:http` on 127.0.0.1,
 * answers with the bench's wire server as the model, and runs the one trivial `add` tool
 * (bench/tool.ts) in this process:
 *
 * - `actorloop-sqlite`: `createConversationMachine` + `openaiProvider` (at the wire server) +
 *   `createConversationHost` on `sqliteStore` (defaults: synchronous FULL) +
 *   `createConversationHandler` through `toNodeListener`. The client POSTs
 *   `/conversations/:id/messages` and follows `GET /conversations/:id/events`.
 * - `actorloop-postgres`: the same on `postgresStore` (its own pool, default 10 connections) with
 *   `postgresRelay` (LISTEN/NOTIFY), as a multi-process deployment runs it.
 * - `ai-sdk`: a Fetch API route handler, `POST /api/chat` with useChat's body →
 *   `streamText({ model: createOpenAI({ baseURL }).chat('bench-model'), tools: { add },
 *   stopWhen: stepCountIs(6), messages })` → `result.toUIMessageStreamResponse()`; nothing stored.
 * - `ai-sdk-resumable`: the same, its UI message stream (as SSE text) wrapped in `resumable-stream`'s
 *   `resumableStream(streamId, () => stream)` on Redis (one context per process, its own `redis`
 *   publisher and subscriber), the chat's stream id stored in Redis (`SET …:chat:<id>`), and
 *   `GET /api/chat/:id/stream` resuming it (`resumeExistingStream`; 204 when none).
 *
 * The AI SDK sides are served through the same `toNodeListener` as actorloop's, so the Fetch ↔
 * node:http bridge costs the same on every side.
 *
 * IPC, parent → child `{ id, type }`: `stats` (CPU, memory, gate, errors), `arm` (the next `add`
 * calls with a = `gateRound` wait), `release`, `gc` (a full collection; the process runs with
 * `--expose-gc`), `close` (closes the server, host, store, relay, Redis clients, deletes the bench's
 * Redis keys, then exits). Child → parent: `{ type: 'ready', url }`, `{ type: 'failed', error }`,
 * and `{ type: 'reply', id, … }`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAI } from '@ai-sdk/openai';
import {
  convertToModelMessages,
  generateId,
  JsonToSseTransformStream,
  stepCountIs,
  streamText,
  tool,
  UI_MESSAGE_STREAM_HEADERS,
  type UIMessage,
} from 'ai';
import { answerClientError, createConversationHandler, toNodeListener } from '../src/http/index.js';
import { type ConversationStore, createConversationHost, createConversationMachine, defineTool, openaiProvider } from '../src/index.js';
import { addDescription, addExecutor, addName, addSchema, createGate } from './tool.js';

export type ServiceSide = 'actorloop-sqlite' | 'actorloop-postgres' | 'ai-sdk' | 'ai-sdk-resumable';

export type ServiceServerConfig = {
  side: ServiceSide;
  /** The wire server's `…/v1`. */
  baseURL: string;
  token: string;
  /** The `add` calls with this `a` wait while the gate is armed (the wire server's round number). */
  gateRound: number;
  sqlitePath?: string;
  postgres?: { url: string; schema: string; channel: string };
  redis?: { url: string; keyPrefix: string };
};

export type ServiceServerStats = {
  cpuUserUs: number;
  cpuSystemUs: number;
  rssBytes: number;
  heapUsedBytes: number;
  externalBytes: number;
  /** `add` calls waiting at the gate now. */
  blocked: number;
  /** Errors the server saw (handler, listener, streamText, Redis, relay), counted by kind (the message, digits as #). */
  errors: number;
  errorKinds: Record<string, number>;
};

export type ServiceServerCommand = { id: number; type: 'stats' | 'arm' | 'release' | 'gc' | 'close' };
export type ServiceServerReply =
  | { type: 'ready'; url: string }
  | { type: 'failed'; error: string }
  | { type: 'reply'; id: number; stats?: ServiceServerStats };

const config = JSON.parse(process.argv[2] ?? '{}') as ServiceServerConfig;
const gate = createGate(config.gateRound);
gate.armed = false;
const execute = addExecutor(gate);

let errors = 0;
const errorKinds = new Map<string, number>();
const noteError = (where: string) => (error: unknown) => {
  errors++;
  const kind = `${where}: ${error instanceof Error ? error.message : String(error)}`.replace(/\d+/g, '#').slice(0, 200);
  errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
};

type Served = { handler: (request: Request) => Promise<Response>; close: () => Promise<void> };

async function actorloopSide(): Promise<Served> {
  const machine = createConversationMachine({
    provider: openaiProvider({ model: 'bench-model', apiKey: 'bench-key', baseURL: config.baseURL }),
    tools: [defineTool({ name: addName, description: addDescription, parameters: addSchema, execute: (args) => execute(args) })],
  });
  let store: ConversationStore;
  let relay: (import('../src/stores/postgres/index.js').PostgresRelay & { close(): Promise<void> }) | undefined;
  if (config.side === 'actorloop-postgres') {
    const postgres = config.postgres;
    if (!postgres) throw new Error('actorloop-postgres: no postgres settings');
    const { postgresRelay, postgresStore } = await import('../src/stores/postgres/index.js');
    store = postgresStore({ connectionString: postgres.url, schema: postgres.schema });
    relay = postgresRelay({ connectionString: postgres.url, channel: postgres.channel, onError: noteError('relay') });
    await relay.whenListening();
  } else {
    const { sqliteStore } = await import('../src/stores/sqlite/index.js');
    if (!config.sqlitePath) throw new Error('actorloop-sqlite: no sqlitePath');
    store = sqliteStore({ path: config.sqlitePath });
  }
  const host = createConversationHost({ machine, store, ...(relay ? { relay } : {}) });
  await host.recover();
  const handler = createConversationHandler(host, {
    authorize: (request) => request.headers.get('authorization') === `Bearer ${config.token}`,
    store,
    onError: noteError('handler'),
  });
  return {
    handler,
    close: async () => {
      await host.close();
      await relay?.close();
      await (store as { close?: () => Promise<void> }).close?.();
    },
  };
}

async function aiSdkSide(): Promise<Served> {
  const model = createOpenAI({ apiKey: 'bench-key', baseURL: config.baseURL }).chat('bench-model');
  const add = tool({ description: addDescription, inputSchema: addSchema, execute: async (args) => execute(args) });
  let resumable:
    | {
        context: import('resumable-stream').ResumableStreamContext;
        publisher: import('redis').RedisClientType;
        subscriber: import('redis').RedisClientType;
        keyPrefix: string;
      }
    | undefined;
  if (config.side === 'ai-sdk-resumable') {
    const redisSettings = config.redis;
    if (!redisSettings) throw new Error('ai-sdk-resumable: no redis settings');
    const { createClient } = await import('redis');
    const { createResumableStreamContext } = await import('resumable-stream');
    // redis 6 fails a command that waited 5 s to be written (its default `commandOptions.timeout`); with
    // a thousand chats on two cores the event loop lags longer than that, so the wait is raised like
    // every other timeout of the bench.
    const options = { url: redisSettings.url, commandOptions: { timeout: 120_000 } };
    const publisher = createClient(options) as import('redis').RedisClientType;
    const subscriber = createClient(options) as import('redis').RedisClientType;
    publisher.on('error', noteError('redis publisher'));
    subscriber.on('error', noteError('redis subscriber'));
    await Promise.all([publisher.connect(), subscriber.connect()]);
    // One context for the process, as the package's README makes it (module scope), on our own clients.
    const context = createResumableStreamContext({
      keyPrefix: redisSettings.keyPrefix,
      waitUntil: null,
      publisher: publisher as never,
      subscriber: subscriber as never,
    });
    resumable = { context, publisher, subscriber, keyPrefix: redisSettings.keyPrefix };
  }
  const unauthorized = () => new Response(JSON.stringify({ error: 'unauthorized' }), { status: 401 });
  const handler = async (request: Request): Promise<Response> => {
    if (request.headers.get('authorization') !== `Bearer ${config.token}`) return unauthorized();
    const { pathname } = new URL(request.url);
    if (request.method === 'POST' && pathname === '/api/chat') {
      const { id, messages } = (await request.json()) as { id: string; messages: UIMessage[] };
      const result = streamText({
        model,
        tools: { add },
        stopWhen: stepCountIs(6),
        messages: await convertToModelMessages(messages),
        onError: ({ error }) => noteError('streamText')(error),
      });
      if (!resumable) return result.toUIMessageStreamResponse();
      // What toUIMessageStreamResponse() does, with resumable-stream between the SSE text and the response.
      const streamId = generateId();
      const stream = await resumable.context.resumableStream(streamId, () =>
        result.toUIMessageStream().pipeThrough(new JsonToSseTransformStream()),
      );
      // The chat's active stream, so a GET (on any process) can resume it.
      await resumable.publisher.set(`${resumable.keyPrefix}:chat:${id}`, streamId, { EX: 24 * 60 * 60 });
      if (!stream) return new Response('stream already done', { status: 422 });
      return new Response(stream.pipeThrough(new TextEncoderStream()), { headers: UI_MESSAGE_STREAM_HEADERS });
    }
    const resume = /^\/api\/chat\/([^/]+)\/stream$/.exec(pathname);
    if (request.method === 'GET' && resume && resumable) {
      const streamId = await resumable.publisher.get(`${resumable.keyPrefix}:chat:${decodeURIComponent(resume[1] as string)}`);
      if (!streamId) return new Response(null, { status: 204 });
      const stream = await resumable.context.resumeExistingStream(streamId);
      if (!stream) return new Response(null, { status: 204 });
      return new Response(stream.pipeThrough(new TextEncoderStream()), { headers: UI_MESSAGE_STREAM_HEADERS });
    }
    return new Response('not found', { status: 404 });
  };
  return {
    handler,
    close: async () => {
      if (!resumable) return;
      // The bench's keys (stream sentinels and chat → stream ids) go with it.
      const { publisher, subscriber, keyPrefix } = resumable;
      let keys: string[] = [];
      for await (const batch of publisher.scanIterator({ MATCH: `${keyPrefix}:*`, COUNT: 1000 })) keys = keys.concat(batch);
      for (let at = 0; at < keys.length; at += 500) await publisher.del(keys.slice(at, at + 500));
      await Promise.allSettled([publisher.quit(), subscriber.quit()]);
    },
  };
}

async function main(): Promise<void> {
  const served = config.side.startsWith('actorloop') ? await actorloopSide() : await aiSdkSide();
  const server = createServer(
    // Keep-alive longer than a run, no request timeout: a thousand streams wait on a loaded machine.
    { keepAliveTimeout: 120_000, requestTimeout: 0, headersTimeout: 120_000 },
    toNodeListener(served.handler, { onError: noteError('listener') }),
  );
  server.on('clientError', answerClientError);
  server.maxConnections = Number.POSITIVE_INFINITY;
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0, backlog: 4_096 }, resolve));
  const { port } = server.address() as AddressInfo;
  const send = (reply: ServiceServerReply, then: () => void = () => undefined) => process.send?.(reply, then);
  process.on('message', async (command: ServiceServerCommand) => {
    switch (command.type) {
      case 'arm':
        gate.reset();
        gate.armed = true;
        break;
      case 'release':
        gate.armed = false;
        gate.release();
        break;
      case 'gc':
        (globalThis as { gc?: () => void }).gc?.();
        break;
      case 'close':
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await served.close().catch(noteError('close'));
        return send({ type: 'reply', id: command.id }, () => process.exit(0));
      case 'stats':
        break;
    }
    const cpu = process.cpuUsage();
    const memory = process.memoryUsage();
    send({
      type: 'reply',
      id: command.id,
      stats: {
        cpuUserUs: cpu.user,
        cpuSystemUs: cpu.system,
        rssBytes: memory.rss,
        heapUsedBytes: memory.heapUsed,
        externalBytes: memory.external,
        blocked: gate.blocked,
        errors,
        errorKinds: Object.fromEntries(errorKinds),
      },
    });
  });
  send({ type: 'ready', url: `http://127.0.0.1:${port}` });
}

process.on('disconnect', () => process.exit(0));
try {
  await main();
} catch (error) {
  process.send?.(
    { type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies ServiceServerReply,
    () => process.exit(1),
  );
}
