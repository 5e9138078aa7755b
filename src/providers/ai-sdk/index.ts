/**
 * actorloop/ai-sdk — every language model of the AI SDK's provider specification (`@ai-sdk/google`,
 * `@ai-sdk/amazon-bedrock`, `@ai-sdk/mistral`, `@ai-sdk/openai-compatible`, …) as an actorloop
 * provider. Needs only the provider package you use; actorloop imports none of the AI SDK.
 *
 * @example
 * ```ts
 * import { google } from '@ai-sdk/google';
 * import { aiSdkProvider } from 'actorloop/ai-sdk';
 * const provider = aiSdkProvider(google('gemini-2.5-flash'));
 * ```
 * @packageDocumentation
 */
export { aiSdkError, aiSdkProvider, type AiSdkProviderOptions } from './ai-sdk-provider.js';
export type { AiSdkLanguageModel, AiSdkProviderData } from './language-model.js';
export { aiSdkMetadataKey } from './to-ai-sdk-prompt.js';
export { createModelRegistry, defaultModelRegistry, type ModelRegistry } from './model-registry.js';
