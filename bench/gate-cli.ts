/**
 * The `--gate` and `--save-baseline` ends of `npm run bench` (bench/index.ts): which S2 figures a
 * gate run measures when not told (those in the baseline), and what happens after a run — judge it
 * against the baseline of this Node major, save its ratios into that baseline, or both.
 */
import { execSync } from 'node:child_process';
import path from 'node:path';
import { type Baseline, baselinePath, mergeBaseline, readBaseline, writeBaseline } from './baseline.js';
import type { Transport } from './client.js';
import { compareWithBaseline, gateExitCode, renderGate } from './gate.js';
import { type GateInput, type GateScenario, gateRatios } from './gate-ratios.js';

export const nodeMajorOf = (version: string): number => Number(version.replace(/^v/, '').split('.')[0]);

/**
 * The N values and transports of the baseline's S2 ratios: what `--gate` runs when `--n` and
 * `--transports` are not given (measuring an N the baseline lacks would compare nothing).
 *
 * @example
 * s2Defaults(baseline); // { ns: [1000, 5000], transports: ['fetch', 'node-http'] }
 */
export function s2Defaults(baseline: Baseline | undefined): { ns: number[]; transports: Transport[] } | undefined {
  const ids = Object.keys(baseline?.scenarios.S2?.ratios ?? {});
  if (ids.length === 0) return undefined;
  const parts = ids.map((id) => id.split('/'));
  const ns = [...new Set(parts.map((part) => Number(part[1])))].filter((n) => Number.isInteger(n) && n > 0).sort((a, b) => a - b);
  const transports = [...new Set(parts.map((part) => part[2]))].filter(
    (transport): transport is Transport => transport === 'fetch' || transport === 'node-http',
  );
  return ns.length > 0 && transports.length > 0 ? { ns, transports } : undefined;
}

/** The gated scenarios a run measured. */
export function scenariosIn(results: GateInput): Set<GateScenario> {
  return new Set<GateScenario>([...(results.s1 ? ['S1' as const] : []), ...(results.s2 ? ['S2' as const] : [])]);
}

/** What run produced `results`, for the baseline's record. */
export type RunRecord = {
  date: string;
  node: string;
  commit: string;
  cpus: number;
  loadAverage: { start: number[]; end: number[] };
  s1Flags: Record<string, unknown>;
  s2Flags: Record<string, unknown>;
};

const log = (line: string) => process.stderr.write(`${line}\n`);

/** The commit, marked when the work tree differs from it (a baseline of uncommitted code says so). */
export function describeCommit(): string {
  try {
    const commit = execSync('git rev-parse --short HEAD').toString().trim();
    const dirty = execSync('git status --porcelain --untracked-files=no -- src bench').toString().trim() !== '';
    return dirty ? `${commit}+uncommitted` : commit;
  } catch {
    return 'unknown';
  }
}

/**
 * After a run: with `gate`, prints the gate table and returns its exit code; with `save`, merges
 * the run's S1 / S2 ratios into `bench/baseline/node-<major>.json`. Returns the process exit code.
 *
 * @example
 * process.exitCode = afterRun(results, new Set(['S1', 'S2']), record, { gate: true, save: false, benchDir: 'bench' });
 */
export function afterRun(
  results: GateInput,
  ran: ReadonlySet<GateScenario>,
  record: RunRecord,
  options: { gate: boolean; save: boolean; benchDir: string; baselineFile?: string },
): number {
  const major = nodeMajorOf(record.node);
  const file = options.baselineFile ?? baselinePath(options.benchDir, major);
  const shown = path.relative(process.cwd(), file);
  const baseline = readBaseline(file);
  const ratios = gateRatios(results);
  let code = 0;
  if (options.gate) {
    const report = compareWithBaseline(baseline, ratios, ran, { baselineFile: shown });
    process.stdout.write(`\n${renderGate(report, shown)}`);
    code = gateExitCode(report);
  }
  if (options.save) {
    const saved = ratios.filter((ratio) => ran.has(ratio.scenario));
    if (saved.length === 0) {
      log(`--save-baseline: this run measured neither S1 nor S2; ${shown} left as it was`);
      return code || 2;
    }
    const run = (flags: Record<string, unknown>) => ({
      date: record.date,
      commit: record.commit,
      node: record.node,
      flags,
      loadAverage: record.loadAverage,
      cpus: record.cpus,
    });
    let next = baseline;
    for (const scenario of ['S1', 'S2'] as const) {
      const ofScenario = saved.filter((ratio) => ratio.scenario === scenario);
      if (ofScenario.length > 0) next = mergeBaseline(next, major, ofScenario, run(scenario === 'S1' ? record.s1Flags : record.s2Flags));
    }
    if (next) writeBaseline(file, next);
    log(`--save-baseline: ${[...new Set(saved.map((ratio) => ratio.scenario))].join(' and ')} written to ${shown}`);
  }
  return code;
}
