import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import type { AnyStateMachine } from 'xstate';
import { checkDataset, type EvalItem, parseDataset } from '../testing/eval/eval-dataset.js';
import type { Scorer } from '../testing/eval/scorer.js';
import { isRecord } from '../util/is-record.js';
import { CliUsageError } from './cli-usage-error.js';
import { describeExports, importModule, isStateMachine, type ModuleSpec } from './machine-module.js';

/** An eval's module loaded: its machine, its items (from the module or `--dataset`) and its scorers. */
export type LoadedEval = {
  machine: AnyStateMachine;
  items: EvalItem[];
  /** The JSONL file the items came from, as messages name it (relative to the current directory); absent for the module's array. */
  datasetFile: string | undefined;
  scorers: Scorer[];
  /** The module as given (`./evals.ts#capitals`). */
  label: string;
};

/** What the module is to give, in the words of every error about it. */
const expected =
  'expected { machine, dataset, scorers }: named exports, a default export object with those keys, or a default function of no arguments that returns one';

const keys = ['machine', 'dataset', 'scorers'] as const;

/** A value in words for an error: `a function`, `an array of 0`, `"cases.jsonl"`. */
function described(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : 'an array';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

/** The export that holds `{ machine, dataset, scorers }`: the one named, else the named exports themselves, else `default`. */
async function evalObjectOf(exports: Record<string, unknown>, spec: ModuleSpec, what: string): Promise<Record<string, unknown>> {
  let value: unknown;
  let named: string;
  if (spec.exportName !== undefined) {
    if (!(spec.exportName in exports) || exports[spec.exportName] === undefined)
      throw new CliUsageError(`${what}: no export "${spec.exportName}" (${describeExports(exports)}); ${expected}`);
    value = exports[spec.exportName];
    named = `export "${spec.exportName}"`;
  } else if (keys.some((key) => exports[key] !== undefined)) {
    return exports;
  } else if (exports.default !== undefined) {
    value = exports.default;
    named = 'its default export';
  } else {
    throw new CliUsageError(`${what}: ${describeExports(exports)}, no machine, dataset or scorers; ${expected}`);
  }
  if (typeof value === 'function') {
    if (value.length > 0)
      throw new CliUsageError(`${what}: ${named} is a function of ${value.length} argument${value.length === 1 ? '' : 's'}; ${expected}`);
    try {
      value = await (value as () => unknown)();
    } catch (error) {
      throw new Error(`${what}: ${named} threw: ${error instanceof Error ? error.message : String(error)}`);
    }
    named = `${named} returned ${described(value)}`;
  } else {
    named = `${named} is ${described(value)}`;
  }
  if (!isRecord(value) || Array.isArray(value) || isStateMachine(value))
    throw new CliUsageError(`${what}: ${named}${isStateMachine(value) ? ' (a machine)' : ''}; ${expected}`);
  return value;
}

/** The scorers checked as `evaluate` will check them, each problem named by its place in the array. */
function checkedScorers(value: unknown, what: string): Scorer[] {
  const example = 'e.g. [scorers.includes(), llmJudge({ provider, rubric })] from actorloop/testing';
  if (value === undefined) throw new CliUsageError(`${what}: no "scorers"; expected a non-empty array of scorers, ${example}`);
  if (!Array.isArray(value) || value.length === 0)
    throw new CliUsageError(`${what}: "scorers" is ${described(value)}; expected a non-empty array of scorers, ${example}`);
  const names = new Map<string, number>();
  value.forEach((scorer: unknown, index) => {
    const at = `${what}: scorers[${index}]`;
    const shape = 'expected a scorer { name, score(context) } (scorers.*, llmJudge(...), or your own)';
    if (!isRecord(scorer)) throw new CliUsageError(`${at} is ${described(scorer)}; ${shape}`);
    if (typeof scorer.name !== 'string' || scorer.name === '')
      throw new CliUsageError(`${at} has no name (a non-empty string: the report's column); ${shape}`);
    if (typeof scorer.score !== 'function') throw new CliUsageError(`${at} ("${scorer.name}") has no score function; ${shape}`);
    const first = names.get(scorer.name);
    if (first !== undefined)
      throw new CliUsageError(`${at}: the name "${scorer.name}" is taken by scorers[${first}]; give one of them another ({ name })`);
    names.set(scorer.name, index);
  });
  return value as Scorer[];
}

/** A JSONL file's items; a file that is not there is a usage error naming where it was looked for. */
function datasetFile(path: string, cwd: string, named: string, relativeTo: string): { items: EvalItem[]; file: string } {
  if (!existsSync(path) || !statSync(path).isFile())
    throw new CliUsageError(`${named}: no such file (${path}); the path is relative to ${relativeTo}`);
  const file = relative(cwd, path) || path;
  // A bad line is a DatasetError naming `file line N`: the command tells it from a usage error.
  return { items: parseDataset(readFileSync(path, 'utf8'), file), file };
}

/**
 * Loads `actorloop eval <module>[#export]`: the module (through the importer `--machine` uses), its
 * `{ machine, dataset, scorers }` — named exports, a default export object, or a default function of
 * no arguments that returns one (or a promise of one) — checked, and the items: `--dataset` (a JSONL
 * path relative to `cwd`) when given, else the module's `dataset` (an array, or a JSONL path
 * relative to the module's folder). What is missing or wrong is a `CliUsageError` naming it and what
 * was expected; a bad item is a `DatasetError` (a file's line number, an array's index).
 *
 * @example
 * ```ts
 * const { machine, items, scorers } = await loadEvalModule({ module: './evals.ts', exportName: undefined }, process.cwd(), undefined);
 * ```
 */
export async function loadEvalModule(spec: ModuleSpec, cwd: string, datasetFlag: string | undefined): Promise<LoadedEval> {
  const { exports, path, label, what } = await importModule(spec, cwd, 'eval');
  const object = await evalObjectOf(exports, spec, what);
  const { machine, dataset } = object;
  if (machine === undefined)
    throw new CliUsageError(`${what}: no "machine"; expected an XState machine (createConversationMachine(...), or a workflow)`);
  if (!isStateMachine(machine))
    throw new CliUsageError(
      `${what}: "machine" is ${described(machine)}, not an XState machine (createConversationMachine(...), or a workflow)`,
    );
  const scorers = checkedScorers(object.scorers, what);
  if (datasetFlag !== undefined) {
    const { items, file } = datasetFile(resolve(cwd, datasetFlag), cwd, `--dataset ${datasetFlag}`, 'the current directory');
    return { machine, items, datasetFile: file, scorers, label };
  }
  if (typeof dataset === 'string' && dataset.trim() !== '') {
    const { items, file } = datasetFile(resolve(dirname(path), dataset), cwd, `${what}: "dataset" ${dataset}`, "the module's folder");
    return { machine, items, datasetFile: file, scorers, label };
  }
  if (Array.isArray(dataset)) return { machine, items: checkDataset(dataset), datasetFile: undefined, scorers, label };
  const wanted = 'an array of items { id?, input, expected? }, or the path of a JSONL file relative to the module';
  if (dataset === undefined) throw new CliUsageError(`${what}: no "dataset" and no --dataset <file.jsonl>; expected ${wanted}`);
  throw new CliUsageError(`${what}: "dataset" is ${described(dataset)}; expected ${wanted}`);
}
