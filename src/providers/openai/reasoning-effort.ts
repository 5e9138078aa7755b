/**
 * How hard a reasoning model thinks before it answers (`reasoning_effort` on Chat Completions,
 * `reasoning.effort` on the Responses API).
 *
 * @example
 * ```ts
 * const effort: OpenAIReasoningEffort = 'low';
 * openaiProvider({ model: 'o4-mini', reasoningEffort: effort });
 * ```
 */
export type OpenAIReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

/** Every {@link OpenAIReasoningEffort}, for validating options. */
export const reasoningEfforts: ReadonlySet<string> = new Set(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);
