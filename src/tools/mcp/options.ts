import { readFileSync } from 'node:fs';
import { isRecord } from '../../util/is-record.js';
import { type OptionSchema, option } from '../../util/option-schema.js';
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
   * JSON; `toolContent([...])` for parts). Default {@link mcpResultContent}: images, audio and
   * binary resources as parts. A result with `isError: true` never gets here: it
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

/** This package's version (src/ and dist/ sit at the same depth); 'unknown' where a bundler moved the file. */
function packageVersion(): string {
  try {
    const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** A per-tool option, settled: its value for a tool, and the tool names it lists, if it is a list. */
type PerTool<T> = { of: (tool: McpToolDefinition) => T; names?: ReadonlySet<string> };

const milliseconds = option.milliseconds();

// One message for the whole list: the option is the thing to fix, not one entry of it.
const toolNames = option.transform(
  option.matching(
    'an array of tool names (the server’s names, without prefix)',
    (value): value is string[] => Array.isArray(value) && value.every((name) => typeof name === 'string'),
  ),
  (names): PerTool<boolean> => {
    const listed = new Set(names);
    return { of: (tool) => listed.has(tool.name), names: listed };
  },
);

// Only `true` counts: a predicate that returns anything else (a truthy string, a promise) is read as no.
const pickedBy = option.transform(
  option.callable<(tool: McpToolDefinition) => unknown>('a function'),
  (pick): PerTool<boolean> => ({ of: (tool) => pick(tool) === true }),
);

/** `include` / `exclude`: a list of names, or a function of the tool. */
function toolFilter(fallback: boolean): OptionSchema<PerTool<boolean>> {
  const filter = option.either<PerTool<boolean>>(
    'an array of tool names (the server’s names, without prefix) or a function (tool) => boolean',
    [
      [Array.isArray, toolNames],
      [(value) => typeof value === 'function', pickedBy],
    ],
  );
  return option.withDefault(filter, { of: () => fallback });
}

const perToolFlagExpected = 'a boolean, an array of tool names or a function';
const constant = <T>(value: T): PerTool<T> => ({ of: () => value });
const flag = option.transform(option.boolean(), constant);

// A function is asked about each call, with its arguments; a list or a boolean is settled per tool.
const needsApproval = option.withDefault(
  option.either<PerTool<boolean | ((args: Record<string, unknown>) => boolean)>>(perToolFlagExpected, [
    [(value) => typeof value === 'boolean', flag],
    [Array.isArray, toolNames],
    [
      (value) => typeof value === 'function',
      option.transform(option.callable<(tool: McpToolDefinition, args: Record<string, unknown>) => unknown>('a function'), (pick) => ({
        of: (tool) => (args) => pick(tool, args) === true,
      })),
    ],
  ]),
  constant(false),
);

const idempotent = option.withDefault(
  option.either<PerTool<boolean>>(perToolFlagExpected, [
    [(value) => typeof value === 'boolean', flag],
    [Array.isArray, toolNames],
    [(value) => typeof value === 'function', pickedBy],
  ]),
  constant(false),
);

const timeoutMs = option.withDefault(
  option.either<PerTool<number | undefined>>('milliseconds, an object of milliseconds per tool name, or a function', [
    [(value) => typeof value === 'number', option.transform(milliseconds, constant)],
    [
      (value) => typeof value === 'function',
      option.transform(
        option.callable<(tool: McpToolDefinition) => unknown>('a function'),
        // What the function picks is only known per tool, when the tool is built.
        (pick) => ({
          of: (tool) => {
            const chosen = pick(tool);
            return chosen === undefined ? undefined : milliseconds.resolve(chosen, `timeoutMs(${JSON.stringify(tool.name)})`);
          },
        }),
      ),
    ],
    [
      isRecord,
      option.transform(option.record(milliseconds), (timeouts) => {
        const byName = new Map(Object.entries(timeouts));
        return { of: (tool) => byName.get(tool.name), names: new Set(byName.keys()) };
      }),
    ],
  ]),
  constant(undefined),
);

const mcpOptionsSchema = option.transform(
  option.object(
    {
      prefix: option.withDefault(
        option.matching(
          'at most 48 letters, digits, "_" or "-"',
          (value): value is string => typeof value === 'string' && /^[a-zA-Z0-9_-]{0,48}$/.test(value),
        ),
        '',
      ),
      include: toolFilter(true),
      exclude: toolFilter(false),
      needsApproval,
      idempotent,
      timeoutMs,
      mapResult: option.optional(
        option.callable<(result: McpCallToolResult, tool: McpToolDefinition) => unknown>(
          'a function (result, tool) => what the model reads',
        ),
      ),
      connectTimeoutMs: option.withDefault(milliseconds, 30_000),
      onError: option.withDefault(option.callable<(error: Error) => void>('a function (error) => void'), () => undefined),
      // Read only when not given: the package.json lookup is the one costly default.
      clientInfo: option.transform(
        option.optional(
          option.matching(
            'an object { name, version } of strings',
            (value): value is { name: string; version: string } =>
              isRecord(value) && typeof value.name === 'string' && typeof value.version === 'string',
          ),
        ),
        (info) => (info ? { name: info.name, version: info.version } : { name: 'actorloop', version: packageVersion() }),
      ),
    },
    { expected: 'an object { prefix?, include?, exclude?, … }' },
  ),
  ({ include, exclude, needsApproval, idempotent, timeoutMs, ...rest }): ResolvedMcpOptions => ({
    ...rest,
    offers: (tool) => include.of(tool) && !exclude.of(tool),
    needsApproval: needsApproval.of,
    idempotent: idempotent.of,
    timeoutMs: timeoutMs.of,
    // exclude may name tools the server does not offer: leaving out is the safe side.
    named: (
      [
        ['include', include],
        ['needsApproval', needsApproval],
        ['idempotent', idempotent],
        ['timeoutMs', timeoutMs],
      ] as const
    ).flatMap(([name, { names }]): Array<[string, ReadonlySet<string>]> => (names ? [[name, names]] : [])),
  }),
);

/** Checks the options of `mcpTools`, naming the option and what was expected on failure. */
export function resolveMcpOptions(options: McpToolsOptions | undefined): ResolvedMcpOptions {
  return mcpOptionsSchema.resolve(options ?? {}, '');
}
