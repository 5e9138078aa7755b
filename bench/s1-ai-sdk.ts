/**
 * S1-AISDK: what `actorloop/ai-sdk` costs against the native provider on the same mock, in one
 * run. S1's conversation (one at a time, `rounds` tool rounds, server latency 0, streaming — the
 * adapter always streams) through the conversation machine with `aiSdkProvider` over
 * `@ai-sdk/openai`'s chat model (`createOpenAI(…).chat(model)`), beside the same machine with
 * `openaiProvider` over the `openai` SDK: client CPU µs per round (`process.cpuUsage`), the ratio
 * adapter ÷ native. Four more sides split it: the same two providers in the plain loop without the
 * machine (bench/provider-loop.ts), so the provider layers compare without the machine's share in
 * both; and the two floors, hand-written loops over each client with no actorloop at all — the
 * `openai` SDK's (bench/raw-loop.ts) and the AI SDK model's own `doStream` (bench/ai-sdk-raw-loop.ts) —
 * so what the package costs is told apart from what the adapter adds to it. All six sides run in one
 * fresh worker, interleaved in rotating order after a warm-up, each with its own keep-alive pool of
 * identical options (the AI SDK's `fetch` carries its own undici pool as the `openai` client's
 * `fetchOptions` do).
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createOpenAI } from '@ai-sdk/openai';
import type { Provider } from '../src/index.js';
import { aiSdkProvider } from '../src/providers/ai-sdk/index.js';
import { benchOpenAIProvider, createActorloopLoop } from './actorloop-loop.js';
import { createAiSdkRawLoop } from './ai-sdk-raw-loop.js';
import { type BenchClient, createBenchClient } from './client.js';
import { createProviderLoop } from './provider-loop.js';
import { createRawLoop, type LoopOptions, type LoopResult } from './raw-loop.js';
import { type S1SideResult, summarizeSide } from './s1-overhead.js';
import { cpuNowUs } from './stats.js';
import type { WireServerHandle } from './wire.js';
import { type Job, runInWorker } from './worker-process.js';

/** `aiSdkProvider` over `@ai-sdk/openai`'s Chat Completions model, on a side's own pool. */
export function benchAiSdkProvider(bench: BenchClient, options: LoopOptions): Provider {
  return aiSdkProvider(benchAiSdkModel(bench, options));
}

/** `@ai-sdk/openai`'s Chat Completions model on a side's own pool. */
function benchAiSdkModel(bench: BenchClient, options: LoopOptions) {
  return createOpenAI({ apiKey: 'bench-key', baseURL: bench.client.baseURL, fetch: bench.fetch }).chat(options.model);
}

type Side = 'native' | 'aiSdk' | 'nativeProvider' | 'aiSdkProvider' | 'raw' | 'rawAiSdk';

export type S1AiSdkResult = {
  rounds: number;
  reps: number;
  warmup: number;
  /** `@ai-sdk/openai`'s version. */
  aiSdkOpenAI: string;
  /** The machine with `openaiProvider` (the `openai` SDK). */
  native: S1SideResult;
  /** The machine with `aiSdkProvider(createOpenAI(…).chat(model))`. */
  aiSdk: S1SideResult;
  /** `openaiProvider` in the plain loop without the machine. */
  nativeProvider: S1SideResult;
  /** `aiSdkProvider` in the plain loop without the machine. */
  aiSdkProvider: S1SideResult;
  /** The floor: a hand-written loop over the `openai` SDK. */
  raw: S1SideResult;
  /** The AI SDK's floor: a hand-written loop over the model's own `doStream`. */
  rawAiSdk: S1SideResult;
  /** aiSdk ÷ native, medians. */
  ratio: number;
  /** aiSdk ÷ native, means (count every young-generation GC a side causes). */
  ratioMean: number;
  /** aiSdk ÷ native, the least disturbed run of each. */
  ratioMin: number;
  /** aiSdkProvider ÷ nativeProvider, medians: the provider layers alone. */
  ratioProvider: number;
  /** rawAiSdk ÷ raw, medians: the AI SDK package against the `openai` SDK, neither through actorloop. */
  ratioFloor: number;
  /**
   * µs a round the adapter itself adds (medians): the AI SDK side's cost over the native side's, less
   * what the package costs over the `openai` SDK at the floor.
   */
  adapterUsPerRound: number;
  serverRequests: number;
  expectedRequests: number;
};

function check(result: LoopResult, rounds: number, side: string): void {
  if (!result.ok || result.rounds !== rounds)
    throw new Error(`S1-AISDK ${side}: run ended ${result.ok ? 'ok' : result.error} after ${result.rounds} rounds`);
}

export async function runS1AiSdkJob(
  job: Extract<Job, { kind: 's1-ai-sdk' }>,
): Promise<Omit<S1AiSdkResult, 'serverRequests' | 'expectedRequests'>> {
  const options: LoopOptions = { model: 'bench-model', stream: true, maxRounds: job.rounds };
  const clients = {
    native: await createBenchClient(job.baseURL, { connections: 4 }),
    aiSdk: await createBenchClient(job.baseURL, { connections: 4 }),
    nativeProvider: await createBenchClient(job.baseURL, { connections: 4 }),
    aiSdkProvider: await createBenchClient(job.baseURL, { connections: 4 }),
    raw: await createBenchClient(job.baseURL, { connections: 4 }),
    rawAiSdk: await createBenchClient(job.baseURL, { connections: 4 }),
  } satisfies Record<Side, BenchClient>;
  const sides: Record<Side, (text: string) => Promise<LoopResult>> = {
    native: createActorloopLoop(benchOpenAIProvider(clients.native.client, options), options),
    aiSdk: createActorloopLoop(benchAiSdkProvider(clients.aiSdk, options), options),
    nativeProvider: createProviderLoop(benchOpenAIProvider(clients.nativeProvider.client, options), options),
    aiSdkProvider: createProviderLoop(benchAiSdkProvider(clients.aiSdkProvider, options), options),
    raw: createRawLoop(clients.raw.client, options),
    rawAiSdk: createAiSdkRawLoop(benchAiSdkModel(clients.rawAiSdk, options), options),
  };
  const measure = async (side: Side) => {
    const cpu0 = cpuNowUs();
    const wall0 = performance.now();
    const result = await sides[side]('Add the numbers, round after round.');
    const cpu = (cpuNowUs() - cpu0) / job.rounds;
    const wall = performance.now() - wall0;
    check(result, job.rounds, side);
    return { cpu, wall };
  };
  const order: Side[] = ['native', 'aiSdk', 'nativeProvider', 'aiSdkProvider', 'raw', 'rawAiSdk'];
  for (let i = 0; i < job.warmup; i++) for (const side of order) await measure(side);
  const samples = Object.fromEntries(order.map((side) => [side, { cpu: [] as number[], wall: [] as number[] }])) as Record<
    Side,
    { cpu: number[]; wall: number[] }
  >;
  const rotations = order.map((_, shift) => [...order.slice(shift), ...order.slice(0, shift)]);
  for (let i = 0; i < job.reps; i++) {
    // Interleaved, each side first as often as the others, so drift and order effects cancel.
    for (const side of rotations[i % rotations.length] as Side[]) {
      const { cpu, wall } = await measure(side);
      samples[side].cpu.push(cpu);
      samples[side].wall.push(wall);
    }
  }
  for (const client of Object.values(clients)) await client.close();
  const [native, aiSdk, nativeProvider, aiSdkProviderSide, raw, rawAiSdk] = order.map((side) =>
    summarizeSide(samples[side].cpu, samples[side].wall),
  ) as [S1SideResult, S1SideResult, S1SideResult, S1SideResult, S1SideResult, S1SideResult];
  const version = (
    JSON.parse(readFileSync(new URL('../node_modules/@ai-sdk/openai/package.json', import.meta.url), 'utf8')) as {
      version: string;
    }
  ).version;
  return {
    rounds: job.rounds,
    reps: job.reps,
    warmup: job.warmup,
    aiSdkOpenAI: version,
    native,
    aiSdk,
    nativeProvider,
    aiSdkProvider: aiSdkProviderSide,
    raw,
    rawAiSdk,
    ratio: aiSdk.cpuUsPerRound.median / native.cpuUsPerRound.median,
    ratioMean: aiSdk.cpuUsPerRound.mean / native.cpuUsPerRound.mean,
    ratioMin: aiSdk.cpuUsPerRound.min / native.cpuUsPerRound.min,
    ratioProvider: aiSdkProviderSide.cpuUsPerRound.median / nativeProvider.cpuUsPerRound.median,
    ratioFloor: rawAiSdk.cpuUsPerRound.median / raw.cpuUsPerRound.median,
    adapterUsPerRound:
      aiSdk.cpuUsPerRound.median - native.cpuUsPerRound.median - (rawAiSdk.cpuUsPerRound.median - raw.cpuUsPerRound.median),
  };
}

export async function s1AiSdk(server: WireServerHandle, options: { rounds: number; reps: number; warmup: number }): Promise<S1AiSdkResult> {
  await server.configure({ latencyMs: 0, rounds: options.rounds });
  await server.reset();
  const result = await runInWorker<Omit<S1AiSdkResult, 'serverRequests' | 'expectedRequests'>>({
    kind: 's1-ai-sdk',
    baseURL: server.baseURL,
    rounds: options.rounds,
    reps: options.reps,
    warmup: options.warmup,
  });
  const stats = await server.stats();
  return {
    ...result,
    serverRequests: stats.requests,
    expectedRequests: 6 * (options.reps + options.warmup) * (options.rounds + 1),
  };
}
