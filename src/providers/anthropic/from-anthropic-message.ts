import type { FinishReason, ProviderContentPart, ProviderEvent } from '../../model/provider.js';
import type { Usage } from '../../model/usage.js';
import { isRecord } from '../../util/is-record.js';
import type { AnthropicMessage, AnthropicUsageCounters } from './wire-types.js';

/**
 * Maps an Anthropic `stop_reason` to the neutral one; the raw word travels as `rawFinishReason`.
 *
 * @example
 * ```ts
 * fromAnthropicStopReason('tool_use'); // 'tool-calls'
 * fromAnthropicStopReason('max_tokens'); // 'length'
 * ```
 */
export function fromAnthropicStopReason(stopReason: string | null | undefined): FinishReason {
  switch (stopReason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'tool_use':
      return 'tool-calls';
    case 'max_tokens':
    // The context window filled up before max_tokens: for the caller it is the same cut-off.
    case 'model_context_window_exceeded':
      return 'length';
    case 'refusal':
      return 'refusal';
    case 'pause_turn':
      return 'pause';
    default:
      return 'other';
  }
}

/**
 * Neutral usage from Anthropic's counters. Anthropic's `input_tokens` leaves out the tokens read
 * from and written to the prompt cache, while OpenAI's `prompt_tokens` includes its cached tokens;
 * so that `inputTokens` means "every input token" for both wires, it is the sum
 * `input_tokens + cache_read_input_tokens + cache_creation_input_tokens`, and the two cache counts
 * are reported apart as `cachedInputTokens` and `cacheCreationInputTokens`.
 *
 * @example
 * ```ts
 * fromAnthropicUsage({ input_tokens: 10, cache_read_input_tokens: 7351, cache_creation_input_tokens: 0, output_tokens: 5 });
 * // { inputTokens: 7361, outputTokens: 5, totalTokens: 7366, cachedInputTokens: 7351, cacheCreationInputTokens: 0 }
 * ```
 */
export function fromAnthropicUsage(counters: AnthropicUsageCounters): Usage {
  const uncached = counters.input_tokens ?? 0;
  const cacheRead = counters.cache_read_input_tokens;
  const cacheCreation = counters.cache_creation_input_tokens;
  const inputTokens = uncached + (cacheRead ?? 0) + (cacheCreation ?? 0);
  const outputTokens = counters.output_tokens ?? 0;
  const usage: Usage = { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
  if (typeof cacheRead === 'number') usage.cachedInputTokens = cacheRead;
  if (typeof cacheCreation === 'number') usage.cacheCreationInputTokens = cacheCreation;
  const hourLong = counters.cache_creation?.ephemeral_1h_input_tokens;
  if (typeof hourLong === 'number' && hourLong > 0) usage.cacheCreation1hInputTokens = hourLong;
  return usage;
}

/**
 * Merges a later set of counters over an earlier one: `message_delta` repeats the cumulative
 * counts it knows and sends `null` (or nothing) for the others, which keep their earlier value.
 */
export function mergeUsageCounters(
  earlier: AnthropicUsageCounters,
  later: AnthropicUsageCounters | null | undefined,
): AnthropicUsageCounters {
  if (!later) return earlier;
  const merged: AnthropicUsageCounters = { ...earlier };
  for (const key of ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const) {
    const value = later[key];
    if (typeof value === 'number') merged[key] = value;
  }
  if (later.cache_creation) merged.cache_creation = later.cache_creation;
  return merged;
}

/** A string field of a wire object, `''` when absent or not a string. */
export const stringField = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * The argument text of a tool call whose input arrived whole (a non-stream response, or a stream
 * that sent no `input_json_delta`): the JSON of the `input` object, `{}` when there is none.
 */
export function inputText(input: unknown): string {
  if (input === undefined || input === null) return '{}';
  return JSON.stringify(input) ?? '{}';
}

/**
 * Turns a non-streaming `messages.create` response into the same events a stream produces: one
 * delta per content block (so live displays work in both modes), then `finish`.
 *
 * @example
 * ```ts
 * for (const event of fromAnthropicMessage(await client.messages.create({ ...body, stream: false }))) {
 *   console.log(event.type);
 * }
 * ```
 */
export function fromAnthropicMessage(message: AnthropicMessage): ProviderEvent[] {
  const events: ProviderEvent[] = [];
  const content: ProviderContentPart[] = [];
  for (const block of message.content ?? []) {
    if (!isRecord(block)) continue;
    switch (block.type) {
      case 'text': {
        const text = stringField(block.text);
        if (text === '') break;
        events.push({ type: 'text.delta', delta: text });
        content.push({ type: 'text', text });
        break;
      }
      case 'thinking': {
        const text = stringField(block.thinking);
        if (text !== '') events.push({ type: 'reasoning.delta', delta: text });
        content.push({ type: 'reasoning', text, signature: stringField(block.signature) });
        break;
      }
      case 'redacted_thinking':
        content.push({ type: 'redacted-reasoning', data: stringField(block.data) });
        break;
      case 'tool_use': {
        const argsText = inputText(block.input);
        const toolCallId = stringField(block.id);
        const toolName = stringField(block.name);
        events.push({ type: 'tool.call.delta', toolCallId, name: toolName, argsDelta: argsText });
        content.push({ type: 'tool-call', toolCallId, toolName, argsText });
        break;
      }
      // Server tools, citations-only blocks and the like have no neutral form; they are skipped.
    }
  }
  const rawFinishReason = message.stop_reason ?? undefined;
  events.push({
    type: 'finish',
    content,
    finishReason: fromAnthropicStopReason(rawFinishReason),
    ...(rawFinishReason === undefined ? {} : { rawFinishReason }),
    usage: fromAnthropicUsage(message.usage ?? {}),
    ...(typeof message.model === 'string' ? { model: message.model } : {}),
    ...(typeof message.id === 'string' ? { responseId: message.id } : {}),
  });
  return events;
}
