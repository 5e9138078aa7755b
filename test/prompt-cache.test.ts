/**
 * Prompt caching (DESIGN §16, docs/rich-content.md#prompt-caching): the machine's `promptCache`
 * reaches each wire in its own shape — Anthropic `cache_control` breakpoints on the last tool, the
 * system prompt and the newest message (moving as the history grows), OpenAI `prompt_cache_key` and
 * 24-hour retention — through the real SDKs over real HTTP; the recorded cache write → read traffic
 * comes back as usage and is priced; a ttl the wire does not offer is refused at creation.
 */
import { join } from 'node:path';
import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import {
  anthropicProvider,
  type ConversationOptions,
  createConversationHost,
  memoryStore,
  createConversationMachine,
  defineTool,
  type Message,
  openaiProvider,
  type Provider,
  type RunOutput,
} from '../src/index.js';
import { addCost, zeroCost } from '../src/machines/policies/pricing.js';
import { addUsage, modelPrices } from '../src/index.js';
import { withCacheBreakpoints } from '../src/providers/anthropic/cache-breakpoints.js';
import { fromAnthropicUsage } from '../src/providers/anthropic/from-anthropic-message.js';
import type { AnthropicMessageParam } from '../src/providers/anthropic/wire-types.js';
import { responsesStream } from './support/responses-events.js';
import { serveEachTest } from './support/serve-each-test.js';
import {
  anthropicTextSse,
  assertRequestMatches,
  jsonResponse,
  loadCassette,
  openaiSse,
  recordedFixturesDir,
} from './support/wire-server.js';

const serve = serveEachTest();

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: ({ a, b }) => String(Number(a) + Number(b)),
});
const lookup = defineTool({
  name: 'lookup',
  description: 'Look a word up',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  execute: ({ q }) => `found ${String(q)}`,
});

async function run(
  provider: Provider,
  options: Omit<ConversationOptions, 'provider'> = {},
  content = 'What is 2+3?',
  messages: Message[] = [],
): Promise<RunOutput> {
  const machine = createConversationMachine({ provider, retry: false, ...options });
  const actor = createActor(machine, { input: { messages } }).start();
  actor.send({ type: 'user.message', content });
  return toPromise(actor);
}

/** Every `cache_control` in a request body, by where it is (sorted: key order is the serializer's business). */
function breakpoints(body: unknown): string[] {
  const found: string[] = [];
  const visit = (value: unknown, path: string) => {
    if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) visit(item, `${path}[${index}]`);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        if (key === 'cache_control') found.push(`${path} ${JSON.stringify(inner)}`);
        else visit(inner, path === '' ? key : `${path}.${key}`);
      }
    }
  };
  visit(body, '');
  return found.sort();
}

describe('Anthropic breakpoints (withCacheBreakpoints)', () => {
  const messages: AnthropicMessageParam[] = [
    { role: 'user', content: 'What is 2+3?' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'add', input: { a: 2, b: 3 } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: '5' }] },
  ];
  const tools = [
    { name: 'add', input_schema: { type: 'object' as const } },
    { name: 'lookup', input_schema: { type: 'object' as const } },
  ];

  it('marks the last tool, the system prompt and the newest message — three of the four allowed — and changes nothing in place', () => {
    const prompt = { tools, system: 'Be brief.', messages };
    const before = structuredClone(prompt);
    const marked = withCacheBreakpoints(prompt, {});
    expect(prompt).toEqual(before);
    expect(breakpoints(marked)).toEqual([
      'messages[2].content[0] {"type":"ephemeral"}',
      'system[0] {"type":"ephemeral"}',
      'tools[1] {"type":"ephemeral"}',
    ]);
    expect(marked.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
    // The messages before the newest are the same objects: only the newest was copied to be marked.
    expect(marked.messages[0]).toBe(messages[0]);
    expect(marked.messages[1]).toBe(messages[1]);
  });

  it("spells out an hour's ttl; a newest message of text is made a block; a thinking block is passed over", () => {
    expect(breakpoints(withCacheBreakpoints({ messages: [{ role: 'user', content: 'Hi' }] }, { ttl: '1h' }))).toEqual([
      'messages[0].content[0] {"type":"ephemeral","ttl":"1h"}',
    ]);
    const thinkingLast = withCacheBreakpoints(
      {
        messages: [
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Let me see.' },
              { type: 'thinking', thinking: 'hm', signature: 'sig' },
            ],
          },
        ],
      },
      {},
    );
    expect(breakpoints(thinkingLast)).toEqual(['messages[0].content[0] {"type":"ephemeral"}']);
    expect(withCacheBreakpoints({ messages: [] }, {})).toEqual({ messages: [] });
  });
});

const toolUse = (id: string, name: string, input: unknown) =>
  jsonResponse(200, {
    id: `msg_${id}`,
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [{ type: 'tool_use', id, name, input }],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 10 },
  });

describe('promptCache through the real SDKs', () => {
  it("Anthropic, 'auto' (the default): each request of a tool loop marks tools, system and its newest message, so the next reads what it wrote", async () => {
    const server = await serve([
      toolUse('t1', 'add', { a: 2, b: 3 }),
      toolUse('t2', 'lookup', { q: 'five' }),
      anthropicTextSse('It is 5.'),
    ]);
    const output = await run(
      anthropicProvider({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant', baseURL: server.url, maxTokens: 256, stream: false }),
      {
        system: 'Be brief.',
        tools: [add, lookup],
      },
    );
    expect(output.status, JSON.stringify(output.error)).toBe('done');
    const marks = server.requests.map((request) => breakpoints(request.body));
    expect(marks).toEqual([
      ['messages[0].content[0] {"type":"ephemeral"}', 'system[0] {"type":"ephemeral"}', 'tools[1] {"type":"ephemeral"}'],
      ['messages[2].content[0] {"type":"ephemeral"}', 'system[0] {"type":"ephemeral"}', 'tools[1] {"type":"ephemeral"}'],
      ['messages[4].content[0] {"type":"ephemeral"}', 'system[0] {"type":"ephemeral"}', 'tools[1] {"type":"ephemeral"}'],
    ]);
    // The breakpoint moves onto the newest tool result: everything before it is the last request's prefix.
    const third = server.requests[2]?.body as { messages: Array<{ content: Array<Record<string, unknown>> }> };
    expect(third.messages[4]?.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 't2', cache_control: { type: 'ephemeral' } });
    expect(third.messages[2]?.content[0]).not.toHaveProperty('cache_control');
  });

  it('Anthropic, promptCache: false sends no cache_control; { ttl: "1h" } sends it with the hour', async () => {
    const off = await serve([anthropicTextSse('Hi.')]);
    await run(anthropicProvider({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant', baseURL: off.url, maxTokens: 256 }), {
      system: 'Be brief.',
      tools: [add],
      promptCache: false,
    });
    expect(breakpoints(off.requests[0]?.body)).toEqual([]);
    expect((off.requests[0]!.body as { system: unknown }).system).toBe('Be brief.');
    const hour = await serve([anthropicTextSse('Hi.')]);
    await run(anthropicProvider({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant', baseURL: hour.url, maxTokens: 256 }), {
      promptCache: { ttl: '1h' },
    });
    expect(breakpoints(hour.requests[0]?.body)).toEqual(['messages[0].content[0] {"type":"ephemeral","ttl":"1h"}']);
  });

  it('OpenAI, both APIs: prompt_cache_key and 24-hour retention when asked; nothing by default; the provider’s own params win', async () => {
    const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
      id: 'c',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4o',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const chatAnswer = () => openaiSse([chunk({ content: 'Hi.' }, 'stop')]);
    const chat = await serve([chatAnswer(), chatAnswer(), chatAnswer()]);
    const chatProvider = (params?: Record<string, unknown>) =>
      openaiProvider({ model: 'gpt-4o', apiKey: 'sk', baseURL: `${chat.url}/v1`, ...(params ? { params } : {}) });
    await run(chatProvider(), { promptCache: { key: 'support-bot', ttl: '24h' } });
    await run(chatProvider());
    await run(chatProvider({ prompt_cache_key: 'mine' }), { promptCache: { key: 'support-bot' } });
    const fields = (body: unknown) => {
      const { prompt_cache_key, prompt_cache_retention } = body as Record<string, unknown>;
      return { prompt_cache_key, prompt_cache_retention };
    };
    expect(chat.requests.map((request) => fields(request.body))).toEqual([
      { prompt_cache_key: 'support-bot', prompt_cache_retention: '24h' },
      { prompt_cache_key: undefined, prompt_cache_retention: undefined },
      { prompt_cache_key: 'mine', prompt_cache_retention: undefined },
    ]);
    const responses = await serve([responsesStream({ items: [{ type: 'message', text: 'Hi.' }] })]);
    await run(openaiProvider({ api: 'responses', model: 'gpt-5-mini', apiKey: 'sk', baseURL: `${responses.url}/v1` }), {
      promptCache: { key: 'support-bot', ttl: '24h' },
    });
    expect(fields(responses.requests[0]?.body)).toEqual({ prompt_cache_key: 'support-bot', prompt_cache_retention: '24h' });
  });

  it('OpenAI under a host: the conversation id is the prompt_cache_key, unless promptCache names one or is false', async () => {
    const answer = () =>
      openaiSse([
        {
          id: 'c',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'gpt-4o',
          choices: [{ index: 0, delta: { content: 'Hi.' }, finish_reason: 'stop' }],
        },
      ]);
    const server = await serve([answer(), answer(), answer(), answer()]);
    const provider = openaiProvider({ model: 'gpt-4o', apiKey: 'sk', baseURL: `${server.url}/v1` });
    for (const [id, promptCache] of [
      ['support-42', undefined],
      ['support-42', undefined],
      ['support-43', { key: 'shared-bot' }],
      ['support-44', false],
    ] as const) {
      const host = createConversationHost({
        machine: createConversationMachine({ provider, ...(promptCache === undefined ? {} : { promptCache }) }),
        store: memoryStore(),
      });
      await host.send(id, { type: 'user.message', content: 'Hello' });
      await host.result(id);
      await host.close();
    }
    expect(server.requests.map((request) => (request.body as { prompt_cache_key?: string }).prompt_cache_key)).toEqual([
      'support-42',
      'support-42',
      'shared-bot',
      undefined,
    ]);
    // A plain actor has no conversation id: no key unless promptCache names one (the test above).
  });

  it('a ttl the wire does not offer is refused when the machine is created, naming what it offers; a bad promptCache is named', () => {
    const claude = anthropicProvider({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant', maxTokens: 256 });
    const gpt = openaiProvider({ model: 'gpt-4o', apiKey: 'sk' });
    const create = (options: Partial<ConversationOptions>) => () => createConversationMachine({ provider: claude, ...options });
    expect(create({ promptCache: { ttl: '24h' } })).toThrow(
      "Invalid option promptCache.ttl: expected one the anthropic wire of provider offers: '5m' or '1h', got \"24h\"",
    );
    expect(create({ provider: [gpt, claude], promptCache: { ttl: '1h' } })).toThrow(
      "promptCache.ttl: expected one the openai wire of provider[0] offers: '5m' or '24h'",
    );
    expect(create({ promptCache: 'on' as never })).toThrow(
      /promptCache: expected 'auto', false or an object \{ ttl\?: '5m' \| '1h' \| '24h', key\? \}/,
    );
    expect(create({ promptCache: { ttl: '2h' } as never })).toThrow(/promptCache\.ttl/);
    expect(create({ promptCache: { key: '' } })).toThrow(/promptCache\.key/);
    expect(create({ promptCache: { tll: '1h' } as never })).toThrow(/promptCache\.tll.*did you mean ttl/);
    expect(create({ promptCache: { ttl: '5m', key: 'k' } })).not.toThrow();
    // A provider under middleware still says what its wire offers.
    expect(create({ promptCache: { ttl: '24h' }, middleware: [(request, next) => next(request)] })).toThrow(/'5m' or '1h'/);
  });
});

describe('an hour-long cache write is priced as one', () => {
  it('Anthropic splits the write by lifetime; cost prices the hour at cacheWrite1h (modelPrices: twice the input price)', () => {
    const usage = fromAnthropicUsage({
      input_tokens: 10,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 3000,
      cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
      output_tokens: 5,
    });
    expect(usage).toEqual({
      inputTokens: 3010,
      outputTokens: 5,
      totalTokens: 3015,
      cachedInputTokens: 0,
      cacheCreationInputTokens: 3000,
      cacheCreation1hInputTokens: 2000,
    });
    const cost = addCost(zeroCost(), modelPrices, 'claude-sonnet-4-5-20250929', usage);
    expect(cost.cacheWrite).toBeCloseTo((1000 * 3.75 + 2000 * 6) / 1e6, 12);
    expect(cost.input).toBeCloseTo((10 * 3) / 1e6, 12);
    // A table without the hour's price prices it as a five-minute write, never as nothing.
    expect(addCost(zeroCost(), { m: { input: 1, cacheWrite: 1.25, output: 2 } }, 'm', usage).cacheWrite).toBeCloseTo(
      (3000 * 1.25) / 1e6,
      12,
    );
    expect(addUsage(usage, usage).cacheCreation1hInputTokens).toBe(4000);
  });
});

describe('recorded cache write → read', () => {
  it('Anthropic (ruby_llm, claude-haiku-4-5): the breakpoint goes where the recording had it; the write and the read come back as usage and are priced apart', async () => {
    const cassette = loadCassette(join(recordedFixturesDir, 'anthropic/rubyllm-haiku-4.5-prompt-cache-write-then-read.json'));
    const recorded = cassette.interactions[0]?.request.body as {
      system: Array<{ text: string }>;
      messages: Array<{ content: Array<{ text: string }> }>;
    };
    const system = recorded.system.map((block) => block.text).join('');
    const question = recorded.messages[0]?.content[0]?.text as string;
    const server = await serve(cassette.interactions.map((interaction) => interaction.response));
    const provider = anthropicProvider({
      model: 'claude-haiku-4-5',
      apiKey: 'sk-ant',
      baseURL: server.url,
      maxTokens: 1024,
      stream: false,
    });
    const prices = { 'claude-haiku-4-5': { input: 1, cachedInput: 0.1, cacheWrite: 1.25, output: 5 } };
    const write = await run(provider, { system, prices }, question);
    const read = await run(provider, { system, prices }, question);
    for (const [index, request] of server.requests.entries()) {
      assertRequestMatches(cassette.interactions[index]?.request, request, { model: false });
      expect(breakpoints(cassette.interactions[index]!.request.body)).toEqual(['system[0] {"type":"ephemeral"}']);
      expect(breakpoints(request.body)).toEqual(['messages[0].content[0] {"type":"ephemeral"}', 'system[0] {"type":"ephemeral"}']);
    }
    expect(write.text).toBe('OK');
    expect(write.usage).toMatchObject({ inputTokens: 7361, cacheCreationInputTokens: 7351, cachedInputTokens: 0 });
    expect(read.usage).toMatchObject({ inputTokens: 7361, cacheCreationInputTokens: 0, cachedInputTokens: 7351 });
    expect(write.cost?.cacheWrite).toBeCloseTo((7351 * 1.25) / 1e6, 10);
    expect(read.cost?.cachedInput).toBeCloseTo((7351 * 0.1) / 1e6, 10);
    // The read costs a tenth of the input it stands for: what caching is for.
    expect(read.cost!.total).toBeLessThan(write.cost!.total / 5);
  });
});
