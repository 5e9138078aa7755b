import { option } from '../util/option-schema.js';
import type { Message } from '../model/messages.js';
import type { StandardOutput, StandardSchemaV1 } from './standard-schema.js';
import { compileSchema, type JSONSchema, type ValidationResult } from './validate.js';

/**
 * What a tool's `execute` receives besides its arguments.
 *
 * @example
 * ```ts
 * const fetchPage = defineTool({
 *   name: 'fetch_page', parameters: z.object({ url: z.string() }),
 *   execute: async ({ url }, { signal }: ToolExecuteContext) => (await fetch(url, { signal })).text(),
 * });
 * ```
 */
export type ToolExecuteContext = {
  /** Aborted when the call times out or the run is cancelled: stop work and release resources. */
  signal: AbortSignal;
  /** The id the model gave this call. */
  toolCallId: string;
  /** The history up to and including the assistant message that made this call. */
  messages: Message[];
  /**
   * The run's `input.sessionData` (plain JSON, persisted with the run): per-conversation data such
   * as the user's id or tenant, so one machine serves every conversation.
   */
  sessionData: unknown;
};

/**
 * Tool arguments: inferred from a zod (or other Standard Schema) schema, a JSON object for a plain JSON Schema (which has no
 * static type to infer from).
 *
 * @example
 * ```ts
 * const schema = z.object({ city: z.string() });
 * const args: InferArgs<typeof schema> = { city: 'Oslo' };
 * ```
 */
export type InferArgs<TParameters> = TParameters extends StandardSchemaV1 ? StandardOutput<TParameters> : Record<string, unknown>;

/**
 * What `defineTool` takes.
 *
 * @example
 * ```ts
 * const definition: ToolDefinition<JSONSchema, string> = {
 *   name: 'delete_file', needsApproval: true,
 *   parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
 *   execute: async ({ path }) => { await rm(String(path)); return 'deleted'; },
 * };
 * ```
 */
export type ToolDefinition<TParameters extends StandardSchemaV1 | JSONSchema, TResult> = {
  /** Unique within a machine; what the model calls (letters, digits, `_` and `-`, at most 64). */
  name: string;
  description?: string;
  /**
   * A zod (≥ 4.2) object schema or any Standard Schema that converts to JSON Schema, converted and
   * validated by its own library; or a JSON Schema with `type: "object"` (validated with ajv).
   */
  parameters: TParameters;
  execute: (args: InferArgs<TParameters>, context: ToolExecuteContext) => TResult | Promise<TResult>;
  /** Overrides the machine's `toolTimeoutMs` for this tool. The machine enforces it. */
  timeoutMs?: number;
  /** Ask the user (`tool.approve` / `tool.deny`) before each call, or for the calls this returns true for. */
  needsApproval?: boolean | ((args: InferArgs<TParameters>) => boolean);
  /**
   * Whether running a call twice does no harm (a read, a lookup). Default `false`. A durable host
   * resuming a run that was interrupted mid-call runs the call again only when this is `true`;
   * otherwise the call gets the error result `interrupted by a restart; not run again`.
   */
  idempotent?: boolean;
};

/**
 * A tool ready for a conversation machine. Create one with {@link defineTool}.
 *
 * @example
 * ```ts
 * const tools: Tool[] = [add, search];
 * ```
 */
export interface Tool<TArgs = unknown, TResult = unknown> {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments, as sent to the model. */
  readonly inputSchema: JSONSchema;
  readonly timeoutMs?: number;
  /** Whether a call interrupted by a restart may run again (see {@link ToolDefinition.idempotent}). */
  readonly idempotent: boolean;
  /** Checks parsed arguments against the schema; on success `value` is what `execute` receives. */
  validate(args: unknown): ValidationResult<unknown>;
  /** Whether this call waits for approval. */
  needsApproval(args: TArgs): boolean;
  execute(args: TArgs, context: ToolExecuteContext): TResult | Promise<TResult>;
}

const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Defines a tool: a name and description for the model, an argument schema (zod ≥ 4.2 or JSON
 * Schema), and `execute`. Arguments are parsed and validated before `execute` runs; invalid ones go
 * back to the model as an error result. A string result is sent as it is, anything else as JSON.
 *
 * @example
 * ```ts
 * import { z } from 'zod';
 * const add = defineTool({
 *   name: 'add',
 *   description: 'Add two numbers',
 *   parameters: z.object({ a: z.number(), b: z.number() }),
 *   execute: async ({ a, b }) => a + b,
 * });
 * ```
 */
export function defineTool<TParameters extends StandardSchemaV1 | JSONSchema, TResult>(
  definition: ToolDefinition<TParameters, TResult>,
): Tool<InferArgs<TParameters>, TResult> {
  return createTool(definition, 'tool');
}

const needsApprovalSchema = option.either<boolean | ((args: never) => unknown)>('a boolean or a function (args) => boolean', [
  [(value) => typeof value === 'boolean', option.boolean()],
  [(value) => typeof value === 'function', option.callable('a function (args) => boolean')],
]);

/** A tool definition, checked before its argument schema is compiled. Unknown keys are left alone: a definition may carry the user's own fields. */
const toolDefinitionSchema = option.object(
  {
    name: option.matching(
      'a name of 1 to 64 letters, digits, "_" or "-"',
      (value): value is string => typeof value === 'string' && toolNamePattern.test(value),
    ),
    description: option.withDefault(option.string(), ''),
    parameters: option.unchecked(),
    execute: option.callable<(args: never, context: ToolExecuteContext) => unknown>('a function (args, context) => result'),
    timeoutMs: option.optional(
      option.matching(
        'a positive number of milliseconds',
        (value): value is number => typeof value === 'number' && Number.isFinite(value) && value > 0,
      ),
    ),
    needsApproval: option.withDefault(needsApprovalSchema, false),
    idempotent: option.withDefault(option.boolean(), false),
  },
  { expected: 'a tool definition object { name, description, parameters, execute }', unknownKeys: 'ignore' },
);

/** Builds a tool, naming the option (`tools[2]`) in errors when called for a machine's tool list. */
export function createTool<TParameters extends StandardSchemaV1 | JSONSchema, TResult>(
  definition: ToolDefinition<TParameters, TResult>,
  path: string,
): Tool<InferArgs<TParameters>, TResult> {
  const { name, description, parameters, execute, timeoutMs, needsApproval, idempotent } = toolDefinitionSchema.resolve(definition, path);
  const schema = compileSchema<InferArgs<TParameters>>(parameters, `${path}.parameters`);
  return {
    name,
    description,
    inputSchema: schema.jsonSchema,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    idempotent,
    validate: schema.validate,
    needsApproval: typeof needsApproval === 'boolean' ? () => needsApproval : (args) => needsApproval(args as never) === true,
    execute: execute as ToolDefinition<TParameters, TResult>['execute'],
  };
}

/** True for a tool made by {@link defineTool}. */
export function isTool(value: unknown): value is Tool {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Tool).name === 'string' &&
    typeof (value as Tool).validate === 'function' &&
    typeof (value as Tool).execute === 'function' &&
    typeof (value as Tool).needsApproval === 'function'
  );
}
