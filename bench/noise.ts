/**
 * `npx tsx bench/noise.ts [--k 5] [--n 1000,5000] [--reps 50] [--warmup 60] [--transports fetch,node-http] [--scenarios S1,S2] [--s2-reps 3] [--factor 1.5] [--floor 0.1] [--write-margins] [--save-baseline] [--from noise.json]`
 *
 * Runs the gate's measurements (S1, and S2 at each N) K times against one wire server, the same
 * code each time, and reports how far each gated ratio moves between runs (bench/noise-spread.ts):
 * that spread × a safety factor is the gate's margin. `--write-margins` stores the margins and the
 * noise figures in bench/baseline/node-<major>.json (the ratios there are left alone); `--save-baseline`
 * stores each ratio's median over the K runs as the baseline, so the gate compares a run with the
 * typical run rather than with one that happened to be lucky or unlucky. `--from`
 * re-reads the per-run ratios of an earlier noise run instead of measuring. The load average is
 * sampled every 5 s while it runs: noise on a busy machine is part of what the margin must cover.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { baselinePath, mergeBaseline, readBaseline, writeBaseline, withNoise } from './baseline.js';
import { describeCommit } from './gate-cli.js';
import type { Transport } from './client.js';
import { type GateRatio, gateRatios } from './gate-ratios.js';
import { marginFrom, type Spread, spreadOf } from './noise-spread.js';
import { s1 } from './s1-overhead.js';
import { s2 } from './s2-concurrency.js';
import { fmt } from './stats.js';
import { startWireServerProcess } from './wire.js';

export type NoiseRun = { index: number; loadAverageAtStart: number[]; loadAverageAtEnd: number[]; ratios: GateRatio[] };
export type NoiseFile = {
  startedAt: string;
  node: string;
  /** The commit measured (bench/gate-cli.ts `describeCommit`). */
  commit?: string;
  /** The `openai` SDK both sides ran on (CI's Node 24 pass runs the newest major). */
  openai?: string;
  settings: {
    k: number;
    /** What each run measured (absent: S1 and S2). */
    scenarios?: string[];
    ns: number[];
    reps: number;
    warmup: number;
    s1Rounds: number;
    s2Rounds: number;
    s2Reps?: number;
    transports: Transport[];
  };
  /** 1-minute load average every 5 s during the runs. */
  loadSamples: number[];
  runs: NoiseRun[];
};

const argv = process.argv.slice(2);
const value = (name: string) => {
  const index = argv.indexOf(name);
  return index === -1 ? undefined : argv[index + 1];
};
/** The installed `openai` version (its package.json is not in the package's exports, so it is read from disk). */
function sdkVersion(): string {
  try {
    return (JSON.parse(readFileSync(path.join(here, '..', 'node_modules', 'openai', 'package.json'), 'utf8')) as { version: string })
      .version;
  } catch {
    return 'unknown';
  }
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const here = path.dirname(fileURLToPath(import.meta.url));

async function measure(): Promise<NoiseFile> {
  const k = Number(value('--k') ?? 5);
  const ns = (value('--n') ?? '1000,5000').split(',').map(Number);
  const reps = Number(value('--reps') ?? 50);
  const warmup = Number(value('--warmup') ?? 60);
  const transports = (value('--transports') ?? 'fetch,node-http').split(',') as Transport[];
  // S1 alone takes a minute and a half for K = 5; with S2 a run takes minutes.
  const scenarios = new Set((value('--scenarios') ?? 'S1,S2').split(',').map((name) => name.trim().toUpperCase()));
  if (![...scenarios].every((name) => name === 'S1' || name === 'S2') || scenarios.size === 0)
    throw new Error(`--scenarios: expected S1 and/or S2, got ${value('--scenarios')}`);
  // As the gate measures S2: the best of this many runs (npm run bench -- --gate uses 3).
  const s2Reps = Number(value('--s2-reps') ?? 3);
  for (const [name, number] of [
    ['--k', k],
    ['--reps', reps],
    ['--warmup', warmup],
    ['--s2-reps', s2Reps],
    ...ns.map((n) => ['--n', n] as const),
  ] as const)
    if (!Number.isInteger(number) || number < 1) throw new Error(`${name}: expected a positive integer, got ${number}`);
  const file: NoiseFile = {
    startedAt: new Date().toISOString(),
    node: process.version,
    commit: describeCommit(),
    openai: sdkVersion(),
    settings: { k, scenarios: [...scenarios], ns, reps, warmup, s1Rounds: 20, s2Rounds: 5, s2Reps, transports },
    loadSamples: [os.loadavg()[0] as number],
    runs: [],
  };
  const sampler = setInterval(() => file.loadSamples.push(os.loadavg()[0] as number), 5000);
  const server = await startWireServerProcess();
  try {
    for (let index = 0; index < k; index++) {
      const loadAverageAtStart = os.loadavg();
      log(
        `noise run ${index + 1}/${k}: ${scenarios.has('S1') ? `S1 (${reps} reps after ${warmup})` : ''}` +
          `${scenarios.has('S2') ? ` S2 at N = ${ns.join(', ')}` : ''}; load ${fmt(loadAverageAtStart[0] ?? 0, 2)}`,
      );
      const s1Result = scenarios.has('S1') ? await s1(server, { rounds: 20, reps, warmup }) : undefined;
      const s2Result = scenarios.has('S2') ? await s2(server, { ns, rounds: 5, latencyMs: 25, transports, reps: s2Reps, log }) : undefined;
      const ratios = gateRatios({ ...(s1Result ? { s1: s1Result } : {}), ...(s2Result ? { s2: s2Result } : {}) });
      file.runs.push({ index, loadAverageAtStart, loadAverageAtEnd: os.loadavg(), ratios });
      log(`  ${ratios.map((r) => `${r.id} ${fmt(r.value, 3)}`).join(', ')}`);
      // Written after every run, so a long measurement that is stopped still leaves its runs.
      writeFileSync(outFile, JSON.stringify(file, null, 2));
    }
  } finally {
    clearInterval(sampler);
    await server.close();
  }
  return file;
}

const outFile = path.join(here, 'results', `noise-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
const from = value('--from');
const noise: NoiseFile = from ? (JSON.parse(readFileSync(from, 'utf8')) as NoiseFile) : await measure();
const factor = Number(value('--factor') ?? 1.5);
// A few runs' range under-states the spread: a same-code gate run once moved a peak-RSS ratio by
// 11.7 % against a four-run margin of 11 %. No margin is set below 10 %.
const floor = Number(value('--floor') ?? 0.1);

const ids = [...new Set(noise.runs.flatMap((run) => run.ratios.map((ratio) => ratio.id)))];
const measured = new Set(ids.map((id) => id.slice(0, id.indexOf('/'))));
const spreads: Record<string, Spread> = {};
const margins: Record<string, number> = {};
for (const id of ids) {
  const values = noise.runs.flatMap((run) =>
    run.ratios.filter((ratio) => ratio.id === id && ratio.errors === 0).map((ratio) => ratio.value),
  );
  if (values.length < 2) continue;
  spreads[id] = spreadOf(values);
  margins[id] = marginFrom(spreads[id], { factor, floor });
}
const load = noise.loadSamples;
const loadSummary = {
  min: Math.min(...load),
  mean: load.reduce((sum, v) => sum + v, 0) / load.length,
  max: Math.max(...load),
};
const lines = [
  `## noise — node ${noise.node}, K = ${noise.runs.length}, ` +
    [
      ...(measured.has('S1') ? [`S1 ${noise.settings.reps} reps after ${noise.settings.warmup}`] : []),
      ...(measured.has('S2') ? [`S2 at N = ${noise.settings.ns.join(', ')} (${noise.settings.transports.join(', ')})`] : []),
    ].join(', '),
  '',
  `load average (1 min) during the runs: min ${fmt(loadSummary.min, 2)}, mean ${fmt(loadSummary.mean, 2)}, max ${fmt(loadSummary.max, 2)} on ${os.cpus().length} CPUs`,
  '',
  `| ratio | runs | median | min – max | max deviation | range (max − min) ÷ median | margin (range × ${factor}, ≥ ${fmt(floor * 100, 0)} %) |`,
  '|---|---:|---:|---|---:|---:|---:|',
  ...Object.entries(spreads).map(
    ([id, s]) =>
      `| ${id} | ${s.runs} | ${fmt(s.median, 3)} | ${fmt(s.min, 3)} – ${fmt(s.max, 3)} | ${fmt(s.maxDeviation * 100, 1)} % | ${fmt(s.range * 100, 1)} % | ${fmt((margins[id] ?? 0) * 100, 1)} % |`,
  ),
];
process.stdout.write(`${lines.join('\n')}\n`);
if (!from) log(`wrote ${path.relative(process.cwd(), outFile)}`);

if (argv.includes('--write-margins')) {
  const major = Number(noise.node.slice(1).split('.')[0]);
  const file = baselinePath(here, major);
  const existing = readBaseline(file);
  writeBaseline(
    file,
    withNoise(existing, major, {
      measuredAt: noise.startedAt,
      node: noise.node,
      k: noise.runs.length,
      settings: noise.settings,
      loadAverage: loadSummary,
      factor,
      floor,
      spreads: Object.fromEntries(
        Object.entries(spreads).map(([id, s]) => [id, { median: s.median, maxDeviation: s.maxDeviation, range: s.range }]),
      ),
      margins,
    }),
  );
  log(`margins written to ${path.relative(process.cwd(), file)}`);
}

if (argv.includes('--save-baseline')) {
  const major = Number(noise.node.slice(1).split('.')[0]);
  const file = baselinePath(here, major);
  const template = noise.runs[0]?.ratios ?? [];
  // Each ratio's median over the runs (runs with failed conversations left out, as in the spreads).
  const medians: GateRatio[] = template.flatMap((ratio) => {
    const spread = spreads[ratio.id];
    return spread ? [{ ...ratio, value: spread.median, errors: 0 }] : [];
  });
  const run = {
    date: noise.startedAt,
    commit: noise.commit ?? 'unknown',
    node: noise.node,
    flags: {
      ...noise.settings,
      ...(noise.openai ? { openai: noise.openai } : {}),
      statistic: `median of ${noise.runs.length} runs (bench/noise.ts)`,
    },
    loadAverage: { start: [noise.loadSamples[0] ?? 0], end: [noise.loadSamples.at(-1) ?? 0] },
    cpus: os.cpus().length,
  };
  writeBaseline(file, mergeBaseline(readBaseline(file), major, medians, run));
  log(`baseline (medians of ${noise.runs.length} runs) written to ${path.relative(process.cwd(), file)}`);
}
