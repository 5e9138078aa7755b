import { UnsupportedRuntimeError } from '../errors/unsupported-runtime-error.js';

/**
 * Which JavaScript runtime runs this code. The core runs on all of them; a few parts need Node's
 * own modules (SQLite through a native addon, child processes, Restate's HTTP/2 endpoint) and
 * say so by name instead of failing somewhere inside a dependency.
 */
export type RuntimeName = 'node' | 'bun' | 'deno' | 'workerd' | 'unknown';

type RuntimeGlobals = {
  Bun?: unknown;
  Deno?: unknown;
  navigator?: { userAgent?: string };
  process?: { versions?: { node?: string }; getBuiltinModule?: (id: string) => unknown };
};

/**
 * Bun and Deno both set `process.versions.node` (they emulate it), so they are told apart first;
 * workerd names itself in `navigator.userAgent`.
 *
 * @example
 * ```ts
 * if (runtimeName() !== 'node') console.warn('SQLite needs Node');
 * ```
 */
export function runtimeName(): RuntimeName {
  const globals = globalThis as RuntimeGlobals;
  if (globals.Bun !== undefined) return 'bun';
  if (globals.Deno !== undefined) return 'deno';
  if (globals.navigator?.userAgent === 'Cloudflare-Workers') return 'workerd';
  if (typeof globals.process?.versions?.node === 'string') return 'node';
  return 'unknown';
}

const runtimeLabels: Record<RuntimeName, string> = {
  node: 'Node.js',
  bun: 'Bun',
  deno: 'Deno',
  workerd: 'Cloudflare workerd',
  unknown: 'this JavaScript runtime',
};

/** The runtime as a message names it: `Bun`, `Cloudflare workerd`, … */
export function runtimeLabel(runtime: RuntimeName = runtimeName()): string {
  return runtimeLabels[runtime];
}

/**
 * A Node built-in module if the runtime has it, without a static `import 'node:…'`: a static
 * import fails the whole module graph on workerd (without `nodejs_compat`) and in browsers, even
 * where the built-in is only a fallback. `process.getBuiltinModule` is Node ≥ 20.16, Bun, Deno
 * and workerd's `nodejs_compat`.
 *
 * @example
 * ```ts
 * const os = nodeBuiltin<typeof import('node:os')>('node:os');
 * const host = os?.hostname() ?? 'worker';
 * ```
 */
export function nodeBuiltin<T>(id: `node:${string}`): T | undefined {
  const getBuiltinModule = (globalThis as RuntimeGlobals).process?.getBuiltinModule;
  if (typeof getBuiltinModule !== 'function') return undefined;
  try {
    return (getBuiltinModule(id) as T | undefined) ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * Throws an {@link UnsupportedRuntimeError} unless this is Node.js: called at the top of the
 * modules that cannot work elsewhere, so the import itself names the problem and the way out.
 *
 * @example
 * ```ts
 * requireNodeRuntime('actorloop/sqlite', 'use memoryStore() or actorloop/postgres there');
 * ```
 */
export function requireNodeRuntime(feature: string, alternative: string): void {
  const runtime = runtimeName();
  if (runtime === 'node') return;
  throw new UnsupportedRuntimeError(feature, runtime, runtimeLabel(runtime), alternative);
}

/**
 * An environment variable, or `undefined` where the runtime has no `process.env` (workerd without
 * `nodejs_compat`: configuration comes as the worker's bindings there, passed as options).
 *
 * @example
 * ```ts
 * const key = environmentVariable('OPENAI_API_KEY');
 * ```
 */
export function environmentVariable(name: string): string | undefined {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
}
