/**
 * `actorloop/openai`: the OpenAI provider (Chat Completions and the Responses API) with the wire
 * types and conversions it is built from. `openaiProvider` and its options types are at the root
 * too; this subpath adds what only code that speaks the OpenAI wire itself needs — a custom
 * provider, a `handlerProvider` that builds its own chunks, a test double of the client.
 *
 * @example
 * ```ts
 * import { handlerProvider } from 'actorloop';
 * import { toOpenAIMessages, type OpenAIChatCompletionChunk } from 'actorloop/openai';
 *
 * const provider = handlerProvider(async function* (): AsyncGenerator<OpenAIChatCompletionChunk> {
 *   yield { choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }] };
 * });
 * const wire = toOpenAIMessages([{ role: 'user', content: 'Hi' }], 'You are terse.');
 * ```
 * @packageDocumentation
 */
export {
  openaiProvider,
  type OpenAIProviderOptions,
  type OpenAIClientLike,
  type OpenAIRequestParams,
  type OpenAIChatRequestBody,
  type OpenAIAssistantMessageWithReasoning,
  type OpenAIReasoningEffort,
} from './openai-provider.js';
export { type OpenAIResponsesProviderOptions, isOpenAIReasoningModel } from './responses-provider.js';

// Chat Completions: the wire of `openaiProvider` and of `handlerProvider`'s chunks and messages.
export type { OpenAIChatCompletionChunk, OpenAIChatMessage, OpenAIChatTool } from '../openai-wire/chat-types.js';
export { toOpenAIMessages } from '../openai-wire/to-openai-messages.js';

// The Responses API (`openaiProvider({ api: 'responses' })`).
export type {
  OpenAIResponsesClientLike,
  OpenAIResponsesRequestParams,
  OpenAIResponsesRequestBody,
  OpenAIResponsesInputItem,
  OpenAIResponsesFunctionTool,
  OpenAIResponsesReasoning,
  OpenAIResponsesPhase,
} from '../openai-responses/wire-types.js';
export { toResponsesInput, type ResponsesInput, type ResponsesInputOptions } from '../openai-responses/to-responses-input.js';

// What the Responses provider keeps on message parts (`part.providerMetadata.openai`) to send items back as they came.
export type {
  OpenAIItemMetadata,
  OpenAITextMetadata,
  OpenAIReasoningMetadata,
  OpenAIMessagePhase,
} from '../openai-responses/openai-metadata.js';
