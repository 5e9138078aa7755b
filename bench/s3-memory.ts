/**
 * S3 memory: N conversations, each blocked inside a tool call (round `blockAt`, so the history
 * holds the user message and `blockAt - 1` finished rounds plus the blocked call's assistant
 * message) until a gate is released at the end. Heap bytes per live conversation over a baseline
 * taken after warm-up, both after forced GC, in a fresh worker started with `--expose-gc`, for
 * each side. With `--profile`, heap snapshots at baseline and under load are compared by
 * constructor (top self-size growth).
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import { createBenchClient } from './client.js';
import { diffHeapSummaries, summarizeHeapSnapshot, type HeapDiffRow } from './heap-summary.js';
import { createGate, type Gate } from './tool.js';
import type { WireServerHandle } from './wire.js';
import { benchOpenAIProvider, benchTools, createActorloopMachine } from './actorloop-loop.js';
import { sideLoop } from './side-loop.js';
import { runInWorker, type Job, type LoopSide, loopSides } from './worker-process.js';

type Memory = { heapUsed: number; external: number; arrayBuffers: number; rss: number };
export type S3RunResult = {
  side: LoopSide;
  /** actorloop with a machine made per conversation rather than one for all. */
  machinePerConversation?: boolean;
  n: number;
  /** Conversations in the warm-up wave before the baseline. */
  wave: number;
  blockAt: number;
  baseline: Memory;
  loaded: Memory;
  heapBytesPerConversation: number;
  externalBytesPerConversation: number;
  rssBytesPerConversation: number;
  completed: number;
  errors: number;
  errorSamples: string[];
  heapDiffTop?: HeapDiffRow[];
  /** With a machine per conversation: what `createConversationMachine` alone costs, per machine kept. */
  creation?: { machines: number; retainedBytes: number; cpuUs: number };
};

async function collect(): Promise<Memory> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('S3 needs --expose-gc');
  for (let i = 0; i < 4; i++) {
    gc();
    await sleep(10);
  }
  const { heapUsed, external, arrayBuffers, rss } = process.memoryUsage();
  return { heapUsed, external, arrayBuffers, rss };
}

/** `count` machines made and kept: heap retained after GC and CPU, per machine. */
async function creationCost(make: () => unknown, count: number): Promise<NonNullable<S3RunResult['creation']>> {
  make();
  const before = await collect();
  const cpu = process.cpuUsage();
  const kept = Array.from({ length: count }, make);
  const spent = process.cpuUsage(cpu);
  const after = await collect();
  kept.length = 0;
  return { machines: count, retainedBytes: (after.heapUsed - before.heapUsed) / count, cpuUs: (spent.user + spent.system) / count };
}

async function waitBlocked(gate: Gate, n: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (gate.blocked < n && Date.now() < deadline) await sleep(10);
  if (gate.blocked < n) throw new Error(`S3: only ${gate.blocked} of ${n} conversations reached the blocking tool in 120 s`);
}

export async function runS3Job(job: Extract<Job, { kind: 's3' }>): Promise<S3RunResult> {
  const client = await createBenchClient(job.baseURL, { connections: job.connections });
  const gate = createGate(job.blockAt);
  const options = {
    model: 'bench-model',
    stream: true,
    maxRounds: job.blockAt + 1,
    gate,
    machinePerConversation: job.machinePerConversation === true,
  };
  const run = sideLoop(job.side, client.client, options);
  const provider = benchOpenAIProvider(client.client, options);
  const tools = benchTools(options);
  const creation = job.machinePerConversation
    ? await creationCost(() => createActorloopMachine(provider, options, tools), 2_000)
    : undefined;
  gate.armed = false;
  for (let i = 0; i < 20; i++) {
    const result = await run('warm-up');
    if (!result.ok) throw new Error(`S3 warm-up failed: ${result.error}`);
  }
  // A first wave of conversations blocked at once, then released: the code paths only concurrency
  // reaches get compiled now, so the JIT's code is not counted as the measured conversations' memory.
  // A wave of N also grows the weak hash tables (the SDK's private fields, the wire cache) to what N
  // conversations in flight need: their capacity then stays out of the figure (docs/performance.md).
  gate.armed = true;
  const wave = job.wave;
  const warmRuns = Array.from({ length: wave }, (_, index) => run(`warm-up wave ${index}`));
  await waitBlocked(gate, wave);
  gate.release();
  const warmResults = await Promise.all(warmRuns);
  if (warmResults.some((result) => !result.ok)) throw new Error('S3 warm-up wave failed');
  gate.reset();
  const snapshots: string[] = [];
  const snap = (label: string) => {
    if (!job.snapshotDir) return;
    snapshots.push(v8.writeHeapSnapshot(path.join(job.snapshotDir, `s3-${job.side}-${label}-${process.pid}.heapsnapshot`)));
  };
  const baseline = await collect();
  snap('baseline');
  const runs = Array.from({ length: job.n }, (_, index) => run(`conversation ${index}`));
  await waitBlocked(gate, job.n);
  // Let the last responses finish and their sockets go idle before measuring.
  await sleep(200);
  const loaded = await collect();
  snap('loaded');
  gate.release();
  const results = await Promise.all(runs);
  const failed = results.filter((result) => !result.ok || result.rounds !== job.blockAt);
  await client.close();
  let heapDiffTop: HeapDiffRow[] | undefined;
  if (snapshots.length === 2) {
    heapDiffTop = diffHeapSummaries(summarizeHeapSnapshot(snapshots[0] as string), summarizeHeapSnapshot(snapshots[1] as string), 15);
    if (process.env.BENCH_KEEP_SNAPSHOTS !== '1') for (const file of snapshots) rmSync(file, { force: true });
  }
  return {
    side: job.side,
    ...(job.machinePerConversation ? { machinePerConversation: true } : {}),
    n: job.n,
    wave: job.wave,
    blockAt: job.blockAt,
    baseline,
    loaded,
    heapBytesPerConversation: (loaded.heapUsed - baseline.heapUsed) / job.n,
    externalBytesPerConversation: (loaded.external - baseline.external) / job.n,
    rssBytesPerConversation: (loaded.rss - baseline.rss) / job.n,
    completed: results.length - failed.length,
    errors: failed.length,
    errorSamples: [...new Set(failed.map((result) => result.error ?? `ended after ${result.rounds} rounds`))].slice(0, 5),
    ...(heapDiffTop ? { heapDiffTop } : {}),
    ...(creation ? { creation } : {}),
  };
}

export async function s3(
  server: WireServerHandle,
  options: { n: number; wave: number; blockAt: number; profile: boolean; snapshotDir: string; log: (line: string) => void },
): Promise<S3RunResult[]> {
  // The server answers `blockAt` tool rounds then a final text; latency 0.
  await server.configure({ latencyMs: 0, rounds: options.blockAt });
  const out: S3RunResult[] = [];
  // actorloop twice: one machine for every conversation, then a machine made per conversation.
  const runs = [...loopSides.map((side) => ({ side, perConversation: false })), { side: 'actorloop' as const, perConversation: true }];
  for (const { side, perConversation } of runs) {
    await server.reset();
    const result = await runInWorker<S3RunResult>(
      {
        kind: 's3',
        baseURL: server.baseURL,
        side,
        n: options.n,
        wave: options.wave,
        blockAt: options.blockAt,
        connections: 64,
        ...(perConversation ? { machinePerConversation: true } : {}),
        ...(options.profile ? { snapshotDir: options.snapshotDir } : {}),
      },
      ['--expose-gc', '--max-old-space-size=8192'],
    );
    out.push(result);
    options.log(
      `  S3 ${side}${perConversation ? ' (a machine per conversation)' : ''} N=${options.n} (wave ${options.wave}): ${(result.heapBytesPerConversation / 1024).toFixed(1)} KiB heap per live conversation, errors ${result.errors}`,
    );
  }
  return out;
}
