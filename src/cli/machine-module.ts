import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AnyStateMachine } from 'xstate';
import { CliUsageError } from './cli-usage-error.js';

/** A user's module as named on the command line: its path (relative to the current directory) and the export to take, after `#`. */
export type ModuleSpec = { module: string; exportName: string | undefined };

/** `--machine <module>[#export]` as given: the module's path (relative to the current directory) and the export to take. */
export type MachineSpec = ModuleSpec;

/** A machine loaded from a user's module, and how to name it in messages and hints (`--machine` as given). */
export type LoadedMachine = { machine: AnyStateMachine; spec: MachineSpec; label: string };

const scriptExtensions = new Set(['.js', '.mjs', '.cjs']);
const typeScriptExtensions = new Set(['.ts', '.mts', '.cts']);

/**
 * Reads a `<module>[#export]` value: the module's path, then `#` and the export's name when one is
 * named (the last `#`: a path may hold one). `flag` names it in errors (`--machine`, `eval`), with
 * `example` as the path shown. Throws `CliUsageError` for an empty path or export.
 *
 * @example
 * ```ts
 * moduleSpecOf('./evals.ts#capitals', 'eval', { module: './evals.ts', exportName: 'capitals' });
 * // { module: './evals.ts', exportName: 'capitals' }
 * ```
 */
export function moduleSpecOf(value: string, flag: string, example: { module: string; exportName: string }): ModuleSpec {
  const hash = value.lastIndexOf('#');
  const module = (hash < 0 ? value : value.slice(0, hash)).trim();
  const exportName = hash < 0 ? undefined : value.slice(hash + 1).trim();
  if (module === '')
    throw new CliUsageError(`${flag} needs a module's path, e.g. ${flag} ${example.module} or ${example.module}#${example.exportName}`);
  if (exportName === '')
    throw new CliUsageError(`${flag} ${value}: needs an export's name after "#", e.g. ${module}#${example.exportName}`);
  return { module, exportName };
}

/**
 * Reads a `--machine` value: the module's path, then `#` and the export's name when one is named
 * (the last `#`: a path may hold one). Throws `CliUsageError` for an empty path or export.
 *
 * @example
 * ```ts
 * machineSpecOf('./workflow.js#review'); // { module: './workflow.js', exportName: 'review' }
 * machineSpecOf('./workflow.ts');        // { module: './workflow.ts', exportName: undefined }
 * ```
 */
export const machineSpecOf = (value: string): MachineSpec =>
  moduleSpecOf(value, '--machine', { module: './workflow.js', exportName: 'review' });

/**
 * The `--machine` value as given, for messages and for the commands a hint prints.
 *
 * @example
 * ```ts
 * machineLabelOf({ module: './workflow.js', exportName: 'review' }); // './workflow.js#review'
 * ```
 */
export const machineLabelOf = (spec: ModuleSpec): string =>
  spec.exportName === undefined ? spec.module : `${spec.module}#${spec.exportName}`;

/**
 * An XState machine (`setup(...).createMachine(...)` or `createMachine(...)`), told by what a host
 * calls on it, so a machine of another copy of xstate is one too.
 *
 * @example
 * ```ts
 * isStateMachine(createMachine({ id: 'm' })); // true
 * isStateMachine(() => createMachine({ id: 'm' })); // false: a function that makes one
 * ```
 */
export function isStateMachine(value: unknown): value is AnyStateMachine {
  if (typeof value !== 'object' || value === null) return false;
  const machine = value as Record<string, unknown>;
  return (
    typeof machine.id === 'string' &&
    typeof machine.transition === 'function' &&
    typeof machine.getInitialSnapshot === 'function' &&
    typeof machine.restoreSnapshot === 'function' &&
    typeof machine.getPersistedSnapshot === 'function'
  );
}

/**
 * The ES module of `tsx`'s API in the project of the module at `path` (its `exports`, read by
 * hand: `require.resolve` would give the CommonJS one, which cannot register the ESM loader), or
 * `undefined` when the project has no `tsx`.
 */
function tsxOf(path: string): string | undefined {
  try {
    const manifest = createRequire(path).resolve('tsx/package.json');
    const { exports } = JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: Record<string, unknown> };
    const api = exports?.['./esm/api'] as { import?: { default?: unknown } | string } | undefined;
    const target = typeof api?.import === 'string' ? api.import : api?.import?.default;
    return typeof target === 'string' ? join(dirname(manifest), target) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Imports a TypeScript module: through `tsx` when the project has it (it is resolved from the
 * module's own folder, as the module's imports are), else through Node's own type stripping
 * (Node 22.18+ and 23.6+). `tsx` is registered once for the process, not in a namespace, so the
 * module's `actorloop` and `xstate` are the ones the rest of the process loads.
 */
async function importTypeScript(path: string, what: string): Promise<Record<string, unknown>> {
  const tsxApi = tsxOf(path);
  if (tsxApi !== undefined) {
    const { register } = (await import(pathToFileURL(tsxApi).href)) as { register: () => unknown };
    register();
  } else if (!(process.features as { typescript?: unknown }).typescript) {
    throw new CliUsageError(
      `${what}: Node ${process.version} cannot load TypeScript by itself: install tsx in your project (npm install --save-dev tsx), ` +
        'use Node 22.18+ (it strips types), or give the compiled .js module',
    );
  }
  return (await import(pathToFileURL(path).href)) as Record<string, unknown>;
}

/** What a module exports, in words for an error: `default (a function), review (a machine), VERSION`. */
export function describeExports(exports: Record<string, unknown>): string {
  const names = Object.keys(exports);
  if (names.length === 0) return 'it exports nothing';
  const described = names.map((name) => {
    const value = exports[name];
    return isStateMachine(value) ? `${name} (a machine)` : typeof value === 'function' ? `${name} (a function)` : name;
  });
  return `it exports ${described.join(', ')}`;
}

/** The export to take: the one named, else `default`, else the only machine among the exports. */
function chooseExport(exports: Record<string, unknown>, spec: MachineSpec, label: string): { name: string; value: unknown } {
  if (spec.exportName !== undefined) {
    if (!(spec.exportName in exports) || exports[spec.exportName] === undefined)
      throw new CliUsageError(`--machine ${label}: no export "${spec.exportName}" (${describeExports(exports)})`);
    return { name: spec.exportName, value: exports[spec.exportName] };
  }
  if (exports.default !== undefined) return { name: 'default', value: exports.default };
  const machines = Object.keys(exports).filter((name) => isStateMachine(exports[name]));
  if (machines.length === 1) return { name: machines[0] as string, value: exports[machines[0] as string] };
  const choose = machines.length > 1 ? `one of its machines (${machines.join(', ')})` : 'the export to use';
  throw new CliUsageError(
    `--machine ${label}: no default export and ${machines.length > 1 ? 'several' : 'no'} exported machines (${describeExports(exports)}); ` +
      `name ${choose} with ${spec.module}#<export>`,
  );
}

/** A user's module imported: its exports, where it is, and how to name it in messages (`--machine ./workflow.ts`). */
export type ImportedModule = { exports: Record<string, unknown>; path: string; spec: ModuleSpec; label: string; what: string };

/**
 * Imports a user's module named on the command line (`--machine <module>[#export]`, `eval
 * <module>`): a path relative to `cwd`; `.js`, `.mjs` or `.cjs`, or `.ts` / `.mts` / `.cts` through
 * `tsx` or Node's type stripping. What is wrong with the path is a `CliUsageError` starting with
 * `flag` and the module as given; an error the module throws as it loads goes on with the module
 * named. Choosing the export is the caller's.
 *
 * @example
 * ```ts
 * const { exports, what } = await importModule({ module: './evals.ts', exportName: undefined }, process.cwd(), 'eval');
 * // what: 'eval ./evals.ts', the words every message about it starts with
 * ```
 */
export async function importModule(spec: ModuleSpec, cwd: string, flag: string): Promise<ImportedModule> {
  const label = machineLabelOf(spec);
  const what = `${flag} ${label}`;
  const path = resolve(cwd, spec.module);
  if (!existsSync(path) || !statSync(path).isFile())
    throw new CliUsageError(`${what}: no such file (${path}); the path is relative to the current directory`);
  const extension = extname(path).toLowerCase();
  if (!scriptExtensions.has(extension) && !typeScriptExtensions.has(extension))
    throw new CliUsageError(`${what}: expected a JavaScript or TypeScript module (.js, .mjs, .cjs, .ts, .mts, .cts)`);
  let exports: Record<string, unknown>;
  try {
    exports = typeScriptExtensions.has(extension)
      ? await importTypeScript(path, what)
      : ((await import(pathToFileURL(path).href)) as Record<string, unknown>);
  } catch (error) {
    if (CliUsageError.isInstance(error)) throw error;
    throw new Error(`${what} could not be loaded: ${error instanceof Error ? error.message : String(error)}`);
  }
  return { exports, path, spec, label, what };
}

/**
 * Loads the machine of `--machine <module>[#export]`: the module (see {@link importModule}), then
 * its export — the one named after `#`, else `default`, else the only export that is a machine. The
 * export is a machine, or a function of no arguments that returns one (or a promise of one), called
 * once. What is wrong with the path or the export is a `CliUsageError` naming `--machine`; an error
 * the module throws as it loads goes on with the module named.
 *
 * @example
 * ```ts
 * const { machine } = await loadMachine(machineSpecOf('./workflow.ts#review'), process.cwd());
 * const host = createConversationHost({ machine, store });
 * ```
 */
export async function loadMachine(spec: MachineSpec, cwd: string): Promise<LoadedMachine> {
  const { exports, label } = await importModule(spec, cwd, '--machine');
  const chosen = chooseExport(exports, spec, label);
  const named = chosen.name === 'default' ? 'its default export' : `export "${chosen.name}"`;
  if (isStateMachine(chosen.value)) return { machine: chosen.value, spec, label };
  if (typeof chosen.value !== 'function')
    throw new CliUsageError(`--machine ${label}: ${named} is not an XState machine, nor a function that returns one`);
  if (chosen.value.length > 0) {
    throw new CliUsageError(
      `--machine ${label}: ${named} is a function of ${chosen.value.length} argument${chosen.value.length === 1 ? '' : 's'}; ` +
        'export a machine, or a function of no arguments that returns one',
    );
  }
  let made: unknown;
  try {
    made = await (chosen.value as () => unknown)();
  } catch (error) {
    throw new Error(`--machine ${label}: ${named} threw: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!isStateMachine(made))
    throw new CliUsageError(`--machine ${label}: ${named} returned ${made === null ? 'null' : typeof made}, not an XState machine`);
  return { machine: made, spec, label };
}
