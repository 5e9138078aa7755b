/**
 * Structured final answers (docs/structured-output.md): validated `output.object`, repairs in the
 * `repairing` state bounded by `maxRepairs`, `object.delta` while streaming, and each wire's native
 * mode through the real SDKs over HTTP.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { anthropicProvider, createConversationMachine, defineTool, handlerProvider, openaiProvider, type RunOutput } from '../src/index.js';
import { eventsOf, expectValidHistory, runConversation } from './support/run-conversation.js';
import { scriptedModel, type ScriptedTurn } from './support/scripted-model.js';
import { anthropicSse, jsonResponse, openaiSse, startWireServer } from './support/wire-server.js';

const report = z.object({ city: z.string(), celsius: z.number() });
const output = { schema: report, name: 'weather_report' };

describe('output: { schema }', () => {
  it('returns the validated answer as output.object, typed from the schema; the handler gets response_format', async () => {
    const model = scriptedModel([{ text: '{"city":"Oslo","celsius":-3}' }]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler), output });
    const actor = createActor(machine, { input: {} }).start();
    actor.send({ type: 'user.message', content: 'Weather in Oslo?' });
    const result = await toPromise(actor);
    expectTypeOf(result.object).toEqualTypeOf<{ city: string; celsius: number } | undefined>();
    expect(result).toMatchObject({ status: 'done', object: { city: 'Oslo', celsius: -3 }, text: '{"city":"Oslo","celsius":-3}' });
    expect(result.repairs).toBeUndefined();
    expect(model.requests[0]!.response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'weather_report',
        strict: false,
        schema: expect.objectContaining({ type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } } }),
      },
    });
  });

  it('an invalid answer is repaired: the model gets what was wrong, the run goes through the repairing state', async () => {
    const {
      output: result,
      events,
      requests,
    } = await runConversation(
      [
        { text: 'It is cold in Oslo.' },
        { text: '{"city":"Oslo","celsius":"minus three"}' },
        { text: '```json\n{"city":"Oslo","celsius":-3}\n```' },
      ],
      { output },
    );
    expect(result).toMatchObject({ status: 'done', object: { city: 'Oslo', celsius: -3 }, repairs: 2 });
    expect(eventsOf(events, 'output.repair').map(({ repair, problem }) => ({ repair, problem }))).toEqual([
      { repair: 1, problem: expect.stringMatching(/^the answer is not valid JSON \(/) },
      { repair: 2, problem: 'the answer does not match the schema: answer.celsius: Invalid input: expected number, received string' },
    ]);
    const repairMessage = requests[1]!.messages.at(-1);
    expect(repairMessage).toEqual({
      role: 'user',
      content: expect.stringMatching(/^Your answer could not be used: the answer is not valid JSON/),
    });
    expect(String(repairMessage?.content)).toContain('"weather_report" schema');
    expectValidHistory(result.messages);
  });

  it('after maxRepairs the run ends in error naming the last problem, and object is never set', async () => {
    const bad: ScriptedTurn = { text: '{"city":"Oslo"}' };
    const { output: result, events } = await runConversation([bad, bad], { output: { ...output, maxRepairs: 1 } });
    expect(result.status).toBe('error');
    expect(result.object).toBeUndefined();
    expect(result.error).toEqual({
      name: 'OutputValidationError',
      message:
        'the final answer did not match the output schema after 1 repair(s): the answer does not match the schema: answer.celsius: Invalid input: expected number, received undefined',
      retryable: false,
      code: 'invalid_output',
    });
    expect(eventsOf(events, 'output.repair')).toHaveLength(1);
    expectValidHistory(result.messages);
  });

  it('a refusal and an answer cut at the token limit are repaired with a message saying so', async () => {
    const { output: result, events } = await runConversation(
      [
        { text: 'I cannot help with that.', finishReason: 'content_filter' },
        { text: '{"city":"Os', finishReason: 'length' },
        { text: '{"city":"Oslo","celsius":1}' },
      ],
      { output: { ...output, maxRepairs: 3 } },
    );
    expect(result).toMatchObject({ status: 'done', object: { city: 'Oslo', celsius: 1 }, repairs: 2 });
    expect(eventsOf(events, 'output.repair')[1]!.problem).toBe('the answer was cut at the token limit before the JSON was complete');
  });

  it('streams partial objects as object.delta while the answer arrives', async () => {
    // Pieces arrive apart, as from a network: deltas of one read reach the machine as one batch.
    const slowly: ScriptedTurn = async function* () {
      for (const piece of ['{"ci', 'ty":"Os', 'lo","cel', 'sius":-', '3}']) {
        await new Promise((resolve) => setTimeout(resolve, 2));
        yield {
          id: 's',
          object: 'chat.completion.chunk',
          model: 'scripted',
          choices: [{ index: 0, delta: { content: piece }, finish_reason: null }],
        };
      }
      yield { id: 's', object: 'chat.completion.chunk', model: 'scripted', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] };
    };
    const { events } = await runConversation([slowly], { output });
    const partials = eventsOf(events, 'object.delta').map((event) => event.object);
    expect(partials).toEqual([{}, { city: 'Os' }, { city: 'Oslo' }, { city: 'Oslo', celsius: -3 }]);
    expect(new Set(partials.map((partial) => JSON.stringify(partial))).size).toBe(partials.length);
  });

  it('tools run first; the structured answer ends the loop', async () => {
    const lookup = defineTool({ name: 'lookup', parameters: z.object({ city: z.string() }), execute: () => '-3 °C' });
    const { output: result } = await runConversation(
      [{ toolCalls: [{ id: 'l1', name: 'lookup', args: { city: 'Oslo' } }] }, { text: '{"city":"Oslo","celsius":-3}' }],
      { output, tools: [lookup] },
    );
    expect(result).toMatchObject({ status: 'done', iterations: 1, object: { city: 'Oslo', celsius: -3 } });
  });

  it('bad output options are refused at creation', () => {
    const provider = handlerProvider(async function* () {});
    const tool = defineTool({ name: 'final_answer', parameters: z.object({}), execute: () => 1 });
    expect(() => createConversationMachine({ provider, tools: [tool], output: { schema: report } })).toThrow(
      /output\.name: expected a name no tool uses/,
    );
    expect(() => createConversationMachine({ provider, output: { schema: report, maxRepairs: -1 } })).toThrow(
      /output\.maxRepairs: expected an integer ≥ 0/,
    );
    expect(() => createConversationMachine({ provider, output: { schema: z.string() as never } })).toThrow(
      /output\.schema: expected an object schema \(a structured answer is a JSON object\)/,
    );
    expect(() => createConversationMachine({ provider, output: { schema: report, retries: 2 } as never })).toThrow(/output\.retries/);
  });
});

describe('native modes over the real SDKs', () => {
  it('OpenAI Chat Completions: response_format json_schema; the answer becomes the object', async () => {
    const chunk = {
      id: 'c',
      object: 'chat.completion.chunk',
      model: 'gpt-4o-mini',
      choices: [{ index: 0, delta: { content: '{"city":"Oslo","celsius":-3}' }, finish_reason: 'stop' }],
    };
    const server = await startWireServer([openaiSse([chunk])]);
    try {
      const machine = createConversationMachine({
        provider: openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: `${server.url}/v1` }),
        output: { ...output, strict: true },
      });
      const actor = createActor(machine, { input: {} }).start();
      actor.send({ type: 'user.message', content: 'Weather in Oslo?' });
      expect((await toPromise(actor)).object).toEqual({ city: 'Oslo', celsius: -3 });
      expect((server.requests[0]!.body as { response_format: unknown }).response_format).toMatchObject({
        type: 'json_schema',
        json_schema: { name: 'weather_report', strict: true, schema: { type: 'object' } },
      });
    } finally {
      await server.close();
    }
  });

  const anthropicStart = (model: string) => ({
    type: 'message_start',
    message: { id: 'msg_1', type: 'message', role: 'assistant', model, content: [], usage: { input_tokens: 5, output_tokens: 1 } },
  });
  const anthropicEnd = (stopReason: string) => [
    { type: 'message_delta', delta: { stop_reason: stopReason }, usage: { output_tokens: 9 } },
    { type: 'message_stop' },
  ];

  it('Anthropic tool mode: a forced answer tool whose streamed input becomes the object (and object.delta)', async () => {
    const server = await startWireServer([
      anthropicSse([
        anthropicStart('claude-3-5-haiku-latest'),
        { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'weather_report', input: {} } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"city": "Os' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: 'lo", "celsius": -3}' } },
        { type: 'content_block_stop', index: 0 },
        ...anthropicEnd('tool_use'),
      ]),
    ]);
    try {
      const machine = createConversationMachine({
        provider: anthropicProvider({ model: 'claude-3-5-haiku-latest', maxTokens: 1024, apiKey: 'sk-ant-test', baseURL: server.url }),
        output,
      });
      const actor = createActor(machine, { input: {} });
      const partials: unknown[] = [];
      actor.on('object.delta', (event) => partials.push(event.object));
      actor.start().send({ type: 'user.message', content: 'Weather in Oslo?' });
      const result: RunOutput<{ city: string; celsius: number }> = await toPromise(actor);
      expect(result).toMatchObject({ status: 'done', object: { city: 'Oslo', celsius: -3 }, finishReason: 'stop' });
      expect(partials).toEqual([{ city: 'Os' }, { city: 'Oslo', celsius: -3 }]);
      const body = server.requests[0]!.body as { tools: Array<{ name: string }>; tool_choice: unknown; output_config?: unknown };
      expect(body.tools.map((tool) => tool.name)).toEqual(['weather_report']);
      expect(body.tool_choice).toEqual({ type: 'tool', name: 'weather_report' });
      expect(body.output_config).toBeUndefined();
      expectValidHistory(result.messages);
    } finally {
      await server.close();
    }
  });

  it('Anthropic native mode (Claude 4.5+): output_config.format, the text answer becomes the object', async () => {
    const server = await startWireServer([
      jsonResponse(200, {
        id: 'msg_2',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5-20250929',
        content: [{ type: 'text', text: '{"city":"Oslo","celsius":-3}' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 5, output_tokens: 9 },
      }),
    ]);
    try {
      const machine = createConversationMachine({
        provider: anthropicProvider({
          model: 'claude-sonnet-4-5',
          maxTokens: 1024,
          apiKey: 'sk-ant-test',
          baseURL: server.url,
          stream: false,
        }),
        output,
      });
      const actor = createActor(machine, { input: {} }).start();
      actor.send({ type: 'user.message', content: 'Weather in Oslo?' });
      expect((await toPromise(actor)).object).toEqual({ city: 'Oslo', celsius: -3 });
      const body = server.requests[0]!.body as { tools?: unknown; tool_choice?: unknown; output_config: unknown };
      expect(body.output_config).toEqual({ format: { type: 'json_schema', schema: expect.objectContaining({ type: 'object' }) } });
      expect(body.tools).toBeUndefined();
      expect(body.tool_choice).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  it('Anthropic tool mode beside real tools: tool_choice any; the real tool runs, then the answer tool ends the run', async () => {
    const lookup = defineTool({ name: 'lookup', parameters: z.object({ city: z.string() }), execute: () => '-3 °C' });
    const toolTurn = (id: string, name: string, input: string) =>
      anthropicSse([
        anthropicStart('claude-3-5-haiku-latest'),
        { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id, name, input: {} } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: input } },
        { type: 'content_block_stop', index: 0 },
        ...anthropicEnd('tool_use'),
      ]);
    const server = await startWireServer([
      toolTurn('toolu_l', 'lookup', '{"city":"Oslo"}'),
      toolTurn('toolu_a', 'weather_report', '{"city":"Oslo","celsius":-3}'),
    ]);
    try {
      const machine = createConversationMachine({
        provider: anthropicProvider({
          model: 'claude-3-5-haiku-latest',
          maxTokens: 1024,
          apiKey: 'sk-ant-test',
          baseURL: server.url,
          structuredOutput: 'tool',
        }),
        tools: [lookup],
        output,
      });
      const actor = createActor(machine, { input: {} }).start();
      actor.send({ type: 'user.message', content: 'Weather in Oslo?' });
      const result = await toPromise(actor);
      expect(result).toMatchObject({ status: 'done', iterations: 1, object: { city: 'Oslo', celsius: -3 } });
      expect((server.requests[0]!.body as { tool_choice: unknown }).tool_choice).toEqual({ type: 'any' });
      expect((server.requests[1]!.body as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name)).toEqual([
        'lookup',
        'weather_report',
      ]);
      expectValidHistory(result.messages);
    } finally {
      await server.close();
    }
  });
});
