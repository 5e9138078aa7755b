/**
 * Token usage of one request or of a whole run.
 *
 * @example
 * ```ts
 * const total = addUsage(emptyUsage(), { inputTokens: 10, outputTokens: 5, totalTokens: 15 });
 * ```
 */
export type Usage = {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** Input tokens served from a prompt cache (OpenAI `cached_tokens`, Anthropic `cache_read_input_tokens`). */
  cachedInputTokens?: number;
  /** Input tokens written to a prompt cache (Anthropic `cache_creation_input_tokens`). */
  cacheCreationInputTokens?: number;
  /** Of `cacheCreationInputTokens`, those written for an hour (Anthropic `ephemeral_1h_input_tokens`): priced at `cacheWrite1h`. */
  cacheCreation1hInputTokens?: number;
  /** Output tokens spent on reasoning (OpenAI `reasoning_tokens`). */
  reasoningTokens?: number;
};

/**
 * A usage of zero tokens: the starting point for summing with {@link addUsage}.
 *
 * @example
 * ```ts
 * let spent = emptyUsage();
 * ```
 */
export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
}

const optionalKeys = ['cachedInputTokens', 'cacheCreationInputTokens', 'cacheCreation1hInputTokens', 'reasoningTokens'] as const;

/**
 * The sum of two usages; optional counts appear when either side has them, so an absent count
 * still means "not reported" rather than zero.
 *
 * @example
 * ```ts
 * actor.on('usage', ({ step }) => { spent = addUsage(spent, step); });
 * ```
 */
export function addUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
  for (const key of optionalKeys) {
    if (a[key] !== undefined || b[key] !== undefined) sum[key] = (a[key] ?? 0) + (b[key] ?? 0);
  }
  return sum;
}
