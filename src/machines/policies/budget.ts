import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import type { Usage } from '../../model/usage.js';
import { isRecord } from '../../util/is-record.js';
import { option, type OptionSchema } from '../../util/option-schema.js';
import { addCost, findPrice, type PriceTable, zeroCost } from './pricing.js';
import type { BudgetReached, ConversationContext, ConversationEmittedEvent, InheritedBudget } from '../names/types.js';

/**
 * Limits on what a run may spend, its agent tree included (DESIGN §12). Checked before each request
 * and after each usage: a run over a limit ends `halted` / `budget` with `RunOutput.budget`, and the
 * tool calls of an unfinished round get error results (the history stays valid).
 *
 * @example
 * ```ts
 * createConversationMachine({ provider, tools, prices, budget: { maxTotalTokens: 50_000, maxCostUsd: 0.25, maxDurationMs: 120_000 } });
 * ```
 */
export type BudgetOptions = {
  /** Tokens in all (input + output, failed attempts and agent calls included). */
  maxTotalTokens?: number;
  /** Cost in the price table's currency (`prices`, else the built-in table): every model used must have a price. */
  maxCostUsd?: number;
  /** Wall time from the run's `user.message`; a timer ends the run wherever it is. */
  maxDurationMs?: number;
};

/** The id of the delayed `budget.deadline` event a run with a time limit schedules (re-armed on restore). */
export const budgetDeadlineId = 'budgetDeadline';

/** A positive, finite limit; `Infinity`, 0 and negatives name the option. */
const limit = (expected: string) => option.number({ minimum: Number.MIN_VALUE, expected });

/** `budget`, checked at creation: each limit a positive finite number. */
export const budgetSchema: OptionSchema<BudgetOptions> = option.object(
  {
    maxTotalTokens: option.optional(limit('a number of tokens > 0 (finite)')),
    maxCostUsd: option.optional(limit("an amount > 0 (finite), in the price table's currency")),
    maxDurationMs: option.optional(limit('a duration in ms > 0 (finite)')),
  },
  { expected: 'an object { maxTotalTokens?, maxCostUsd?, maxDurationMs? }' },
);

/**
 * `maxCostUsd` needs a price for every model the machine may call: one it cannot price is named
 * here, at creation, instead of a budget that silently never counts.
 */
export function checkPricedModels(
  budget: BudgetOptions | undefined,
  prices: PriceTable,
  models: ReadonlyArray<{ path: string; model: string | undefined }>,
): void {
  if (budget?.maxCostUsd === undefined) return;
  for (const { path, model } of models) {
    if (model === undefined || findPrice(prices, model) === undefined) {
      throw new InvalidOptionsError(
        path,
        `a provider whose model has a price (budget.maxCostUsd needs one): add it to \`prices\` ({ '${model ?? '<model>'}': { input, output } })`,
        model ?? 'a provider without a model',
      );
    }
  }
}

/** A run's limits as it starts: its own budget, tightened by what a caller left it. */
export function runLimits(budget: BudgetOptions | undefined, inherited: InheritedBudget | undefined, now: number): InheritedBudget {
  const limits: InheritedBudget = {};
  const tokens = tighter(budget?.maxTotalTokens, inherited?.maxTotalTokens);
  const cost = tighter(budget?.maxCostUsd, inherited?.maxCostUsd);
  const deadline = tighter(budget?.maxDurationMs === undefined ? undefined : now + budget.maxDurationMs, inherited?.deadline);
  if (tokens !== undefined) limits.maxTotalTokens = tokens;
  if (cost !== undefined) limits.maxCostUsd = cost;
  if (deadline !== undefined) limits.deadline = deadline;
  // Limits that did not change are the object the run had: a run without a budget copies nothing as it starts.
  const unchanged =
    inherited !== undefined &&
    tokens === inherited.maxTotalTokens &&
    cost === inherited.maxCostUsd &&
    deadline === inherited.deadline &&
    Object.keys(inherited).length === Object.keys(limits).length;
  return unchanged ? inherited : limits;
}

function tighter(own: number | undefined, inherited: number | undefined): number | undefined {
  if (own === undefined) return inherited;
  return inherited === undefined ? own : Math.min(own, inherited);
}

/** An inherited budget from a caller's input, kept only where it is a valid limit. */
export function inheritedBudgetOf(value: unknown): InheritedBudget | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const inherited: InheritedBudget = {};
  for (const key of ['maxTotalTokens', 'maxCostUsd', 'deadline'] as const) {
    const entry = record[key];
    if (typeof entry === 'number' && Number.isFinite(entry)) inherited[key] = entry;
  }
  return inherited;
}

type SpendContext = Pick<ConversationContext, 'usage' | 'billing' | 'round' | 'control'>;

/**
 * What the run and its agent tree have spent: its usage (which holds the finished agent calls),
 * failed attempts, and what the running agent calls reported so far; cost likewise, with the agent
 * calls' requests priced by this machine's table.
 */
export function spent(context: SpendContext): { tokens: number; cost: number } {
  let tokens = context.usage.totalTokens + context.billing.failedUsage.totalTokens;
  let cost = context.billing.cost?.total ?? 0;
  const spend = context.control.childSpend;
  for (const toolCallId in spend) {
    const entry = spend[toolCallId] as { tokens: number; cost: number };
    cost += entry.cost;
    // A finished call's tokens are in `usage` already.
    if (context.round?.some((call) => call.toolCallId === toolCallId && call.state === 'running')) tokens += entry.tokens;
  }
  return { tokens, cost };
}

/** The limit the run is at or over now, if any (`now` for the time limit). */
export function budgetReached(context: SpendContext, now: number): BudgetReached | undefined {
  const { limits } = context.control;
  if (limits.maxTotalTokens === undefined && limits.maxCostUsd === undefined && limits.deadline === undefined) return undefined;
  const used = spent(context);
  if (limits.maxTotalTokens !== undefined && used.tokens >= limits.maxTotalTokens)
    return { limit: 'maxTotalTokens', max: limits.maxTotalTokens, used: used.tokens };
  if (limits.maxCostUsd !== undefined && used.cost >= limits.maxCostUsd)
    return { limit: 'maxCostUsd', max: limits.maxCostUsd, used: used.cost };
  if (limits.deadline !== undefined && now >= limits.deadline) return timeReached(context, now);
  return undefined;
}

/** The time limit, reached: `used` is the run's wall time in ms. */
export function timeReached(context: Pick<ConversationContext, 'control'>, now: number): BudgetReached {
  const { deadline = now } = context.control.limits;
  const max = context.control.limits.deadline === undefined ? 0 : deadline - (context.control.startedAt ?? deadline);
  return { limit: 'maxDurationMs', max, used: now - (context.control.startedAt ?? now) };
}

/** What an agent call's child may still spend: the rest of this run's limits. */
export function childBudget(context: SpendContext): InheritedBudget | undefined {
  const { limits } = context.control;
  if (limits.maxTotalTokens === undefined && limits.maxCostUsd === undefined && limits.deadline === undefined) return undefined;
  const used = spent(context);
  const left: InheritedBudget = {};
  if (limits.maxTotalTokens !== undefined) left.maxTotalTokens = Math.max(0, limits.maxTotalTokens - used.tokens);
  if (limits.maxCostUsd !== undefined) left.maxCostUsd = Math.max(0, limits.maxCostUsd - used.cost);
  if (limits.deadline !== undefined) left.deadline = limits.deadline;
  return left;
}

/**
 * A descendant's `request.finished`s (from an agent call's child, at any depth) add to that call's
 * live spend, priced by this machine's table. Other events change nothing: `undefined` when none
 * of `events` is a finished request.
 */
export function childSpendRecorded(
  context: Pick<ConversationContext, 'control'>,
  toolCallId: string,
  events: readonly ConversationEmittedEvent[],
  prices: PriceTable | undefined,
): Partial<ConversationContext> | undefined {
  let spend = context.control.childSpend[toolCallId];
  for (const event of events) {
    let inner = event;
    // A chain of `agent.event`s down to what the descendant emitted (an event without one ends it).
    while (inner.type === 'agent.event' && isRecord(inner.event)) inner = inner.event;
    if (inner.type !== 'request.finished' || !isRecord(inner.usage) || typeof inner.usage.totalTokens !== 'number') continue;
    const before = spend ?? { tokens: 0, cost: 0 };
    const cost = prices ? addCost(zeroCost(), prices, inner.model, inner.usage as Usage).total : 0;
    spend = { tokens: before.tokens + inner.usage.totalTokens, cost: before.cost + cost };
  }
  if (spend === undefined || spend === context.control.childSpend[toolCallId]) return undefined;
  return { control: { ...context.control, childSpend: { ...context.control.childSpend, [toolCallId]: spend } } };
}
