/**
 * S4 persistence: what the durable host costs, persistence on vs off in the same run.
 *
 * - Round trip (one worker): a run with 20 and with 200 messages, its snapshot taken while a tool
 *   call runs (the state a crash would resume from): `getPersistedSnapshot` + `JSON.stringify`,
 *   a `sqliteStore` save (one conversation alone, so one transaction and one sync to disk per
 *   save), load + `JSON.parse` + the host's snapshot checks, `createActor({ snapshot }).start()`.
 *   Medians of `reps`.
 * - Throughput (a fresh worker per side): N conversations at once × `rounds` tool rounds against
 *   the wire server at latency 25 ms, streaming, one shared client per side. Sides: `off` — plain
 *   actors (no persistence); `memory` — the host over `memoryStore()`; `sqlite` — the host over
 *   `sqliteStore()` (synchronous FULL, the default); `sqlite-normal` — synchronous NORMAL.
 *   Conversations per second, rounds per second, client CPU, and what the store was given to write
 *   per round (saves, snapshot + log bytes) and, for SQLite, the bytes the process wrote to files
 *   (`/proc/self/io` wchar: WAL frames and checkpoints).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createActor, waitFor } from 'xstate';
import {
  type ConversationStore,
  createConversationHost,
  createConversationMachine,
  defineTool,
  handlerProvider,
  memoryStore,
} from '../src/index.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai/index.js';
import { findSnapshotProblem } from '../src/machines/snapshots/snapshot-problem.js';
import { currentSchemaVersion } from '../src/machines/snapshots/snapshot-migrations.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { benchOpenAIProvider, createActorloopLoop, createActorloopMachine } from './actorloop-loop.js';
import { createBenchClient } from './client.js';
import { cpuNowUs, median } from './stats.js';
import { addDescription, addName, addSchema } from './tool.js';
import type { WireServerHandle } from './wire.js';
import { type Job, runInWorker } from './worker-process.js';

export type S4Row = {
  messages: number;
  /** Tool calls running in the snapshot. */
  runningCalls: number;
  snapshotBytes: number;
  /** What XState's own persisted snapshot would be: every running call's input holds the history again. */
  uncompactedBytes: number;
  serializeUs: number;
  saveUs: number;
  loadUs: number;
  restoreUs: number;
  roundTripUs: number;
};
export type S4Side = 'off' | 'memory' | 'sqlite' | 'sqlite-normal';
export type S4ThroughputResult = {
  side: S4Side;
  n: number;
  rounds: number;
  wallMs: number;
  conversationsPerSecond: number;
  roundsPerSecond: number;
  cpuMs: number;
  errors: number;
  errorSamples: string[];
  savesPerRound: number;
  bytesPerRound: number;
  fileBytesPerRound: number | null;
};
export type S4Result = { rows: S4Row[]; throughput: S4ThroughputResult[]; latencyMs: number };

/** A response asking for `calls` parallel `add(a, index)` calls. */
async function* toolCallChunks(a: number, calls: number): AsyncGenerator<OpenAIChatCompletionChunk> {
  yield {
    choices: [
      {
        index: 0,
        delta: {
          tool_calls: Array.from({ length: calls }, (_, index) => ({
            index,
            id: `call_${a}_${index}`,
            type: 'function' as const,
            function: { name: addName, arguments: `{"a":${a},"b":${index}}` },
          })),
        },
        finish_reason: null,
      },
    ],
  };
  yield { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] };
}

/** Parallel calls running in the round-trip snapshot. */
const runningCalls = 3;

/** Bytes this process has written to files so far (Linux), or null. */
function writtenBytes(): number | null {
  try {
    const match = /^wchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** A store that counts what it is given to write. */
function counting(store: ConversationStore) {
  const counts = { saves: 0, bytes: 0 };
  const counted: ConversationStore = {
    ...store,
    save: (conversation, log = []) => {
      counts.saves++;
      counts.bytes +=
        Buffer.byteLength(conversation.snapshot) + log.reduce((sum, entry) => sum + Buffer.byteLength(JSON.stringify(entry.event)), 0);
      return store.save(conversation, log);
    },
  };
  return { counted, counts };
}

export async function runS4Job(job: Extract<Job, { kind: 's4' }>): Promise<S4Row[]> {
  const directory = mkdtempSync(join(tmpdir(), 'actorloop-s4-'));
  const rows: S4Row[] = [];
  try {
    for (const messages of job.sizes) {
      // user + (assistant call + tool result) per round; the snapshot is taken in the last round's call.
      const rounds = Math.max(1, Math.round((messages - 1) / 2));
      let release: () => void = () => undefined;
      const blocked = new Promise<void>((resolve) => {
        release = resolve;
      });
      const machine = createConversationMachine({
        // Every request asks for parallel `add(-1, i)` calls, which block: the run stays in executingTools.
        provider: handlerProvider(() => toolCallChunks(-1, runningCalls)),
        tools: [
          defineTool({
            name: addName,
            description: addDescription,
            parameters: addSchema,
            execute: async ({ a, b }) => {
              if (a === -1) await blocked;
              return a + b;
            },
          }),
        ],
        maxToolIterations: rounds + 1,
      });
      // The history of `rounds` rounds so far, then a request whose call blocks: the run is in executingTools.
      const history = [{ role: 'user' as const, content: 'Add the numbers, round after round.' }, ...pastRounds(rounds - 1)];
      const actor = createActor(machine, { input: { messages: history } });
      actor.start();
      actor.send({ type: 'user.message', content: 'And once more.' });
      await waitFor(actor, (snapshot) => snapshot.matches('executingTools'));
      const size = (actor.getSnapshot().context.messages as unknown[]).length;
      // XState's own getPersistedSnapshot (the machine's wrapper compacts it), for comparison.
      const uncompacted = (
        Object.getPrototypeOf(machine) as { getPersistedSnapshot: (snapshot: unknown) => unknown }
      ).getPersistedSnapshot.call(machine, actor.getSnapshot());
      const uncompactedBytes = Buffer.byteLength(JSON.stringify(uncompacted));
      const store = sqliteStore({ path: join(directory, `s4-${messages}.db`) });
      const samples = { serialize: [] as number[], save: [] as number[], load: [] as number[], restore: [] as number[] };
      let bytes = 0;
      for (let i = 0; i < job.reps + 5; i++) {
        const t0 = performance.now();
        const text = JSON.stringify(actor.getPersistedSnapshot());
        const t1 = performance.now();
        await store.save({
          id: 'c',
          schemaVersion: currentSchemaVersion,
          machineId: 'conversation',
          status: 'running',
          snapshot: text,
          revision: i + 1,
          owner: 's4',
          updatedAt: Date.now(),
        });
        const t2 = performance.now();
        const loaded = await store.load('c');
        const parsed: unknown = JSON.parse(loaded?.snapshot ?? 'null');
        if (findSnapshotProblem(parsed, machine)) throw new Error('S4: the stored snapshot does not check');
        const t3 = performance.now();
        const restored = createActor(machine, { snapshot: parsed as never, input: {} }).start();
        const t4 = performance.now();
        restored.stop();
        bytes = Buffer.byteLength(text);
        if (i < 5) continue; // warm-up
        samples.serialize.push((t1 - t0) * 1000);
        samples.save.push((t2 - t1) * 1000);
        samples.load.push((t3 - t2) * 1000);
        samples.restore.push((t4 - t3) * 1000);
      }
      release();
      actor.stop();
      await store.close();
      const row: S4Row = {
        messages: size,
        runningCalls,
        snapshotBytes: bytes,
        uncompactedBytes,
        serializeUs: median(samples.serialize),
        saveUs: median(samples.save),
        loadUs: median(samples.load),
        restoreUs: median(samples.restore),
        roundTripUs: 0,
      };
      row.roundTripUs = row.serializeUs + row.saveUs + row.loadUs + row.restoreUs;
      rows.push(row);
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  return rows;
}

/** Finished tool rounds as history: assistant call + tool result, `count` times. */
function pastRounds(count: number) {
  return Array.from({ length: count }, (_, index) => [
    {
      role: 'assistant' as const,
      content: [{ type: 'tool-call' as const, toolCallId: `past_${index}`, toolName: addName, args: { a: index, b: 1 } }],
    },
    {
      role: 'tool' as const,
      content: [{ type: 'tool-result' as const, toolCallId: `past_${index}`, toolName: addName, result: String(index + 1) }],
    },
  ]).flat();
}

export async function runS4ThroughputJob(job: Extract<Job, { kind: 's4-throughput' }>): Promise<S4ThroughputResult> {
  const client = await createBenchClient(job.baseURL, { connections: job.connections });
  const options = { model: 'bench-model', stream: true, maxRounds: job.rounds };
  const provider = benchOpenAIProvider(client.client, options);
  const directory = mkdtempSync(join(tmpdir(), 'actorloop-s4-'));
  const base =
    job.side === 'memory'
      ? memoryStore()
      : job.side === 'off'
        ? undefined
        : sqliteStore({ path: join(directory, 'throughput.db'), synchronous: job.side === 'sqlite' ? 'full' : 'normal' });
  const store = base ? counting(base) : undefined;
  let run: (text: string, index: number) => Promise<{ ok: boolean; rounds: number; error?: string }>;
  if (!store) {
    const loop = createActorloopLoop(provider, options);
    run = (text) => loop(text);
  } else {
    const host = createConversationHost({ machine: createActorloopMachine(provider, options), store: store.counted, hostId: 's4' });
    let serial = 0;
    run = async (text) => {
      const id = `conversation-${serial++}`;
      await host.send(id, { type: 'user.message', content: text });
      const output = await host.result(id);
      return {
        ok: output.status === 'done',
        rounds: output.iterations,
        ...(output.status === 'done' ? {} : { error: output.error?.message ?? output.status }),
      };
    };
  }
  try {
    for (let i = 0; i < 5; i++) await run('warm-up', i);
    const saves0 = store?.counts.saves ?? 0;
    const bytes0 = store?.counts.bytes ?? 0;
    const file0 = writtenBytes();
    const cpu0 = cpuNowUs();
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: job.n }, (_, index) =>
        run(`conversation ${index}`, index).catch((error: unknown) => ({ ok: false, rounds: 0, error: `thrown: ${String(error)}` })),
      ),
    );
    const wallMs = performance.now() - started;
    const cpuMs = (cpuNowUs() - cpu0) / 1000;
    const file1 = writtenBytes();
    const failed = results.filter((result) => !result.ok || result.rounds !== job.rounds);
    const rounds = job.n * job.rounds;
    return {
      side: job.side,
      n: job.n,
      rounds: job.rounds,
      wallMs,
      conversationsPerSecond: job.n / (wallMs / 1000),
      roundsPerSecond: rounds / (wallMs / 1000),
      cpuMs,
      errors: failed.length,
      errorSamples: [...new Set(failed.map((result) => result.error ?? `ended after ${result.rounds} rounds`))].slice(0, 3),
      savesPerRound: store ? (store.counts.saves - saves0) / rounds : 0,
      bytesPerRound: store ? (store.counts.bytes - bytes0) / rounds : 0,
      fileBytesPerRound: job.side.startsWith('sqlite') && file0 !== null && file1 !== null ? (file1 - file0) / rounds : null,
    };
  } finally {
    await client.close();
    await base?.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

/** Round trip in one worker, then the throughput sides, each in a fresh worker, in alternating order per rep. */
export async function s4(
  server: WireServerHandle,
  options: { sizes: number[]; reps: number; n: number; rounds: number; throughputReps: number; log: (line: string) => void },
): Promise<S4Result> {
  const rows = await runInWorker<S4Row[]>({ kind: 's4', sizes: options.sizes, reps: options.reps });
  const latencyMs = 25;
  await server.configure({ latencyMs, rounds: options.rounds });
  const throughput: S4ThroughputResult[] = [];
  const sides: S4Side[] = ['off', 'sqlite', 'memory', 'sqlite-normal'];
  for (let rep = 0; rep < options.throughputReps; rep++) {
    for (const side of rep % 2 === 0 ? sides : [...sides].reverse()) {
      await server.reset();
      const result = await runInWorker<S4ThroughputResult>({
        kind: 's4-throughput',
        baseURL: server.baseURL,
        side,
        n: options.n,
        rounds: options.rounds,
        connections: options.n,
      });
      throughput.push(result);
      options.log(
        `  S4 ${side} N=${options.n}: ${result.wallMs.toFixed(0)} ms, ${result.conversationsPerSecond.toFixed(0)} conversations/s, errors ${result.errors}`,
      );
    }
  }
  return { rows, throughput, latencyMs };
}
