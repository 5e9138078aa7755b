/**
 * actorloop/otel (docs/tracing-and-shaping.md "Tracing"): GenAI spans checked with the OpenTelemetry SDK's
 * in-memory exporter — tree shape, attributes, error status, a retried request, a cancelled run, a
 * timed-out tool, content only when opted in.
 */
import { SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, toPromise, waitFor } from 'xstate';
import { createConversationMachine, defineTool, handlerProvider, openaiProvider, type Provider, type UserContent } from '../src/index.js';
import { traceConversation } from '../src/observe/otel/index.js';
import { scriptedModel, type ScriptedTurn } from './support/scripted-model.js';
import { openaiSse, startWireServer } from './support/wire-server.js';

const exporter = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
afterEach(() => exporter.reset());

const add = defineTool({
  name: 'add',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
  execute: ({ a, b }) => Number(a) + Number(b),
});
const hang = defineTool({
  name: 'hang',
  parameters: { type: 'object', properties: {} },
  timeoutMs: 30,
  execute: () => new Promise(() => undefined),
});

async function traced(
  provider: Provider,
  options: { recordContent?: boolean; content?: UserContent; drive?: (actor: ReturnType<typeof createActor>) => Promise<void> } = {},
) {
  const machine = createConversationMachine({ provider, tools: [add, hang], retry: { initialDelayMs: 1, maxDelayMs: 1, jitter: false } });
  const actor = createActor(machine, { input: {} });
  traceConversation(actor, {
    tracer,
    agentName: 'calculator',
    conversationId: 'c-42',
    ...(options.recordContent ? { recordContent: true } : {}),
  });
  actor.start();
  actor.send({ type: 'user.message', content: options.content ?? 'What is 2+3?' });
  await options.drive?.(actor as never);
  const output = await toPromise(actor);
  return { output, spans: exporter.getFinishedSpans() };
}

const scripted = (turns: ScriptedTurn[]) => handlerProvider(scriptedModel(turns).handler);
const named = (spans: ReadableSpan[], name: string) => spans.filter((span) => span.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('traceConversation', () => {
  it('one invoke_agent span, a chat span per attempt and an execute_tool span per tool, with GenAI attributes', async () => {
    const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) => ({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      model: 'gpt-4o-mini-2024-07-18',
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra,
    });
    const usage = { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 };
    const server = await startWireServer([
      openaiSse([
        chunk(
          { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }] },
          'tool_calls',
        ),
        { ...chunk({}, null), choices: [], usage },
      ]),
      openaiSse([chunk({ content: 'It is 5.' }, 'stop'), { ...chunk({}, null), choices: [], usage }]),
    ]);
    try {
      const { output, spans } = await traced(openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: `${server.url}/v1` }));
      expect(output.status).toBe('done');
      const [run] = named(spans, 'invoke_agent calculator');
      const chats = named(spans, 'chat gpt-4o-mini');
      const [tool] = named(spans, 'execute_tool add');
      expect(spans).toHaveLength(4);
      expect(chats).toHaveLength(2);
      for (const child of [...chats, tool!]) {
        expect(parentOf(child)).toBe(run!.spanContext().spanId);
        expect(child.spanContext().traceId).toBe(run!.spanContext().traceId);
      }
      expect(run!.attributes).toMatchObject({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'calculator',
        'gen_ai.conversation.id': 'c-42',
        'gen_ai.usage.input_tokens': 40,
        'gen_ai.usage.output_tokens': 14,
        'actorloop.run.status': 'done',
      });
      expect(chats[0]!.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
        'gen_ai.response.id': 'chatcmpl-1',
        'gen_ai.response.finish_reasons': ['tool_calls'],
        'gen_ai.usage.input_tokens': 20,
        'gen_ai.usage.output_tokens': 7,
      });
      expect(chats[1]!.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
      expect(tool!.attributes).toMatchObject({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'add',
        'gen_ai.tool.call.id': 'call_1',
        'gen_ai.tool.type': 'function',
      });
      // The tool ran between the two requests (HrTime is [seconds, nanoseconds]: compared as numbers, not as the strings `>=` makes of arrays).
      const nanoseconds = ([seconds, nanos]: readonly [number, number]) => BigInt(seconds) * 1_000_000_000n + BigInt(nanos);
      expect(nanoseconds(tool!.startTime)).toBeGreaterThanOrEqual(nanoseconds(chats[0]!.endTime));
      for (const span of spans) {
        expect(span.status.code).not.toBe(SpanStatusCode.ERROR);
        expect(
          Object.keys(span.attributes).filter((key) => key.includes('messages') || key.includes('arguments') || key.includes('result')),
        ).toEqual([]);
      }
    } finally {
      await server.close();
    }
  });

  it('a retried request shows as a failed chat span with error.type, then a second attempt', async () => {
    const { spans } = await traced(scripted([{ error: Object.assign(new Error('overloaded'), { status: 529 }) }, { text: 'ok' }]));
    const chats = named(spans, 'chat');
    expect(chats).toHaveLength(2);
    expect(chats[0]!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'overloaded' });
    expect(chats[0]!.attributes).toMatchObject({ 'error.type': 'overloaded', 'actorloop.attempt': 1 });
    expect(chats[0]!.events.map((event) => event.name)).toEqual(['actorloop.retry_scheduled']);
    expect(chats[1]!.status.code).toBe(SpanStatusCode.UNSET);
    expect(chats[1]!.attributes['actorloop.attempt']).toBe(2);
  });

  it('a run that ends in error marks the run span and the failed attempt', async () => {
    const { output, spans } = await traced(scripted([{ error: Object.assign(new Error('bad key'), { status: 401 }) }]));
    expect(output.status).toBe('error');
    const [run] = named(spans, 'invoke_agent calculator');
    const [chat] = named(spans, 'chat');
    for (const span of [run!, chat!]) {
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'bad key' });
      expect(span.attributes['error.type']).toBe('authentication');
    }
  });

  it('a timed-out tool ends its span in error (timeout); the run goes on', async () => {
    const { output, spans } = await traced(scripted([{ toolCalls: [{ id: 'h', name: 'hang', args: {} }] }, { text: 'gave up' }]));
    expect(output.status).toBe('done');
    const [tool] = named(spans, 'execute_tool hang');
    expect(tool!.status.code).toBe(SpanStatusCode.ERROR);
    expect(tool!.attributes['error.type']).toBe('timeout');
    expect(named(spans, 'invoke_agent calculator')[0]!.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('a cancelled run ends every open span: the running tool as cancelled, the run with its reason', async () => {
    const { output, spans } = await traced(scripted([{ toolCalls: [{ id: 'h', name: 'hang', args: {} }] }]), {
      drive: async (actor) => {
        await waitFor(actor, (snapshot) => (snapshot as { matches(value: string): boolean }).matches('executingTools'));
        actor.send({ type: 'cancel', reason: 'user left' });
      },
    });
    expect(output).toMatchObject({ status: 'halted', reason: 'cancelled' });
    expect(spans).toHaveLength(3);
    const [tool] = named(spans, 'execute_tool hang');
    expect(tool!.attributes['error.type']).toBe('cancelled');
    expect(named(spans, 'invoke_agent calculator')[0]!.attributes).toMatchObject({
      'actorloop.run.status': 'halted',
      'actorloop.run.reason': 'cancelled',
    });
  });

  it('records message content, tool arguments and results only when opted in', async () => {
    const { spans } = await traced(scripted([{ toolCalls: [{ id: 't', name: 'add', args: { a: 2, b: 3 } }] }, { text: 'It is 5.' }]), {
      recordContent: true,
    });
    const chats = named(spans, 'chat');
    expect(JSON.parse(String(chats[0]!.attributes['gen_ai.input.messages']))).toEqual([{ role: 'user', content: 'What is 2+3?' }]);
    expect(JSON.parse(String(chats[0]!.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'tool_call', id: 't', name: 'add', arguments: { a: 2, b: 3 } }], finish_reason: 'tool_calls' },
    ]);
    expect(JSON.parse(String(chats[1]!.attributes['gen_ai.input.messages']))).toHaveLength(3);
    expect(JSON.parse(String(chats[1]!.attributes['gen_ai.output.messages']))[0].parts).toEqual([{ type: 'text', content: 'It is 5.' }]);
    const [tool] = named(spans, 'execute_tool add');
    expect(tool!.attributes).toMatchObject({ 'gen_ai.tool.call.arguments': '{"a":2,"b":3}', 'gen_ai.tool.call.result': '5' });
  });

  it('media in a request: its count and bytes on the chat span, always; with content recorded, each part by type and size, never its bytes', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const content: UserContent = [
      { type: 'text', text: 'What is this?' },
      { type: 'image', data: png },
      { type: 'image', data: 'https://example.com/cat.jpg' },
    ];
    for (const recordContent of [false, true]) {
      exporter.reset();
      const { spans } = await traced(scripted([{ text: 'A pixel.' }]), { recordContent, content });
      const [chat] = named(spans, 'chat');
      expect(chat!.attributes).toMatchObject({ 'actorloop.input.media.parts': 2, 'actorloop.input.media.bytes': 70 });
      expect(JSON.stringify(chat!.attributes)).not.toContain(png.slice(0, 20));
      if (!recordContent) expect(chat!.attributes['gen_ai.input.messages']).toBeUndefined();
      else
        expect(JSON.parse(String(chat!.attributes['gen_ai.input.messages']))).toEqual([
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image', mediaType: 'image/png', bytes: 70 },
              { type: 'image', url: 'https://example.com/cat.jpg' },
            ],
          },
        ]);
    }
  });

  it('an actor stopped before its run ends ends its open spans as stopped', async () => {
    const machine = createConversationMachine({
      provider: scripted([{ toolCalls: [{ id: 'h', name: 'hang', args: {} }] }, { text: 'x' }]),
      tools: [hang],
    });
    const actor = createActor(machine, { input: {} });
    traceConversation(actor, { tracer });
    actor.start();
    actor.send({ type: 'user.message', content: 'go' });
    await waitFor(actor, (snapshot) => snapshot.matches('executingTools'));
    actor.stop();
    const spans = exporter.getFinishedSpans();
    expect(named(spans, 'invoke_agent')).toHaveLength(1);
    expect(named(spans, 'execute_tool hang')[0]!.attributes['error.type']).toBe('stopped');
  });

  it('stopping the tracing early ends the open spans and detaches', async () => {
    const machine = createConversationMachine({
      provider: scripted([{ toolCalls: [{ id: 'h', name: 'hang', args: {} }] }, { text: 'x' }]),
      tools: [hang],
    });
    const actor = createActor(machine, { input: {} });
    const stop = traceConversation(actor, { tracer });
    actor.start();
    actor.send({ type: 'user.message', content: 'go' });
    await waitFor(actor, (snapshot) => snapshot.matches('executingTools'));
    stop();
    const ended = exporter.getFinishedSpans().length;
    await toPromise(actor);
    expect(exporter.getFinishedSpans().length).toBe(ended);
    expect(named(exporter.getFinishedSpans(), 'invoke_agent')).toHaveLength(1);
  });
});

describe('traceConversation over an agent tree', () => {
  it("nests each child's invoke_agent span under its call's execute_tool span, grandchildren included", async () => {
    const { agentTool } = await import('../src/index.js');
    const leaf = createConversationMachine({ provider: scripted([{ text: 'leaf says hi' }]) });
    const middle = createConversationMachine({
      provider: scripted([{ toolCalls: [{ id: 'c1', name: 'leaf', args: { prompt: 'hi?' } }] }, { text: 'middle done' }]),
      tools: [agentTool(leaf, { name: 'leaf' })],
    });
    const root = createConversationMachine({
      provider: scripted([{ toolCalls: [{ id: 'p1', name: 'middle', args: { prompt: 'go' } }] }, { text: 'root done' }]),
      tools: [agentTool(middle, { name: 'middle' })],
    });
    const actor = createActor(root, { input: {} });
    traceConversation(actor, { tracer, agentName: 'root', conversationId: 'c-7' });
    actor.start();
    actor.send({ type: 'user.message', content: 'start' });
    expect(await toPromise(actor)).toMatchObject({ status: 'done', text: 'root done' });
    const spans = exporter.getFinishedSpans();
    const [rootRun] = named(spans, 'invoke_agent root');
    const [middleTool] = named(spans, 'execute_tool middle');
    const [middleRun] = named(spans, 'invoke_agent middle');
    const [leafTool] = named(spans, 'execute_tool leaf');
    const [leafRun] = named(spans, 'invoke_agent leaf');
    expect(parentOf(middleTool!)).toBe(rootRun!.spanContext().spanId);
    expect(parentOf(middleRun!)).toBe(middleTool!.spanContext().spanId);
    expect(parentOf(leafTool!)).toBe(middleRun!.spanContext().spanId);
    expect(parentOf(leafRun!)).toBe(leafTool!.spanContext().spanId);
    // Each run's chat spans sit under its own invoke_agent span; one trace for the whole tree.
    const leafChats = spans.filter((span) => span.name.startsWith('chat') && parentOf(span) === leafRun!.spanContext().spanId);
    expect(leafChats).toHaveLength(1);
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    expect(leafRun!.attributes).toMatchObject({
      'gen_ai.agent.name': 'leaf',
      'gen_ai.conversation.id': 'c-7',
      'actorloop.run.status': 'done',
    });
  });
});
