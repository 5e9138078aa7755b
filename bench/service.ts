/**
 * SERVICE (issue 51): the path a user's chat service runs, end to end. N chat clients at once
 * (default 1,000), in a process of their own, each one chat of 5 tool rounds and a final answer
 * streamed over SSE, against four servers, each in a process of its own, all on the same model —
 * the bench's wire server (bench/wire-server-process.ts, its own process, streaming, 25 ms before
 * each response's first byte, `add` called in rounds 1–5, then the text "The sum is done.") — and
 * the same `add` tool (bench/tool.ts), run in the server:
 *
 *   (a) actorloop-sqlite    createConversationMachine + openaiProvider + createConversationHost on
 *                           sqliteStore + createConversationHandler, toNodeListener on node:http
 *   (b) actorloop-postgres  the same on postgresStore + postgresRelay (LISTEN/NOTIFY), a fresh schema
 *   (c) ai-sdk              streamText(…, stopWhen: stepCountIs(6)) → toUIMessageStreamResponse(), nothing stored
 *   (d) ai-sdk-resumable    (c) through resumable-stream on Redis, each chat's stream id stored in Redis
 *
 * (bench/service-server-process.ts has each side's code; bench/service-clients.ts the clients.)
 *
 * Per side: a warm-up of 20 chats, then the held run, N chats at once that also warm the side up at
 * full N: the wire server calls the tool once, the tool waits until all N chats are in it (every
 * stream open), the server's RSS and heap are read (after a forced GC) against before the run, a
 * second reader of one chat resumes it (actorloop's `…/events` replay, the AI SDK's
 * `GET /api/chat/:id/stream` through Redis), then the chats finish with the final answer (one tool
 * round instead of five: the held run costs a third of a measured one). Then `reps` measured runs,
 * sides interleaved in rotating order, the run with the most rounds/s standing for its side. A round
 * is one model response: 5 tool rounds + the final answer = 6 per chat, counted for the chats that
 * ended right. Server CPU is `process.cpuUsage()` of the server process over the run (and 250 ms
 * after, for the last writes); Postgres's and Redis's own CPU, outside it, comes from /proc (every
 * `postgres` and `redis-server` process on this machine). Time to first delta: client side, from the
 * first request of the chat sent to the first text or tool-call delta read from the stream.
 *
 * Postgres (`ACTORLOOP_BENCH_POSTGRES_URL`, else `ACTORLOOP_TEST_POSTGRES_URL`, else
 * postgres://postgres@127.0.0.1:5432/test) or Redis (`ACTORLOOP_BENCH_REDIS_URL`, else `REDIS_URL`, else
 * redis://127.0.0.1:6379) not answering: that side is skipped, said so, and the rest runs.
 *
 * Alone: `npx tsx bench/service.ts [--service-n 1000] [--service-reps 2]`.
 */
import { type ChildProcess, execSync, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { ServiceClientCommand, ServiceClientReply, ServiceProbeOutcome, ServiceRunOutcome } from './service-clients.js';
import type {
  ServiceServerCommand,
  ServiceServerConfig,
  ServiceServerReply,
  ServiceServerStats,
  ServiceSide,
} from './service-server-process.js';
import { fmt, percentile } from './stats.js';
import { startWireServerProcess, type WireServerHandle } from './wire.js';

export type { ServiceSide };

export const serviceSides: readonly ServiceSide[] = ['actorloop-sqlite', 'actorloop-postgres', 'ai-sdk', 'ai-sdk-resumable'];
const letter: Record<ServiceSide, string> = {
  'actorloop-sqlite': 'a',
  'actorloop-postgres': 'b',
  'ai-sdk': 'c',
  'ai-sdk-resumable': 'd',
};
const labels: Record<ServiceSide, string> = {
  'actorloop-sqlite': '(a) actorloop, sqliteStore',
  'actorloop-postgres': '(b) actorloop, postgresStore + relay',
  'ai-sdk': '(c) AI SDK streamText, nothing stored',
  'ai-sdk-resumable': '(d) AI SDK + resumable-stream on Redis',
};

const toolRounds = 5;
/** 5 tool rounds + the final answer: model responses per chat. */
const roundsPerChat = toolRounds + 1;
/** The tool call that waits in the held run: its only one, the first round's. */
const gateRound = 1;
/** Tool rounds of a held-run chat. */
const heldToolRounds = 1;
const warmupChats = 20;
const token = 'bench-service-token';

export type ServiceRun = {
  wallMs: number;
  chats: number;
  chatsOk: number;
  rounds: number;
  roundsPerSecond: number;
  serverCpuUs: number;
  serverCpuUsPerRound: number;
  /** CPU of the postgres and redis-server processes on this machine over the run, per round. */
  outsideCpuUsPerRound: { postgres: number; redis: number } | null;
  firstDeltaMs: { p50: number; p99: number; max: number };
  eventsPerChat: number;
  bytesPerChat: number;
  clientCpuUsPerChat: number;
  wireRequests: number;
  wireCpuUsPerRound: number;
  /** Chats that did not end right, and a few of the reasons. */
  errors: number;
  errorSamples: string[];
  /** What the server reported meanwhile, by kind. */
  serverErrors: Record<string, number>;
};

export type ServiceSideResult = {
  side: ServiceSide;
  label: string;
  /** The run with the most rounds/s. */
  best: ServiceRun;
  runs: ServiceRun[];
  held: {
    /** Tool calls waiting when measured (N when every stream was open). */
    openStreams: number;
    rssBeforeBytes: number;
    rssOpenBytes: number;
    rssBytesPerStream: number;
    heapBytesPerStream: number;
    errors: number;
    errorSamples: string[];
    serverErrors: Record<string, number>;
  };
  /** A second reader of one chat while held: resumed from the start, read to the end (null: the side cannot resume). */
  probe: ServiceProbeOutcome | null;
  warmupErrors: number;
  /** Every run of the side (warm-up, held, measured): chats that failed, and what the server reported, by kind. */
  chatErrors: number;
  serverErrors: Record<string, number>;
};

export type ServiceResult = {
  n: number;
  reps: number;
  latencyMs: number;
  toolRounds: number;
  roundsPerChat: number;
  gateRound: number;
  postgres: string | null;
  redis: string | null;
  sides: ServiceSideResult[];
  skipped: Array<{ side: ServiceSide; reason: string }>;
  ratios: Array<{ pair: string; throughput: number; cpuPerRound: number }>;
  target: Array<{ claim: string; met: boolean | null }>;
};

/** The URL without its password, for the report. */
const shown = (url: string) => url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let ticksPerSecond = 100;
try {
  ticksPerSecond = Number(execSync('getconf CLK_TCK').toString().trim()) || 100;
} catch {}

/** utime + stime (µs) of every process of that name on this machine, by pid. */
function processCpu(name: string): Map<number, number> {
  const found = new Map<number, number>();
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return found;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      if (stat.slice(stat.indexOf('(') + 1, close) !== name) continue;
      const fields = stat.slice(close + 2).split(' ');
      // Fields 14 and 15 of /proc/<pid>/stat (utime, stime), counted from the state (field 3).
      found.set(Number(pid), ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond) * 1e6);
    } catch {}
  }
  return found;
}

/** CPU the processes of that name used between two samples (a process that started meanwhile counts in full). */
function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, us] of after) total += us - (before.get(pid) ?? 0);
  return total;
}

type ServerHandle = {
  side: ServiceSide;
  url: string;
  stats(): Promise<ServiceServerStats>;
  command(type: 'arm' | 'release' | 'gc'): Promise<ServiceServerStats>;
  close(): Promise<void>;
};

async function startServer(config: ServiceServerConfig): Promise<ServerHandle> {
  const script = fileURLToPath(new URL('./service-server-process.ts', import.meta.url));
  const child: ChildProcess = fork(script, [JSON.stringify(config)], {
    execArgv: [...process.execArgv, '--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    const onMessage = (message: ServiceServerReply) => {
      if (message.type === 'ready') resolve(message.url);
      else if (message.type === 'failed') reject(new Error(`${config.side} server: ${message.error}`));
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`${config.side} server exited before it was ready (code ${code})`)));
  });
  let nextId = 1;
  type Reply = Extract<ServiceServerReply, { type: 'reply' }>;
  const pending = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  child.on('message', (message: ServiceServerReply) => {
    if (message.type !== 'reply') return;
    pending.get(message.id)?.resolve(message);
    pending.delete(message.id);
  });
  // A server that dies fails what waits on it rather than leaving the scenario hanging.
  child.on('exit', (code, signal) => {
    for (const waiting of pending.values()) waiting.reject(new Error(`${config.side} server exited (${code ?? signal})`));
    pending.clear();
  });
  const call = (type: ServiceServerCommand['type']) =>
    new Promise<Reply>((resolve, reject) => {
      if (child.exitCode !== null || !child.connected) return reject(new Error(`${config.side} server is gone`));
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.send({ id, type } satisfies ServiceServerCommand);
    });
  const stats = async (type: 'stats' | 'arm' | 'release' | 'gc' = 'stats') => {
    const reply = await call(type);
    if (!reply.stats) throw new Error(`${config.side} server: no stats`);
    return reply.stats;
  };
  return {
    side: config.side,
    url,
    stats: () => stats(),
    command: (type) => stats(type),
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      // The server closes its host, store, relay and Redis clients (deleting the bench's keys), then exits.
      await Promise.race([call('close').then(() => exited), sleep(30_000)]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

type Clients = {
  run(side: ServiceSide, url: string, n: number, batch: number, toolRounds: number): Promise<ServiceRunOutcome>;
  probe(side: ServiceSide, url: string, chatId: string, toolRounds: number): Promise<ServiceProbeOutcome>;
  close(): void;
};

function startClients(timeoutMs: number): Clients {
  const script = fileURLToPath(new URL('./service-clients.ts', import.meta.url));
  const child = fork(script, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let nextId = 1;
  const pending = new Map<number, { resolve: (reply: ServiceClientReply) => void; reject: (error: Error) => void }>();
  child.on('message', (reply: ServiceClientReply) => {
    pending.get(reply.id)?.resolve(reply);
    pending.delete(reply.id);
  });
  child.on('exit', (code, signal) => {
    for (const waiting of pending.values()) waiting.reject(new Error(`the clients' process exited (${code ?? signal})`));
    pending.clear();
  });
  const call = (command: ServiceClientCommand) =>
    new Promise<ServiceClientReply>((resolve, reject) => {
      pending.set(command.id, { resolve, reject });
      child.send(command);
    });
  return {
    run: async (side, url, n, batch, toolRounds) =>
      (await call({ id: nextId++, type: 'run', side, url, token, n, batch, toolRounds, timeoutMs })).run as ServiceRunOutcome,
    probe: async (side, url, chatId, toolRounds) =>
      (await call({ id: nextId++, type: 'probe', side, url, token, chatId, toolRounds, timeoutMs })).probe as ServiceProbeOutcome,
    close: () => child.kill(),
  };
}

async function postgresAnswers(url: string): Promise<{ version: string } | { skipped: string }> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return { version: String((await client.query('SHOW server_version')).rows[0]?.server_version) };
  } catch (error) {
    return { skipped: `PostgreSQL does not answer at ${shown(url)}: ${(error as Error).message}` };
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function redisAnswers(url: string): Promise<{ version: string } | { skipped: string }> {
  try {
    const { createClient } = await import('redis');
    const client = createClient({ url, socket: { connectTimeout: 3_000, reconnectStrategy: false } });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const info = await client.info('server');
      return { version: /redis_version:(\S+)/.exec(String(info))?.[1] ?? '?' };
    } finally {
      client.destroy();
    }
  } catch (error) {
    return { skipped: `Redis does not answer at ${shown(url)}: ${(error as Error).message}` };
  }
}

/** The server's error counts by kind that grew from `before` to `after`. */
function errorsBetween(before: ServiceServerStats, after: ServiceServerStats): Record<string, number> {
  const grown: Record<string, number> = {};
  for (const [kind, count] of Object.entries(after.errorKinds)) {
    const more = count - (before.errorKinds[kind] ?? 0);
    if (more > 0) grown[kind] = more;
  }
  return grown;
}

const addErrors = (into: Record<string, number>, more: Record<string, number>) => {
  for (const [kind, count] of Object.entries(more)) into[kind] = (into[kind] ?? 0) + count;
};
const errorCount = (kinds: Record<string, number>) => Object.values(kinds).reduce((sum, count) => sum + count, 0);

export async function serviceBench(options: {
  n: number;
  reps: number;
  latencyMs?: number;
  /** A chat not done after this long counts as an error. Default 120 s. */
  timeoutMs?: number;
  log: (line: string) => void;
}): Promise<ServiceResult> {
  const { n, reps } = options;
  const started = performance.now();
  // Every line says when, since the scenario started.
  const log = (line: string) => options.log(`${line} [${((performance.now() - started) / 1000).toFixed(0)} s]`);
  const latencyMs = options.latencyMs ?? 25;
  const postgresUrl =
    process.env.ACTORLOOP_BENCH_POSTGRES_URL ?? process.env.ACTORLOOP_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const redisUrl = process.env.ACTORLOOP_BENCH_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const [postgres, redis] = await Promise.all([postgresAnswers(postgresUrl), redisAnswers(redisUrl)]);
  const skipped: ServiceResult['skipped'] = [];
  if ('skipped' in postgres) skipped.push({ side: 'actorloop-postgres', reason: postgres.skipped });
  if ('skipped' in redis) skipped.push({ side: 'ai-sdk-resumable', reason: redis.skipped });
  for (const { side, reason } of skipped) log(`  SERVICE ${letter[side]}: skipped — ${reason}`);
  const sides = serviceSides.filter((side) => !skipped.some((skip) => skip.side === side));

  const suffix = randomBytes(5).toString('hex');
  const schema = `bench_service_${suffix}`;
  const directory = mkdtempSync(join(tmpdir(), 'actorloop-bench-service-'));
  const wire: WireServerHandle = await startWireServerProcess({ latencyMs, rounds: toolRounds });
  const clients = startClients(options.timeoutMs ?? 120_000);
  const servers = new Map<ServiceSide, ServerHandle>();
  const results = new Map<ServiceSide, Omit<ServiceSideResult, 'best'>>();
  let batch = 0;

  /** One run of N chats against a side, its server's CPU and the outside processes' around it. */
  const measured = async (server: ServerHandle, chats: number): Promise<ServiceRun> => {
    await server.command('gc');
    const [s0, w0] = await Promise.all([server.stats(), wire.stats()]);
    const pg0 = processCpu('postgres');
    const redis0 = processCpu('redis-server');
    const outcome = await clients.run(server.side, server.url, chats, ++batch, toolRounds);
    // The last writes (a final save, a sentinel set to DONE) land after the client has read the end.
    await sleep(250);
    const [s1, w1] = await Promise.all([server.stats(), wire.stats()]);
    const pg1 = processCpu('postgres');
    const redis1 = processCpu('redis-server');
    const rounds = outcome.ok * roundsPerChat;
    const serverCpuUs = s1.cpuUserUs + s1.cpuSystemUs - s0.cpuUserUs - s0.cpuSystemUs;
    const perRound = (us: number) => (rounds > 0 ? us / rounds : Number.NaN);
    return {
      wallMs: outcome.wallMs,
      chats,
      chatsOk: outcome.ok,
      rounds,
      roundsPerSecond: rounds / (outcome.wallMs / 1000),
      serverCpuUs,
      serverCpuUsPerRound: perRound(serverCpuUs),
      outsideCpuUsPerRound:
        pg0.size + pg1.size + redis0.size + redis1.size > 0
          ? { postgres: perRound(cpuBetween(pg0, pg1)), redis: perRound(cpuBetween(redis0, redis1)) }
          : null,
      firstDeltaMs: {
        p50: percentile(outcome.firstDeltaMs, 50),
        p99: percentile(outcome.firstDeltaMs, 99),
        max: Math.max(...outcome.firstDeltaMs),
      },
      eventsPerChat: outcome.events / chats,
      bytesPerChat: outcome.bytes / chats,
      clientCpuUsPerChat: outcome.clientCpuUs / chats,
      wireRequests: w1.requests - w0.requests,
      wireCpuUsPerRound: perRound(w1.cpuUserUs + w1.cpuSystemUs - w0.cpuUserUs - w0.cpuSystemUs),
      errors: outcome.errors,
      errorSamples: outcome.errorSamples,
      serverErrors: errorsBetween(s0, s1),
    };
  };

  try {
    // Each side: its process, a warm-up, the held run.
    for (const side of sides) {
      const server = await startServer({
        side,
        baseURL: wire.baseURL,
        token,
        gateRound,
        ...(side === 'actorloop-sqlite' ? { sqlitePath: join(directory, 'service.db') } : {}),
        ...(side === 'actorloop-postgres' ? { postgres: { url: postgresUrl, schema, channel: `bench_service_${suffix}` } } : {}),
        ...(side === 'ai-sdk-resumable' ? { redis: { url: redisUrl, keyPrefix: `bench-service-${suffix}` } } : {}),
      });
      servers.set(side, server);
      const beforeWarmup = await server.stats();
      const warmup = await clients.run(side, server.url, Math.min(n, warmupChats), ++batch, toolRounds);
      log(
        `  SERVICE ${letter[side]} ${side}: up at ${server.url}; warm-up ${Math.min(n, warmupChats)} chats, ${warmup.errors} errors${warmup.errors ? ` (${warmup.errorSamples[0]})` : ''}`,
      );
      // Held: every chat waits in its tool call, its stream open; one tool round, then the answer.
      await wire.configure({ rounds: heldToolRounds });
      await server.command('gc');
      const before = await server.stats();
      await server.command('arm');
      const heldBatch = ++batch;
      const running = clients.run(side, server.url, n, heldBatch, heldToolRounds);
      // Until all N wait, or none came in for 10 s (the rest failed), or 90 s passed (within the chats' timeout).
      const deadline = performance.now() + 90_000;
      let blocked = 0;
      let lastChange = performance.now();
      while (performance.now() < deadline && performance.now() - lastChange < 10_000) {
        const now = (await server.stats()).blocked;
        if (now !== blocked) lastChange = performance.now();
        blocked = now;
        if (blocked >= n) break;
        await sleep(100);
      }
      await server.command('gc');
      const open = await server.stats();
      const probe =
        side === 'ai-sdk'
          ? null
          : clients
              .probe(side, server.url, `s${heldBatch}-0`, heldToolRounds)
              .catch((error: unknown) => ({ ok: false, detail: String(error) }));
      // The reader is connected and has its replay before the tool goes on.
      await sleep(500);
      await server.command('release');
      const [held, probed] = await Promise.all([running, probe]);
      await wire.configure({ rounds: toolRounds });
      const afterHeld = await server.stats();
      const counted = Math.max(1, open.blocked);
      log(
        `  SERVICE ${letter[side]} held: ${open.blocked} of ${n} streams open, RSS ${fmt((open.rssBytes - before.rssBytes) / counted / 1024, 1)} KiB per stream; ` +
          `${held.errors} errors${held.errors ? ` (${held.errorSamples[0]})` : ''}; resume probe ${probed ? `${probed.ok ? 'ok' : 'FAILED'}: ${probed.detail}` : 'n/a'}`,
      );
      results.set(side, {
        side,
        label: labels[side],
        runs: [],
        held: {
          openStreams: open.blocked,
          rssBeforeBytes: before.rssBytes,
          rssOpenBytes: open.rssBytes,
          rssBytesPerStream: (open.rssBytes - before.rssBytes) / counted,
          heapBytesPerStream: (open.heapUsedBytes - before.heapUsedBytes) / counted,
          errors: held.errors,
          errorSamples: held.errorSamples,
          serverErrors: errorsBetween(before, afterHeld),
        },
        probe: probed,
        warmupErrors: warmup.errors,
        chatErrors: warmup.errors + held.errors,
        serverErrors: errorsBetween(beforeWarmup, afterHeld),
      });
    }
    for (let rep = 0; rep < reps; rep++) {
      // Interleaved, the order turned each rep: what the machine does meanwhile falls on every side.
      const order = sides.map((_, index) => sides[(index + rep) % sides.length] as ServiceSide);
      for (const side of order) {
        const run = await measured(servers.get(side) as ServerHandle, n);
        const result = results.get(side) as Omit<ServiceSideResult, 'best'>;
        result.runs.push(run);
        result.chatErrors += run.errors;
        addErrors(result.serverErrors, run.serverErrors);
        log(
          `  SERVICE ${letter[side]} rep ${rep + 1}: ${fmt(run.roundsPerSecond, 0)} rounds/s, server CPU ${fmt(run.serverCpuUsPerRound, 0)} µs/round, ` +
            `first delta p50 ${fmt(run.firstDeltaMs.p50, 0)} / p99 ${fmt(run.firstDeltaMs.p99, 0)} ms, ${run.errors} errors${run.errors ? ` (${run.errorSamples[0]})` : ''}` +
            (errorCount(run.serverErrors) > 0 ? `, server reported ${errorCount(run.serverErrors)}` : ''),
        );
      }
    }
  } finally {
    await Promise.allSettled([...servers.values()].map((server) => server.close()));
    clients.close();
    await wire.close();
    rmSync(directory, { recursive: true, force: true });
    if (sides.includes('actorloop-postgres')) {
      const admin = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 5_000 });
      admin.on('error', () => undefined);
      await admin
        .connect()
        .then(() => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))
        .catch((error) => log(`  SERVICE: could not drop schema ${schema}: ${(error as Error).message}`));
      await admin.end().catch(() => undefined);
    }
  }

  log('  SERVICE: done');
  const sideResults: ServiceSideResult[] = sides.map((side) => {
    const result = results.get(side) as Omit<ServiceSideResult, 'best'>;
    const best = result.runs.reduce((kept, run) => (run.roundsPerSecond > kept.roundsPerSecond ? run : kept));
    return { ...result, best };
  });
  const bestOf = (side: ServiceSide) => sideResults.find((result) => result.side === side)?.best;
  const ratios: ServiceResult['ratios'] = [];
  for (const [top, bottom] of [
    ['actorloop-sqlite', 'ai-sdk'],
    ['actorloop-postgres', 'ai-sdk'],
    ['actorloop-sqlite', 'ai-sdk-resumable'],
    ['actorloop-postgres', 'ai-sdk-resumable'],
  ] as const) {
    const [a, b] = [bestOf(top), bestOf(bottom)];
    if (!a || !b) continue;
    ratios.push({
      pair: `(${letter[top]})/(${letter[bottom]})`,
      throughput: a.roundsPerSecond / b.roundsPerSecond,
      cpuPerRound: a.serverCpuUsPerRound / b.serverCpuUsPerRound,
    });
  }
  const ratioOf = (pair: string) => ratios.find((ratio) => ratio.pair === pair);
  const target: ServiceResult['target'] = [];
  for (const top of ['a', 'b']) {
    const overC = ratioOf(`(${top})/(c)`);
    const overD = ratioOf(`(${top})/(d)`);
    target.push({
      claim: `(${top}) at least (c)'s throughput and CPU per round`,
      met: overC ? overC.throughput >= 1 && overC.cpuPerRound <= 1 : null,
    });
    target.push({ claim: `(${top}) ahead of (d)`, met: overD ? overD.throughput > 1 && overD.cpuPerRound < 1 : null });
  }
  return {
    n,
    reps,
    latencyMs,
    toolRounds,
    roundsPerChat,
    gateRound,
    postgres: 'version' in postgres ? `${postgres.version} at ${shown(postgresUrl)}` : null,
    redis: 'version' in redis ? `${redis.version} at ${shown(redisUrl)}` : null,
    sides: sideResults,
    skipped,
    ratios,
    target,
  };
}

/** The report's SERVICE section. */
export function serviceMarkdown(r: ServiceResult): string[] {
  const lines = [
    `### SERVICE — ${r.n} chats at once, each ${r.toolRounds} tool rounds + a final answer streamed over SSE, clients in their own process, each server in its own; the wire server's model (own process, latency ${r.latencyMs} ms, streaming); best of ${r.reps} after a warm-up, sides interleaved`,
    '',
    '| side | rounds/s | server CPU µs/round | Postgres + Redis CPU µs/round (outside) | first delta p50 / p99 ms | RSS KiB per open stream (open) | heap KiB per open stream | events / KiB per chat | wall s | errors: chats failed / server-reported (all runs) |',
    '|---|---:|---:|---:|---|---:|---:|---|---:|---:|',
  ];
  for (const side of r.sides) {
    const b = side.best;
    const outside = b.outsideCpuUsPerRound ? fmt(b.outsideCpuUsPerRound.postgres + b.outsideCpuUsPerRound.redis, 0) : 'n/a';
    const errors = `${side.chatErrors} / ${errorCount(side.serverErrors)}`;
    lines.push(
      `| ${side.label} | ${fmt(b.roundsPerSecond, 0)} | ${fmt(b.serverCpuUsPerRound, 0)} | ${outside} | ${fmt(b.firstDeltaMs.p50, 0)} / ${fmt(b.firstDeltaMs.p99, 0)} | ` +
        `${fmt(side.held.rssBytesPerStream / 1024, 1)} (${side.held.openStreams}) | ${fmt(side.held.heapBytesPerStream / 1024, 1)} | ` +
        `${fmt(b.eventsPerChat, 0)} / ${fmt(b.bytesPerChat / 1024, 1)} | ${fmt(b.wallMs / 1000, 2)} | ${errors} |`,
    );
  }
  for (const { side, reason } of r.skipped) lines.push(`| ${labels[side]} | not run: ${reason.replace(/\|/g, '\\|')} | | | | | | | | |`);
  lines.push('');
  if (r.ratios.length > 0) {
    lines.push('| ratio (best runs) | throughput (rounds/s) | server CPU per round |', '|---|---:|---:|');
    for (const ratio of r.ratios) lines.push(`| ${ratio.pair} | ${fmt(ratio.throughput, 2)}× | ${fmt(ratio.cpuPerRound, 2)}× |`);
    lines.push('');
  }
  lines.push(
    `Target (issue 51): "(a) and (b) at least (c)'s throughput and CPU per round, and ahead of (d)": ${r.target
      .map(({ claim, met }) => `${claim} — **${met === null ? 'not measured' : met ? 'met' : 'not met'}**`)
      .join('; ')}.`,
    '',
  );
  const notes: string[] = [];
  for (const side of r.sides) {
    const b = side.best;
    notes.push(
      `${labels[side.side]}: model requests ${b.wireRequests} (expected ${b.chats * r.roundsPerChat}), chats right ${b.chatsOk}/${b.chats}, ` +
        `rounds/s of every run ${side.runs.map((run) => fmt(run.roundsPerSecond, 0)).join(', ')}, server CPU µs/round ${side.runs.map((run) => fmt(run.serverCpuUsPerRound, 0)).join(', ')}; ` +
        `client CPU ${fmt(b.clientCpuUsPerChat / 1000, 1)} ms/chat, wire server CPU ${fmt(b.wireCpuUsPerRound, 0)} µs/round; ` +
        `resume probe ${side.probe ? `${side.probe.ok ? 'ok' : 'failed'} (${side.probe.detail})` : 'n/a (no resume)'}` +
        (b.outsideCpuUsPerRound
          ? `; outside: Postgres ${fmt(b.outsideCpuUsPerRound.postgres, 0)}, Redis ${fmt(b.outsideCpuUsPerRound.redis, 0)} µs/round`
          : ''),
    );
    const samples = [...side.held.errorSamples, ...side.runs.flatMap((run) => run.errorSamples)];
    if (samples.length > 0) notes.push(`chats failed, ${letter[side.side]}: ${[...new Set(samples)].slice(0, 5).join(' | ')}`);
    const kinds = Object.entries(side.serverErrors).sort((x, y) => y[1] - x[1]);
    if (kinds.length > 0)
      notes.push(
        `server-reported, ${letter[side.side]}: ${kinds
          .slice(0, 5)
          .map(([kind, count]) => `${count} × ${kind}`)
          .join(' | ')}`,
      );
  }
  for (const note of notes) lines.push(`- ${note}`);
  lines.push(
    '',
    `A round is one model response (${r.toolRounds} tool rounds + the final answer = ${r.roundsPerChat} per chat, chats that ended right). RSS per open stream: the server's RSS with every chat of the held run waiting in its tool call (round ${r.gateRound}) minus before, ÷ the streams open, both after a forced GC.`,
    '',
  );
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const option = (name: string, fallback: number) => {
    const index = process.argv.indexOf(name);
    return index === -1 ? fallback : Number(process.argv[index + 1]);
  };
  const result = await serviceBench({
    n: option('--service-n', 1000),
    reps: option('--service-reps', 2),
    log: (line) => console.error(line),
  });
  console.log(serviceMarkdown(result).join('\n'));
}
