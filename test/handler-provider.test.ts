import { describe, expect, it } from 'vitest';
import { handlerProvider, type ProviderEvent } from '../src/index.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai/index.js';
import { doomLoopNotice, findRepetition, signatureOf } from '../src/machines/policies/doom-loop.js';
import { canRetry, retryDelay } from '../src/machines/policies/retry-policy.js';

async function collect(chunks: OpenAIChatCompletionChunk[]): Promise<ProviderEvent[]> {
  const provider = handlerProvider(async function* () {
    yield* chunks;
  });
  const events: ProviderEvent[] = [];
  for await (const event of provider.stream({
    messages: [{ role: 'user', content: 'x' }],
    tools: [],
    signal: new AbortController().signal,
  })) {
    events.push(event);
  }
  return events;
}

const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({
  choices: [{ index: 0, delta, finish_reason: finish }],
});

describe('handlerProvider: chat.completion.chunk accumulation', () => {
  it('accumulates interleaved parallel tool-call deltas by index, usage from the last chunk', async () => {
    const events = await collect([
      choice({ role: 'assistant', content: null }),
      choice({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get', arguments: '' } }] }),
      choice({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'put', arguments: '{"k"' } }] }),
      choice({ tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] }),
      choice({ tool_calls: [{ index: 1, function: { arguments: ':1}' } }] }),
      choice({ tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] }),
      choice({}, 'tool_calls'),
      {
        choices: [],
        usage: {
          prompt_tokens: 11,
          completion_tokens: 7,
          total_tokens: 18,
          prompt_tokens_details: { cached_tokens: 4 },
          completion_tokens_details: { reasoning_tokens: 2 },
        },
      },
    ]);
    expect(events.filter((event) => event.type === 'tool.call.delta')).toHaveLength(5);
    expect(events.at(-1)).toEqual({
      type: 'finish',
      content: [
        { type: 'tool-call', toolCallId: 'call_a', toolName: 'get', argsText: '{"q":"x"}' },
        { type: 'tool-call', toolCallId: 'call_b', toolName: 'put', argsText: '{"k":1}' },
      ],
      finishReason: 'tool-calls',
      rawFinishReason: 'tool_calls',
      usage: { inputTokens: 11, outputTokens: 7, totalTokens: 18, cachedInputTokens: 4, reasoningTokens: 2 },
    });
  });

  it('maps reasoning_content / reasoning to reasoning deltas and keeps usage on the finish chunk', async () => {
    const events = await collect([
      choice({ reasoning_content: 'think ' }),
      choice({ reasoning: 'more' }),
      choice({ content: 'answer' }),
      { choices: [{ index: 0, delta: {}, finish_reason: 'length' }], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } },
    ]);
    expect(events.slice(0, 3)).toEqual([
      { type: 'reasoning.delta', delta: 'think ' },
      { type: 'reasoning.delta', delta: 'more' },
      { type: 'text.delta', delta: 'answer' },
    ]);
    expect(events.at(-1)).toMatchObject({
      content: [
        { type: 'reasoning', text: 'think more' },
        { type: 'text', text: 'answer' },
      ],
      finishReason: 'length',
      usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
    });
  });

  it('an in-band error chunk becomes a classified error', async () => {
    await expect(
      collect([choice({ content: 'x' }), { error: { code: 400, message: 'bad things' } } as OpenAIChatCompletionChunk]),
    ).rejects.toMatchObject({
      name: 'ProviderError',
      status: 400,
      retryable: false,
      message: 'bad things',
    });
  });

  it('a stream without finish_reason is an incomplete, retryable response', async () => {
    await expect(collect([choice({ content: 'x' })])).rejects.toMatchObject({ code: 'incomplete_stream', retryable: true });
  });

  it('passes the request in Chat Completions format, system prompt first', async () => {
    let seen: unknown;
    const provider = handlerProvider((request) => {
      seen = request;
      return (async function* () {
        yield choice({}, 'stop');
      })();
    });
    const signal = new AbortController().signal;
    for await (const _event of provider.stream({
      system: 'sys',
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'hidden' },
            { type: 'tool-call', toolCallId: 'c', toolName: 't', args: { a: 1 } },
          ],
        },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 't', result: { ok: true } }] },
      ],
      tools: [{ name: 't', description: 'd', inputSchema: { type: 'object' } }],
      signal,
      sessionData: { user: 7 },
    })) {
      // drain
    }
    expect(seen).toEqual({
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'q' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 't', arguments: '{"a":1}' } }] },
        { role: 'tool', tool_call_id: 'c', content: '{"ok":true}' },
      ],
      tools: [{ type: 'function', function: { name: 't', description: 'd', parameters: { type: 'object' } } }],
      signal,
      sessionData: { user: 7 },
    });
  });

  it('refuses a handler that is not a function, at creation', () => {
    for (const handler of [undefined, 'openai', { stream() {} }]) {
      expect(() => handlerProvider(handler as never)).toThrow(expect.objectContaining({ option: 'handlerProvider(handler)' }));
      expect(() => handlerProvider(handler as never)).toThrow(
        /^Invalid option handlerProvider\(handler\): expected a function \(request\) => AsyncIterable of chat\.completion\.chunk objects/,
      );
    }
  });
});

describe('doom-loop detection', () => {
  const keys = (names: string) => [...names].map((name) => signatureOf(name, { n: 1 }));
  it('finds the shortest repeating tail pattern', () => {
    expect(findRepetition(keys('AAA'), 3)).toMatchObject({ repeats: 3, pattern: [{ name: 'A' }] });
    expect(findRepetition(keys('CABABAB'), 3)).toMatchObject({ repeats: 3, pattern: [{ name: 'A' }, { name: 'B' }] });
    expect(findRepetition(keys('AAB'), 3)).toBeNull();
    expect(findRepetition(keys('ABAB'), 3)).toBeNull();
    expect(findRepetition(keys('AAAA'), 3)).toMatchObject({ repeats: 4 });
  });
  it('names the repeating tools and arguments in the notice', () => {
    const repetition = findRepetition([signatureOf('search', { q: 'x' }), signatureOf('search', { q: 'x' })], 2);
    expect(repetition && doomLoopNotice(repetition)).toMatch(/2 times in a row: search\(\{"q":"x"\}\)/);
  });
});

describe('retry policy', () => {
  const policy = { maxRetries: 2, initialDelayMs: 100, maxDelayMs: 1_000, jitter: false, maxRetryAfterMs: 60_000 };
  it('backs off exponentially up to the cap, retry-after first', () => {
    expect([1, 2, 3, 4, 5].map((attempt) => retryDelay(attempt, policy, null))).toEqual([100, 200, 400, 800, 1000]);
    expect(retryDelay(1, policy, 2_500)).toBe(2_500);
  });
  it('jitters between half and all of the backoff', () => {
    expect(retryDelay(2, { ...policy, jitter: true }, null, () => 0)).toBe(100);
    expect(retryDelay(2, { ...policy, jitter: true }, null, () => 1)).toBe(200);
  });
  it('allows maxRetries + 1 attempts of retryable errors only', () => {
    expect(canRetry(1, policy, { retryable: true }, null)).toBe(true);
    expect(canRetry(2, policy, { retryable: true }, null)).toBe(true);
    expect(canRetry(3, policy, { retryable: true }, null)).toBe(false);
    expect(canRetry(1, policy, { retryable: false }, null)).toBe(false);
    expect(canRetry(1, policy, { retryable: true }, 120_000)).toBe(false);
  });
});
