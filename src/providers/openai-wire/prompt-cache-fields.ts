import type { PromptCacheRequest, PromptCacheTtl } from '../../model/provider.js';

/** The prompt-cache lifetimes OpenAI offers: in memory (its default, about five minutes idle) and 24 hours. */
export const openaiPromptCacheTtls: readonly PromptCacheTtl[] = ['5m', '24h'];

/**
 * The prompt-cache fields of an OpenAI request, on both APIs: `prompt_cache_key` (requests with the
 * same key go to the same cache) and `prompt_cache_retention: '24h'` for `ttl: '24h'`. OpenAI caches
 * a long prefix by itself, so without a key or a 24-hour ttl nothing is sent — and an
 * OpenAI-compatible server that knows neither field gets neither.
 *
 * @example
 * ```ts
 * promptCacheFields({ ttl: '24h', key: 'support-bot' }); // { prompt_cache_key: 'support-bot', prompt_cache_retention: '24h' }
 * ```
 */
export function promptCacheFields(cache: PromptCacheRequest | undefined): { prompt_cache_key?: string; prompt_cache_retention?: '24h' } {
  if (!cache) return {};
  return {
    ...(cache.key === undefined ? {} : { prompt_cache_key: cache.key }),
    ...(cache.ttl === '24h' ? { prompt_cache_retention: '24h' as const } : {}),
  };
}
