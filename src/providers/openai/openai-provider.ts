import { openaiPromptCacheTtls, promptCacheFields } from '../openai-wire/prompt-cache-fields.js';
import { isRecord } from '../../util/is-record.js';
import type { FetchFunction } from '../transport/fetch-function.js';
import { classifySdkError, redactSecret } from '../errors/classify-sdk-error.js';
import { ProviderError } from '../../model/errors/provider-error.js';
import type { OpenAIChatCompletionChunk, OpenAIChatUsage } from '../openai-wire/chat-types.js';
import { createChunkReader } from '../openai-wire/from-openai-chunks.js';
import { toOpenAIMessages, toOpenAIResponseFormat, toOpenAITools } from '../openai-wire/to-openai-messages.js';
import type { Provider, ProviderEvent, ProviderRequest } from '../../model/provider.js';
import { keyToHide, openaiClient } from './openai-client.js';
import type { OpenAIReasoningEffort } from './reasoning-effort.js';
import type { OpenAIChatRequestBody, OpenAIClientLike, OpenAIRequestParams } from './openai-chat-request.js';
import { openaiResponsesProvider, type OpenAIResponsesProviderOptions } from './responses-provider.js';
import { resolveOpenAIOptions } from './validate-options.js';

export type { OpenAIReasoningEffort } from './reasoning-effort.js';
export type {
  OpenAIAssistantMessageWithReasoning,
  OpenAIChatRequestBody,
  OpenAIClientLike,
  OpenAIRequestParams,
} from './openai-chat-request.js';

/**
 * Options of {@link openaiProvider} on Chat Completions (`POST /chat/completions`, the default),
 * which every OpenAI-compatible server speaks. The Responses API takes
 * {@link OpenAIResponsesProviderOptions} (`api: 'responses'`).
 *
 * @example
 * ```ts
 * const options: OpenAIProviderOptions = { model: 'deepseek-reasoner', baseURL: 'https://api.deepseek.com', apiKey };
 * ```
 */
export type OpenAIProviderOptions = {
  /** Chat Completions (the default). */
  api?: 'chat';
  /** The model id, e.g. `gpt-4o-mini`. */
  model: string;
  /** Defaults to the `OPENAI_API_KEY` environment variable (read by the SDK). Ignored with `client`. */
  apiKey?: string;
  /** An OpenAI-compatible endpoint, e.g. `https://api.groq.com/openai/v1`. Ignored with `client`. */
  baseURL?: string;
  /**
   * The `fetch` the provider's own client sends with (ignored with `client`), e.g. {@link createNodeFetch}
   * for keep-alive `node:http` connections. Defaults to the SDK's choice, Node's global `fetch`.
   */
  fetch?: FetchFunction;
  /** A ready client; its own retry setting is overridden per request, as the machine retries. */
  client?: OpenAIClientLike;
  /**
   * Extra request parameters (temperature, max tokens, vendor-specific fields). They cannot replace
   * what the provider itself sets: `model`, `messages`, `tools`, `stream`.
   */
  params?: OpenAIRequestParams;
  /** Stream the response (default `true`); `false` sends one non-streaming request. */
  stream?: boolean;
  /** Sets `strict` on every function tool (OpenAI structured outputs); left out when not given. */
  strict?: boolean;
  /** `reasoning_effort` for reasoning models. */
  reasoningEffort?: OpenAIReasoningEffort;
  /**
   * Send the reasoning of earlier assistant messages back as `reasoning_content` (default `false`).
   * DeepSeek's thinking mode with tools and llama.cpp's gpt-oss continue their reasoning from it
   * inside a tool loop; OpenAI ignores it, and older DeepSeek reasoner models refuse it, hence opt-in.
   */
  sendReasoning?: boolean;
  /** The provider's name in logs and errors (default `openai`), e.g. `groq`. */
  name?: string;
};

type ChatCompletionLike = {
  choices?: Array<{
    index?: number;
    message?: {
      content?: string | null;
      refusal?: string | null;
      reasoning_content?: string | null;
      reasoning?: string | null;
      tool_calls?: Array<{ id?: string; type?: string; function?: { name?: string; arguments?: string } }> | null;
    } | null;
    finish_reason?: string | null;
  }>;
  usage?: OpenAIChatUsage | null;
};

/** `reasoning_effort` when one is set: the provider's own option, else the request's (middleware). */
const reasoningEffortParam = (effort: OpenAIReasoningEffort | undefined) => (effort === undefined ? {} : { reasoning_effort: effort });

/**
 * A non-streamed `chat.completion` as one chunk, so both modes share the chunk accumulator and
 * produce the same events.
 */
function completionAsChunk(completion: ChatCompletionLike): OpenAIChatCompletionChunk {
  const choice = completion.choices?.find((candidate) => (candidate.index ?? 0) === 0);
  const message = choice?.message ?? {};
  return {
    choices: [
      {
        index: 0,
        delta: {
          content: message.content ?? null,
          refusal: message.refusal ?? null,
          reasoning_content: message.reasoning_content ?? null,
          reasoning: message.reasoning ?? null,
          tool_calls: (message.tool_calls ?? []).map((call, index) => ({
            index,
            id: call.id ?? null,
            type: call.type ?? 'function',
            function: { name: call.function?.name ?? '', arguments: call.function?.arguments ?? '' },
          })),
        },
        // A body without a choice still ends the response; its reason is unknown.
        finish_reason: choice?.finish_reason ?? (choice ? null : 'unknown'),
      },
    ],
    usage: completion.usage ?? null,
  };
}

/** Chat Completions messages, with each assistant message's reasoning added when asked to. */
function requestMessages(request: ProviderRequest, sendReasoning: boolean): OpenAIChatRequestBody['messages'] {
  if (!sendReasoning) return toOpenAIMessages(request.messages, request.system);
  const out: OpenAIChatRequestBody['messages'] = toOpenAIMessages([], request.system);
  for (const message of request.messages) {
    const converted = toOpenAIMessages([message]);
    const reasoning =
      message.role === 'assistant' ? message.content.map((part) => (part.type === 'reasoning' ? part.text : '')).join('') : '';
    const first = converted[0];
    if (reasoning !== '' && first?.role === 'assistant') {
      // A copy: converted messages may be shared between requests.
      out.push({ ...first, reasoning_content: reasoning }, ...converted.slice(1));
    } else {
      out.push(...converted);
    }
  }
  return out;
}

/**
 * A provider for the OpenAI Chat Completions API and every server that speaks it (Azure, Groq,
 * DeepSeek, OpenRouter, xAI, llama.cpp, vLLM…) through `baseURL`, or, with `api: 'responses'`,
 * for the OpenAI Responses API (reasoning kept across turns as encrypted items; see
 * {@link OpenAIResponsesProviderOptions}). It needs the `openai` package, loaded on first use
 * unless you pass your own `client`. The SDK's retries are switched off: the conversation machine
 * retries, so every attempt is a visible state.
 *
 * @example
 * ```ts
 * const machine = createConversationMachine({
 *   provider: openaiProvider({ model: 'gpt-4o-mini', apiKey: process.env.OPENAI_API_KEY, params: { temperature: 0 } }),
 *   tools: [add],
 * });
 * ```
 *
 * @example
 * ```ts
 * // An OpenAI-compatible server, not streamed
 * const deepseek = openaiProvider({ model: 'deepseek-chat', baseURL: 'https://api.deepseek.com', apiKey, stream: false });
 * ```
 *
 * @example
 * ```ts
 * // The Responses API, stateless: reasoning items go back encrypted with every request
 * const gpt5 = openaiProvider({ api: 'responses', model: 'gpt-5-mini', reasoningSummary: 'auto' });
 * ```
 */
export function openaiProvider(options: OpenAIProviderOptions | OpenAIResponsesProviderOptions): Provider {
  const resolved = resolveOpenAIOptions(options);
  if (resolved.api === 'responses') return openaiResponsesProvider(resolved);
  const { model, apiKey, baseURL, client, params, stream: streaming, sendReasoning, strict, reasoningEffort } = resolved;
  const getClient = openaiClient<OpenAIClientLike>(client, { apiKey, baseURL, fetch: resolved.fetch });

  return {
    name: resolved.name,
    model,
    promptCacheTtls: openaiPromptCacheTtls,
    mediaTokens: 'openai',
    async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
      const { signal } = request;
      let openai: OpenAIClientLike | undefined;
      try {
        openai = await getClient();
        const tools = toOpenAITools(request.tools, strict);
        const body: OpenAIChatRequestBody = {
          // The user's own `params` win over the machine's `promptCache`.
          ...promptCacheFields(request.promptCache),
          ...params,
          model,
          messages: requestMessages(request, sendReasoning),
          // OpenAI rejects an empty `tools` array, so a run without tools sends none.
          ...(tools.length > 0 ? { tools } : {}),
          ...reasoningEffortParam(reasoningEffort ?? request.reasoningEffort),
          // A `response_format` in `params` is the user's choice and wins.
          ...(request.responseFormat && params?.response_format === undefined
            ? { response_format: toOpenAIResponseFormat(request.responseFormat) }
            : {}),
          stream: streaming,
          ...(streaming
            ? { stream_options: { ...(isRecord(params?.stream_options) ? params.stream_options : {}), include_usage: true } }
            : {}),
        };
        if (!streaming) delete body.stream_options;
        const response = await openai.chat.completions.create(body, { signal, maxRetries: 0 });
        const reader = createChunkReader();
        if (streaming) {
          if (!isRecord(response) || !(Symbol.asyncIterator in response)) {
            throw new ProviderError('the OpenAI client returned no stream for a `stream: true` request', {
              code: 'unknown',
              retryable: false,
            });
          }
          // Read here, not through a generator per layer: each would cost promises and microtask turns per chunk.
          for await (const chunk of response as AsyncIterable<OpenAIChatCompletionChunk>)
            for (const event of reader.read(chunk)) yield event;
          // The SDK ends a stream quietly when its signal aborts; a stream cut short by a cancel must
          // not look like a complete response (or like a retryable truncated one).
          if (signal.aborted) throw new ProviderError('the request was aborted', { code: 'aborted', retryable: false });
        } else {
          // openai 7 hands an empty 200 body back as nothing (6 threw a parse error): a broken
          // transfer, retried like a stream cut short.
          if (response === undefined || response === null || response === '') {
            throw new ProviderError('the response body was empty', { code: 'incomplete_stream', retryable: true });
          }
          if (!isRecord(response) || !Array.isArray(response.choices)) {
            throw new ProviderError('the OpenAI client returned no chat.completion object', { code: 'unknown', retryable: false });
          }
          for (const event of reader.read(completionAsChunk(response as ChatCompletionLike))) yield event;
        }
        yield reader.finish();
      } catch (error) {
        // The key in use may come from the client or the environment, not only from the options.
        throw redactSecret(classifySdkError(error, signal), keyToHide(openai, { apiKey, clientGiven: client !== undefined }));
      }
    },
  };
}
