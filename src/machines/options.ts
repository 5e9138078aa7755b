import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import type { Provider, ToolDescription } from '../model/provider.js';
import type { RequestMiddleware } from '../middleware/request-middleware.js';
import { withMiddleware } from '../middleware/with-middleware.js';
import { createTool, isTool, type Tool } from '../tools/define-tool.js';
import { type PriceTable, validatePrices } from './pricing.js';
import { type OutputOptions, type ResolvedOutput, resolveOutput } from './structured-output.js';
import type { StandardSchemaV1 } from '../tools/standard-schema.js';
import type { JSONSchema } from '../tools/validate.js';

/**
 * Retry policy for provider requests. The machine retries, not the SDK, so every attempt is a
 * visible `retrying` state with a `request.retry` event; `retry: false` makes the first failure final.
 *
 * @example
 * ```ts
 * createConversationMachine({ provider, retry: { maxRetries: 5, initialDelayMs: 1_000, maxRetryAfterMs: 10_000 } });
 * ```
 */
export type RetryOptions = {
  /** Retries after the first attempt (so `maxRetries + 1` attempts at most). Default 2. */
  maxRetries?: number;
  /** Backoff before the first retry. Default 500 ms; doubles each retry. */
  initialDelayMs?: number;
  /** Backoff cap. Default 30 s. */
  maxDelayMs?: number;
  /** Randomise backoff (between half and all of it) so many clients do not retry in step. Default true. */
  jitter?: boolean;
  /**
   * The longest `retry-after` the run will wait for. A server asking for longer ends the run in
   * `error` instead of blocking it for minutes. Default 60 s.
   */
  maxRetryAfterMs?: number;
};

/**
 * Doom-loop detection: the same tool calls (name + arguments) repeating. The model first gets a
 * notice to change course; if it keeps looping the run ends `halted` / `doom_loop`.
 *
 * @example
 * ```ts
 * createConversationMachine({ provider, tools, doomLoop: { threshold: 4 } }); // or doomLoop: false
 * ```
 */
export type DoomLoopOptions = {
  /** Repeats of a pattern that count as a loop. Default 3. */
  threshold?: number;
};

/**
 * Options of {@link createConversationMachine}.
 *
 * @example
 * ```ts
 * const options: ConversationOptions = { provider, tools: [add], maxToolIterations: 5 };
 * ```
 */
export type ConversationOptions<TOutputSchema extends StandardSchemaV1 | JSONSchema = StandardSchemaV1 | JSONSchema> = {
  provider: Provider;
  // Tools differ in argument types; the machine only hands each tool the arguments its own schema validated.
  tools?: ReadonlyArray<Tool<never, unknown>>;
  system?: string;
  /** Tool rounds executed at most; then the run ends `halted` / `max_iterations`. Default 10. */
  maxToolIterations?: number;
  /** Tool calls of one round running at once. Default: all of them. */
  maxConcurrentTools?: number;
  retry?: RetryOptions | false;
  doomLoop?: DoomLoopOptions | false;
  /** Default timeout of a tool call, enforced by the machine. Default 60 s. */
  toolTimeoutMs?: number;
  /** Longest wait for the provider's first byte, and between two stream events. Default 120 s. */
  requestTimeoutMs?: number;
  /** Tool output fed back to the model is cut at this many UTF-8 bytes, with a visible marker. Default 100 kB. */
  maxToolResultBytes?: number;
  /** Tool-call arguments longer than this many bytes are refused with an error result. Default 1 MB. */
  maxToolArgsBytes?: number;
  /**
   * Request middleware, composed in order around every provider request (the first is the
   * outermost): history truncation, prompt injection, reasoning effort, your own.
   */
  middleware?: ReadonlyArray<RequestMiddleware>;
  /** Prices per million tokens by model: the output then carries `cost`. */
  prices?: PriceTable;
  /** Ask for a structured final answer, validated (and repaired) against a schema: `output.object`. */
  output?: OutputOptions<TOutputSchema>;
};

/** Options with defaults applied and every value checked. */
export type ResolvedOptions = {
  provider: Provider;
  tools: ReadonlyMap<string, Tool>;
  toolDescriptions: ToolDescription[];
  system: string | undefined;
  maxToolIterations: number;
  maxConcurrentTools: number;
  retry: Required<RetryOptions>;
  doomLoopThreshold: number | false;
  toolTimeoutMs: number;
  requestTimeoutMs: number;
  maxToolResultBytes: number;
  maxToolArgsBytes: number;
  prices: PriceTable | undefined;
  output: ResolvedOutput | undefined;
};

const knownOptions = new Set([
  'provider',
  'tools',
  'system',
  'maxToolIterations',
  'maxConcurrentTools',
  'retry',
  'doomLoop',
  'toolTimeoutMs',
  'requestTimeoutMs',
  'maxToolResultBytes',
  'maxToolArgsBytes',
  'middleware',
  'prices',
  'output',
]);

function integer(value: unknown, option: string, fallback: number, minimum: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum) {
    throw new InvalidOptionsError(option, `an integer ≥ ${minimum}`, value);
  }
  return value;
}

function duration(value: unknown, option: string, fallback: number, minimum = 1): number {
  if (value === undefined) return fallback;
  // setTimeout cannot wait longer than 2^31-1 ms; a larger value would fire at once.
  if (typeof value !== 'number' || !Number.isFinite(value) || value < minimum || value > 2_147_483_647) {
    throw new InvalidOptionsError(option, `a number of milliseconds between ${minimum} and 2147483647`, value);
  }
  return value;
}

function isProvider(value: unknown): value is Provider {
  return typeof value === 'object' && value !== null && typeof (value as Provider).stream === 'function';
}

/** Validates options at creation, naming the option and what was expected on failure. */
export function resolveOptions(options: ConversationOptions<StandardSchemaV1 | JSONSchema>): ResolvedOptions {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionsError('options', 'an object { provider, tools?, ... }', options);
  }
  for (const key of Object.keys(options)) {
    if (!knownOptions.has(key)) throw new InvalidOptionsError(key, `a known option (${[...knownOptions].join(', ')})`, 'an unknown option');
  }
  if (!isProvider(options.provider)) {
    throw new InvalidOptionsError(
      'provider',
      'a Provider (e.g. openaiProvider(...), anthropicProvider(...), handlerProvider(fn))',
      options.provider,
    );
  }
  if (options.system !== undefined && typeof options.system !== 'string') {
    throw new InvalidOptionsError('system', 'a string', options.system);
  }

  const rawTools: unknown = options.tools ?? [];
  if (!Array.isArray(rawTools)) throw new InvalidOptionsError('tools', 'an array of tools made with defineTool', rawTools);
  const tools = new Map<string, Tool>();
  rawTools.forEach((raw: unknown, index) => {
    // A plain definition object is accepted too, so a typo surfaces with its position in the list.
    const tool = (isTool(raw) ? raw : createTool(raw as Parameters<typeof createTool>[0], `tools[${index}]`)) as Tool;
    if (tools.has(tool.name)) throw new InvalidOptionsError(`tools[${index}].name`, 'a tool name not used by another tool', tool.name);
    tools.set(tool.name, tool);
  });

  const retryOption: unknown = options.retry;
  if (retryOption !== undefined && retryOption !== false && (typeof retryOption !== 'object' || retryOption === null)) {
    throw new InvalidOptionsError('retry', 'an object { maxRetries, initialDelayMs, maxDelayMs } or false', retryOption);
  }
  const retry = (retryOption || {}) as RetryOptions;
  if (retry.jitter !== undefined && typeof retry.jitter !== 'boolean')
    throw new InvalidOptionsError('retry.jitter', 'a boolean', retry.jitter);
  const resolvedRetry: Required<RetryOptions> = {
    maxRetries: retryOption === false ? 0 : integer(retry.maxRetries, 'retry.maxRetries', 2, 0),
    initialDelayMs: duration(retry.initialDelayMs, 'retry.initialDelayMs', 500, 0),
    maxDelayMs: duration(retry.maxDelayMs, 'retry.maxDelayMs', 30_000, 0),
    jitter: retry.jitter ?? true,
    maxRetryAfterMs: duration(retry.maxRetryAfterMs, 'retry.maxRetryAfterMs', 60_000, 0),
  };
  if (resolvedRetry.maxDelayMs < resolvedRetry.initialDelayMs) {
    throw new InvalidOptionsError(
      'retry.maxDelayMs',
      `a value ≥ retry.initialDelayMs (${resolvedRetry.initialDelayMs})`,
      resolvedRetry.maxDelayMs,
    );
  }

  const doomLoopOption: unknown = options.doomLoop;
  let doomLoopThreshold: number | false;
  if (doomLoopOption === false) doomLoopThreshold = false;
  else if (doomLoopOption === undefined) doomLoopThreshold = 3;
  else if (typeof doomLoopOption === 'object' && doomLoopOption !== null) {
    doomLoopThreshold = integer((doomLoopOption as DoomLoopOptions).threshold, 'doomLoop.threshold', 3, 2);
  } else throw new InvalidOptionsError('doomLoop', 'an object { threshold } or false', doomLoopOption);

  const maxConcurrentTools =
    options.maxConcurrentTools === undefined ? Number.POSITIVE_INFINITY : integer(options.maxConcurrentTools, 'maxConcurrentTools', 1, 1);

  const middleware: unknown = options.middleware ?? [];
  if (!Array.isArray(middleware))
    throw new InvalidOptionsError('middleware', 'an array of functions (request, next) => events', middleware);
  middleware.forEach((entry: unknown, index) => {
    if (typeof entry !== 'function') throw new InvalidOptionsError(`middleware[${index}]`, 'a function (request, next) => events', entry);
  });

  return {
    provider: withMiddleware(options.provider, middleware as RequestMiddleware[]),
    tools,
    toolDescriptions: [...tools.values()].map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
    })),
    system: options.system === '' ? undefined : options.system,
    maxToolIterations: integer(options.maxToolIterations, 'maxToolIterations', 10, 0),
    maxConcurrentTools,
    retry: resolvedRetry,
    doomLoopThreshold,
    toolTimeoutMs: duration(options.toolTimeoutMs, 'toolTimeoutMs', 60_000),
    requestTimeoutMs: duration(options.requestTimeoutMs, 'requestTimeoutMs', 120_000),
    maxToolResultBytes: integer(options.maxToolResultBytes, 'maxToolResultBytes', 100_000, 256),
    maxToolArgsBytes: integer(options.maxToolArgsBytes, 'maxToolArgsBytes', 1_000_000, 2),
    prices: validatePrices(options.prices),
    output: resolveOutput(options.output, new Set(tools.keys())),
  };
}
