/**
 * The part of the AI SDK's language model specification (`@ai-sdk/provider`: `LanguageModelV2`,
 * ai 5's providers; `LanguageModelV3`, ai 6's; `LanguageModelV4`, ai 7's) that the adapter reads and writes, written out so
 * that actorloop needs none of the AI SDK's packages at run time or to type-check: any provider
 * package's model fits it structurally.
 */

/** JSON as the specification passes it. */
export type AiSdkJson = null | string | number | boolean | AiSdkJson[] | { [key: string]: AiSdkJson | undefined };

/** Per-provider data on a part: the model's `providerMetadata`, sent back as the part's `providerOptions`. */
export type AiSdkProviderData = Record<string, Record<string, AiSdkJson | undefined>>;

/** A stream part of `doStream` (both versions share these). */
export type AiSdkStreamPart =
  | { type: 'stream-start'; warnings?: unknown[] }
  | { type: 'response-metadata'; id?: string; modelId?: string; timestamp?: Date }
  | { type: 'text-start' | 'text-end' | 'reasoning-start' | 'reasoning-end'; id: string; providerMetadata?: AiSdkProviderData }
  | { type: 'text-delta' | 'reasoning-delta'; id: string; delta: string; providerMetadata?: AiSdkProviderData }
  | { type: 'tool-input-start'; id: string; toolName: string; providerMetadata?: AiSdkProviderData; providerExecuted?: boolean }
  | { type: 'tool-input-delta'; id: string; delta: string }
  | { type: 'tool-input-end'; id: string }
  | {
      type: 'tool-call';
      toolCallId: string;
      toolName: string;
      input: string;
      providerExecuted?: boolean;
      providerMetadata?: AiSdkProviderData;
    }
  | { type: 'finish'; usage: AiSdkUsage; finishReason: AiSdkFinishReason; providerMetadata?: AiSdkProviderData }
  | { type: 'error'; error: unknown }
  | { type: 'raw' | 'ping' | 'file' | 'source' | 'tool-result' | 'tool-approval-request' };

/** Usage: V3/V4 split counts; the flat V2 form is read too. */
export type AiSdkUsage =
  | {
      inputTokens: { total?: number; noCache?: number; cacheRead?: number; cacheWrite?: number };
      outputTokens: { total?: number; text?: number; reasoning?: number };
    }
  | { inputTokens?: number; outputTokens?: number; totalTokens?: number; reasoningTokens?: number; cachedInputTokens?: number };

/** V3/V4 `{ unified, raw }`; V2 a bare string. */
export type AiSdkFinishReason = { unified: string; raw?: string } | string;

/** A prompt message as the model takes it; file data differs between the versions (see `to-ai-sdk-prompt.ts`). */
export type AiSdkMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: AiSdkPromptPart[] }
  | { role: 'assistant'; content: AiSdkPromptPart[] }
  | { role: 'tool'; content: AiSdkPromptPart[] };

export type AiSdkPromptPart = { type: string; providerOptions?: AiSdkProviderData } & Record<string, unknown>;

/** What `doStream` is called with (the fields the adapter sets). */
export type AiSdkCallOptions = {
  prompt: AiSdkMessage[];
  tools?: Array<{ type: 'function'; name: string; description?: string; inputSchema: Record<string, unknown>; strict?: boolean }>;
  toolChoice?: { type: 'auto' | 'none' | 'required' } | { type: 'tool'; toolName: string };
  responseFormat?: { type: 'text' } | { type: 'json'; schema?: Record<string, unknown>; name?: string; description?: string };
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  seed?: number;
  abortSignal?: AbortSignal;
  headers?: Record<string, string | undefined>;
  providerOptions?: AiSdkProviderData;
};

/**
 * A language model of the AI SDK's specification, version 2 (ai 5's provider packages), 3 (ai 6's)
 * or 4 (ai 7's): `google('gemini-2.5-flash')`, `bedrock('…')`, `mistral('…')`, `createOpenAICompatible(…)('…')`.
 *
 * @example
 * ```ts
 * import { google } from '@ai-sdk/google';
 * const model: AiSdkLanguageModel = google('gemini-2.5-flash');
 * ```
 */
export type AiSdkLanguageModel = {
  readonly specificationVersion: 'v2' | 'v3' | 'v4';
  readonly provider: string;
  readonly modelId: string;
  doStream(options: never): PromiseLike<{ stream: ReadableStream<unknown> }>;
};
