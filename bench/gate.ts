/**
 * The regression gate: one run's ratios (bench/gate-ratios.ts) against the committed baseline of
 * the same Node major (bench/baseline.ts). Pure: `npm run bench -- --gate` measures, this judges,
 * test/bench-gate.test.ts checks the judging.
 *
 * A ratio regresses when it moves in its bad direction (CPU or memory up, throughput down) by more
 * than its margin, relative to the baseline figure. What only one side has is skipped and said so:
 * a scenario not run, an N or transport the baseline does not hold.
 */
import type { Baseline } from './baseline.js';
import { type Direction, directionOf, type GateRatio, type GateScenario, kindOf, type RatioKind, scenarioOf } from './gate-ratios.js';
import { fmt } from './stats.js';

/**
 * Margins for a ratio the baseline has none for (relative change, 0.08 = 8 %): the Node 20 noise
 * run's figures rounded up (bench/README.md, "Gate"), so a baseline saved before its noise run still gates.
 */
export const defaultMargins: Record<RatioKind, number> = {
  cpu: 0.2,
  'cpu-mean': 0.1,
  'cpu-p10': 0.1,
  'rounds-per-second': 0.08,
  'peak-rss': 0.1,
};

export type Verdict = 'pass' | 'improved' | 'regressed' | 'failed-run' | 'skipped';

export type GateRow = {
  id: string;
  scenario: GateScenario | undefined;
  direction: Direction | undefined;
  baseline?: number;
  now?: number;
  /** now ÷ baseline − 1. */
  change?: number;
  margin?: number;
  verdict: Verdict;
  /** Why a row is skipped or failed. */
  note?: string;
};

export type GateReport =
  | { status: 'no-baseline'; message: string }
  | { status: 'pass' | 'fail' | 'nothing-compared'; rows: GateRow[]; skippedScenarios: string[] };

/**
 * Judges `ratios` (one run) against `baseline`; `ran` names the scenarios the run measured, so a
 * scenario left out is reported as not run rather than as missing figures.
 *
 * @example
 * const report = compareWithBaseline(readBaseline(baselinePath('bench', 20)), gateRatios(results), new Set(['S1', 'S2']));
 * process.exitCode = gateExitCode(report);
 */
export function compareWithBaseline(
  baseline: Baseline | undefined,
  ratios: readonly GateRatio[],
  ran: ReadonlySet<GateScenario>,
  options: { baselineFile?: string } = {},
): GateReport {
  if (!baseline)
    return {
      status: 'no-baseline',
      message: `no baseline${options.baselineFile ? ` at ${options.baselineFile}` : ''}: nothing to compare with. Make one on this machine with \`npm run bench -- --only S1,S2 --n 1000,5000 --save-baseline\` and commit it.`,
    };
  const rows: GateRow[] = [];
  const skippedScenarios: string[] = [];
  const now = new Map(ratios.map((ratio) => [ratio.id, ratio]));
  const scenarios: GateScenario[] = ['S1', 'S2'];
  for (const scenario of scenarios) {
    const stored = baseline.scenarios[scenario];
    if (!ran.has(scenario)) {
      if (stored) skippedScenarios.push(`${scenario}: not run`);
      continue;
    }
    if (!stored) {
      skippedScenarios.push(`${scenario}: not in the baseline`);
      continue;
    }
    for (const [id, before] of Object.entries(stored.ratios)) {
      const direction = directionOf(id);
      const kind = kindOf(id);
      const margin = baseline.margins[id] ?? (kind ? defaultMargins[kind] : undefined);
      const current = now.get(id);
      const base = { id, scenario, direction, baseline: before };
      if (!current || !direction || margin === undefined) {
        rows.push({ ...base, verdict: 'skipped', note: current ? 'unknown kind of ratio' : 'not measured in this run' });
        continue;
      }
      if (current.errors > 0 || !Number.isFinite(current.value)) {
        rows.push({
          ...base,
          now: current.value,
          margin,
          verdict: 'failed-run',
          note: `${current.errors} failed conversations: the ratio compares nothing`,
        });
        continue;
      }
      const change = current.value / before - 1;
      // Worse is up for CPU and memory, down for throughput.
      const worse = direction === 'lower-is-better' ? change : -change;
      const verdict: Verdict = worse > margin ? 'regressed' : worse < -margin ? 'improved' : 'pass';
      rows.push({ ...base, now: current.value, change, margin, verdict });
    }
  }
  for (const ratio of ratios) {
    const stored = baseline.scenarios[ratio.scenario];
    if (stored && !(ratio.id in stored.ratios))
      rows.push({
        id: ratio.id,
        scenario: scenarioOf(ratio.id),
        direction: ratio.direction,
        now: ratio.value,
        verdict: 'skipped',
        note: 'not in the baseline',
      });
  }
  const judged = rows.filter((row) => row.verdict !== 'skipped');
  const status =
    judged.length === 0
      ? 'nothing-compared'
      : judged.some((row) => row.verdict === 'regressed' || row.verdict === 'failed-run')
        ? 'fail'
        : 'pass';
  return { status, rows, skippedScenarios };
}

/**
 * 0 when every compared ratio held, 1 on a regression or a failed run, 2 when there was nothing to
 * compare (no baseline for this Node major, or no scenario in common): not a pass.
 *
 * @example
 * process.exitCode = gateExitCode(compareWithBaseline(undefined, [], new Set())); // 2
 */
export function gateExitCode(report: GateReport): 0 | 1 | 2 {
  if (report.status === 'pass') return 0;
  if (report.status === 'fail') return 1;
  return 2;
}

const percent = (value: number | undefined, signed = false) =>
  value === undefined ? '—' : `${signed && value > 0 ? '+' : ''}${fmt(value * 100, 1)} %`;

/**
 * The report as a markdown table: baseline, now, change, margin, verdict.
 *
 * @example
 * process.stdout.write(renderGate(report, 'bench/baseline/node-20.json'));
 */
export function renderGate(report: GateReport, baselineFile: string): string {
  if (report.status === 'no-baseline') return `### Gate — no baseline\n\n${report.message}\n`;
  const lines = [
    `### Gate — against ${baselineFile}`,
    '',
    '| ratio (actorloop ÷ raw) | better | baseline | now | change | margin | verdict |',
    '|---|---|---:|---:|---:|---:|---|',
  ];
  for (const row of report.rows) {
    const verdict = row.verdict === 'regressed' || row.verdict === 'failed-run' ? `**${row.verdict.toUpperCase()}**` : row.verdict;
    lines.push(
      `| ${row.id} | ${row.direction === 'higher-is-better' ? 'higher' : row.direction === 'lower-is-better' ? 'lower' : '?'} | ` +
        `${row.baseline === undefined ? '—' : fmt(row.baseline, 3)} | ${row.now === undefined ? '—' : fmt(row.now, 3)} | ${percent(row.change, true)} | ` +
        `${row.margin === undefined ? '—' : `±${percent(row.margin)}`} | ${verdict}${row.note ? ` (${row.note})` : ''} |`,
    );
  }
  lines.push('');
  for (const skipped of report.skippedScenarios) lines.push(`skipped ${skipped}`);
  const regressed = report.rows.filter((row) => row.verdict === 'regressed' || row.verdict === 'failed-run').length;
  const improved = report.rows.filter((row) => row.verdict === 'improved').length;
  lines.push(
    report.status === 'pass'
      ? `gate: pass${improved ? ` (${improved} ratio${improved > 1 ? 's' : ''} improved beyond the margin: save a new baseline with --save-baseline)` : ''}`
      : report.status === 'fail'
        ? `gate: FAIL — ${regressed} ratio${regressed > 1 ? 's' : ''} regressed beyond the margin or failed`
        : 'gate: nothing compared (no scenario of this run is in the baseline) — not a pass',
  );
  return `${lines.join('\n')}\n`;
}
