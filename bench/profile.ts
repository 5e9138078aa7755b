/**
 * CPU profile of S1's actorloop side (or the raw side, or the minimal statechart loop): a worker
 * started with `--cpu-prof` runs the S1 conversation (server latency 0) many times, one after
 * another; the `.cpuprofile` is then summarised as the top functions by self time, with their
 * share of all samples and of the non-idle samples.
 */
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { createBenchClient } from './client.js';
import { createActorloopLoop } from './actorloop-loop.js';
import { benchAiSdkProvider } from './s1-ai-sdk.js';
import { sideLoop } from './side-loop.js';
import type { WireServerHandle } from './wire.js';
import { runInWorker, type Job, type ProfileSide } from './worker-process.js';

export type ProfileRow = { fn: string; where: string; selfMs: number; pct: number; pctNonIdle: number };
export type ProfileResult = {
  side: ProfileSide;
  file: string;
  totalMs: number;
  idleMs: number;
  rows: ProfileRow[];
  byFile: Array<{ where: string; selfMs: number; pctNonIdle: number }>;
  byCategory: Array<{ where: string; selfMs: number; pctNonIdle: number }>;
};

/** Who owns a sample: the engine (src, xstate, zod), the SDK, the HTTP stack, the runtime. */
function categoryOf(url: string, functionName: string): string {
  if (!url) {
    if (functionName === 'writev' || functionName === 'writeUtf8String' || functionName === 'writeBuffer') return 'socket writes (syscall)';
    if (functionName === '(garbage collector)') return 'GC';
    if (functionName === '(idle)') return 'idle';
    if (functionName === 'runMicrotasks') return 'microtask queue (native)';
    if (functionName === '(program)') return '(program)';
    return 'native (other)';
  }
  if (url.includes('/src/providers/ai-sdk/')) return 'actorloop/ai-sdk adapter';
  if (url.includes('/src/')) return 'actorloop src';
  if (url.includes('node_modules/@ai-sdk/')) return 'AI SDK packages';
  if (url.includes('node_modules/xstate/')) return 'xstate';
  if (url.includes('node_modules/zod/') || url.includes('node_modules/ajv/')) return 'zod / ajv';
  if (url.includes('node_modules/openai/')) return 'openai SDK';
  if (url.includes('deps/undici')) return 'undici (fetch)';
  if (url.includes('/bench/')) return 'bench harness';
  if (url.startsWith('node:')) return 'node internals (streams, events, abort, timers)';
  return 'other';
}

export async function runProfileJob(job: Extract<Job, { kind: 'profile' }>): Promise<{ conversations: number; steadyFromUs: number }> {
  const client = await createBenchClient(job.baseURL, { connections: 4 });
  const options = { model: 'bench-model', stream: job.stream, maxRounds: job.rounds };
  const run =
    job.side === 'ai-sdk' ? createActorloopLoop(benchAiSdkProvider(client, options), options) : sideLoop(job.side, client.client, options);
  // Warm-up (module loading, JIT) is left out of the summary: samples before this instant are skipped.
  for (let i = 0; i < 10; i++) await run('warm-up');
  const steadyFromUs = Number(process.hrtime.bigint() / 1000n);
  for (let i = 0; i < job.conversations; i++) {
    const result = await run('Add the numbers, round after round.');
    if (!result.ok) throw new Error(`profile run failed: ${result.error}`);
  }
  await client.close();
  return { conversations: job.conversations, steadyFromUs };
}

type CpuProfile = {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number } }>;
  startTime: number;
  samples: number[];
  timeDeltas: number[];
};

function shortUrl(url: string): string {
  const clean = url.replace(/^file:\/\//, '');
  const nm = clean.lastIndexOf('node_modules/');
  if (nm !== -1) return clean.slice(nm + 'node_modules/'.length);
  const src = clean.indexOf('/src/');
  if (src !== -1) return clean.slice(src + 1);
  const bench = clean.indexOf('/bench/');
  if (bench !== -1) return clean.slice(bench + 1);
  return clean;
}

/** Self time per function; samples taken before `fromUs` (V8's monotonic clock, as `process.hrtime`) are skipped. */
export function summarizeCpuProfile(file: string, top = 15, fromUs = 0): Omit<ProfileResult, 'side' | 'file'> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, { fn: string; where: string; us: number }>();
  const byFile = new Map<string, number>();
  const byCategory = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    at += delta;
    if (at < fromUs) return;
    const node = byId.get(id);
    if (!node) return;
    totalUs += delta;
    const { functionName, url, lineNumber, columnNumber } = node.callFrame;
    if (functionName === '(idle)') idleUs += delta;
    const where = url ? `${shortUrl(url)}:${lineNumber + 1}:${columnNumber + 1}` : '';
    const key = `${functionName}|${where}`;
    const entry = self.get(key) ?? { fn: functionName || '(anonymous)', where, us: 0 };
    entry.us += delta;
    self.set(key, entry);
    const fileKey = url ? shortUrl(url) : functionName;
    byFile.set(fileKey, (byFile.get(fileKey) ?? 0) + delta);
    const category = categoryOf(url, functionName);
    byCategory.set(category, (byCategory.get(category) ?? 0) + delta);
  });
  const nonIdle = Math.max(1, totalUs - idleUs);
  const rows = [...self.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, top)
    .map((entry) => ({
      fn: entry.fn,
      where: entry.where,
      selfMs: entry.us / 1000,
      pct: (100 * entry.us) / totalUs,
      pctNonIdle: entry.fn === '(idle)' ? 0 : (100 * entry.us) / nonIdle,
    }));
  const files = [...byFile.entries()]
    .filter(([where]) => where !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([where, us]) => ({ where, selfMs: us / 1000, pctNonIdle: (100 * us) / nonIdle }));
  const categories = [...byCategory.entries()]
    .filter(([where]) => where !== 'idle')
    .sort((a, b) => b[1] - a[1])
    .map(([where, us]) => ({ where, selfMs: us / 1000, pctNonIdle: (100 * us) / nonIdle }));
  return { totalMs: totalUs / 1000, idleMs: idleUs / 1000, rows, byFile: files, byCategory: categories };
}

export async function profileS1(
  server: WireServerHandle,
  options: { side: ProfileSide; rounds: number; conversations: number; stream: boolean; dir: string },
): Promise<ProfileResult> {
  await server.configure({ latencyMs: 0, rounds: options.rounds });
  mkdirSync(options.dir, { recursive: true });
  const before = new Set(readdirSync(options.dir));
  const { steadyFromUs } = await runInWorker<{ steadyFromUs: number }>(
    {
      kind: 'profile',
      baseURL: server.baseURL,
      side: options.side,
      rounds: options.rounds,
      conversations: options.conversations,
      stream: options.stream,
    },
    ['--cpu-prof', `--cpu-prof-dir=${options.dir}`, '--cpu-prof-interval=100'],
  );
  // One profile per thread (the module-hooks thread writes one too): the main thread's is the largest.
  const created = readdirSync(options.dir)
    .filter((name) => name.endsWith('.cpuprofile') && !before.has(name))
    .sort((a, b) => statSync(path.join(options.dir, b)).size - statSync(path.join(options.dir, a)).size);
  const file = created[0];
  if (!file) throw new Error('no .cpuprofile was written');
  const full = path.join(options.dir, file);
  return { side: options.side, file: full, ...summarizeCpuProfile(full, 15, steadyFromUs) };
}
