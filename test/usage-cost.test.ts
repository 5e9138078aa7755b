/** Usage per step and in total, failed attempts counted apart, and cost from a price table (docs/tracing-and-shaping.md "Usage and cost"). */
import { describe, expect, it } from 'vitest';
import { addCost, findPrice, zeroCost } from '../src/machines/policies/pricing.js';
import { createConversationMachine, handlerProvider } from '../src/index.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai/index.js';
import { eventsOf, runConversation } from './support/run-conversation.js';
import type { ScriptedTurn } from './support/scripted-model.js';

const prices = {
  'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 },
  'gpt-4o': { input: 2.5, output: 10 },
};

/** A streamed answer that reports usage, then fails in-band (as OpenRouter does): billed, never answered. */
const failingAfterUsage: ScriptedTurn = async function* () {
  yield {
    id: 'x',
    object: 'chat.completion.chunk',
    model: 'gpt-4o-mini-2024-07-18',
    choices: [{ index: 0, delta: { content: 'partial' }, finish_reason: null }],
  };
  yield {
    id: 'x',
    object: 'chat.completion.chunk',
    model: 'gpt-4o-mini-2024-07-18',
    choices: [],
    usage: { prompt_tokens: 1000, completion_tokens: 50, total_tokens: 1050 },
  };
  yield {
    id: 'x',
    object: 'chat.completion.chunk',
    choices: [],
    error: { code: 502, message: 'upstream hiccup' },
  } as OpenAIChatCompletionChunk;
};

describe('usage and cost', () => {
  it('prices each response by the model that answered (prefix match) and sums the run', async () => {
    const answer = (model: string, prompt: number, completion: number): ScriptedTurn =>
      async function* () {
        yield { id: 'a', object: 'chat.completion.chunk', model, choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }] };
        yield {
          id: 'a',
          object: 'chat.completion.chunk',
          model,
          choices: [],
          usage: {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: prompt + completion,
            prompt_tokens_details: { cached_tokens: 400 },
          },
        };
      };
    const { output, events } = await runConversation([answer('gpt-4o-mini-2024-07-18', 1000, 100)], { prices });
    expect(output.usage).toEqual({ inputTokens: 1000, outputTokens: 100, totalTokens: 1100, cachedInputTokens: 400 });
    expect(output.cost!.input).toBeCloseTo((600 * 0.15) / 1e6, 12);
    expect(output.cost!.cachedInput).toBeCloseTo((400 * 0.075) / 1e6, 12);
    expect(output.cost!.output).toBeCloseTo((100 * 0.6) / 1e6, 12);
    expect(output.cost!.total).toBeCloseTo((600 * 0.15 + 400 * 0.075 + 100 * 0.6) / 1e6, 12);
    expect(output.cost!.unpricedModels).toEqual([]);
    expect(eventsOf(events, 'request.finished')).toEqual([
      {
        type: 'request.finished',
        iteration: 0,
        attempt: 1,
        finishReason: 'stop',
        usage: output.usage,
        model: 'gpt-4o-mini-2024-07-18',
        responseId: 'a',
      },
    ]);
  });

  it('a failed attempt that reported usage is counted apart and still priced', async () => {
    const { output, events } = await runConversation([failingAfterUsage, { text: 'fine', usage: { prompt: 10, completion: 5 } }], {
      prices,
    });
    expect(output.status).toBe('done');
    expect(output.usage).toEqual({ inputTokens: 10, outputTokens: 5, totalTokens: 15 });
    expect(output.failedUsage).toEqual({ inputTokens: 1000, outputTokens: 50, totalTokens: 1050 });
    expect(eventsOf(events, 'request.retry')).toHaveLength(1);
    // The scripted model's answer names model "scripted" (no price); the failed attempt was gpt-4o-mini.
    expect(output.cost!.total).toBeCloseTo((1000 * 0.15 + 50 * 0.6) / 1e6, 12);
    expect(output.cost!.unpricedModels).toEqual(['scripted']);
  });

  it('no prices, no cost; no failed usage, no failedUsage', async () => {
    const { output } = await runConversation([{ text: 'ok' }]);
    expect(output.cost).toBeUndefined();
    expect(output.failedUsage).toBeUndefined();
    expect(output.usage).toEqual({ inputTokens: 10, outputTokens: 5, totalTokens: 15 });
  });

  it('finds the longest matching price and leaves unknown models unpriced', () => {
    expect(findPrice(prices, 'gpt-4o-mini-2024-07-18')).toBe(prices['gpt-4o-mini']);
    expect(findPrice(prices, 'gpt-4o-2024-11-20')).toBe(prices['gpt-4o']);
    expect(findPrice(prices, 'gpt-4o')).toBe(prices['gpt-4o']);
    expect(findPrice(prices, 'gpt-4')).toBeUndefined();
    const cost = addCost(zeroCost(), prices, 'claude-x', { inputTokens: 5, outputTokens: 5, totalTokens: 10 });
    expect(cost).toEqual({ ...zeroCost(), unpricedModels: ['claude-x'] });
    // Anthropic-style usage: input includes cache reads and writes, priced apart.
    const anthropic = addCost(zeroCost(), { claude: { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 } }, 'claude-sonnet', {
      inputTokens: 1100,
      cachedInputTokens: 1000,
      cacheCreationInputTokens: 50,
      outputTokens: 10,
      totalTokens: 1110,
    });
    expect(anthropic.input).toBeCloseTo((50 * 3) / 1e6, 12);
    expect(anthropic.cacheWrite).toBeCloseTo((50 * 3.75) / 1e6, 12);
    expect(anthropic.cachedInput).toBeCloseTo((1000 * 0.3) / 1e6, 12);
  });

  it('a bad price table is refused at creation, naming the model and field', () => {
    const provider = handlerProvider(async function* () {});
    expect(() => createConversationMachine({ provider, prices: { 'gpt-4o': { input: -1, output: 1 } } })).toThrow(
      /Invalid option prices\.gpt-4o\.input: expected a price per million tokens/,
    );
    expect(() => createConversationMachine({ provider, prices: { 'gpt-4o': { input: 1 } } as never })).toThrow(/prices\.gpt-4o\.output/);
    expect(() => createConversationMachine({ provider, prices: [] as never })).toThrow(/Invalid option prices/);
  });
});
