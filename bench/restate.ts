/**
 * RESTATE: conversations as Restate virtual objects (`actorloop/restate`) against a real
 * `restate-server` on loopback (the binary of `@restatedev/restate-server`, fresh data directory,
 * the tests' settings: test/support/restate-server.ts), and the in-process durable host, in the same
 * run, against the bench wire server.
 *
 * - Throughput: N conversations at once × `rounds` tool rounds, latency 25 ms, through the ingress
 *   client, served by 1 and then 2 worker processes (node:cluster sharing one port; a fresh server
 *   per side). Conversations per second.
 * - Per step: one conversation at a time × `rounds` rounds at latency 0 — each conversation is
 *   2 × rounds + 1 steps (rounds + 1 requests, rounds tool calls) — on 1 Restate worker, and on the
 *   durable host in this process over `memoryStore()` and over `sqliteStore()` (synchronous FULL).
 *   Wall ms per step; Restate's minus the host's is what journaling a step through the server costs.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  type ConversationStore,
  createConversationHost,
  createConversationMachine,
  defineTool,
  memoryStore,
  openaiProvider,
  type RunOutput,
} from '../src/index.js';
import { restateConversationClient } from '../src/scale/restate/client.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { freePort, startRestateServer } from '../test/support/restate-server.js';
import { median } from './stats.js';
import { addDescription, addExecutor, addName, addSchema } from './tool.js';
import type { WireServerHandle } from './wire.js';

export type RestateThroughput = {
  workers: number;
  n: number;
  wallMs: number;
  conversationsPerSecond: number;
  errors: number;
  errorSamples: string[];
};
export type RestateStepRow = {
  side: string;
  conversations: number;
  stepsPerConversation: number;
  msPerConversation: number;
  msPerStep: number;
};
export type RestateResult = {
  rounds: number;
  latencyMs: number;
  throughput: RestateThroughput[];
  perStep: RestateStepRow[];
  /** Restate's ms per step minus the durable host's (sqliteStore, then memoryStore). */
  journalingMsPerStep: { versusSqlite: number; versusMemory: number };
};

type Run = (id: string) => Promise<RunOutput>;

/** Starts `count` workers sharing a free port; resolves once they all listen. */
async function startWorkers(count: number, baseURL: string, rounds: number): Promise<{ port: number; stop: () => Promise<void> }> {
  const port = await freePort();
  const script = fileURLToPath(new URL('./restate-worker.ts', import.meta.url));
  // Inherits tsx's loader through process.execArgv, as the cluster's workers do from it.
  const primary: ChildProcess = fork(script, [String(port), String(count), baseURL, String(rounds)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, RESTATE_LOGGING: 'ERROR' },
  });
  const onExit = () => primary.kill('SIGKILL');
  process.once('exit', onExit);
  await new Promise<void>((resolve, reject) => {
    primary.once('message', () => resolve());
    primary.once('exit', (code) => reject(new Error(`bench workers exited before they listened (code ${code})`)));
  });
  return {
    port,
    stop: async () => {
      process.off('exit', onExit);
      if (primary.exitCode !== null || primary.signalCode !== null) return;
      const exited = new Promise((resolve) => primary.once('exit', resolve));
      primary.send({ type: 'stop' });
      await exited;
    },
  };
}

/** A restate-server and `workers` workers, registered; `use` gets a run function; everything is stopped after. */
async function withRestate<T>(workers: number, baseURL: string, rounds: number, use: (run: Run) => Promise<T>): Promise<T> {
  const server = await startRestateServer();
  let cluster: Awaited<ReturnType<typeof startWorkers>> | undefined;
  try {
    cluster = await startWorkers(workers, baseURL, rounds);
    await server.register(`http://127.0.0.1:${cluster.port}`);
    const client = restateConversationClient({ url: server.ingressUrl });
    return await use(async (id) => {
      await client.send(id, { type: 'user.message', content: 'add them up' });
      return client.result(id);
    });
  } finally {
    await cluster?.stop();
    await server.stop();
  }
}

/** N conversations at once; wall time from the first send to the last result. */
async function throughput(run: Run, workers: number, n: number, prefix: string): Promise<RestateThroughput> {
  const errors: string[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: n }, (_, index) =>
      run(`${prefix}-${index}`).then(
        (output) => {
          if (output.status !== 'done') errors.push(`${output.status}: ${output.error?.message ?? ''}`);
        },
        (error: unknown) => errors.push(String(error)),
      ),
    ),
  );
  const wallMs = performance.now() - started;
  return { workers, n, wallMs, conversationsPerSecond: (n * 1000) / wallMs, errors: errors.length, errorSamples: errors.slice(0, 3) };
}

/** One conversation at a time; the median wall per conversation. */
async function sequential(side: string, run: Run, conversations: number, rounds: number): Promise<RestateStepRow> {
  for (let index = 0; index < 3; index++) await run(`${side}-warm-${index}`);
  const samples: number[] = [];
  for (let index = 0; index < conversations; index++) {
    const started = performance.now();
    const output = await run(`${side}-seq-${index}`);
    samples.push(performance.now() - started);
    if (output.status !== 'done') throw new Error(`${side}: a conversation ended ${output.status}: ${output.error?.message ?? ''}`);
  }
  const stepsPerConversation = 2 * rounds + 1;
  const msPerConversation = median(samples);
  return { side, conversations, stepsPerConversation, msPerConversation, msPerStep: msPerConversation / stepsPerConversation };
}

/** The durable host in this process over `store`, with the workers' machine. */
function hostRun(store: ConversationStore, baseURL: string, rounds: number): { run: Run; close: () => Promise<void> } {
  const execute = addExecutor();
  const machine = createConversationMachine({
    provider: openaiProvider({ model: 'bench-model', apiKey: 'bench', baseURL }),
    tools: [defineTool({ name: addName, description: addDescription, parameters: addSchema, execute: (args) => execute(args) })],
    maxToolIterations: rounds + 1,
  });
  const host = createConversationHost({ machine, store, hostId: 'bench-restate' });
  return {
    run: async (id) => {
      await host.send(id, { type: 'user.message', content: 'add them up' });
      return host.result(id);
    },
    close: () => host.close(),
  };
}

export async function restateScenario(
  server: WireServerHandle,
  options: { n: number; rounds: number; conversations: number; log: (line: string) => void },
): Promise<RestateResult> {
  const { n, rounds, conversations, log } = options;
  const latencyMs = 25;
  const results: RestateThroughput[] = [];
  const perStep: RestateStepRow[] = [];
  for (const workers of [1, 2]) {
    await server.configure({ latencyMs, rounds });
    log(`RESTATE: ${n} conversations × ${rounds} rounds on ${workers} worker(s)…`);
    await withRestate(workers, server.baseURL, rounds, async (run) => {
      for (let index = 0; index < 5; index++) await run(`warm-${index}`);
      results.push(await throughput(run, workers, n, `w${workers}`));
      if (workers === 1) {
        await server.configure({ latencyMs: 0, rounds });
        log(`RESTATE: ${conversations} conversations one at a time on 1 worker, latency 0…`);
        perStep.push(await sequential('restate (1 worker)', run, conversations, rounds));
      }
    });
  }
  await server.configure({ latencyMs: 0, rounds });
  log('RESTATE: the same, on the durable host in this process…');
  const directory = mkdtempSync(join(tmpdir(), 'actorloop-bench-restate-'));
  try {
    for (const [side, store] of [
      ['host + memoryStore', memoryStore()],
      ['host + sqliteStore', sqliteStore({ path: join(directory, 'bench.db') })],
    ] as const) {
      const host = hostRun(store, server.baseURL, rounds);
      perStep.push(await sequential(side, host.run, conversations, rounds));
      await host.close();
      await store.close();
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  const stepOf = (side: string) => perStep.find((row) => row.side === side)?.msPerStep ?? Number.NaN;
  const restateStep = stepOf('restate (1 worker)');
  return {
    rounds,
    latencyMs,
    throughput: results,
    perStep,
    journalingMsPerStep: {
      versusSqlite: restateStep - stepOf('host + sqliteStore'),
      versusMemory: restateStep - stepOf('host + memoryStore'),
    },
  };
}
