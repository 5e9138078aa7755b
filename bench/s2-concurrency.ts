/**
 * S2 concurrency: N conversations started at once, `rounds` tool rounds each, streaming, server
 * latency 25 ms. Each (side, N) runs in a fresh worker process with one shared `openai` client
 * whose keep-alive pool allows one connection per conversation (so no conversation queues behind
 * another's socket): wall time, tool rounds per second, peak RSS, errors, retries (actorloop).
 * With `reps` > 1 each (side, transport, N) runs that many times, the sides' order rotating, and
 * the run with the most rounds/s stands for it: a loaded machine only ever slows a run down, so the
 * best of R is the steadiest figure of what the code can do (each run's figures are kept beside it).
 * With `minimal`, the minimal statechart loop (bench/minimal-loop.ts) runs as a third side: the
 * throughput and peak RSS a tool loop of XState actors reaches at all, beside actorloop's.
 */
import { performance } from 'node:perf_hooks';
import { createBenchClient, type Transport } from './client.js';
import type { LoopResult } from './raw-loop.js';
import { sideLoop } from './side-loop.js';
import { cpuNowUs, median, percentile } from './stats.js';
import type { WireServerHandle } from './wire.js';
import { type LoopSide, runInWorker, type Job } from './worker-process.js';
import { bestOf } from './s2-best-of.js';
import { rotated } from './s2-sides.js';

export type S2RunResult = {
  side: LoopSide;
  transport: Transport;
  n: number;
  rounds: number;
  connections: number;
  poolKind: string;
  wallMs: number;
  roundsPerSecond: number;
  requestsPerSecond: number;
  cpuMs: number;
  peakRssBytes: number;
  baselineRssBytes: number;
  errors: number;
  errorSamples: string[];
  retries: number;
  conversationMs: { p50: number; p99: number; max: number };
  serverRequests?: number;
  expectedRequests?: number;
  serverPeakSockets?: number;
  /** With `reps` > 1: every run's rounds/s and peak RSS, in the order run (the best one is reported above). */
  repetitions?: Array<{ roundsPerSecond: number; peakRssBytes: number }>;
};

export async function runS2Job(job: Extract<Job, { kind: 's2' }>): Promise<S2RunResult> {
  const client = await createBenchClient(job.baseURL, { connections: job.connections, transport: job.transport });
  const options = { model: 'bench-model', stream: true, maxRounds: job.rounds };
  const run = sideLoop(job.side, client.client, options);
  // Warm-up: a few conversations, so the JIT and lazy imports are not counted.
  for (let i = 0; i < 5; i++) await run('warm-up');
  let peakRss = process.memoryUsage.rss();
  const baselineRssBytes = peakRss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 20);
  const cpu0 = cpuNowUs();
  const started = performance.now();
  const durations: number[] = [];
  const results = await Promise.all(
    Array.from({ length: job.n }, async (_, index) => {
      const t0 = performance.now();
      try {
        return await run(`conversation ${index}`);
      } catch (error) {
        return { ok: false, rounds: 0, text: '', messages: 0, totalTokens: 0, error: `thrown: ${String(error)}` } satisfies LoopResult;
      } finally {
        durations.push(performance.now() - t0);
      }
    }),
  );
  const wallMs = performance.now() - started;
  const cpuMs = (cpuNowUs() - cpu0) / 1000;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage.rss(), process.resourceUsage().maxRSS * 1024);
  const failed = results.filter((result) => !result.ok || result.rounds !== job.rounds);
  const errorSamples = [...new Set(failed.map((result) => result.error ?? `ended after ${result.rounds} rounds`))].slice(0, 5);
  await client.close();
  return {
    side: job.side,
    transport: job.transport,
    n: job.n,
    rounds: job.rounds,
    connections: job.connections,
    poolKind: client.poolKind,
    wallMs,
    roundsPerSecond: (job.n * job.rounds) / (wallMs / 1000),
    requestsPerSecond: (job.n * (job.rounds + 1)) / (wallMs / 1000),
    cpuMs,
    peakRssBytes: peakRss,
    baselineRssBytes,
    errors: failed.length,
    errorSamples,
    retries: results.reduce((sum, result) => sum + ((result as { retries?: number }).retries ?? 0), 0),
    conversationMs: { p50: median(durations), p99: percentile(durations, 99), max: Math.max(...durations) },
  };
}

export async function s2(
  server: WireServerHandle,
  options: {
    ns: number[];
    rounds: number;
    latencyMs: number;
    transports: Transport[];
    reps?: number;
    /** Also run the minimal statechart loop (a third side). */
    minimal?: boolean;
    log: (line: string) => void;
  },
): Promise<S2RunResult[]> {
  await server.configure({ latencyMs: options.latencyMs, rounds: options.rounds });
  const reps = options.reps ?? 1;
  const sides: LoopSide[] = options.minimal ? ['actorloop', 'raw', 'minimal'] : ['actorloop', 'raw'];
  const out: S2RunResult[] = [];
  for (const [nIndex, n] of options.ns.entries())
    for (const transport of options.transports) {
      const runs: Record<LoopSide, S2RunResult[]> = { actorloop: [], raw: [], minimal: [] };
      for (let rep = 0; rep < reps; rep++) {
        for (const side of rotated(sides, nIndex + rep)) {
          const result = await s2Run(server, { side, n, transport, rounds: options.rounds });
          runs[side].push(result);
          options.log(
            `  S2 ${side} (${transport}) N=${n}${reps > 1 ? ` run ${rep + 1}/${reps}` : ''}: ${result.wallMs.toFixed(0)} ms, ` +
              `${result.roundsPerSecond.toFixed(0)} rounds/s, errors ${result.errors}, server requests ` +
              `${result.serverRequests}/${result.expectedRequests}, peak sockets ${result.serverPeakSockets}`,
          );
        }
      }
      for (const side of reportOrder) if (sides.includes(side)) out.push(bestOf(runs[side]));
    }
  return out;
}

/** Rows in this order: the raw loop first, as every table has had it. */
const reportOrder: readonly LoopSide[] = ['raw', 'actorloop', 'minimal'];

async function s2Run(
  server: WireServerHandle,
  { side, n, transport, rounds }: { side: LoopSide; n: number; transport: Transport; rounds: number },
): Promise<S2RunResult> {
  await server.reset();
  let result: S2RunResult;
  try {
    result = await runInWorker<S2RunResult>({ kind: 's2', baseURL: server.baseURL, side, n, rounds, connections: n, transport }, [
      '--max-old-space-size=8192',
    ]);
  } catch (error) {
    result = {
      side,
      transport,
      n,
      rounds,
      connections: n,
      poolKind: '?',
      wallMs: Number.NaN,
      roundsPerSecond: Number.NaN,
      requestsPerSecond: Number.NaN,
      cpuMs: Number.NaN,
      peakRssBytes: Number.NaN,
      baselineRssBytes: Number.NaN,
      errors: n,
      errorSamples: [String(error).slice(0, 500)],
      retries: 0,
      conversationMs: { p50: Number.NaN, p99: Number.NaN, max: Number.NaN },
    };
  }
  const stats = await server.stats();
  result.serverRequests = stats.requests;
  result.expectedRequests = (n + 5) * (rounds + 1);
  result.serverPeakSockets = stats.peakOpenSockets;
  return result;
}
