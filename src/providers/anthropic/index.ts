/**
 * `actorloop/anthropic`: the Anthropic Messages provider with the wire types and conversions it is
 * built from. `anthropicProvider` and its options type are at the root too; this subpath adds what
 * only code that speaks the Anthropic wire itself needs (a custom provider, a test double).
 *
 * @example
 * ```ts
 * import { anthropicProvider, toAnthropicMessages } from 'actorloop/anthropic';
 *
 * const provider = anthropicProvider({ model: 'claude-haiku-4-5', maxTokens: 1024 });
 * const { system, messages } = toAnthropicMessages([{ role: 'user', content: 'Hi' }], 'You are terse.');
 * ```
 * @packageDocumentation
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
