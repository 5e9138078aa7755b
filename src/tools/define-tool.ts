import type { z } from 'zod';
import type { Message } from '../providers/messages.js';
import { InvalidOptionsError } from '../errors/invalid-options-error.js';
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
};

/**
 * Tool arguments: inferred from a zod schema, a JSON object for a plain JSON Schema (which has no
 * static type to infer from).
 *
 * @example
 * ```ts
 * const schema = z.object({ city: z.string() });
 * const args: InferArgs<typeof schema> = { city: 'Oslo' };
 * ```
 */
export type InferArgs<TParameters> = TParameters extends z.ZodType ? z.output<TParameters> : Record<string, unknown>;

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
export type ToolDefinition<TParameters extends z.ZodType | JSONSchema, TResult> = {
  /** Unique within a machine; what the model calls (letters, digits, `_` and `-`, at most 64). */
  name: string;
  description?: string;
  /** A zod 4 object schema, or a JSON Schema with `type: "object"` (validated with ajv). */
  parameters: TParameters;
  execute: (args: InferArgs<TParameters>, context: ToolExecuteContext) => TResult | Promise<TResult>;
  /** Overrides the machine's `toolTimeoutMs` for this tool. The machine enforces it. */
  timeoutMs?: number;
  /** Ask the user (`tool.approve` / `tool.deny`) before each call, or for the calls this returns true for. */
  needsApproval?: boolean | ((args: InferArgs<TParameters>) => boolean);
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
  /** Checks parsed arguments against the schema; on success `value` is what `execute` receives. */
  validate(args: unknown): ValidationResult<unknown>;
  /** Whether this call waits for approval. */
  needsApproval(args: TArgs): boolean;
  execute(args: TArgs, context: ToolExecuteContext): TResult | Promise<TResult>;
}

const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Defines a tool: a name and description for the model, an argument schema (zod 4 or JSON
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
export function defineTool<TParameters extends z.ZodType | JSONSchema, TResult>(
  definition: ToolDefinition<TParameters, TResult>,
): Tool<InferArgs<TParameters>, TResult> {
  return createTool(definition, 'tool');
}

/** Builds a tool, naming the option (`tools[2]`) in errors when called for a machine's tool list. */
export function createTool<TParameters extends z.ZodType | JSONSchema, TResult>(
  definition: ToolDefinition<TParameters, TResult>,
  option: string,
): Tool<InferArgs<TParameters>, TResult> {
  if (typeof definition !== 'object' || definition === null) {
    throw new InvalidOptionsError(option, 'a tool definition object { name, description, parameters, execute }', definition);
  }
  const { name, description = '', parameters, execute, timeoutMs, needsApproval = false } = definition;
  if (typeof name !== 'string' || !toolNamePattern.test(name)) {
    throw new InvalidOptionsError(`${option}.name`, 'a name of 1 to 64 letters, digits, "_" or "-"', name);
  }
  if (typeof description !== 'string') throw new InvalidOptionsError(`${option}.description`, 'a string', description);
  if (typeof execute !== 'function') throw new InvalidOptionsError(`${option}.execute`, 'a function (args, context) => result', execute);
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw new InvalidOptionsError(`${option}.timeoutMs`, 'a positive number of milliseconds', timeoutMs);
  }
  if (typeof needsApproval !== 'boolean' && typeof needsApproval !== 'function') {
    throw new InvalidOptionsError(`${option}.needsApproval`, 'a boolean or a function (args) => boolean', needsApproval);
  }
  const schema = compileSchema<InferArgs<TParameters>>(parameters, `${option}.parameters`);
  return {
    name,
    description,
    inputSchema: schema.jsonSchema,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    validate: schema.validate,
    needsApproval: typeof needsApproval === 'boolean' ? () => needsApproval : (args) => needsApproval(args) === true,
    execute,
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
