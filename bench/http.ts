/**
 * HTTP: what serving a host through actorloop/http costs. N conversations at once (default 1,000),
 * each one run answered by a zero-latency scripted model in `deltas` text deltas, followed to its
 * end: directly on the host (`host.follow`, in process), and through the handler — SSE over
 * `node:http` (`toNodeListener`), the clients in a process of their own, each opening
 * `GET …/events`, then `POST …/messages`, reading until the run is done. Per side: wall time for
 * all N, and the server process's CPU (the host's, plus the handler's and node:http's on the HTTP
 * side); medians of `reps` batches, sides interleaved after one warm-up batch each.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { createConversationHandler, toNodeListener } from '../src/http/index.js';
import { type ConversationHost, createConversationHost, createConversationMachine, handlerProvider, memoryStore } from '../src/index.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai/index.js';
import { cpuNowUs, median } from './stats.js';

export type HttpResult = {
  n: number;
  deltas: number;
  reps: number;
  sides: Array<{ side: HttpSide; wallMs: number; cpuMs: number; cpuUsPerConversation: number }>;
  wallRatio: number;
  cpuRatio: number;
  /**
   * The floors: the same SSE bytes in the same writes, and the same POST answers, served with no
   * host — by node:http alone, and through a Fetch API handler on `toNodeListener`. What the
   * handler costs of its own is `http − host − floor`.
   */
  floorCpuUsPerConversation: { nodeHttp: number; fetchApi: number };
  errors: number;
  errorSamples: string[];
};

const token = 'bench-token';

type HttpSide = 'host' | 'http' | 'floor: node:http' | 'floor: Fetch API';
const sideNames: readonly HttpSide[] = ['host', 'http', 'floor: node:http', 'floor: Fetch API'];

function answer(deltas: number): string {
  return Array.from({ length: deltas }, (_, index) => `w${index} `)
    .join('')
    .trimEnd()
    .concat('.');
}

function makeHost(deltas: number): ConversationHost {
  const text = answer(deltas);
  const pieces = text.split(/(?<= )/);
  const machine = createConversationMachine({
    provider: handlerProvider(async function* (): AsyncGenerator<OpenAIChatCompletionChunk> {
      for (const piece of pieces) yield { choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] };
      yield { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] };
    }),
  });
  return createConversationHost({ machine, store: memoryStore() });
}

/** N conversations followed on the host itself. */
async function direct(n: number, deltas: number, batch: number): Promise<{ wallMs: number; cpuUs: number; errors: string[] }> {
  const host = makeHost(deltas);
  const expected = answer(deltas);
  const errors: string[] = [];
  const cpu = cpuNowUs();
  const wall = performance.now();
  await Promise.all(
    Array.from({ length: n }, async (_, index) => {
      const id = `b${batch}-${index}`;
      const done = new Promise<string>((resolve) => {
        let text = '';
        const stop = host.follow(id, {
          next: ({ event }) => {
            if (event.type === 'text.delta') text += event.delta;
            if (event.type === 'state' && event.status === 'done') {
              stop();
              resolve(text);
            }
          },
        });
      });
      await host.send(id, { type: 'user.message', content: 'go' });
      const text = await done;
      if (text !== expected) errors.push(`${id}: ${text.slice(0, 40)}`);
    }),
  );
  const result = { wallMs: performance.now() - wall, cpuUs: cpuNowUs() - cpu, errors };
  await host.close();
  return result;
}

/** One conversation's exchange exactly as the handler answers it: the SSE body's chunks (one write each) and the POST's answer. */
type Recorded = { eventHeaders: Headers; chunks: Uint8Array[]; postStatus: number; postHeaders: Headers; postBody: string };

async function recordExchange(deltas: number): Promise<Recorded> {
  const host = makeHost(deltas);
  const handler = createConversationHandler(host, { authorize: () => true });
  const base = 'http://127.0.0.1/conversations/recorded';
  const events = await handler(new Request(`${base}/events`));
  const reader = (events.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  const first = await reader.read();
  if (first.value) chunks.push(first.value);
  const post = await handler(
    new Request(`${base}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'go' }),
    }),
  );
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done || !value) break;
    chunks.push(value);
    if (decoder.decode(value).includes('"status":"done"')) break;
  }
  await reader.cancel();
  const recorded = {
    eventHeaders: events.headers,
    chunks,
    postStatus: post.status,
    postHeaders: post.headers,
    postBody: await post.text(),
  };
  await host.close();
  return recorded;
}

/**
 * The floor of serving `recorded` to the bench's clients: the first chunk when the stream opens,
 * the POST answered (its JSON body parsed, as the handler does), then the rest of the chunks, each
 * in a turn of its own as the run's steps come. `fetchApi`: through a Fetch API handler on
 * `toNodeListener` (Request, Response, a ReadableStream body), as actorloop/http is served.
 */
function floorListener(recorded: Recorded, fetchApi: boolean) {
  const streams = new Map<string, (chunk: Uint8Array | null) => void>();
  const authorized = (value: string | null | undefined) => value === `Bearer ${token}`;
  const idOf = (path: string) => path.split('/')[2] ?? '';
  const play = (id: string) => {
    const write = streams.get(id);
    streams.delete(id);
    if (!write) return;
    let next = 1;
    const step = () => {
      if (next >= recorded.chunks.length) return write(null);
      write(recorded.chunks[next++] as Uint8Array);
      setImmediate(step);
    };
    setImmediate(step);
  };
  if (!fetchApi)
    return (request: import('node:http').IncomingMessage, response: import('node:http').ServerResponse) => {
      if (!authorized(request.headers.authorization)) return void response.writeHead(401).end();
      const id = idOf(request.url ?? '');
      if (request.method === 'GET') {
        response.writeHead(200, Object.fromEntries(recorded.eventHeaders));
        response.write(recorded.chunks[0]);
        streams.set(id, (chunk) => (chunk ? response.write(chunk) : response.end()));
        return;
      }
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (piece: string) => {
        body += piece;
      });
      request.on('end', () => {
        JSON.parse(body);
        response.writeHead(recorded.postStatus, Object.fromEntries(recorded.postHeaders)).end(recorded.postBody);
        play(id);
      });
    };
  return toNodeListener(async (request) => {
    if (!authorized(request.headers.get('authorization'))) return new Response(null, { status: 401 });
    const id = idOf(new URL(request.url).pathname);
    if (request.method === 'GET') {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(recorded.chunks[0] as Uint8Array);
          streams.set(id, (chunk) => (chunk ? controller.enqueue(chunk) : controller.close()));
        },
      });
      return new Response(body, { status: 200, headers: recorded.eventHeaders });
    }
    await request.json();
    play(id);
    return new Response(recorded.postBody, { status: recorded.postStatus, headers: recorded.postHeaders });
  });
}

/** N conversations of `recorded` served by a floor listener. */
async function overFloor(clients: Clients, n: number, recorded: Recorded, fetchApi: boolean, batch: number) {
  const server = createServer({ keepAliveTimeout: 60_000 }, floorListener(recorded, fetchApi));
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4_096 }, resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ids = Array.from({ length: n }, (_, index) => `f${batch}-${index}`);
  const cpu = cpuNowUs();
  const wall = performance.now();
  const outcome = await clients.run(url, ids);
  const result = { wallMs: performance.now() - wall, cpuUs: cpuNowUs() - cpu };
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const errors = outcome.errors.map((error) => `floor: ${error}`);
  if (outcome.errorCount > outcome.errors.length) errors.push(`… ${outcome.errorCount - outcome.errors.length} more`);
  return { ...result, errors };
}

type Clients = {
  run: (url: string, ids: string[]) => Promise<{ texts: string[]; errors: string[]; errorCount: number }>;
  close: () => void;
};

function startClients(): Clients {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./http-clients.ts', import.meta.url))], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const waiting: Array<(line: string) => void> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => waiting.shift()?.(line));
  return {
    run: (url, ids) =>
      new Promise((resolve) => {
        waiting.push((line) => resolve(JSON.parse(line)));
        child.stdin!.write(`${JSON.stringify({ url, token, ids })}\n`);
      }),
    close: () => child.kill(),
  };
}

/** N conversations followed over SSE through the handler on node:http. */
async function overHttp(
  clients: Clients,
  n: number,
  deltas: number,
  batch: number,
): Promise<{ wallMs: number; cpuUs: number; errors: string[] }> {
  const host = makeHost(deltas);
  const handler = createConversationHandler(host, { authorize: (request) => request.headers.get('authorization') === `Bearer ${token}` });
  const server = createServer({ keepAliveTimeout: 60_000 }, toNodeListener(handler));
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4_096 }, resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const expected = answer(deltas);
  const ids = Array.from({ length: n }, (_, index) => `b${batch}-${index}`);
  const cpu = cpuNowUs();
  const wall = performance.now();
  const outcome = await clients.run(url, ids);
  const result = { wallMs: performance.now() - wall, cpuUs: cpuNowUs() - cpu };
  const errors = [
    ...outcome.errors,
    ...outcome.texts.filter((text) => text !== expected).map((text) => `wrong text: ${text.slice(0, 40)}`),
  ];
  if (outcome.errorCount > outcome.errors.length) errors.push(`… ${outcome.errorCount - outcome.errors.length} more`);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await host.close();
  return { ...result, errors };
}

export async function httpFanOut(options: { n: number; deltas: number; reps: number; log?: (line: string) => void }): Promise<HttpResult> {
  const { n, deltas, reps } = options;
  const clients = startClients();
  const samples = Object.fromEntries(sideNames.map((side) => [side, [] as Array<{ wallMs: number; cpuUs: number }>])) as Record<
    HttpSide,
    Array<{ wallMs: number; cpuUs: number }>
  >;
  const errors: string[] = [];
  let batch = 0;
  const recorded = await recordExchange(deltas);
  const run = (side: HttpSide) =>
    side === 'host'
      ? direct(n, deltas, ++batch)
      : side === 'http'
        ? overHttp(clients, n, deltas, ++batch)
        : overFloor(clients, n, recorded, side === 'floor: Fetch API', ++batch);
  try {
    // One warm-up batch each.
    for (const side of sideNames) await run(side);
    for (let rep = 0; rep < reps; rep++) {
      const order = rep % 2 === 0 ? sideNames : [...sideNames].reverse();
      for (const side of order) {
        const result = await run(side);
        samples[side].push(result);
        errors.push(...result.errors);
        options.log?.(
          `  HTTP ${side}: ${n} conversations in ${result.wallMs.toFixed(0)} ms, server CPU ${(result.cpuUs / 1000).toFixed(0)} ms`,
        );
      }
    }
  } finally {
    clients.close();
  }
  const sides = sideNames.map((side) => {
    const wallMs = median(samples[side].map((sample) => sample.wallMs));
    const cpuUs = median(samples[side].map((sample) => sample.cpuUs));
    return { side, wallMs, cpuMs: cpuUs / 1000, cpuUsPerConversation: cpuUs / n };
  });
  const [host, http, nodeHttp, fetchApi] = sides as [
    (typeof sides)[number],
    (typeof sides)[number],
    (typeof sides)[number],
    (typeof sides)[number],
  ];
  return {
    n,
    deltas,
    reps,
    sides,
    wallRatio: http.wallMs / host.wallMs,
    cpuRatio: http.cpuMs / host.cpuMs,
    floorCpuUsPerConversation: { nodeHttp: nodeHttp.cpuUsPerConversation, fetchApi: fetchApi.cpuUsPerConversation },
    errors: errors.length,
    errorSamples: errors.slice(0, 5),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const n = Number(process.argv[2] ?? 1000);
  const result = await httpFanOut({ n, deltas: 50, reps: 3, log: console.error });
  console.log(JSON.stringify(result, null, 2));
}
