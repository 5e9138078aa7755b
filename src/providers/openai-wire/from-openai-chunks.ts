import { ProviderError } from '../../model/errors/provider-error.js';
import { classifyStatus } from '../../model/errors/classify-error.js';
import type { FinishReason, ProviderContentPart, ProviderEvent } from '../../model/provider.js';
import { emptyUsage, type Usage } from '../../model/usage.js';
import type { OpenAIChatCompletionChunk, OpenAIChatUsage } from './chat-types.js';

/** Maps a Chat Completions `finish_reason` to the neutral one. */
export function toFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'stop':
      return 'stop';
    case 'tool_calls':
    case 'function_call':
      return 'tool-calls';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content-filter';
    default:
      return 'other';
  }
}

/** Usage from a Chat Completions `usage` object, with cached and reasoning tokens when given. */
export function toUsage(usage: OpenAIChatUsage): Usage {
  const inputTokens = usage.prompt_tokens ?? 0;
  const outputTokens = usage.completion_tokens ?? 0;
  const result: Usage = { inputTokens, outputTokens, totalTokens: usage.total_tokens ?? inputTokens + outputTokens };
  const cached = usage.prompt_tokens_details?.cached_tokens;
  if (typeof cached === 'number') result.cachedInputTokens = cached;
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  if (typeof reasoning === 'number') result.reasoningTokens = reasoning;
  return result;
}

/**
 * An error chunk sent inside a 200 stream (OpenRouter and other compatible servers). `usage` is what
 * the stream reported before failing: a failed attempt's tokens are counted apart, not lost.
 */
function inBandError(error: unknown, usage: Usage | undefined, model: string | undefined): ProviderError {
  const body = typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : {};
  const message = typeof body.message === 'string' ? body.message : `in-band stream error: ${JSON.stringify(error)}`;
  const status = typeof body.code === 'number' && body.code >= 100 && body.code < 600 ? body.code : undefined;
  const type = typeof body.type === 'string' ? body.type : undefined;
  if (status !== undefined) {
    const { code, retryable } = classifyStatus(status);
    return new ProviderError(message, { code, retryable, status, cause: error, ...(usage ? { usage } : {}), ...(model ? { model } : {}) });
  }
  const retryable = type === 'server_error' || type === 'overloaded_error' || type === 'rate_limit_error';
  return new ProviderError(message, {
    code: retryable ? 'server' : 'unknown',
    retryable,
    cause: error,
    ...(usage ? { usage } : {}),
    ...(model ? { model } : {}),
  });
}

type PendingToolCall = { toolCallId: string; toolName: string; argsText: string };

/** What a {@link ChunkReader} read from a chunk: often nothing, so one shared empty list. */
const noEvents: readonly ProviderEvent[] = Object.freeze([]);

/**
 * Reads a Chat Completions stream one `chat.completion.chunk` at a time: `read` returns the deltas a
 * chunk carries, `finish` the response they add up to. It is the synchronous core of
 * {@link fromOpenAIChunks}, so a provider that iterates the SDK's stream itself passes each chunk
 * through no generator of its own: every async generator layer costs a few promises and
 * microtask turns per chunk.
 */
export type ChunkReader = {
  /** The deltas in `chunk`, in order; throws a `ProviderError` on a malformed or in-band error chunk. */
  read(chunk: OpenAIChatCompletionChunk): readonly ProviderEvent[];
  /** The `finish` event of the chunks read; throws a retryable `ProviderError` if none carried a `finish_reason`. */
  finish(): ProviderEvent;
};

/**
 * A reader for one response: deltas as they come, tool-call arguments accumulated by index, usage
 * from whichever chunk carries it (the usage-only last chunk of OpenAI, the finish chunk of DeepSeek
 * and Groq), and one `finish` at the end. A stream that ends without a `finish_reason` is an
 * incomplete response: `finish` fails with a retryable error.
 *
 * @example
 * ```ts
 * const reader = createChunkReader();
 * for await (const chunk of stream) for (const event of reader.read(chunk)) handle(event);
 * handle(reader.finish()); // { type: 'finish', content, finishReason, usage, … }
 * ```
 */
export function createChunkReader(): ChunkReader {
  let text = '';
  let reasoning = '';
  const toolCalls: PendingToolCall[] = [];
  const toolCallsByIndex = new Map<number, PendingToolCall>();
  let rawFinishReason: string | undefined;
  let usage: Usage | undefined;
  let model: string | undefined;
  let responseId: string | undefined;

  return {
    read(chunk) {
      if (chunk === null || typeof chunk !== 'object') {
        throw new ProviderError(`expected a chat.completion.chunk object, got ${chunk === null ? 'null' : typeof chunk}`, {
          code: 'bad_request',
          retryable: false,
        });
      }
      if (chunk.error !== undefined && chunk.error !== null) throw inBandError(chunk.error, usage, model);
      if (chunk.usage) usage = toUsage(chunk.usage);
      // Azure's first chunk has an empty id and model: keep the first real ones.
      if (!model && typeof chunk.model === 'string' && chunk.model !== '') model = chunk.model;
      if (!responseId && typeof chunk.id === 'string' && chunk.id !== '') responseId = chunk.id;
      const choice = chunk.choices?.find((candidate) => (candidate.index ?? 0) === 0);
      if (!choice) return noEvents;
      if (choice.finish_reason) rawFinishReason = choice.finish_reason;
      const delta = choice.delta;
      if (!delta) return noEvents;
      const events: ProviderEvent[] = [];
      const reasoningDelta = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoningDelta === 'string' && reasoningDelta !== '') {
        reasoning += reasoningDelta;
        events.push({ type: 'reasoning.delta', delta: reasoningDelta });
      }
      if (typeof delta.content === 'string' && delta.content !== '') {
        text += delta.content;
        events.push({ type: 'text.delta', delta: delta.content });
      }
      if (typeof delta.refusal === 'string' && delta.refusal !== '') {
        text += delta.refusal;
        events.push({ type: 'text.delta', delta: delta.refusal });
      }
      for (const call of delta.tool_calls ?? []) {
        let pending = toolCallsByIndex.get(call.index);
        // Some compatible servers (Gemini's) give every parallel call index 0, told apart by id.
        if (pending && call.id && pending.toolCallId !== call.id && pending.toolName !== '') pending = undefined;
        if (!pending) {
          pending = { toolCallId: call.id || `call_${crypto.randomUUID()}`, toolName: '', argsText: '' };
          toolCallsByIndex.set(call.index, pending);
          toolCalls.push(pending);
        }
        const name = call.function?.name;
        // A name split over deltas is appended; one repeated on every delta (some vLLM builds) is not.
        if (name && pending.toolName !== name) pending.toolName += name;
        const argsDelta = call.function?.arguments ?? '';
        pending.argsText += argsDelta;
        events.push({
          type: 'tool.call.delta',
          toolCallId: pending.toolCallId,
          ...(name ? { name } : {}),
          argsDelta,
        });
      }
      return events.length === 0 ? noEvents : events;
    },
    finish() {
      if (rawFinishReason === undefined) {
        throw new ProviderError('the stream ended without a finish_reason: the response is incomplete', {
          code: 'incomplete_stream',
          retryable: true,
        });
      }
      const content: ProviderContentPart[] = [];
      if (reasoning !== '') content.push({ type: 'reasoning', text: reasoning });
      if (text !== '') content.push({ type: 'text', text });
      for (const call of toolCalls) content.push({ type: 'tool-call', ...call });
      return {
        type: 'finish',
        content,
        finishReason: toFinishReason(rawFinishReason),
        rawFinishReason,
        usage: usage ?? emptyUsage(),
        ...(model === undefined ? {} : { model }),
        ...(responseId === undefined ? {} : { responseId }),
      };
    },
  };
}
