/**
 * traceHost (docs/tracing-and-shaping.md "Tracing a durable host"): the GenAI spans of every run of
 * every conversation of a real durable host, checked with the OpenTelemetry SDK's in-memory
 * exporter — one invoke_agent span per run with gen_ai.conversation.id, its chat and execute_tool
 * children, approvals, cancels, failed writes, a run resumed by recover(), and the caller's span as
 * the parent.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type ConversationStore,
  createConversationHost,
  createConversationMachine,
  defineTool,
  handlerProvider,
  InvalidOptionsError,
  memoryStore,
  openaiProvider,
  type Provider,
} from '../src/index.js';
import { traceHost } from '../src/observe/otel/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { plannedModel, type PlanStep } from './support/planned-model.js';
import { startPlannedWireServer } from './support/planned-wire-server.js';
import { deferred } from './support/run-conversation.js';
import type { ScriptedTurn } from './support/scripted-model.js';

const exporter = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});
afterEach(() => exporter.reset());

const work = mkdtempSync(join(tmpdir(), 'actorloop-otel-host-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const parameters = z.object({ a: z.number(), b: z.number() });
const add = defineTool({ name: 'add', parameters, execute: ({ a, b }) => a + b });
const guarded = defineTool({ name: 'guarded', parameters, needsApproval: true, execute: ({ a, b }) => a + b });
const hang = defineTool({ name: 'hang', parameters: z.object({}), execute: () => new Promise<string>(() => undefined) });

/** One tool round (which tool: named in the conversation's first message), then an answer naming the turn. */
const plan = (step: PlanStep): ScriptedTurn => {
  if (step.round > 0) return { text: `answer ${step.turn}` };
  const name = ['guarded', 'hang'].find((tool) => step.conversation.includes(tool)) ?? 'add';
  return { toolCalls: [{ id: `call-${step.turn}`, name, args: name === 'hang' ? {} : { a: step.turn, b: 1 } }] };
};

function setup(options: { store?: ConversationStore; provider?: Provider } = {}) {
  const machine = createConversationMachine({
    provider: options.provider ?? handlerProvider(plannedModel(plan).handler),
    tools: [add, guarded, hang],
  });
  return createConversationHost({ machine, store: options.store ?? memoryStore(), hostId: 'otel-host' });
}

const named = (spans: ReadableSpan[], prefix: string) => spans.filter((span) => span.name.startsWith(prefix));
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const childrenOf = (spans: ReadableSpan[], parent: ReadableSpan) =>
  spans.filter((span) => parentOf(span) === parent.spanContext().spanId).map((span) => span.name);

describe('traceHost', () => {
  it('one invoke_agent span per run with gen_ai.conversation.id, and its chat and execute_tool children, over the openai SDK', async () => {
    const server = await startPlannedWireServer((step) =>
      step.round === 0
        ? { toolCalls: [{ id: `call-${step.turn}`, name: 'add', args: { a: step.turn, b: 1 } }] }
        : { text: `answer ${step.turn}` },
    );
    try {
      const host = setup({ provider: openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: `${server.url}/v1` }) });
      const stop = traceHost(host, { tracer, agentName: 'support' });
      for (const [id, content] of [
        ['c-1', 'first'],
        ['c-2', 'other'],
        ['c-1', 'second'],
      ] as const) {
        await host.send(id, { type: 'user.message', content });
        await host.result(id);
      }
      const spans = exporter.getFinishedSpans();
      const runs = named(spans, 'invoke_agent');
      expect(runs.map((run) => run.attributes['gen_ai.conversation.id'])).toEqual(['c-1', 'c-2', 'c-1']);
      for (const run of runs) {
        expect(run.name).toBe('invoke_agent support');
        expect(parentOf(run)).toBeUndefined();
        expect(run.attributes).toMatchObject({
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': 'support',
          'actorloop.host.id': 'otel-host',
          'actorloop.run.status': 'done',
          'actorloop.run.iterations': 1,
          'gen_ai.usage.input_tokens': 40,
          'gen_ai.usage.output_tokens': 10,
        });
        expect(childrenOf(spans, run)).toEqual(['chat gpt-4o-mini', 'execute_tool add', 'chat gpt-4o-mini']);
      }
      expect(new Set(runs.map((run) => run.spanContext().traceId)).size).toBe(3);
      const [chat] = named(spans, 'chat');
      expect(chat?.attributes).toMatchObject({
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.response.model': 'planned',
        'gen_ai.response.finish_reasons': ['tool_calls'],
      });
      expect(named(spans, 'execute_tool')[0]?.attributes).toMatchObject({ 'gen_ai.tool.name': 'add', 'gen_ai.tool.call.id': 'call-1' });
      expect(spans).toHaveLength(12);
      stop();
      await host.close();
    } finally {
      await server.close();
    }
  });

  it('a run that waits for approval is one span, from the first request to the answer after the approval', async () => {
    const host = setup();
    traceHost(host, { tracer });
    await host.send('c-guarded', { type: 'user.message', content: 'guarded please' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(named(exporter.getFinishedSpans(), 'invoke_agent')).toEqual([]);
    expect((await host.get('c-guarded'))?.status).toBe('awaitingApproval');
    await host.send('c-guarded', { type: 'tool.approve', toolCallId: 'call-1' });
    await host.result('c-guarded');
    const spans = exporter.getFinishedSpans();
    const [run] = named(spans, 'invoke_agent');
    expect(named(spans, 'invoke_agent')).toHaveLength(1);
    expect(childrenOf(spans, run!)).toEqual(['chat', 'execute_tool guarded', 'chat']);
    expect(run!.attributes['actorloop.run.status']).toBe('done');
    await host.close();
  });

  it('a cancelled run ends its open tool span as cancelled and the run span with its reason', async () => {
    const host = setup();
    traceHost(host, { tracer });
    const started = deferred();
    const stopWatching = host.subscribe('c-hang', (event) => event.type === 'tool.started' && started.resolve());
    await host.send('c-hang', { type: 'user.message', content: 'hang' });
    await started.promise;
    stopWatching();
    await host.send('c-hang', { type: 'cancel', reason: 'user left' });
    await host.result('c-hang');
    const spans = exporter.getFinishedSpans();
    expect(named(spans, 'execute_tool hang')[0]?.attributes['error.type']).toBe('cancelled');
    expect(named(spans, 'invoke_agent')[0]?.attributes).toMatchObject({
      'gen_ai.conversation.id': 'c-hang',
      'actorloop.run.status': 'halted',
      'actorloop.run.reason': 'cancelled',
    });
    await host.close();
  });

  it('a run the host cannot store ends its span in error (write_failed)', async () => {
    const inner = memoryStore();
    let saves = 0;
    const store: ConversationStore = {
      ...inner,
      save: async (conversation, log) => {
        if (++saves === 2) throw new Error('disk full');
        return inner.save(conversation, log);
      },
    };
    const host = createConversationHost({
      machine: createConversationMachine({ provider: handlerProvider(plannedModel(plan).handler), tools: [add] }),
      store,
      onError: () => undefined,
    });
    traceHost(host, { tracer });
    await host.send('c-1', { type: 'user.message', content: 'add' });
    await expect(host.result('c-1')).rejects.toThrow('disk full');
    const [run] = named(exporter.getFinishedSpans(), 'invoke_agent');
    expect(run?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'disk full' });
    expect(run?.attributes['error.type']).toBe('write_failed');
    await host.close();
  });

  it('the span of a run started by host.send is a child of the caller’s span; parentContext chooses another', async () => {
    const host = setup();
    const stop = traceHost(host, { tracer });
    const request = tracer.startSpan('POST /conversations');
    await context.with(trace.setSpan(context.active(), request), () => host.send('c-1', { type: 'user.message', content: 'add' }));
    request.end();
    await host.result('c-1');
    const [run] = named(exporter.getFinishedSpans(), 'invoke_agent');
    expect(parentOf(run!)).toBe(request.spanContext().spanId);
    expect(run!.spanContext().traceId).toBe(request.spanContext().traceId);
    stop();

    exporter.reset();
    const chosen = tracer.startSpan('chosen');
    traceHost(host, { tracer, parentContext: (id) => (id === 'c-2' ? trace.setSpan(context.active(), chosen) : undefined) });
    await host.send('c-2', { type: 'user.message', content: 'add' });
    await host.result('c-2');
    expect(parentOf(named(exporter.getFinishedSpans(), 'invoke_agent')[0]!)).toBe(chosen.spanContext().spanId);
    chosen.end();
    await host.close();
  });

  it('a run resumed by recover() after a restart gets a span of its own, named by its conversation', async () => {
    const path = join(work, 'recover.db');
    const never = handlerProvider(async function* () {
      yield* [];
      await new Promise(() => undefined);
    });
    const before = setup({ store: sqliteStore({ path }), provider: never });
    await before.send('c-resumed', { type: 'user.message', content: 'add after a restart' });
    await before.close(); // the run stays stored as running, as after a crash
    const after = setup({ store: sqliteStore({ path }) });
    const stop = traceHost(after, { tracer, recordContent: true });
    expect((await after.recover()).resumed).toEqual(['c-resumed']);
    await after.result('c-resumed');
    const spans = exporter.getFinishedSpans();
    const [run] = named(spans, 'invoke_agent');
    expect(run?.attributes).toMatchObject({ 'gen_ai.conversation.id': 'c-resumed', 'actorloop.run.status': 'done' });
    expect(childrenOf(spans, run!)).toEqual(['chat', 'execute_tool add', 'chat']);
    // Content, opted in: the second request was sent the history up to the tool result.
    const chats = named(spans, 'chat');
    expect(JSON.parse(String(chats[1]!.attributes['gen_ai.input.messages'])).map((message: { role: string }) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
    ]);
    stop();
    await after.close();
  });

  it('stopping ends the spans of runs still open (one waiting for approval) and traces nothing after', async () => {
    const host = setup();
    const stop = traceHost(host, { tracer });
    await host.send('c-guarded', { type: 'user.message', content: 'guarded' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    stop();
    const [run] = named(exporter.getFinishedSpans(), 'invoke_agent');
    expect(run?.attributes['gen_ai.conversation.id']).toBe('c-guarded');
    await host.send('c-guarded', { type: 'tool.approve', toolCallId: 'call-1' });
    await host.result('c-guarded');
    await host.send('c-other', { type: 'user.message', content: 'add' });
    await host.result('c-other');
    expect(named(exporter.getFinishedSpans(), 'invoke_agent')).toHaveLength(1);
    await host.close();
  });

  it('names wrong arguments', () => {
    expect(() => traceHost({} as never)).toThrow(InvalidOptionsError);
    expect(() => traceHost({} as never)).toThrow(/traceHost\(host\): expected a conversation host/);
    expect(() => traceHost(setup(), { parentContext: 'nope' as never })).toThrow(/parentContext: expected a function/);
    expect(() => traceHost(setup(), { parentContext: 'nope' as never })).toThrow(
      expect.objectContaining({ option: 'traceHost(host, options).parentContext' }),
    );
    expect(() => traceHost(setup(), 'options' as never)).toThrow(
      expect.objectContaining({
        option: 'traceHost(host, options)',
        message: 'Invalid option traceHost(host, options): expected an object, got "options"',
      }),
    );
  });
});
