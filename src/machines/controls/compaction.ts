import { fromPromise } from 'xstate';
import { type CompactionStrategy, createStrategyLogic, createSummarizeLogic, type SummarizeOutput } from '../../actors/summarize-call.js';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { estimateTokens } from '../../model/estimate-tokens.js';
import type { ProviderError } from '../../model/errors/provider-error.js';
import type { Message } from '../../model/messages.js';
import { addUsage } from '../../model/usage.js';
import { option, type OptionSchema } from '../../util/option-schema.js';
import type { AgentProfile } from '../agents/agent-profiles.js';
import { compactedMessages, planCompaction, promptTokens, summaryMessage, summaryProblem } from './compaction-plan.js';
import type { Effects } from '../names/effects.js';
import { addCost, type PriceTable } from '../policies/pricing.js';
import { runErrorOf } from './request-failure.js';
import type { ConversationContext, RunError } from '../names/types.js';

/**
 * The context window a run is held to (DESIGN §12). Before a request whose prompt would exceed
 * `maxInputTokens`, the run passes through `compacting`: everything before the last `keepLast`
 * messages is replaced by a summary (a provider request of the active agent's provider, retried like
 * any request), dropped, or replaced by what your `strategy` returns. A tool call is never parted
 * from its result; system messages stay. A provider's context-length error compacts once and the
 * request is made again. Tokens are estimated as the last response's reported `inputTokens` plus
 * about one token per four characters of the messages added since (see `estimateTokens`).
 *
 * @example
 * ```ts
 * createConversationMachine({ provider, context: { maxInputTokens: 100_000, keepLast: 8, strategy: 'summarize' } });
 * ```
 */
export type ContextOptions = {
  /** The prompt size (input tokens: system prompt, tools and history) requests are held under. */
  maxInputTokens: number;
  /** The latest messages that always stay as they are. Default 6. */
  keepLast?: number;
  /** How the oldest messages give way: a summary (default), dropped, or your function's messages. */
  strategy?: 'summarize' | 'drop' | CompactionStrategy;
};

/** `context`, checked: the window, the tail and the strategy. */
export type ResolvedContext = { maxInputTokens: number; keepLast: number; strategy: 'summarize' | 'drop' | CompactionStrategy };

const strategyExpected = "'summarize', 'drop' or a function (oldest, { signal }) => Message[] (sync or async)";
const strategySchema: OptionSchema<ResolvedContext['strategy']> = option.either<ResolvedContext['strategy']>(strategyExpected, [
  [(value) => typeof value === 'function', option.callable<CompactionStrategy>(strategyExpected)],
  [(value) => typeof value === 'string', option.choice(['summarize', 'drop'] as const, strategyExpected)],
]);

export const contextSchema: OptionSchema<ResolvedContext> = option.object(
  {
    maxInputTokens: option.integer({ minimum: 1, expected: 'a number of tokens (an integer ≥ 1)' }),
    keepLast: option.withDefault(option.integer({ minimum: 0 }), 6),
    strategy: option.withDefault(strategySchema, 'summarize' as const),
  },
  { expected: 'an object { maxInputTokens, keepLast?, strategy? }' },
);

/**
 * A window no compaction could meet is an options error: every request sends the system prompt, the
 * tool descriptions and the kept tail, so `maxInputTokens` must leave room for at least those (each
 * kept message counted at its smallest).
 */
export function checkWindow(context: ResolvedContext, profiles: Iterable<AgentProfile>): void {
  for (const profile of profiles) {
    const fixed = estimateTokens([], {
      ...(profile.system === undefined ? {} : { system: profile.system }),
      tools: profile.toolDescriptions,
    });
    const least = fixed + context.keepLast * 5;
    if (context.maxInputTokens <= least) {
      throw new InvalidOptionsError(
        'context.maxInputTokens',
        `a number of tokens > ${least}: the system prompt and tool descriptions (about ${fixed} tokens) and the ${context.keepLast} kept messages (keepLast) are sent with every request`,
        context.maxInputTokens,
      );
    }
  }
}

type Settings = { context: ResolvedContext; profileOf: (agent: string | undefined) => AgentProfile };

/** The system prompt and tools the active agent's requests carry, for the prompt estimate. */
const requestParts = (context: ConversationContext, settings: Settings) => {
  const profile = settings.profileOf(context.agents.active);
  // The provider the next request goes to counts the media (a fallback may count them another way).
  const mediaRule = (profile.providers[context.control.provider] ?? profile.provider).mediaTokens;
  return {
    ...(profile.system === undefined ? {} : { system: profile.system }),
    tools: profile.toolDescriptions,
    ...(mediaRule === undefined ? {} : { mediaRule }),
  };
};

/** The estimated prompt of the next request (the last reported count, plus what was added since). */
export function nextPromptTokens(context: ConversationContext, settings: Settings): number {
  const last = context.control.lastPrompt;
  return promptTokens({
    messages: context.messages,
    ...(last ? { lastInputTokens: last.inputTokens, lastMessageCount: last.messages } : {}),
    ...requestParts(context, settings),
  });
}

/** Whether the history was compacted for this request already: then it is not compacted again. */
export const compactedForThisRequest = (context: Pick<ConversationContext, 'control' | 'messages'>) =>
  context.control.compactedAt === context.messages.length;

/** The split of the history a compaction works on: everything before the kept tail gives way. */
export const compactionPlanOf = (context: Pick<ConversationContext, 'messages'>, settings: Pick<Settings, 'context'>) =>
  planCompaction(context.messages, { keepLast: settings.context.keepLast });

/** The next prompt would not fit the window, and there is something to compact. */
export function overWindow(context: ConversationContext, settings: Settings): boolean {
  if (compactedForThisRequest(context)) return false;
  const tokens = nextPromptTokens(context, settings);
  return tokens > settings.context.maxInputTokens && compactionPlanOf(context, settings) !== null;
}

/** The provider said the prompt is too long: compact once, when there is something to compact. */
export function compactsAfter(
  failure: Pick<ProviderError, 'code'>,
  context: ConversationContext,
  settings: Pick<Settings, 'context'>,
): boolean {
  return failure.code === 'context_length' && !compactedForThisRequest(context) && compactionPlanOf(context, settings) !== null;
}

/** A compaction starts: its cause and the prompt's size before are kept for `context.compacted`; the attempt counts its retries. */
export function compactionStarted(
  context: ConversationContext,
  settings: Settings,
  cause: 'window' | 'context_length',
): Partial<ConversationContext> {
  const beforeTokens =
    cause === 'window' ? nextPromptTokens(context, settings) : estimateTokens(context.messages, requestParts(context, settings));
  return { attempt: 1, control: { ...context.control, compaction: { cause, beforeTokens } } };
}

/** The window settings of a machine, for the chart's input mapper (a machine without `context` never compacts). */
export const windowOf = (settings: { context: ResolvedContext | undefined }): Pick<Settings, 'context'> => ({
  context: settings.context ?? { maxInputTokens: Number.POSITIVE_INFINITY, keepLast: 0, strategy: 'drop' },
});

/** What the compaction actor is given: the oldest messages, and who asks (for a summary's provider). */
export function compactionInput(context: ConversationContext, settings: Pick<Settings, 'context'>) {
  return {
    messages: compactionPlanOf(context, settings)?.oldest ?? [],
    ...(context.sessionData === undefined ? {} : { sessionData: context.sessionData }),
    ...(context.agents.active === undefined ? {} : { agent: context.agents.active }),
    ...(context.control.provider === 0 ? {} : { provider: context.control.provider }),
  };
}

/** What a compaction actor gives back: a summary (`summarize`) or the replacing messages (`drop`, a strategy). */
export type CompactionOutput = SummarizeOutput | { messages: Message[] };

/** Why a compaction's output cannot replace the oldest messages, or `undefined` when it can. */
export function compactionProblem(output: unknown): string | undefined {
  if (typeof output === 'object' && output !== null && 'text' in output) return summaryProblem((output as SummarizeOutput).text);
  if (typeof output === 'object' && output !== null && Array.isArray((output as { messages?: unknown }).messages)) return undefined;
  return 'the compaction gave back nothing usable';
}

/**
 * The oldest messages give way: the history is the plan's system messages, the replacement and the
 * kept tail; a summary's tokens join the run's usage (and cost); `context.compacted` says how much.
 */
export function compactionApplied(
  context: ConversationContext,
  output: CompactionOutput,
  settings: Settings & { prices: PriceTable | undefined },
): Effects {
  const plan = compactionPlanOf(context, settings);
  if (!plan) return {};
  const summary = 'text' in output ? output : undefined;
  const messages = compactedMessages(plan, 'text' in output ? [summaryMessage(output.text)] : output.messages);
  const { lastPrompt: _lastPrompt, compaction, ...control } = context.control;
  const afterTokens = estimateTokens(messages, requestParts(context, settings));
  const usage = summary ? addUsage(context.usage, summary.usage) : context.usage;
  const cost =
    summary && context.billing.cost && settings.prices
      ? addCost(context.billing.cost, settings.prices, summary.model, summary.usage)
      : context.billing.cost;
  return {
    context: {
      messages,
      usage,
      billing: { ...context.billing, cost },
      control: { ...control, compactedAt: messages.length },
    },
    emitted: [
      {
        type: 'context.compacted',
        removedMessages: plan.oldest.length,
        keptMessages: plan.kept.length,
        beforeTokens: compaction?.beforeTokens ?? estimateTokens(context.messages, requestParts(context, settings)),
        afterTokens,
        cause: compaction?.cause ?? 'window',
      },
      ...(summary ? [{ type: 'usage' as const, step: summary.usage, total: usage }] : []),
    ],
  };
}

/** A summary that cannot be used ends the run: the history is left as it was. */
export function unusableCompactionError(output: unknown): RunError {
  return {
    name: 'CompactionError',
    message: `compaction: ${compactionProblem(output) ?? 'unusable result'}; the history was left as it was`,
    retryable: false,
    code: 'compaction_failed',
  };
}

/** A compaction that failed for good (its retries used up, or a strategy that threw): the run ends, history untouched. */
export function compactionFailureError(failure: ProviderError): RunError {
  return { ...runErrorOf(failure), message: `compaction: ${failure.message}; the history was left as it was` };
}

/** The compaction actor for a machine's strategy: a summary request, a drop, or the user's function. */
export function createCompactionLogic(settings: {
  context: ResolvedContext | undefined;
  profileOf: (agent: string | undefined) => AgentProfile;
  requestTimeoutMs: number;
}) {
  const strategy = settings.context?.strategy ?? 'summarize';
  if (strategy === 'drop') return fromPromise<CompactionOutput, { messages: Message[] }>(async () => ({ messages: [] }));
  if (typeof strategy === 'function') return createStrategyLogic(strategy);
  return createSummarizeLogic(
    (agent, index) => {
      const profile = settings.profileOf(agent);
      return profile.providers[index] ?? profile.provider;
    },
    { requestTimeoutMs: settings.requestTimeoutMs },
  );
}
