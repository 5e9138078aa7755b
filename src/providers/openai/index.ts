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
