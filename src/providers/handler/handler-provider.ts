import type { Provider, ProviderEvent, ProviderRequest, ReasoningEffort } from '../../model/provider.js';
import type { OpenAIChatCompletionChunk, OpenAIChatMessage, OpenAIChatTool, OpenAIResponseFormat } from '../openai-wire/chat-types.js';
import { createChunkReader } from '../openai-wire/from-openai-chunks.js';
import { toOpenAIMessages, toOpenAIResponseFormat, toOpenAITools } from '../openai-wire/to-openai-messages.js';
import { option, resolveOptionsWith } from '../../util/option-schema.js';

/**
 * What a handler receives: the request in OpenAI Chat Completions format, so it can go to any
 * Chat Completions server as it is.
 *
 * @example
 * ```ts
 * const provider = handlerProvider(({ messages, tools, signal, sessionData }: HandlerRequest) =>
 *   openai.chat.completions.create(
 *     { model: (sessionData as { model: string }).model, messages, ...(tools.length ? { tools } : {}), stream: true },
 *     { signal },
 *   ),
 * );
 * ```
 */
export type HandlerRequest = {
  /** Chat Completions messages, system prompt first. */
  messages: OpenAIChatMessage[];
  /** Chat Completions function tools. */
  tools: OpenAIChatTool[];
  /** Fires when the run no longer wants the answer (cancel, timeout): stop work and close connections. */
  signal: AbortSignal;
  sessionData?: unknown;
  /**
   * Set when the machine has an `output` schema: the structured answer it wants, in Chat
   * Completions form (pass it on as `response_format`).
   */
  response_format?: OpenAIResponseFormat;
  /** Set by the `reasoningEffort()` middleware (Chat Completions `reasoning_effort`). */
  reasoning_effort?: ReasoningEffort;
};

/**
 * A user function that answers one request with a stream of `chat.completion.chunk` objects.
 *
 * @example
 * ```ts
 * const echo: ChunkHandler = async function* ({ messages }) {
 *   yield { choices: [{ index: 0, delta: { content: `${messages.length} messages` }, finish_reason: 'stop' }] };
 * };
 * const provider = handlerProvider(echo);
 * ```
 */
export type ChunkHandler = (
  request: HandlerRequest,
) => AsyncIterable<OpenAIChatCompletionChunk> | Promise<AsyncIterable<OpenAIChatCompletionChunk>>;

const handlerSchema = option.callable<ChunkHandler>('a function (request) => AsyncIterable of chat.completion.chunk objects');

/**
 * A provider backed by your own function. Whatever logic you need (history truncation, RAG,
 * another vendor) goes inside it; it returns OpenAI chunks, so the `openai` SDK's stream can be
 * returned as it is. An error it throws is classified by its `status` (as an HTTP status) or its
 * boolean `retryable`; any other error is not retried.
 *
 * @example
 * ```ts
 * // OpenAI refuses an empty `tools` array, so send it only when there are tools.
 * const provider = handlerProvider(({ messages, tools, signal }) =>
 *   openai.chat.completions.create(
 *     { model: 'gpt-4o-mini', messages, ...(tools.length ? { tools } : {}), stream: true },
 *     { signal },
 *   ),
 * );
 * ```
 */
export function handlerProvider(handler: ChunkHandler): Provider {
  const handle = resolveOptionsWith(handlerSchema, handler, 'handlerProvider(handler)');
  return {
    name: 'handler',
    async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
      const chunks = await handle({
        messages: toOpenAIMessages(request.messages, request.system),
        tools: toOpenAITools(request.tools),
        signal: request.signal,
        ...(request.sessionData === undefined ? {} : { sessionData: request.sessionData }),
        ...(request.responseFormat === undefined ? {} : { response_format: toOpenAIResponseFormat(request.responseFormat) }),
        ...(request.reasoningEffort === undefined ? {} : { reasoning_effort: request.reasoningEffort }),
      });
      if (chunks === null || typeof chunks !== 'object' || !(Symbol.asyncIterator in chunks)) {
        throw new TypeError('handlerProvider: the handler must return an AsyncIterable of chat.completion.chunk objects');
      }
      const reader = createChunkReader();
      for await (const chunk of chunks) for (const event of reader.read(chunk)) yield event;
      yield reader.finish();
    },
  };
}
