/**
 * Turns a measured run (`ACTORLOOP_TEST_TIMINGS=<file> vitest run`, written by
 * test/support/timing-reporter.ts) into what the repository keeps of it: `test/support/timings.json`,
 * the order in which the next runs start their files (test/support/longest-first-sequencer.ts), and
 * the table "Where the suite's time goes" in CONTRIBUTING.md. `npm run test:timings` runs the suite and this.
 *
 *   tsx scripts/test-timings.ts <run.json>
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CommittedTimings } from '../test/support/longest-first-sequencer.js';
import { outsideReach } from '../test/support/test-kinds.js';
import type { RunTiming } from '../test/support/timing-reporter.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const start = '<!-- test-timings:start -->';
const end = '<!-- test-timings:end -->';

/** How many files the table names; the rest are summed in one line. */
const named = 25;

/** The committed form of a run: files by project, longest first, rounded. */
export function committedTimings(run: RunTiming, measured: string): CommittedTimings {
  return {
    measured,
    files: [...run.files]
      .sort((a, b) => b.wallSeconds - a.wallSeconds || a.file.localeCompare(b.file))
      .map(({ project, file, wallSeconds, cpuSeconds }) => ({
        project,
        file,
        wallSeconds: Math.round(wallSeconds * 10) / 10,
        ...(cpuSeconds === undefined ? {} : { cpuSeconds: Math.round(cpuSeconds * 10) / 10 }),
      })),
  };
}

/** CONTRIBUTING.md's table: the files that cost the most CPU, what each reaches beyond its process, and the rest in one line. */
export function timingsTable(run: RunTiming, measured: string, reach: (file: string) => string[]): string {
  const files = [...run.files].sort((a, b) => (b.cpuSeconds ?? 0) - (a.cpuSeconds ?? 0) || a.file.localeCompare(b.file));
  const cpu = (seconds: number | undefined) => (seconds === undefined ? '—' : seconds.toFixed(1));
  const rows = files
    .slice(0, named)
    .map(
      (file) =>
        `| \`${file.file}\` | ${file.project} | ${file.tests} | ${file.wallSeconds.toFixed(1)} | ${cpu(file.cpuSeconds)} | ${reach(file.file).join(', ') || 'its own process'} |`,
    );
  const rest = files.slice(named);
  const restCpu = rest.reduce((sum, file) => sum + (file.cpuSeconds ?? 0), 0);
  const tests = run.files.reduce((sum, file) => sum + file.tests, 0);
  const machine =
    run.machineCpuSeconds === undefined ? '' : `, the machine's CPU ${run.machineCpuSeconds.toFixed(0)} s on ${run.cores} cores`;
  return [
    `Measured ${measured}: ${run.files.length} files, ${tests} tests, ${run.wallSeconds.toFixed(0)} s${machine}.`,
    '',
    '| file | project | tests | wall s | CPU s | reaches |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    `| the other ${rest.length} files | | ${rest.reduce((sum, file) => sum + file.tests, 0)} | | ${restCpu.toFixed(1)} | |`,
  ].join('\n');
}

/** `text` with what stands between the two markers replaced by `table`. */
export function withTable(text: string, table: string): string {
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`CONTRIBUTING.md has no ${start} … ${end} section to write the table into`);
  return `${text.slice(0, from + start.length)}\n${table}\n${text.slice(to)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const source = process.argv[2];
  if (!source) throw new Error('usage: tsx scripts/test-timings.ts <run.json> (written by ACTORLOOP_TEST_TIMINGS=<run.json> vitest run)');
  const run = JSON.parse(readFileSync(source, 'utf8')) as RunTiming;
  const workers = [...new Set(Object.values(run.maxWorkers))].join('/');
  const measured = `${new Date().toISOString().slice(0, 10)} on Node ${process.versions.node}, ${run.cores ?? '?'} cores, ${workers} workers`;
  writeFileSync(join(root, 'test/support/timings.json'), `${JSON.stringify(committedTimings(run, measured), null, 2)}\n`);
  const contributing = join(root, 'CONTRIBUTING.md');
  const table = timingsTable(run, measured, (file) => outsideReach(join(root, file), root));
  writeFileSync(contributing, withTable(readFileSync(contributing, 'utf8'), table));
  console.log(`wrote test/support/timings.json (${run.files.length} files) and the table in CONTRIBUTING.md`);
}
