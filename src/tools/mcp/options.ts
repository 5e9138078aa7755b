import { readFileSync } from 'node:fs';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { isRecord } from '../../util/is-record.js';
import type { McpCallToolResult, McpToolDefinition } from './mcp-types.js';

/**
 * Options of {@link mcpTools}. Lists and records name tools by the server's name, before `prefix`.
 *
 * @example
 * ```ts
 * const options: McpToolsOptions = {
 *   prefix: 'fs_',
 *   include: ['read_file', 'list_directory', 'write_file'],
 *   needsApproval: ['write_file'],
 *   idempotent: (tool) => tool.annotations?.readOnlyHint === true,
 *   timeoutMs: { read_file: 10_000 },
 * };
 * ```
 */
export type McpToolsOptions = {
  /** Put before every tool's name (letters, digits, `_`, `-`), to tell servers apart: `github_`. */
  prefix?: string;
  /** Offer only these tools (or those a function picks). */
  include?: readonly string[] | ((tool: McpToolDefinition) => boolean);
  /** Never offer these tools (or those a function picks). */
  exclude?: readonly string[] | ((tool: McpToolDefinition) => boolean);
  /**
   * Ask the user before a call (`tool.approve` / `tool.deny`): all tools, the named ones, or the
   * calls a predicate picks, given the server's tool definition and the validated arguments.
   * Default `false`.
   */
  needsApproval?: boolean | readonly string[] | ((tool: McpToolDefinition, args: Record<string, unknown>) => boolean);
  /**
   * Whether a call interrupted by a restart may run again in a durable host: all tools, the named
   * ones, or a predicate. Default `false` — the server's `idempotentHint` and `readOnlyHint` are
   * hints, so trusting them is your call: `idempotent: (tool) => tool.annotations?.readOnlyHint === true`.
   */
  idempotent?: boolean | readonly string[] | ((tool: McpToolDefinition) => boolean);
  /**
   * A tool's timeout, enforced by the machine like any tool's `timeoutMs`: one for all, per tool
   * name, or from a function. Tools without one get the machine's `toolTimeoutMs`.
   */
  timeoutMs?: number | Readonly<Record<string, number>> | ((tool: McpToolDefinition) => number | undefined);
  /**
   * Turns a successful result into what the model reads (a string as it is, anything else as
   * JSON). Default {@link mcpResultText}. A result with `isError: true` never gets here: it
   * becomes an error result with the server's text.
   */
  mapResult?: (result: McpCallToolResult, tool: McpToolDefinition) => unknown;
  /**
   * How long starting or connecting to the server, and each `tools/list` request, may take. Default
   * 30 s. The error names what was waited for: `could not connect to the stdio server "npx": it
   * did not answer initialize within 30000 ms (connectTimeoutMs)`.
   */
  connectTimeoutMs?: number;
  /**
   * Told of failures no call is waiting for: a list refresh after `tools/list_changed` that
   * failed (the previous list stays), or a connection that closed between calls (the next call
   * reconnects). Default: ignored.
   */
  onError?: (error: Error) => void;
  /** How actorloop introduces itself to the server. Default `{ name: 'actorloop', version: <this package's version> }`. */
  clientInfo?: { name: string; version: string };
};

/** Options with defaults applied, every value checked. */
export type ResolvedMcpOptions = {
  prefix: string;
  /** Whether a tool the server lists is offered, after `include` and `exclude`. */
  offers: (tool: McpToolDefinition) => boolean;
  needsApproval: (tool: McpToolDefinition) => boolean | ((args: Record<string, unknown>) => boolean);
  idempotent: (tool: McpToolDefinition) => boolean;
  timeoutMs: (tool: McpToolDefinition) => number | undefined;
  mapResult: ((result: McpCallToolResult, tool: McpToolDefinition) => unknown) | undefined;
  connectTimeoutMs: number;
  onError: (error: Error) => void;
  clientInfo: { name: string; version: string };
  /** The tool names each option lists (all but `exclude`), checked against the server's first list. */
  named: ReadonlyArray<[option: string, names: ReadonlySet<string>]>;
};

const knownOptions = [
  'prefix',
  'include',
  'exclude',
  'needsApproval',
  'idempotent',
  'timeoutMs',
  'mapResult',
  'connectTimeoutMs',
  'onError',
  'clientInfo',
];

const maxTimerMs = 2_147_483_647;

/** This package's version (src/ and dist/ sit at the same depth); 'unknown' where a bundler moved the file. */
function packageVersion(): string {
  try {
    const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}

function names(value: unknown, option: string): Set<string> | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((name) => typeof name === 'string')) {
    throw new InvalidOptionsError(option, 'an array of tool names (the server’s names, without prefix)', value);
  }
  return new Set(value as string[]);
}

function milliseconds(value: unknown, option: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > maxTimerMs) {
    throw new InvalidOptionsError(option, `a number of milliseconds between 1 and ${maxTimerMs}`, value);
  }
  return value;
}

/** A boolean option: one value, or a list of the tool names it is true for. */
function perToolFlag(value: unknown, option: string): (tool: McpToolDefinition) => boolean {
  if (value === undefined || typeof value === 'boolean') return () => value === true;
  if (!Array.isArray(value)) throw new InvalidOptionsError(option, 'a boolean, an array of tool names or a function', value);
  const listed = names(value, option) as Set<string>;
  return (tool) => listed.has(tool.name);
}

/** `include` / `exclude`: a list of names, or a function of the tool. */
function toolFilter(value: unknown, option: string, fallback: boolean): (tool: McpToolDefinition) => boolean {
  if (value === undefined) return () => fallback;
  if (typeof value === 'function') return (tool) => value(tool) === true;
  if (!Array.isArray(value)) {
    throw new InvalidOptionsError(
      option,
      'an array of tool names (the server’s names, without prefix) or a function (tool) => boolean',
      value,
    );
  }
  const listed = names(value, option) as Set<string>;
  return (tool) => listed.has(tool.name);
}

function perToolTimeout(value: unknown): (tool: McpToolDefinition) => number | undefined {
  if (value === undefined) return () => undefined;
  if (typeof value === 'number') {
    const all = milliseconds(value, 'timeoutMs');
    return () => all;
  }
  if (typeof value === 'function') {
    return (tool) => {
      const chosen: unknown = value(tool);
      return chosen === undefined ? undefined : milliseconds(chosen, `timeoutMs(${JSON.stringify(tool.name)})`);
    };
  }
  if (isRecord(value)) {
    const timeouts = new Map(Object.entries(value).map(([name, ms]) => [name, milliseconds(ms, `timeoutMs.${name}`)]));
    return (tool) => timeouts.get(tool.name);
  }
  throw new InvalidOptionsError('timeoutMs', 'milliseconds, an object of milliseconds per tool name, or a function', value);
}

/** Checks the options of `mcpTools`, naming the option and what was expected on failure. */
export function resolveMcpOptions(options: McpToolsOptions | undefined): ResolvedMcpOptions {
  if (options === undefined) options = {};
  if (!isRecord(options)) throw new InvalidOptionsError('options', 'an object { prefix?, include?, exclude?, … }', options);
  for (const key of Object.keys(options)) {
    if (!knownOptions.includes(key)) throw new InvalidOptionsError(key, `a known option (${knownOptions.join(', ')})`, 'an unknown option');
  }
  const { prefix = '', mapResult, connectTimeoutMs, onError, clientInfo } = options;
  if (typeof prefix !== 'string' || !/^[a-zA-Z0-9_-]{0,48}$/.test(prefix)) {
    throw new InvalidOptionsError('prefix', 'at most 48 letters, digits, "_" or "-"', prefix);
  }
  if (mapResult !== undefined && typeof mapResult !== 'function') {
    throw new InvalidOptionsError('mapResult', 'a function (result, tool) => what the model reads', mapResult);
  }
  if (onError !== undefined && typeof onError !== 'function')
    throw new InvalidOptionsError('onError', 'a function (error) => void', onError);
  if (
    clientInfo !== undefined &&
    !(isRecord(clientInfo) && typeof clientInfo.name === 'string' && typeof clientInfo.version === 'string')
  ) {
    throw new InvalidOptionsError('clientInfo', 'an object { name, version } of strings', clientInfo);
  }
  const { needsApproval, idempotent } = options;
  const include = toolFilter(options.include, 'include', true);
  const exclude = toolFilter(options.exclude, 'exclude', false);
  const named: Array<[string, ReadonlySet<string>]> = [];
  for (const option of ['include', 'needsApproval', 'idempotent'] as const) {
    const value = options[option];
    if (Array.isArray(value)) named.push([option, new Set(value as string[])]);
  }
  if (isRecord(options.timeoutMs)) named.push(['timeoutMs', new Set(Object.keys(options.timeoutMs))]);
  return {
    named,
    prefix,
    offers: (tool) => include(tool) && !exclude(tool),
    // A function is asked about each call, with its arguments; a list or a boolean is settled per tool.
    needsApproval:
      typeof needsApproval === 'function'
        ? (tool) => (args) => needsApproval(tool, args) === true
        : perToolFlag(needsApproval, 'needsApproval'),
    idempotent: typeof idempotent === 'function' ? (tool) => idempotent(tool) === true : perToolFlag(idempotent, 'idempotent'),
    timeoutMs: perToolTimeout(options.timeoutMs),
    mapResult,
    connectTimeoutMs: connectTimeoutMs === undefined ? 30_000 : milliseconds(connectTimeoutMs, 'connectTimeoutMs'),
    onError: onError ?? (() => undefined),
    clientInfo: clientInfo ? { name: clientInfo.name, version: clientInfo.version } : { name: 'actorloop', version: packageVersion() },
  };
}
