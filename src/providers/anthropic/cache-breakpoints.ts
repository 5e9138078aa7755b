import type { PromptCacheRequest } from '../../model/provider.js';
import type { AnthropicCacheControl, AnthropicMessageParam, AnthropicTextBlockParam, AnthropicTool } from './wire-types.js';

/** The parts of a Messages request that caching marks, in the order the API reads its prefix. */
export type CacheablePrompt = {
  tools?: AnthropicTool[];
  system?: string | AnthropicTextBlockParam[];
  messages: AnthropicMessageParam[];
};

/** Blocks that take `cache_control`: thinking blocks cannot carry one. */
const markable = new Set(['text', 'tool_use', 'tool_result', 'image', 'document']);

/**
 * The request with prompt-cache breakpoints where they pay (docs/rich-content.md#prompt-caching):
 * on the last tool, on the system prompt and on the newest message's last block — three of the four
 * the API allows. The API caches the prefix up to each breakpoint, so the next request, whose history
 * only grew, reads everything up to this request's newest message from the cache and writes only
 * what is new. Nothing is changed in place: the marked blocks and messages are copies.
 *
 * @example
 * ```ts
 * withCacheBreakpoints({ system: 'You are terse.', messages: [{ role: 'user', content: 'Hi' }] }, { ttl: '1h' });
 * // { system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
 * //   messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral', ttl: '1h' } }] }] }
 * ```
 */
export function withCacheBreakpoints<TPrompt extends CacheablePrompt>(prompt: TPrompt, cache: PromptCacheRequest): TPrompt {
  // Five minutes is the API's default: only an hour is spelled out.
  const control: AnthropicCacheControl = cache.ttl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
  const marked: TPrompt = { ...prompt };
  if (prompt.tools && prompt.tools.length > 0) {
    marked.tools = [...prompt.tools.slice(0, -1), { ...(prompt.tools.at(-1) as AnthropicTool), cache_control: control }];
  }
  if (typeof prompt.system === 'string') marked.system = [{ type: 'text', text: prompt.system, cache_control: control }];
  else if (prompt.system && prompt.system.length > 0) {
    marked.system = [...prompt.system.slice(0, -1), { ...(prompt.system.at(-1) as AnthropicTextBlockParam), cache_control: control }];
  }
  const newest = prompt.messages.at(-1);
  if (newest) {
    const content =
      typeof newest.content === 'string' ? [{ type: 'text' as const, text: newest.content }] : (newest.content as Array<{ type: string }>);
    const at = content.findLastIndex((block) => markable.has(block.type));
    if (at !== -1) {
      const blocks = content.map((block, index) => (index === at ? { ...block, cache_control: control } : block));
      marked.messages = [...prompt.messages.slice(0, -1), { ...newest, content: blocks } as AnthropicMessageParam];
    }
  }
  return marked;
}
