/**
 * S1 overhead: one conversation at a time, `rounds` tool rounds, server latency 0. CPU µs per
 * round of the client process (`process.cpuUsage`, user + system, over the whole conversation
 * including its final text response, divided by the rounds) for actorloop and the raw loop,
 * streaming and not. Two more sides split the difference: "raw+signal" is the floor with one
 * AbortController per request (actorloop makes one per request too), and "provider" is actorloop
 * without its statechart (bench/provider-loop.ts), so actorloop − provider is what the machine
 * costs and provider − raw what the provider layer costs. "minimal" runs the raw loop's own request
 * and tool code in the smallest XState tool loop (bench/minimal-loop.ts): XState's inherent share. All sides run in one fresh worker
 * process, interleaved in rotating order after a warm-up long enough for the JIT to settle, each
 * with its own client and pool of identical options.
 */
import { performance } from 'node:perf_hooks';
import { benchOpenAIProvider, createActorloopLoop } from './actorloop-loop.js';
import { createBenchClient } from './client.js';
import { createMinimalLoop } from './minimal-loop.js';
import { createProviderLoop } from './provider-loop.js';
import { createRawLoop, type LoopResult } from './raw-loop.js';
import { cpuNowUs, median, percentile } from './stats.js';
import type { WireServerHandle } from './wire.js';
import { runInWorker, type Job } from './worker-process.js';

export type S1SideResult = {
  /** `mean` carries the young-generation GCs a side's allocation causes, which a median can skip. */
  cpuUsPerRound: { median: number; mean: number; p10: number; p90: number; min: number };
  wallMsPerConversation: { median: number };
  samples: number[];
};
export type S1ModeResult = {
  mode: 'stream' | 'json';
  actorloop: S1SideResult;
  raw: S1SideResult;
  /** The floor with one AbortController per request, as actorloop has. */
  rawSignal: S1SideResult;
  /** actorloop's provider layer and planning without the machine. */
  provider: S1SideResult;
  /** The raw loop's own request and tool code inside a minimal XState tool loop (bench/minimal-loop.ts). */
  minimal: S1SideResult;
  /** The raw loop with `createNodeFetch` as its client's fetch. */
  rawNodeHttp: S1SideResult;
  /** actorloop with `createNodeFetch` as its client's fetch. */
  actorloopNodeHttp: S1SideResult;
  /** minimal / raw, medians: XState's inherent cost. */
  ratioMinimal: number;
  /** actorloop / minimal, medians: what actorloop's machine adds beyond it. */
  ratioOverMinimal: number;
  /** actorloop / raw, medians. */
  ratio: number;
  /** actorloop / raw+signal, medians. */
  ratioSignal: number;
  /** provider / raw, medians: what the provider layer adds. */
  ratioProvider: number;
  poolKind: string;
};
type S1Side = 'actorloop' | 'raw' | 'rawSignal' | 'provider' | 'minimal' | 'rawNodeHttp' | 'actorloopNodeHttp';
export type S1Result = {
  rounds: number;
  reps: number;
  warmup: number;
  modes: S1ModeResult[];
  serverRequests: number;
  expectedRequests: number;
};

/** A side's samples: CPU µs per round and wall ms per conversation. */
export function summarizeSide(cpu: number[], wall: number[]): S1SideResult {
  return {
    cpuUsPerRound: {
      median: median(cpu),
      mean: cpu.reduce((sum, value) => sum + value, 0) / cpu.length,
      p10: percentile(cpu, 10),
      p90: percentile(cpu, 90),
      min: Math.min(...cpu),
    },
    wallMsPerConversation: { median: median(wall) },
    samples: cpu.map((value) => Math.round(value * 10) / 10),
  };
}

function check(result: LoopResult, rounds: number, side: string): void {
  if (!result.ok || result.rounds !== rounds)
    throw new Error(`S1 ${side}: run ended ${result.ok ? 'ok' : result.error} after ${result.rounds} rounds`);
}

export async function runS1Job(job: Extract<Job, { kind: 's1' }>): Promise<S1ModeResult[]> {
  const out: S1ModeResult[] = [];
  for (const mode of job.modes) {
    const stream = mode === 'stream';
    const options = { model: 'bench-model', stream, maxRounds: job.rounds };
    const rawClient = await createBenchClient(job.baseURL, { connections: 4 });
    const rawSignalClient = await createBenchClient(job.baseURL, { connections: 4 });
    const providerClient = await createBenchClient(job.baseURL, { connections: 4 });
    const actorClient = await createBenchClient(job.baseURL, { connections: 4 });
    const minimalClient = await createBenchClient(job.baseURL, { connections: 4 });
    const rawNodeHttpClient = await createBenchClient(job.baseURL, { connections: 4, transport: 'node-http' });
    const actorNodeHttpClient = await createBenchClient(job.baseURL, { connections: 4, transport: 'node-http' });
    const sides: Record<S1Side, (text: string) => Promise<LoopResult>> = {
      raw: createRawLoop(rawClient.client, options),
      rawSignal: createRawLoop(rawSignalClient.client, { ...options, signalPerRequest: true }),
      provider: createProviderLoop(benchOpenAIProvider(providerClient.client, options), options),
      actorloop: createActorloopLoop(benchOpenAIProvider(actorClient.client, options), options),
      minimal: createMinimalLoop(minimalClient.client, options),
      rawNodeHttp: createRawLoop(rawNodeHttpClient.client, options),
      actorloopNodeHttp: createActorloopLoop(benchOpenAIProvider(actorNodeHttpClient.client, options), options),
    };
    const measure = async (side: S1Side) => {
      const cpu0 = cpuNowUs();
      const wall0 = performance.now();
      const result = await sides[side]('Add the numbers, round after round.');
      const cpu = (cpuNowUs() - cpu0) / job.rounds;
      const wall = performance.now() - wall0;
      check(result, job.rounds, side);
      return { cpu, wall };
    };
    const order: S1Side[] = ['actorloop', 'raw', 'rawSignal', 'provider', 'minimal', 'rawNodeHttp', 'actorloopNodeHttp'];
    for (let i = 0; i < job.warmup; i++) for (const side of order) await measure(side);
    const samples: Record<S1Side, { cpu: number[]; wall: number[] }> = {
      raw: { cpu: [], wall: [] },
      rawSignal: { cpu: [], wall: [] },
      provider: { cpu: [], wall: [] },
      actorloop: { cpu: [], wall: [] },
      minimal: { cpu: [], wall: [] },
      rawNodeHttp: { cpu: [], wall: [] },
      actorloopNodeHttp: { cpu: [], wall: [] },
    };
    const rotations = order.map((_, shift) => [...order.slice(shift), ...order.slice(0, shift)]);
    for (let i = 0; i < job.reps; i++) {
      // Interleaved, each side first as often as the others, so drift and order effects cancel.
      const turn = rotations[i % rotations.length] as S1Side[];
      for (const side of turn) {
        const { cpu, wall } = await measure(side);
        samples[side].cpu.push(cpu);
        samples[side].wall.push(wall);
      }
    }
    await rawClient.close();
    await rawSignalClient.close();
    await providerClient.close();
    await actorClient.close();
    await minimalClient.close();
    await rawNodeHttpClient.close();
    await actorNodeHttpClient.close();
    const actorloop = summarizeSide(samples.actorloop.cpu, samples.actorloop.wall);
    const raw = summarizeSide(samples.raw.cpu, samples.raw.wall);
    const rawSignal = summarizeSide(samples.rawSignal.cpu, samples.rawSignal.wall);
    const provider = summarizeSide(samples.provider.cpu, samples.provider.wall);
    const minimal = summarizeSide(samples.minimal.cpu, samples.minimal.wall);
    out.push({
      mode,
      actorloop,
      raw,
      rawSignal,
      provider,
      ratio: actorloop.cpuUsPerRound.median / raw.cpuUsPerRound.median,
      ratioSignal: actorloop.cpuUsPerRound.median / rawSignal.cpuUsPerRound.median,
      ratioProvider: provider.cpuUsPerRound.median / raw.cpuUsPerRound.median,
      minimal,
      rawNodeHttp: summarizeSide(samples.rawNodeHttp.cpu, samples.rawNodeHttp.wall),
      actorloopNodeHttp: summarizeSide(samples.actorloopNodeHttp.cpu, samples.actorloopNodeHttp.wall),
      ratioMinimal: minimal.cpuUsPerRound.median / raw.cpuUsPerRound.median,
      ratioOverMinimal: actorloop.cpuUsPerRound.median / minimal.cpuUsPerRound.median,
      poolKind: rawClient.poolKind,
    });
  }
  return out;
}

export async function s1(server: WireServerHandle, options: { rounds: number; reps: number; warmup: number }): Promise<S1Result> {
  await server.configure({ latencyMs: 0, rounds: options.rounds });
  await server.reset();
  const modes = await runInWorker<S1ModeResult[]>({
    kind: 's1',
    baseURL: server.baseURL,
    rounds: options.rounds,
    reps: options.reps,
    warmup: options.warmup,
    modes: ['stream', 'json'],
  });
  const stats = await server.stats();
  return {
    rounds: options.rounds,
    reps: options.reps,
    warmup: options.warmup,
    modes,
    serverRequests: stats.requests,
    expectedRequests: 2 * 7 * (options.reps + options.warmup) * (options.rounds + 1),
  };
}
