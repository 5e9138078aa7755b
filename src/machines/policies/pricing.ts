import { option, type OptionSchema } from '../../util/option-schema.js';
import type { Usage } from '../../model/usage.js';
import type { RunCost } from '../names/types.js';

export type { RunCost } from '../names/types.js';

/**
 * What a model costs, per million tokens. Cached input and cache writes fall back to the input
 * price when not given.
 *
 * @example
 * ```ts
 * const price: ModelPrice = { input: 0.15, cachedInput: 0.075, output: 0.6 }; // gpt-4o-mini, USD
 * ```
 */
export type ModelPrice = {
  input: number;
  output: number;
  /** Input tokens read from a prompt cache (OpenAI cached tokens, Anthropic cache reads). */
  cachedInput?: number;
  /** Input tokens written to a prompt cache (Anthropic cache creation, five minutes). */
  cacheWrite?: number;
  /** Input tokens written to a prompt cache for an hour (Anthropic `ttl: '1h'`); falls back to `cacheWrite`. */
  cacheWrite1h?: number;
};

/**
 * Prices by model id. A response's model (`gpt-4o-mini-2024-07-18`) matches its own key or the
 * longest key it starts with followed by `-` (`gpt-4o-mini`).
 *
 * @example
 * ```ts
 * const prices: PriceTable = { 'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 } };
 * createConversationMachine({ provider, prices }); // output.cost
 * ```
 */
export type PriceTable = Record<string, ModelPrice>;

export const zeroCost = (): RunCost => ({ input: 0, cachedInput: 0, cacheWrite: 0, output: 0, total: 0, unpricedModels: [] });

/** The price of `model`: its own key, else the longest key it extends (`<key>-…`). */
export function findPrice(prices: PriceTable, model: string): ModelPrice | undefined {
  const exact = prices[model];
  if (exact) return exact;
  let best: string | undefined;
  for (const key of Object.keys(prices)) {
    if (model.startsWith(`${key}-`) && (best === undefined || key.length > best.length)) best = key;
  }
  return best === undefined ? undefined : prices[best];
}

/**
 * `cost` plus what `usage` cost on `model` (or, when the table has no price for it, on
 * `requestedModel`). Input tokens in the neutral usage include cached and cache-written ones, so
 * those are taken out of the plain input price.
 *
 * @example
 * ```ts
 * addCost(zeroCost(), prices, 'gpt-4o-mini', { inputTokens: 1000, cachedInputTokens: 400, outputTokens: 100, totalTokens: 1100 });
 * ```
 */
export function addCost(cost: RunCost, prices: PriceTable, model: string | undefined, usage: Usage, requestedModel?: string): RunCost {
  if (usage.totalTokens === 0 && usage.inputTokens === 0 && usage.outputTokens === 0) return cost;
  const name = model ?? 'unknown';
  // A response may name a model the table does not know (a new dated snapshot): the requested one's price then stands.
  const price = findPrice(prices, name) ?? (requestedModel === undefined ? undefined : findPrice(prices, requestedModel));
  if (!price) {
    return cost.unpricedModels.includes(name) ? cost : { ...cost, unpricedModels: [...cost.unpricedModels, name] };
  }
  const cached = usage.cachedInputTokens ?? 0;
  const written = usage.cacheCreationInputTokens ?? 0;
  const writtenForAnHour = Math.min(written, usage.cacheCreation1hInputTokens ?? 0);
  const plain = Math.max(0, usage.inputTokens - cached - written);
  const input = (plain * price.input) / 1e6;
  const cachedInput = (cached * (price.cachedInput ?? price.input)) / 1e6;
  const writePrice = price.cacheWrite ?? price.input;
  const cacheWrite = ((written - writtenForAnHour) * writePrice + writtenForAnHour * (price.cacheWrite1h ?? writePrice)) / 1e6;
  const output = (usage.outputTokens * price.output) / 1e6;
  return {
    input: cost.input + input,
    cachedInput: cost.cachedInput + cachedInput,
    cacheWrite: cost.cacheWrite + cacheWrite,
    output: cost.output + output,
    total: cost.total + input + cachedInput + cacheWrite + output,
    unpricedModels: cost.unpricedModels,
  };
}

const price = option.number({ minimum: 0, expected: 'a price per million tokens (a number ≥ 0)' });

/** A price table, checked at machine creation, naming the model and field that is wrong. */
export const pricesSchema: OptionSchema<PriceTable> = option.record(
  option.object(
    {
      input: price,
      output: price,
      cachedInput: option.optional(price),
      cacheWrite: option.optional(price),
      cacheWrite1h: option.optional(price),
    },
    { expected: 'an object { input, output, cachedInput?, cacheWrite?, cacheWrite1h? }', unknownKeys: 'ignore' },
  ),
  'an object { [model]: { input, output, cachedInput?, cacheWrite?, cacheWrite1h? } } (per million tokens)',
);
