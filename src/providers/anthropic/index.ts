/**
 * The Anthropic Messages provider and the conversions it is built from.
 *
 * @example
 * ```ts
 * import { anthropicProvider } from './providers/anthropic/index.js';
 * const provider = anthropicProvider({ model: 'claude-haiku-4-5', maxTokens: 1024 });
 * ```
 */
export { anthropicProvider, type AnthropicProviderOptions } from './anthropic-provider.js';
export { toAnthropicMessages, toAnthropicTools, emptyToolResultText, type AnthropicConversation } from './to-anthropic-messages.js';
export { fromAnthropicStream, type AnthropicStreamOptions } from './from-anthropic-stream.js';
export {
  fromAnthropicMessage,
  fromAnthropicStopReason,
  fromAnthropicUsage,
} from './from-anthropic-message.js';
export type * from './wire-types.js';
export type { AnthropicStructuredOutput } from './structured-answer.js';
