/**
 * S1 overhead: one conversation at a time, `rounds` tool rounds, server latency 0. CPU µs per
 * round of the client process (`process.cpuUsage`, user + system, over the whole conversation
 * including its final text response, divided by the rounds) for actorloop and the raw loop,
 * streaming and not. Both sides run in one fresh worker process, interleaved A,B,B,A,… after a
 * warm-up of both, each side with its own client and pool of identical options.
 */
import { performance } from 'node:perf_hooks';
import { createActorloopLoop } from './actorloop-loop.js';
import { createBenchClient } from './client.js';
import { createRawLoop, type LoopResult } from './raw-loop.js';
import { cpuNowUs, median, percentile } from './stats.js';
import type { WireServerHandle } from './wire.js';
import { runInWorker, type Job } from './worker-process.js';

export type S1SideResult = {
  cpuUsPerRound: { median: number; p10: number; p90: number; min: number };
  wallMsPerConversation: { median: number };
  samples: number[];
};
export type S1ModeResult = { mode: 'stream' | 'json'; actorloop: S1SideResult; raw: S1SideResult; ratio: number; poolKind: string };
export type S1Result = { rounds: number; reps: number; warmup: number; modes: S1ModeResult[]; serverRequests: number; expectedRequests: number };

function summarize(cpu: number[], wall: number[]): S1SideResult {
  return {
    cpuUsPerRound: { median: median(cpu), p10: percentile(cpu, 10), p90: percentile(cpu, 90), min: Math.min(...cpu) },
    wallMsPerConversation: { median: median(wall) },
    samples: cpu.map((value) => Math.round(value * 10) / 10),
  };
}

function check(result: LoopResult, rounds: number, side: string): void {
  if (!result.ok || result.rounds !== rounds) throw new Error(`S1 ${side}: run ended ${result.ok ? 'ok' : result.error} after ${result.rounds} rounds`);
}

export async function runS1Job(job: Extract<Job, { kind: 's1' }>): Promise<S1ModeResult[]> {
  const out: S1ModeResult[] = [];
  for (const mode of job.modes) {
    const stream = mode === 'stream';
    const options = { model: 'bench-model', stream, maxRounds: job.rounds };
    const rawClient = await createBenchClient(job.baseURL, { connections: 4 });
    const actorClient = await createBenchClient(job.baseURL, { connections: 4 });
    const sides = {
      raw: createRawLoop(rawClient.client, options),
      actorloop: createActorloopLoop(actorClient.client, options),
    };
    const measure = async (side: 'raw' | 'actorloop') => {
      const cpu0 = cpuNowUs();
      const wall0 = performance.now();
      const result = await sides[side]('Add the numbers, round after round.');
      const cpu = (cpuNowUs() - cpu0) / job.rounds;
      const wall = performance.now() - wall0;
      check(result, job.rounds, side);
      return { cpu, wall };
    };
    for (let i = 0; i < job.warmup; i++) {
      await measure('raw');
      await measure('actorloop');
    }
    const samples = { raw: { cpu: [] as number[], wall: [] as number[] }, actorloop: { cpu: [] as number[], wall: [] as number[] } };
    for (let i = 0; i < job.reps; i++) {
      // A,B,B,A,A,B,…: each side runs first half of the time, so drift and order effects cancel.
      const order: Array<'raw' | 'actorloop'> = i % 2 === 0 ? ['actorloop', 'raw'] : ['raw', 'actorloop'];
      for (const side of order) {
        const { cpu, wall } = await measure(side);
        samples[side].cpu.push(cpu);
        samples[side].wall.push(wall);
      }
    }
    await rawClient.close();
    await actorClient.close();
    const actorloop = summarize(samples.actorloop.cpu, samples.actorloop.wall);
    const raw = summarize(samples.raw.cpu, samples.raw.wall);
    out.push({ mode, actorloop, raw, ratio: actorloop.cpuUsPerRound.median / raw.cpuUsPerRound.median, poolKind: rawClient.poolKind });
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
    expectedRequests: 2 * 2 * (options.reps + options.warmup) * (options.rounds + 1),
  };
}
