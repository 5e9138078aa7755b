import type { FinishReason, ProviderContentPart } from '../../model/provider.js';
import type { Usage } from '../../model/usage.js';
import { type OpenAIReasoningMetadata, type OpenAITextMetadata, withOpenAIMetadata } from './openai-metadata.js';
import type { OpenAIResponsesOutputItem, OpenAIResponsesResponse, OpenAIResponsesUsage } from './wire-types.js';

/**
 * Reading a Responses API response: output items to neutral content, the finish reason, usage.
 * Shared by the streamed and the non-streamed path, so both give the same content.
 */

/**
 * Usage of a response: cached and cache-write input tokens and reasoning tokens when reported.
 *
 * @example
 * ```ts
 * fromResponsesUsage({ input_tokens: 58, output_tokens: 248, total_tokens: 306, output_tokens_details: { reasoning_tokens: 192 } });
 * // { inputTokens: 58, outputTokens: 248, totalTokens: 306, reasoningTokens: 192 }
 * ```
 */
export function fromResponsesUsage(usage: OpenAIResponsesUsage): Usage {
  const inputTokens = usage.input_tokens ?? 0;
  const outputTokens = usage.output_tokens ?? 0;
  const result: Usage = { inputTokens, outputTokens, totalTokens: usage.total_tokens ?? inputTokens + outputTokens };
  const cached = usage.input_tokens_details?.cached_tokens;
  if (typeof cached === 'number') result.cachedInputTokens = cached;
  const written = usage.input_tokens_details?.cache_write_tokens;
  if (typeof written === 'number') result.cacheCreationInputTokens = written;
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  if (typeof reasoning === 'number') result.reasoningTokens = reasoning;
  return result;
}

/** The text of a message item: its `output_text` parts and refusals, in order. */
export function messageText(item: OpenAIResponsesOutputItem): string {
  let text = '';
  for (const part of item.content ?? []) {
    if (part.type === 'output_text' && typeof part.text === 'string') text += part.text;
    else if (part.type === 'refusal' && typeof part.refusal === 'string') text += part.refusal;
  }
  return text;
}

/** The summary parts of a reasoning item. */
function summaryTexts(item: OpenAIResponsesOutputItem): string[] {
  return (item.summary ?? []).flatMap((part) => (part.type === 'summary_text' && typeof part.text === 'string' ? [part.text] : []));
}

/**
 * The readable text of a reasoning item: its summary parts joined by a blank line or, when it has
 * no summary, the raw reasoning text some compatible servers send (`reasoning_text` content).
 */
export function reasoningText(item: OpenAIResponsesOutputItem): string {
  const summary = summaryTexts(item);
  if (summary.length > 0) return summary.join('\n\n');
  let raw = '';
  for (const part of item.content ?? []) if (part.type === 'reasoning_text' && typeof part.text === 'string') raw += part.text;
  return raw;
}

/**
 * Options of {@link partsFromOutput}.
 *
 * @example
 * ```ts
 * const options: OutputOptions = { status: 'completed', responseId: 'resp_1', keepIds: true };
 * ```
 */
export type OutputOptions = {
  /** The response's `status`: a call not marked `completed` counts as complete only in a completed response. */
  status: string | undefined;
  responseId: string | undefined;
  /** Keep item and response ids: only when the server stored the response can they be referred to. */
  keepIds: boolean;
};

function ids(item: OpenAIResponsesOutputItem, options: OutputOptions): { itemId?: string; responseId?: string } {
  if (!options.keepIds) return {};
  return {
    ...(item.id === undefined ? {} : { itemId: item.id }),
    ...(options.responseId === undefined ? {} : { responseId: options.responseId }),
  };
}

function isEmpty(metadata: object): boolean {
  return Object.keys(metadata).length === 0;
}

/**
 * Whether a function call item is whole. A call the response was cut off in (`status:
 * "incomplete"`, its arguments truncated) is not: it is dropped, never executed.
 */
export function isWholeCall(item: OpenAIResponsesOutputItem, status: string | undefined): boolean {
  return item.status === 'completed' || ((item.status === undefined || item.status === null) && status === 'completed');
}

/**
 * Neutral content from output items, in output order: a message becomes a text part (with its
 * `phase`), a reasoning item a reasoning part holding its encrypted content and summary, a whole
 * function call a tool call (`toolCallId` = `call_id`). Cut-off calls, empty texts and item types
 * actorloop does not handle (built-in tools) are left out.
 *
 * @example
 * ```ts
 * partsFromOutput([{ type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'add', arguments: '{}', status: 'completed' }], { status: 'completed', responseId: 'resp_1', keepIds: false });
 * // [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'add', argsText: '{}' }]
 * ```
 */
export function partsFromOutput(items: OpenAIResponsesOutputItem[], options: OutputOptions): ProviderContentPart[] {
  const parts: ProviderContentPart[] = [];
  for (const item of items) {
    switch (item.type) {
      case 'message': {
        const text = messageText(item);
        if (text === '') break;
        const metadata: OpenAITextMetadata = { ...ids(item, options), ...(typeof item.phase === 'string' ? { phase: item.phase } : {}) };
        parts.push({ type: 'text', text, ...withOpenAIMetadata(metadata) });
        break;
      }
      case 'reasoning': {
        const text = reasoningText(item);
        const summary = summaryTexts(item);
        // The summary parts are kept apart only when `text` cannot give them back exactly.
        const summaryFromText = text === '' ? [] : [text];
        const keepSummary = summary.length !== summaryFromText.length || summary.some((part, index) => part !== summaryFromText[index]);
        const metadata: OpenAIReasoningMetadata = {
          ...ids(item, options),
          ...(typeof item.encrypted_content === 'string' && item.encrypted_content !== ''
            ? { encryptedContent: item.encrypted_content }
            : {}),
          ...(keepSummary ? { summary } : {}),
        };
        if (text === '' && isEmpty(metadata)) break;
        parts.push({ type: 'reasoning', text, ...withOpenAIMetadata(metadata) });
        break;
      }
      case 'function_call': {
        if (!isWholeCall(item, options.status)) break;
        const metadata = ids(item, options);
        parts.push({
          type: 'tool-call',
          toolCallId: item.call_id ?? item.id ?? '',
          toolName: item.name ?? '',
          argsText: item.arguments ?? '',
          ...withOpenAIMetadata(metadata),
        });
        break;
      }
    }
  }
  return parts;
}

/**
 * The neutral finish reason of a response and the wire's word for it: `completed` is
 * `tool-calls` when calls are left to run, `refusal` when the model only refused, else `stop`;
 * `incomplete` is `length` for `max_output_tokens` and `content-filter` for `content_filter`.
 *
 * @example
 * ```ts
 * finishOf({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }, []);
 * // { finishReason: 'length', rawFinishReason: 'max_output_tokens' }
 * ```
 */
export function finishOf(
  response: OpenAIResponsesResponse,
  content: ProviderContentPart[],
  refused = false,
): { finishReason: FinishReason; rawFinishReason: string } {
  const status = response.status ?? undefined;
  if (status === 'completed') {
    if (content.some((part) => part.type === 'tool-call')) return { finishReason: 'tool-calls', rawFinishReason: status };
    return { finishReason: refused ? 'refusal' : 'stop', rawFinishReason: status };
  }
  if (status === 'incomplete') {
    const reason = response.incomplete_details?.reason ?? undefined;
    const finishReason: FinishReason = reason === 'max_output_tokens' ? 'length' : reason === 'content_filter' ? 'content-filter' : 'other';
    return { finishReason, rawFinishReason: reason ?? status };
  }
  return { finishReason: 'other', rawFinishReason: status ?? 'unknown' };
}

/** True when a message item holds a refusal and no text. */
export function isRefusal(item: OpenAIResponsesOutputItem): boolean {
  const parts = item.content ?? [];
  return parts.some((part) => part.type === 'refusal') && !parts.some((part) => part.type === 'output_text' && part.text !== '');
}
