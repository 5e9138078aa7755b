/**
 * The committed baseline the gate compares with: `bench/baseline/node-<major>.json`, one per Node
 * major (V8 changes the ratios between majors), holding per scenario the ratios of the run that made
 * it and what that run was, the gate's margin per ratio and the noise run the margins came from.
 * Saving a scenario replaces that scenario only: saving S1 keeps the stored S2, and the other way round.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { GateRatio, GateScenario } from './gate-ratios.js';

/** What run made a scenario's ratios. */
export type BaselineRun = {
  date: string;
  commit: string;
  node: string;
  /** The bench flags that shape the measurement (reps, warm-up, rounds, N, transports). */
  flags: Record<string, unknown>;
  loadAverage: { start: number[]; end: number[] };
  cpus: number;
};

export type BaselineScenario = { run: BaselineRun; ratios: Record<string, number> };

/**
 * The noise run (bench/noise.ts) the margins came from. A run that measured only some ratios (S1
 * alone, say) keeps the spreads and margins of the others from the runs before it, which are
 * listed under `earlier` without their spreads.
 */
export type BaselineNoise = {
  measuredAt: string;
  node: string;
  k: number;
  settings: Record<string, unknown>;
  loadAverage: { min: number; mean: number; max: number };
  factor: number;
  floor: number;
  spreads: Record<string, { median: number; maxDeviation: number; range: number }>;
  margins: Record<string, number>;
  earlier?: Array<Omit<BaselineNoise, 'spreads' | 'margins' | 'earlier'>>;
};

export type Baseline = {
  nodeMajor: number;
  scenarios: Partial<Record<GateScenario, BaselineScenario>>;
  /** Relative change a ratio may make in its bad direction before the gate fails, per ratio id (0.08 = 8 %). */
  margins: Record<string, number>;
  noise?: BaselineNoise;
};

/**
 * @example
 * baselinePath('bench', 20); // 'bench/baseline/node-20.json'
 */
export function baselinePath(benchDir: string, nodeMajor: number): string {
  return path.join(benchDir, 'baseline', `node-${nodeMajor}.json`);
}

/**
 * The baseline in `file`, or `undefined` when there is none; a file that is not a baseline is an error naming it.
 *
 * @example
 * const baseline = readBaseline(baselinePath('bench', 20));
 */
export function readBaseline(file: string): Baseline | undefined {
  if (!existsSync(file)) return undefined;
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<Baseline> | null;
  if (
    !parsed ||
    typeof parsed.nodeMajor !== 'number' ||
    typeof parsed.scenarios !== 'object' ||
    parsed.scenarios === null ||
    typeof parsed.margins !== 'object' ||
    parsed.margins === null
  )
    throw new Error(`${file}: expected a bench baseline ({ nodeMajor, scenarios, margins }), got something else`);
  return parsed as Baseline;
}

/** @example writeBaseline(baselinePath('bench', 20), baseline); */
export function writeBaseline(file: string, baseline: Baseline): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(baseline, null, 2)}\n`);
}

/**
 * `existing` with the scenarios present in `ratios` replaced by this run's; other scenarios, margins and noise kept.
 * A ratio over failed conversations is refused: a baseline must compare working code.
 *
 * @example
 * const next = mergeBaseline(readBaseline(file), 20, gateRatios(results), run);
 */
export function mergeBaseline(existing: Baseline | undefined, nodeMajor: number, ratios: readonly GateRatio[], run: BaselineRun): Baseline {
  const failed = ratios.filter((ratio) => ratio.errors > 0 || !Number.isFinite(ratio.value));
  if (failed.length > 0)
    throw new Error(
      `not saving a baseline over failed runs: ${failed.map((ratio) => `${ratio.id} (${ratio.errors} failed conversations, ratio ${ratio.value})`).join(', ')}`,
    );
  const next: Baseline = {
    nodeMajor,
    scenarios: { ...existing?.scenarios },
    margins: { ...existing?.margins },
    ...(existing?.noise ? { noise: existing.noise } : {}),
  };
  for (const scenario of new Set(ratios.map((ratio) => ratio.scenario))) {
    next.scenarios[scenario] = {
      run,
      ratios: Object.fromEntries(ratios.filter((ratio) => ratio.scenario === scenario).map((ratio) => [ratio.id, ratio.value])),
    };
  }
  return next;
}

/**
 * `existing` (or an empty baseline) with the noise run's figures and margins; ratios kept.
 *
 * @example
 * writeBaseline(file, withNoise(readBaseline(file), 20, noise));
 */
export function withNoise(existing: Baseline | undefined, nodeMajor: number, noise: BaselineNoise): Baseline {
  return {
    nodeMajor,
    scenarios: { ...existing?.scenarios },
    margins: { ...existing?.margins, ...noise.margins },
    noise: mergedNoise(existing?.noise, noise),
  };
}

/** The newest noise run, over the spreads of the ratios it did not measure again (from the runs before it). */
function mergedNoise(before: BaselineNoise | undefined, noise: BaselineNoise): BaselineNoise {
  if (!before) return noise;
  const kept = Object.keys(before.spreads).filter((id) => !(id in noise.spreads));
  if (kept.length === 0) return noise;
  const { spreads: _spreads, margins: _margins, earlier, ...record } = before;
  return {
    ...noise,
    spreads: { ...before.spreads, ...noise.spreads },
    margins: { ...before.margins, ...noise.margins },
    earlier: [...(earlier ?? []), record],
  };
}
