import { describe, expect, it } from 'vitest';
import { ProviderError } from '../src/index.js';
import { createChunkReader } from '../src/providers/openai-wire/from-openai-chunks.js';

const choice = (delta: Record<string, unknown> | undefined, finish: string | null = null) => ({
  choices: [{ index: 0, ...(delta ? { delta } : {}), finish_reason: finish }],
});

describe('createChunkReader: one chunk at a time, no generator of its own', () => {
  it("returns each chunk's deltas as they come and the response they add up to at the end", () => {
    const reader = createChunkReader();
    expect(reader.read({ id: 'chatcmpl-1', model: 'm', ...choice({ role: 'assistant', content: 'The ' }) })).toEqual([
      { type: 'text.delta', delta: 'The ' },
    ]);
    expect(
      reader.read(choice({ content: 'sum', tool_calls: [{ index: 0, id: 'c1', function: { name: 'add', arguments: '{"a":' } }] })),
    ).toEqual([
      { type: 'text.delta', delta: 'sum' },
      { type: 'tool.call.delta', toolCallId: 'c1', name: 'add', argsDelta: '{"a":' },
    ]);
    expect(reader.read(choice({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }, 'tool_calls'))).toEqual([
      { type: 'tool.call.delta', toolCallId: 'c1', argsDelta: '1}' },
    ]);
    // The usage-only last chunk carries no delta.
    expect(reader.read({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } })).toEqual([]);
    expect(reader.finish()).toEqual({
      type: 'finish',
      content: [
        { type: 'text', text: 'The sum' },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'add', argsText: '{"a":1}' },
      ],
      finishReason: 'tool-calls',
      rawFinishReason: 'tool_calls',
      usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 },
      model: 'm',
      responseId: 'chatcmpl-1',
    });
  });

  it('takes the finish_reason of a chunk that has no delta', () => {
    const reader = createChunkReader();
    reader.read(choice({ content: 'ok' }));
    expect(reader.read(choice(undefined, 'stop'))).toEqual([]);
    expect(reader.finish()).toMatchObject({ finishReason: 'stop', content: [{ type: 'text', text: 'ok' }] });
  });

  it('fails a response that never said why it ended as retryable, and a chunk that is not one as not', () => {
    const cut = createChunkReader();
    cut.read(choice({ content: 'half' }));
    expect(() => cut.finish()).toThrow(expect.objectContaining({ code: 'incomplete_stream', retryable: true }));
    const reader = createChunkReader();
    let thrown: unknown;
    try {
      reader.read(null as never);
    } catch (error) {
      thrown = error;
    }
    expect(ProviderError.isInstance(thrown)).toBe(true);
    expect(thrown).toMatchObject({ code: 'bad_request', retryable: false, message: 'expected a chat.completion.chunk object, got null' });
  });
});
