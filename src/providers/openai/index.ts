export {
  openaiProvider,
  type OpenAIProviderOptions,
  type OpenAIClientLike,
  type OpenAIRequestParams,
  type OpenAIChatRequestBody,
  type OpenAIReasoningEffort,
} from './openai-provider.js';
