import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { DatasetError } from '../testing/dataset-error.js';
import { evaluate } from '../testing/eval/evaluate.js';
import { evalNotRunExitCode } from './cli-failure.js';
import { CliUsageError } from './cli-usage-error.js';
import { loadEvalModule } from './eval-module.js';
import { evalProgress } from './eval-progress.js';
import { type EvalResults, evalReportHtml } from './eval-report-html.js';
import { evalTable } from './eval-table.js';
import type { EvalCommand } from './parse-arguments.js';
import type { CliEnvironment } from './run-command.js';

/**
 * `eval`'s exit code when nothing ran because what it was given is wrong — a flag, the module, its
 * dataset (a bad JSONL line, a bad item, no items), `--out` — each named on stderr.
 */
export const notRunExitCode = evalNotRunExitCode;
/** `eval`'s exit code when the mean is below `--threshold`. */
export const belowThresholdExitCode = 1;

/** The default `--out`: `eval-results/<time>` (colons left out: a folder name on every system). */
export const defaultOutDir = (startedAt: Date): string => join('eval-results', startedAt.toISOString().replace(/[:.]/g, '-'));

/**
 * The mean as the message about the threshold shows it: two decimals, or four when two would round it
 * up to the threshold it missed (`0.7996 < threshold 0.8`, never `0.80 < threshold 0.8`).
 */
function shownMean(mean: number, threshold: number): string {
  const short = mean.toFixed(2);
  return mean < threshold && Number(short) >= threshold ? mean.toFixed(4) : short;
}

/**
 * `actorloop eval <module>[#export]`: loads the module's `{ machine, dataset, scorers }`
 * (`loadEvalModule`), runs `evaluate` over the items with a progress bar on stderr, then prints the
 * table (or, with `--json`, the results) on stdout and writes `results.json` and `report.html` under
 * `--out`. Resolves with the exit code: 0 when the mean reaches `--threshold`, 1 below it, 2 when
 * nothing ran because what it was given is wrong — a dataset it cannot use (its bad line named), a
 * module that does not load, an `--out` it cannot create — and 130 on Ctrl-C, the items finished by
 * then written all the same. What is wrong with the flags or the module's exports is thrown as a
 * `CliUsageError`, which the command turns into exit 2 for `eval` too (`usageExitCodeOf`): a CI
 * tells a broken eval (2) from an agent below the threshold (1).
 *
 * @example
 * ```ts
 * process.exitCode = await evalCommand(parseArguments(['eval', './evals.ts', '--threshold', '0.8']) as EvalCommand, environment);
 * ```
 */
export async function evalCommand(
  command: EvalCommand,
  environment: CliEnvironment,
  cwd: string = process.cwd(),
  now: () => Date = () => new Date(),
): Promise<number> {
  const { stdout, stderr } = environment;
  let loaded: Awaited<ReturnType<typeof loadEvalModule>>;
  try {
    loaded = await loadEvalModule(command.module, cwd, command.dataset);
  } catch (error) {
    // The module's mistakes and the flags': the command prints them with eval's usage line, exit 2.
    if (CliUsageError.isInstance(error)) throw error;
    if (DatasetError.isInstance(error)) {
      // A file's error names `file line N`; an array's (`dataset[3]: …`) is the module's to fix.
      stderr.write(`actorloop: ${error.line === undefined ? `eval ${command.label}: "dataset": ` : ''}${error.message}\n`);
    } else {
      // The module threw as it loaded, or its default function did: the error names the module.
      stderr.write(`actorloop: ${error instanceof Error ? error.message : String(error)}\n`);
    }
    return notRunExitCode;
  }
  const { machine, items, scorers, datasetFile } = loaded;
  if (items.length === 0) {
    stderr.write(`actorloop: ${datasetFile ?? `eval ${command.label}: "dataset"`}: no items (one { "id", "input", "expected" } a line)\n`);
    return notRunExitCode;
  }
  const started = now();
  const out = resolve(cwd, command.out ?? defaultOutDir(started));
  // Made before the eval: a folder that cannot be written is found before any item is paid for.
  try {
    mkdirSync(out, { recursive: true });
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
    stderr.write(
      `actorloop: eval ${command.label}: cannot create the results folder ${relative(cwd, out) || out} (${reason}); nothing ran\n`,
    );
    return notRunExitCode;
  }
  const concurrency = command.concurrency ?? 4;
  stderr.write(
    `evaluating ${items.length} item${items.length === 1 ? '' : 's'} of ${datasetFile ?? "the module's dataset"} ` +
      `with ${scorers.map((scorer) => scorer.name).join(', ')}, ${concurrency} at a time\n`,
  );
  const progress = evalProgress(stderr, items.length);
  const abort = new AbortController();
  let interrupted = false;
  const stopInterrupt = environment.onInterrupt(() => {
    interrupted = true;
    abort.abort();
  });
  const budget = {
    ...(command.maxCostUsd === undefined ? {} : { maxCostUsd: command.maxCostUsd }),
    ...(command.maxTokens === undefined ? {} : { maxTokens: command.maxTokens }),
  };
  let report: Awaited<ReturnType<typeof evaluate>>;
  try {
    report = await evaluate({
      machine,
      dataset: items,
      scorers,
      concurrency,
      ...(Object.keys(budget).length > 0 ? { budget } : {}),
      ...(command.itemTimeoutMs === undefined ? {} : { itemTimeoutMs: command.itemTimeoutMs }),
      signal: abort.signal,
      onItem: progress.item,
    });
  } finally {
    stopInterrupt();
    progress.finish();
  }
  // A hair of float noise (0.1 + 0.7 …) does not fail a threshold the scores meet.
  const passed = report.mean + 1e-9 >= command.threshold;
  const results: EvalResults = {
    module: command.label,
    dataset: datasetFile ?? null,
    threshold: command.threshold,
    passed,
    startedAt: started.toISOString(),
    node: process.version,
    ...report,
  };
  writeFileSync(join(out, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(out, 'report.html'), evalReportHtml(results));
  if (command.json) stdout.write(`${JSON.stringify(results)}\n`);
  else stdout.write(evalTable(report, stdout.columns ?? 100));
  const shownOut = relative(cwd, out) || '.';
  stderr.write(`wrote ${join(shownOut, 'results.json')} and ${join(shownOut, 'report.html')}\n`);
  const notRun = report.items.filter((item) => item.error?.startsWith('not run:')).length;
  if (interrupted) {
    stderr.write(`interrupted (Ctrl-C): ${notRun} of ${report.items.length} items not run (each counts 0); the results hold the rest\n`);
    return 130;
  }
  if (report.stopped === 'budget') stderr.write(`the eval's budget was spent: ${notRun} items not run (each counts 0)\n`);
  if (!passed) {
    stderr.write(`mean ${shownMean(report.mean, command.threshold)} < threshold ${command.threshold}\n`);
    return belowThresholdExitCode;
  }
  return 0;
}
