import { isRecord } from '../../util/is-record.js';
import { ProviderError } from '../../model/errors/provider-error.js';
import type { ProviderContentPart, ProviderEvent } from '../../model/provider.js';
import { inputText, mergeUsageCounters, fromAnthropicStopReason, fromAnthropicUsage, stringField } from './from-anthropic-message.js';
import type { AnthropicStreamEvent, AnthropicUsageCounters } from './wire-types.js';

type StreamBlock =
  | { kind: 'text'; text: string }
  | { kind: 'reasoning'; text: string; signature: string }
  | { kind: 'redacted-reasoning'; data: string }
  | { kind: 'tool-call'; toolCallId: string; toolName: string; argsText: string; startInput: unknown }
  | { kind: 'skipped' };

/**
 * Options of {@link fromAnthropicStream}.
 *
 * @example
 * ```ts
 * const options: AnthropicStreamOptions = { signal: request.signal };
 * ```
 */
export type AnthropicStreamOptions = {
  /**
   * The request's signal. The SDK ends its stream quietly when the request is aborted, which
   * would otherwise look like a cut connection; with the signal the two are told apart.
   */
  signal?: AbortSignal;
};

/**
 * Turns the SDK's raw Messages stream (`messages.create({ stream: true })`) into provider events.
 * Content blocks are accumulated by their `index`, so interleaved or out-of-order deltas land in
 * the right block, and the `finish` event lists them in index order. A `tool_use` block starts
 * with `input: {}` and gets its arguments as `input_json_delta` fragments (possibly a single
 * empty one); a tool without parameters gets none, and its `argsText` is `{}`. Thinking text and
 * its `signature_delta` are kept verbatim. A stream that ends without `message_stop` is an
 * incomplete response: a retryable {@link ProviderError} with code `incomplete_stream`.
 *
 * @example
 * ```ts
 * const stream = await client.messages.create({ ...body, stream: true }, { signal });
 * for await (const event of fromAnthropicStream(stream, { signal })) {
 *   if (event.type === 'text.delta') process.stdout.write(event.delta);
 * }
 * ```
 */
export async function* fromAnthropicStream(
  events: AsyncIterable<AnthropicStreamEvent>,
  options: AnthropicStreamOptions = {},
): AsyncGenerator<ProviderEvent> {
  const blocks = new Map<number, StreamBlock>();
  let counters: AnthropicUsageCounters = {};
  let rawFinishReason: string | undefined;
  let model: string | undefined;
  let responseId: string | undefined;
  let stopped = false;

  const blockAt = (index: number, kind: 'text' | 'reasoning' | 'tool-call'): StreamBlock => {
    const existing = blocks.get(index);
    if (existing) return existing;
    // A delta without its content_block_start: keep the content rather than drop what the model said.
    const created: StreamBlock =
      kind === 'text'
        ? { kind: 'text', text: '' }
        : kind === 'reasoning'
          ? { kind: 'reasoning', text: '', signature: '' }
          : { kind: 'skipped' };
    blocks.set(index, created);
    return created;
  };

  for await (const event of events) {
    if (typeof event !== 'object' || event === null) continue;
    switch (event.type) {
      case 'message_start':
        counters = mergeUsageCounters(counters, event.message?.usage);
        if (typeof event.message?.model === 'string') model = event.message.model;
        if (typeof event.message?.id === 'string') responseId = event.message.id;
        break;

      case 'content_block_start': {
        const block: unknown = event.content_block;
        if (!isRecord(block)) break;
        switch (block.type) {
          case 'text': {
            const text = stringField(block.text);
            blocks.set(event.index, { kind: 'text', text });
            if (text !== '') yield { type: 'text.delta', delta: text };
            break;
          }
          case 'thinking': {
            const text = stringField(block.thinking);
            blocks.set(event.index, { kind: 'reasoning', text, signature: stringField(block.signature) });
            if (text !== '') yield { type: 'reasoning.delta', delta: text };
            break;
          }
          case 'redacted_thinking':
            blocks.set(event.index, { kind: 'redacted-reasoning', data: stringField(block.data) });
            break;
          case 'tool_use': {
            const toolCallId = stringField(block.id);
            const toolName = stringField(block.name);
            blocks.set(event.index, { kind: 'tool-call', toolCallId, toolName, argsText: '', startInput: block.input });
            yield { type: 'tool.call.delta', toolCallId, name: toolName, argsDelta: '' };
            break;
          }
          default:
            // Server tool blocks and future block types have no neutral form.
            blocks.set(event.index, { kind: 'skipped' });
        }
        break;
      }

      case 'content_block_delta': {
        const delta: unknown = event.delta;
        if (!isRecord(delta)) break;
        switch (delta.type) {
          case 'text_delta': {
            const block = blockAt(event.index, 'text');
            const text = stringField(delta.text);
            if (block.kind !== 'text' || text === '') break;
            block.text += text;
            yield { type: 'text.delta', delta: text };
            break;
          }
          case 'thinking_delta': {
            const block = blockAt(event.index, 'reasoning');
            const text = stringField(delta.thinking);
            if (block.kind !== 'reasoning' || text === '') break;
            block.text += text;
            yield { type: 'reasoning.delta', delta: text };
            break;
          }
          case 'signature_delta': {
            const block = blockAt(event.index, 'reasoning');
            if (block.kind === 'reasoning') block.signature += stringField(delta.signature);
            break;
          }
          case 'input_json_delta': {
            const block = blockAt(event.index, 'tool-call');
            const fragment = stringField(delta.partial_json);
            if (block.kind !== 'tool-call' || fragment === '') break;
            block.argsText += fragment;
            yield { type: 'tool.call.delta', toolCallId: block.toolCallId, argsDelta: fragment };
            break;
          }
          // citations_delta and unknown deltas carry nothing the neutral model keeps.
        }
        break;
      }

      case 'message_delta':
        if (typeof event.delta?.stop_reason === 'string') rawFinishReason = event.delta.stop_reason;
        counters = mergeUsageCounters(counters, event.usage);
        break;

      case 'message_stop':
        stopped = true;
        break;

      // content_block_stop needs no work (blocks are complete when the message is), and the SDK
      // already drops `ping` and throws on `error` events.
    }
  }

  if (options.signal?.aborted) {
    throw new ProviderError('the request was aborted before the response was complete', {
      code: 'aborted',
      retryable: false,
      cause: options.signal.reason,
    });
  }
  if (!stopped) {
    throw new ProviderError('the Anthropic stream ended without message_stop: the response is incomplete', {
      code: 'incomplete_stream',
      retryable: true,
    });
  }

  const content: ProviderContentPart[] = [];
  for (const index of [...blocks.keys()].sort((a, b) => a - b)) {
    const block = blocks.get(index);
    if (!block) continue;
    switch (block.kind) {
      case 'text':
        if (block.text !== '') content.push({ type: 'text', text: block.text });
        break;
      case 'reasoning':
        if (block.text !== '' || block.signature !== '') {
          content.push({ type: 'reasoning', text: block.text, ...(block.signature === '' ? {} : { signature: block.signature }) });
        }
        break;
      case 'redacted-reasoning':
        content.push({ type: 'redacted-reasoning', data: block.data });
        break;
      case 'tool-call':
        content.push({
          type: 'tool-call',
          toolCallId: block.toolCallId,
          toolName: block.toolName,
          argsText: block.argsText === '' ? inputText(block.startInput) : block.argsText,
        });
        break;
    }
  }
  yield {
    type: 'finish',
    content,
    finishReason: fromAnthropicStopReason(rawFinishReason),
    ...(rawFinishReason === undefined ? {} : { rawFinishReason }),
    usage: fromAnthropicUsage(counters),
    ...(model === undefined ? {} : { model }),
    ...(responseId === undefined ? {} : { responseId }),
  };
}
