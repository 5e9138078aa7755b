/**
 * The ratios the gate (`npm run bench -- --gate`) watches, read from one run's results: S1's CPU
 * per round actorloop ÷ raw (streaming and not; on the SDK's default fetch and on node:http) and
 * S2's rounds/s and peak RSS actorloop ÷ raw per N and transport. Ratios within one run, never
 * absolute µs: the machine and its load change between runs, the ratio much less.
 */
import type { S1Result } from './s1-overhead.js';
import type { S2RunResult } from './s2-concurrency.js';

/** Which way a ratio gets worse: CPU and memory going up, throughput going down. */
export type Direction = 'lower-is-better' | 'higher-is-better';
export type GateScenario = 'S1' | 'S2';

/** One ratio of one run, named by a stable id such as `S2/5000/fetch/rounds-per-second`. */
export type GateRatio = {
  id: string;
  scenario: GateScenario;
  direction: Direction;
  value: number;
  /** Failed conversations behind the ratio (S2): a ratio over failures compares nothing. */
  errors: number;
};

/** The part of a bench run the gate reads (the shape `bench/index.ts` writes under `results`). */
export type GateInput = { s1?: S1Result; s2?: S2RunResult[] };

const kinds = {
  cpu: 'lower-is-better',
  'cpu-mean': 'lower-is-better',
  'cpu-p10': 'lower-is-better',
  'rounds-per-second': 'higher-is-better',
  'peak-rss': 'lower-is-better',
} as const satisfies Record<string, Direction>;
export type RatioKind = keyof typeof kinds;

/** The kind is the id's last segment; the direction follows from it, so a baseline stores plain numbers. */
export function kindOf(id: string): RatioKind | undefined {
  const kind = id.slice(id.lastIndexOf('/') + 1);
  return kind in kinds ? (kind as RatioKind) : undefined;
}

export function directionOf(id: string): Direction | undefined {
  const kind = kindOf(id);
  return kind ? kinds[kind] : undefined;
}

export function scenarioOf(id: string): GateScenario | undefined {
  const head = id.slice(0, id.indexOf('/'));
  return head === 'S1' || head === 'S2' ? head : undefined;
}

/**
 * The gate's ratios in `results`: S1 uses the medians the table prints in bold (`actorloop / raw`),
 * and on node:http actorloop ÷ raw on the same transport; S2 pairs actorloop with raw per N and transport.
 *
 * @example
 * const ratios = gateRatios(JSON.parse(readFileSync('bench/results/2026-12-04T18-28-55-000Z.json', 'utf8')).results);
 * // [{ id: 'S1/stream/fetch/cpu', value: 1.44, … }, { id: 'S2/5000/fetch/rounds-per-second', value: 0.79, … }, …]
 */
export function gateRatios(results: GateInput): GateRatio[] {
  const out: GateRatio[] = [];
  const push = (id: string, value: number, errors = 0) => {
    const direction = directionOf(id);
    const scenario = scenarioOf(id);
    if (direction && scenario) out.push({ id, scenario, direction, value, errors });
  };
  for (const mode of results.s1?.modes ?? []) {
    push(`S1/${mode.mode}/fetch/cpu`, mode.actorloop.cpuUsPerRound.median / mode.raw.cpuUsPerRound.median);
    // Ratio of means: counts every young-generation GC a side causes, which a median can skip (bimodal samples).
    push(`S1/${mode.mode}/fetch/cpu-mean`, mode.actorloop.cpuUsPerRound.mean / mode.raw.cpuUsPerRound.mean);
    // Ratio of 10th percentiles: the conversations no scavenge landed in, the steadiest S1 figure
    // (2–7 % apart between runs where medians were 3–11 %): the engine's own per-round work.
    push(`S1/${mode.mode}/fetch/cpu-p10`, mode.actorloop.cpuUsPerRound.p10 / mode.raw.cpuUsPerRound.p10);
    // Older result files have no node:http sides; the gate skips what a run lacks.
    if (mode.actorloopNodeHttp && mode.rawNodeHttp) {
      push(`S1/${mode.mode}/node-http/cpu`, mode.actorloopNodeHttp.cpuUsPerRound.median / mode.rawNodeHttp.cpuUsPerRound.median);
      push(`S1/${mode.mode}/node-http/cpu-mean`, mode.actorloopNodeHttp.cpuUsPerRound.mean / mode.rawNodeHttp.cpuUsPerRound.mean);
      push(`S1/${mode.mode}/node-http/cpu-p10`, mode.actorloopNodeHttp.cpuUsPerRound.p10 / mode.rawNodeHttp.cpuUsPerRound.p10);
    }
  }
  const s2 = results.s2 ?? [];
  for (const actorloop of s2) {
    if (actorloop.side !== 'actorloop') continue;
    const raw = s2.find((row) => row.side === 'raw' && row.n === actorloop.n && row.transport === actorloop.transport);
    if (!raw) continue;
    const errors = actorloop.errors + raw.errors;
    const at = `S2/${actorloop.n}/${actorloop.transport}`;
    push(`${at}/rounds-per-second`, actorloop.roundsPerSecond / raw.roundsPerSecond, errors);
    push(`${at}/peak-rss`, actorloop.peakRssBytes / raw.peakRssBytes, errors);
  }
  return out;
}
