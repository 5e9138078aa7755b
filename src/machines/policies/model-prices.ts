import type { PriceTable } from './pricing.js';

/**
 * List prices of current OpenAI and Anthropic models, in USD per million tokens (standard tier, no
 * batch discount), as the vendors' pricing pages gave them when this table was last reviewed
 * (2026-12). A dated model id (`gpt-4o-2024-08-06`, `claude-sonnet-4-5-20250929`) finds its family's
 * key. Your own `prices` extend and override it: vendors change prices, so a budget that matters
 * should name the prices it was planned with.
 *
 * @example
 * ```ts
 * import { modelPrices } from 'actorloop';
 * createConversationMachine({ provider, prices: { ...modelPrices, 'my-finetune': { input: 3, output: 12 } } });
 * ```
 */
export const modelPrices: Readonly<PriceTable> = Object.freeze({
  // OpenAI
  'gpt-5.1': { input: 1.25, cachedInput: 0.125, output: 10 },
  'gpt-5': { input: 1.25, cachedInput: 0.125, output: 10 },
  'gpt-5-mini': { input: 0.25, cachedInput: 0.025, output: 2 },
  'gpt-5-nano': { input: 0.05, cachedInput: 0.005, output: 0.4 },
  'gpt-4.1': { input: 2, cachedInput: 0.5, output: 8 },
  'gpt-4.1-mini': { input: 0.4, cachedInput: 0.1, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, cachedInput: 0.025, output: 0.4 },
  'gpt-4o': { input: 2.5, cachedInput: 1.25, output: 10 },
  'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 },
  o3: { input: 2, cachedInput: 0.5, output: 8 },
  'o4-mini': { input: 1.1, cachedInput: 0.275, output: 4.4 },
  'o3-mini': { input: 1.1, cachedInput: 0.55, output: 4.4 },
  o1: { input: 15, cachedInput: 7.5, output: 60 },
  // Anthropic: cache reads at a tenth of input, 5-minute cache writes at 1.25×.
  'claude-opus-4-6': { input: 5, cachedInput: 0.5, cacheWrite: 6.25, cacheWrite1h: 10, output: 25 },
  'claude-opus-4-5': { input: 5, cachedInput: 0.5, cacheWrite: 6.25, cacheWrite1h: 10, output: 25 },
  'claude-opus-4-1': { input: 15, cachedInput: 1.5, cacheWrite: 18.75, cacheWrite1h: 30, output: 75 },
  'claude-opus-4': { input: 15, cachedInput: 1.5, cacheWrite: 18.75, cacheWrite1h: 30, output: 75 },
  'claude-sonnet-4-5': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, cacheWrite1h: 6, output: 15 },
  'claude-sonnet-4': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, cacheWrite1h: 6, output: 15 },
  'claude-3-7-sonnet': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, cacheWrite1h: 6, output: 15 },
  'claude-haiku-4-5': { input: 1, cachedInput: 0.1, cacheWrite: 1.25, cacheWrite1h: 2, output: 5 },
  'claude-3-5-haiku': { input: 0.8, cachedInput: 0.08, cacheWrite: 1, cacheWrite1h: 1.6, output: 4 },
});
