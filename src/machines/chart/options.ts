import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import type { PromptCacheRequest, PromptCacheTtl, Provider } from '../../model/provider.js';
import type { RequestMiddleware } from '../../middleware/request-middleware.js';
import { withMiddleware } from '../../middleware/with-middleware.js';
import type { Tool } from '../../tools/define-tool.js';
import { capText } from '../../tools/result-text.js';
import { type ToolOutput, toolOutputOf } from '../../tools/tool-content.js';
import { type AgentProfile, agentProfiles, singleProfile, toolsByName } from '../agents/agent-profiles.js';
import { type AgentCallSpec, isAgentTool } from '../agents/agent-tool.js';
import type { Agent } from '../agents/define-agent.js';
import { type PriceTable, pricesSchema } from '../policies/pricing.js';
import { type BudgetOptions, budgetSchema, checkPricedModels } from '../policies/budget.js';
import { type GuardrailOptions, guardrailsSchema } from '../controls/guardrails.js';
import type { ResolvedGuardrails } from '../../tools/guardrail.js';
import { modelPrices } from '../policies/model-prices.js';
import type { RetryOptions } from '../policies/retry-policy.js';
import { type ContextOptions, checkWindow, contextSchema, type ResolvedContext } from '../controls/compaction.js';
import { type OutputOptions, type ResolvedOutput, resolveOutput } from '../policies/structured-output.js';
import type { StandardSchemaV1 } from '../../tools/standard-schema.js';
import type { JSONSchema } from '../../tools/validate.js';
import { defaultMaxMediaBytes } from '../../model/media.js';
import { childPath, option, type OptionSchema, resolveOptionsWith } from '../../util/option-schema.js';

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
  /**
   * The model's provider, or a fallback list: when a request's retries on one are used up on a
   * retryable error, the next takes the same request (`provider.fallback`); a fatal error does not
   * fall back. Each new request starts with the first again.
   */
  provider: Provider | readonly Provider[];
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
   * Prompt caching ([docs](../../docs/rich-content.md#prompt-caching)): `'auto'` (the default)
   * places it where the wire lets the caller — Anthropic `cache_control` breakpoints on the tools,
   * the system prompt and the newest message of every request; `{ ttl, key }` sets how long the
   * prefix is kept (`'5m'` or `'1h'` on Anthropic, `'5m'` or `'24h'` on OpenAI) and OpenAI's
   * `prompt_cache_key`; `false` sends none of it.
   *
   * @example
   * ```ts
   * createConversationMachine({ provider: anthropicProvider({ model: 'claude-sonnet-4-5', maxTokens: 4096 }), promptCache: { ttl: '1h' } });
   * ```
   */
  promptCache?: 'auto' | false | { ttl?: PromptCacheTtl; key?: string };
  /** The largest image or file a user message may carry, in bytes; a larger one is rejected (`event.rejected`), never stored. Default 20 MB. */
  maxMediaBytes?: number;
  /**
   * Request middleware, composed in order around every provider request (the first is the
   * outermost): history truncation, prompt injection, reasoning effort, your own.
   */
  middleware?: ReadonlyArray<RequestMiddleware>;
  /** Prices per million tokens by model: the output then carries `cost`. */
  prices?: PriceTable;
  /** Ask for a structured final answer, validated (and repaired) against a schema: `output.object`. */
  output?: OutputOptions<TOutputSchema>;
  /**
   * How deep the agent calls this machine makes may go (the root is depth 0, its children 1). A call
   * that would go deeper gets an error result. Default 4.
   */
  maxAgentDepth?: number;
  /** This machine's agent name where a tree names it (`usageByAgent`, traces). Default `'main'`. */
  name?: string;
  /**
   * Agents that hand the conversation to each other (see `defineAgent`): the context holds the
   * active one, whose system prompt, tools (besides the shared `tools`) and provider each request
   * uses. With `agents`, `system` is each agent's, and `provider` is the default of agents without one.
   */
  agents?: readonly Agent[];
  /** The agent a run starts with. Default: the first of `agents`. */
  startAgent?: string;
  /**
   * Limits on tokens, cost and time over the run and its agent tree: over one, the run ends
   * `halted` / `budget` (see {@link BudgetOptions}). `maxCostUsd` prices with `prices` over the
   * built-in {@link modelPrices}.
   */
  budget?: BudgetOptions;
  /** Checks of the user's message before the first request and of the final answer before `done` (see {@link Guardrail}). */
  guardrails?: GuardrailOptions;
  /**
   * What a `user.message` during a run does: `'reject'` answers `event.rejected` (default);
   * `'queue'` keeps it for the next request boundary (`user.message.queued`). `user.interrupt`
   * works either way.
   */
  steering?: 'reject' | 'queue';
  /** The context window: compaction before a request that would not fit (see {@link ContextOptions}). */
  context?: ContextOptions;
};

/** Options with defaults applied and every value checked. */
export type ResolvedOptions = {
  /** Every tool any agent has, by name (handoff tools included): what executions and lookups use. */
  tools: ReadonlyMap<string, Tool>;
  /** What a request is made with, by agent: one profile without `agents`. */
  profiles: ReadonlyMap<string, AgentProfile>;
  startAgent: string;
  /** Whether the machine has `agents` (its runs track the active one). */
  handoffs: boolean;
  /** The active agent's profile (the start agent's for a run that has none). */
  profileOf: (agent: string | undefined) => AgentProfile;
  maxToolIterations: number;
  maxConcurrentTools: number;
  retry: Required<RetryOptions>;
  doomLoopThreshold: number | false;
  toolTimeoutMs: number;
  requestTimeoutMs: number;
  maxToolResultBytes: number;
  maxToolArgsBytes: number;
  maxMediaBytes: number;
  /** What each request asks of the wire's prompt cache; `undefined` when `promptCache` is `false`. */
  promptCache: PromptCacheRequest | undefined;
  prices: PriceTable | undefined;
  output: ResolvedOutput | undefined;
  /** A tool's own timeout, or the machine's. */
  toolTimeoutOf: (name: string) => number;
  /** Whether a call of this tool may run again after a restart. */
  isIdempotent: (name: string) => boolean;
  /** A tool result as the model gets it: cut at `maxToolResultBytes`, with a visible marker. */
  capToolResult: (text: string) => string;
  /** What a tool returned, as the run keeps it: capped text, and a `toolContent`'s checked parts. */
  toolOutputOf: (value: unknown) => ToolOutput;
  maxAgentDepth: number;
  name: string;
  /** The agent tools, by tool name: their calls run as child conversations. */
  agentCalls: ReadonlyMap<string, AgentCallSpec>;
  budget: BudgetOptions | undefined;
  guardrails: ResolvedGuardrails;
  steering: 'reject' | 'queue';
  context: ResolvedContext | undefined;
};

const retrySchema = option.object(
  {
    maxRetries: option.withDefault(option.integer({ minimum: 0 }), 2),
    initialDelayMs: option.withDefault(option.milliseconds({ minimum: 0 }), 500),
    maxDelayMs: option.withDefault(option.milliseconds({ minimum: 0 }), 30_000),
    jitter: option.withDefault(option.boolean(), true),
    maxRetryAfterMs: option.withDefault(option.milliseconds({ minimum: 0 }), 60_000),
  },
  { expected: 'an object { maxRetries, initialDelayMs, maxDelayMs } or false', unknownKeys: 'ignore' },
);

const retryOrFalse = option.orFalse(retrySchema, retrySchema.expected);

const resolvedRetrySchema: OptionSchema<Required<RetryOptions>> = option.transform(option.unchecked(), (value, path) => {
  // `retry: false` keeps the other settings' defaults: only the number of retries changes.
  const retry = value === false ? { ...retrySchema.resolve({}, path), maxRetries: 0 } : retryOrFalse.resolve(value ?? {}, path);
  if (retry === false) return retrySchema.resolve({}, path);
  if (retry.maxDelayMs < retry.initialDelayMs) {
    throw new InvalidOptionsError(
      childPath(path, 'maxDelayMs'),
      `a value ≥ retry.initialDelayMs (${retry.initialDelayMs})`,
      retry.maxDelayMs,
    );
  }
  return retry;
});

const doomLoopSchema = option.transform(
  option.orFalse(
    option.object({ threshold: option.withDefault(option.integer({ minimum: 2 }), 3) }, { unknownKeys: 'ignore' }),
    'an object { threshold } or false',
  ),
  (doomLoop) => (doomLoop === false ? false : doomLoop.threshold),
);

const promptCacheExpected = "'auto', false or an object { ttl?: '5m' | '1h' | '24h', key? }";
const promptCacheSchema: OptionSchema<PromptCacheRequest | undefined> = option.transform(option.unchecked(), (value, path) => {
  if (value === undefined || value === 'auto') return {};
  if (value === false) return undefined;
  const { ttl, key } = option
    .object(
      {
        ttl: option.optional(option.choice(['5m', '1h', '24h'] as const)),
        key: option.optional(option.string({ nonEmpty: true })),
      },
      { expected: promptCacheExpected },
    )
    .resolve(value, path);
  return { ...(ttl === undefined ? {} : { ttl }), ...(key === undefined ? {} : { key }) };
});

/** A `promptCache.ttl` a provider's wire does not offer is refused now, naming what it offers. */
function checkPromptCacheTtl(cache: PromptCacheRequest | undefined, providers: Iterable<{ path: string; provider: Provider }>): void {
  if (cache?.ttl === undefined) return;
  for (const { path, provider } of providers) {
    const offered = provider.promptCacheTtls;
    if (offered && !offered.includes(cache.ttl))
      throw new InvalidOptionsError(
        'promptCache.ttl',
        `one the ${provider.name} wire of ${path} offers: ${offered.map((ttl) => `'${ttl}'`).join(' or ')}`,
        cache.ttl,
      );
  }
}

const providerSchema = option.matching(
  'a Provider (e.g. openaiProvider(...), anthropicProvider(...), handlerProvider(fn))',
  (value): value is Provider => typeof value === 'object' && value !== null && typeof (value as Provider).stream === 'function',
);

/** One provider, or a non-empty fallback list of them, resolved to the list. */
const providersSchema: OptionSchema<readonly Provider[]> = option.transform(option.unchecked(), (value, path) => {
  if (!Array.isArray(value)) return [providerSchema.resolve(value, path)];
  if (value.length === 0) throw new InvalidOptionsError(path, 'a Provider or a non-empty array of providers (a fallback list)', value);
  return value.map((entry, index) => providerSchema.resolve(entry, `${path}[${index}]`));
});

const middlewareSchema = option.array(
  option.callable<RequestMiddleware>('a function (request, next) => events'),
  'an array of functions (request, next) => events',
);

/**
 * The options of {@link ConversationOptions}, checked in one pass. `tools` and `output` are
 * compiled after it (a tool's schema by its own library), since both need the others' names.
 */
const conversationOptionsSchema = option.object(
  {
    provider: option.optional(providersSchema),
    tools: option.withDefault(option.array(option.unchecked(), 'an array of tools made with defineTool'), []),
    system: option.optional(option.string()),
    maxToolIterations: option.withDefault(option.integer({ minimum: 0 }), 10),
    maxConcurrentTools: option.withDefault(option.integer({ minimum: 1 }), Number.POSITIVE_INFINITY),
    retry: resolvedRetrySchema,
    doomLoop: option.withDefault(doomLoopSchema, 3),
    toolTimeoutMs: option.withDefault(option.milliseconds(), 60_000),
    requestTimeoutMs: option.withDefault(option.milliseconds(), 120_000),
    maxToolResultBytes: option.withDefault(option.integer({ minimum: 256 }), 100_000),
    maxToolArgsBytes: option.withDefault(option.integer({ minimum: 2 }), 1_000_000),
    maxMediaBytes: option.withDefault(option.integer({ minimum: 1 }), defaultMaxMediaBytes),
    promptCache: promptCacheSchema,
    middleware: option.withDefault(middlewareSchema, []),
    prices: option.optional(pricesSchema),
    output: option.unchecked(),
    maxAgentDepth: option.withDefault(option.integer({ minimum: 0 }), 4),
    name: option.withDefault(option.string({ nonEmpty: true }), 'main'),
    agents: option.optional(
      option.array(
        option.matching(
          'an agent made with defineAgent(...)',
          (value): value is Agent => typeof value === 'object' && value !== null && Array.isArray((value as Agent).handoffs),
        ),
        'an array of agents made with defineAgent(...)',
      ),
    ),
    startAgent: option.optional(option.string({ nonEmpty: true })),
    budget: option.optional(budgetSchema),
    guardrails: guardrailsSchema,
    steering: option.withDefault(option.choice(['reject', 'queue'] as const), 'reject'),
    context: option.optional(contextSchema),
  },
  { expected: 'an object { provider, tools?, ... }' },
);

/** Validates options at creation, naming the option and what was expected on failure. */
export function resolveOptions(options: ConversationOptions<StandardSchemaV1 | JSONSchema>): ResolvedOptions {
  const checked = resolveOptionsWith(conversationOptionsSchema, options);
  const shared = toolsByName(checked.tools, 'tools');
  const tools = new Map(shared);
  const withShared = (provider: Provider) => withMiddleware(provider, checked.middleware);
  const withSharedAll = (providers: readonly Provider[]) => providers.map(withShared);
  const needProvider = (path: string): never => {
    throw new InvalidOptionsError(path, providerSchema.expected, checked.provider);
  };
  let profiles: Map<string, AgentProfile>;
  let startAgent: string;
  if (checked.agents && checked.agents.length > 0) {
    if (checked.system !== undefined)
      throw new InvalidOptionsError('system', 'no value with agents (each agent has its own system)', checked.system);
    const shareProvider = checked.provider === undefined ? undefined : withSharedAll(checked.provider);
    ({ profiles, startAgent } = agentProfiles(
      checked.agents,
      checked.startAgent,
      shared,
      (agent, index) =>
        agent.provider ? [withShared(agent.provider)] : (shareProvider ?? needProvider(`agents[${index}].provider (or provider)`)),
      tools,
    ));
  } else {
    if (checked.startAgent !== undefined) throw new InvalidOptionsError('startAgent', 'no value without agents', checked.startAgent);
    const provider = checked.provider ?? needProvider('provider');
    startAgent = checked.name;
    profiles = new Map([[startAgent, singleProfile(startAgent, withSharedAll(provider), checked.system || undefined, tools)]]);
  }
  const startProfile = profiles.get(startAgent) as AgentProfile;
  // Every provider with the option it came from, for the checks that name one.
  const providerEntries = [...profiles.values()].flatMap((profile) =>
    profile.providers.map((provider, index) => ({
      path: checked.agents?.length
        ? `agents (${profile.name}).provider`
        : Array.isArray(options.provider)
          ? `provider[${index}]`
          : 'provider',
      provider,
    })),
  );
  checkPromptCacheTtl(checked.promptCache, providerEntries);
  if (checked.context) checkWindow(checked.context, profiles.values());
  // `maxCostUsd` prices over the built-in table; a model neither table prices is named now.
  const prices = checked.prices ?? (checked.budget?.maxCostUsd === undefined ? undefined : {});
  const budgetPrices = prices === undefined ? undefined : { ...modelPrices, ...prices };
  if (budgetPrices) {
    checkPricedModels(
      checked.budget,
      budgetPrices,
      providerEntries.map(({ path, provider }) => ({ path, model: provider.model })),
    );
  }
  return {
    tools,
    profiles,
    startAgent,
    handoffs: checked.agents !== undefined && checked.agents.length > 0,
    profileOf: (agent) => (agent === undefined ? startProfile : (profiles.get(agent) ?? startProfile)),
    maxToolIterations: checked.maxToolIterations,
    maxConcurrentTools: checked.maxConcurrentTools,
    retry: checked.retry,
    doomLoopThreshold: checked.doomLoop,
    toolTimeoutMs: checked.toolTimeoutMs,
    requestTimeoutMs: checked.requestTimeoutMs,
    maxToolResultBytes: checked.maxToolResultBytes,
    maxToolArgsBytes: checked.maxToolArgsBytes,
    maxMediaBytes: checked.maxMediaBytes,
    promptCache: checked.promptCache,
    prices: budgetPrices,
    output: resolveOutput(checked.output, new Set(tools.keys())),
    toolTimeoutOf: (name) => tools.get(name)?.timeoutMs ?? checked.toolTimeoutMs,
    isIdempotent: (name) => tools.get(name)?.idempotent === true,
    capToolResult: (text) => capText(text, checked.maxToolResultBytes),
    toolOutputOf: (value) =>
      toolOutputOf(value, { capText: (text) => capText(text, checked.maxToolResultBytes), maxMediaBytes: checked.maxMediaBytes }),
    maxAgentDepth: checked.maxAgentDepth,
    name: checked.name,
    agentCalls: new Map([...tools.values()].filter(isAgentTool).map((tool) => [tool.name, tool.agent])),
    budget: checked.budget,
    guardrails: checked.guardrails,
    steering: checked.steering,
    context: checked.context,
  };
}
