/**
 * `actorloop/restate` against a real `restate-server` (loopback, free ports, fresh data directory),
 * one worker on its own HTTP/2 server in this process, the OpenAI wire on a local server: a run
 * with a tool round, live output through `onEvent`, an approval that ends the invocation and
 * resumes on `tool.approve`, and the host's errors through the client.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as restate from '@restatedev/restate-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ConversationNotFoundError,
  createConversationMachine,
  agentTool,
  defineTool,
  EventRejectedError,
  InvalidOptionsError,
  openaiProvider,
} from '../src/index.js';
import { type RestateConversationClient, restateConversationClient } from '../src/scale/restate/client.js';
import { type RestateConversationEvent, restateConversations } from '../src/scale/restate/index.js';
import { expectValidForBothWires } from './support/history.js';
import type { PlanStep } from './support/planned-model.js';
import { type PlannedAnswer, type PlannedWireServer, startPlannedWireServer } from './support/planned-wire-server.js';
import { type RestateServer, startRestateServer } from './support/restate-server.js';

/** `tools …` conversations make one tool round, `refund …` ones one round that needs approval; then a text answer. */
function plan(step: PlanStep): PlannedAnswer {
  const kind = step.conversation.split(' ')[0];
  // An agent tree: the parent asks `consult`; its child (named by its prompt) looks a key up, then answers.
  if (kind === 'tree')
    return step.round === 0 ? { toolCalls: [{ id: 'cs-1', name: 'consult', args: { prompt: 'sub tree' } }] } : { text: `tree answer` };
  // The same, with a call of the parent's own beside the agent call in its round.
  if (kind === 'beside')
    return step.round === 0
      ? {
          toolCalls: [
            { id: 'lk-beside', name: 'lookup', args: { key: 'beside' } },
            { id: 'cs-2', name: 'consult', args: { prompt: 'sub beside' } },
          ],
        }
      : { text: 'beside answer' };
  // A child that asks for approval (its prompt makes it a `refund …` conversation).
  if (kind === 'deep')
    return step.round === 0 ? { toolCalls: [{ id: 'cs-3', name: 'consult', args: { prompt: 'refund child' } }] } : { text: 'deep answer' };
  if (kind === 'sub')
    return step.round === 0
      ? { toolCalls: [{ id: 'lk-sub', name: 'lookup', args: { key: step.conversation === 'sub tree' ? 'deep' : step.conversation } }] }
      : { text: 'child answer' };
  if (step.round === 0 && kind === 'tools') return { toolCalls: [{ id: `lk-${step.turn}`, name: 'lookup', args: { key: 'order' } }] };
  if (step.round === 0 && kind === 'refund') {
    const cents = step.conversation === 'refund child' ? 300 : 500;
    return { toolCalls: [{ id: `rf-${step.turn}`, name: 'refund', args: { cents } }] };
  }
  return { text: `answer to ${step.lastUser}` };
}

const executions: string[] = [];
const lookup = defineTool({
  name: 'lookup',
  description: 'Look a key up',
  parameters: z.object({ key: z.string() }),
  execute: async ({ key }) => {
    executions.push(`lookup ${key}`);
    return `found ${key}`;
  },
});
const refund = defineTool({
  name: 'refund',
  description: 'Refund the customer',
  needsApproval: true,
  parameters: z.object({ cents: z.number() }),
  execute: async ({ cents }) => {
    executions.push(`refund ${cents}`);
    return `refunded ${cents}`;
  },
});

let wire: PlannedWireServer;
let server: RestateServer;
let worker: http2.Http2Server;
let client: RestateConversationClient;
let treeClient: RestateConversationClient;
const events: RestateConversationEvent[] = [];
const sdkLog: string[] = [];

beforeAll(async () => {
  wire = await startPlannedWireServer(plan, { chunkDelayMs: [1, 2], failOnce: (step) => step.conversation.startsWith('flaky') });
  server = await startRestateServer();
  const machine = createConversationMachine({
    provider: openaiProvider({ model: 'planned', apiKey: 'test', baseURL: `${wire.url}/v1` }),
    tools: [lookup, refund],
    retry: { initialDelayMs: 200, maxDelayMs: 400 },
  });
  const conversations = restateConversations({ machine, onEvent: (event) => events.push(event) });
  const consultant = createConversationMachine({
    provider: openaiProvider({ model: 'planned', apiKey: 'test', baseURL: `${wire.url}/v1` }),
    tools: [lookup, refund],
  });
  const trees = restateConversations({
    name: 'treeConversation',
    machine: createConversationMachine({
      provider: openaiProvider({ model: 'planned', apiKey: 'test', baseURL: `${wire.url}/v1` }),
      tools: [lookup, agentTool(consultant, { name: 'consult', description: 'Ask the consultant' })],
    }),
    onEvent: (event) => events.push(event),
  });
  // The SDK's log (every invocation, every terminal error the tests provoke) is kept, not printed.
  worker = http2.createServer(
    restate.createEndpointHandler({ services: [conversations, trees], logger: (_meta, message) => sdkLog.push(String(message)) }),
  );
  await new Promise<void>((resolve) => worker.listen(0, '127.0.0.1', resolve));
  await server.register(`http://127.0.0.1:${(worker.address() as AddressInfo).port}`);
  client = restateConversationClient({ url: server.ingressUrl });
  treeClient = restateConversationClient({ url: server.ingressUrl, name: 'treeConversation' });
}, 90_000);

afterAll(async () => {
  await server?.stop();
  await new Promise<void>((resolve) => (worker ? worker.close(() => resolve()) : resolve()));
  await wire?.close();
}, 30_000);

/** Invocations of the conversation's object not completed yet (Restate's own `sys_invocation` table). */
async function openInvocations(id: string): Promise<Array<{ target: string; status: string }>> {
  const response = await fetch(`${server.adminUrl}/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      query: `SELECT target, status FROM sys_invocation WHERE target_service_key = '${id}' AND status != 'completed'`,
    }),
  });
  expect(response.ok).toBe(true);
  return ((await response.json()) as { rows: Array<{ target: string; status: string }> }).rows;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('actorloop/restate with a real restate-server', () => {
  it("runs an agent call: the child's request and tool are journaled steps, its events stream live as agent.event", async () => {
    await treeClient.send('t-1', { type: 'user.message', content: 'tree please' });
    expect(await treeClient.result('t-1')).toMatchObject({ status: 'done', text: 'tree answer' });
    const stored = await treeClient.get('t-1');
    const toolMessage = stored?.messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content[0]).toMatchObject({ toolCallId: 'cs-1', result: 'child answer' });
    expect(executions.filter((entry) => entry === 'lookup deep')).toHaveLength(1);
    const mine = events.filter((event) => event.conversationId === 't-1').map(({ event }) => event);
    expect(mine).toContainEqual(expect.objectContaining({ type: 'agent.started', toolCallId: 'cs-1', agent: 'consult' }));
    expect(mine).toContainEqual(
      expect.objectContaining({
        type: 'agent.event',
        path: ['cs-1'],
        event: expect.objectContaining({ type: 'tool.result', toolCallId: 'lk-sub' }),
      }),
    );
    expect(mine).toContainEqual(
      expect.objectContaining({ type: 'agent.finished', toolCallId: 'cs-1', output: expect.objectContaining({ status: 'done' }) }),
    );
    // `request.started` goes out for each request made, the child's as well: not for one left to the next invocation.
    const childRequests = mine.filter((event) => event.type === 'agent.event' && event.event.type === 'request.started');
    expect(childRequests).toHaveLength(2);
    expect(mine.filter((event) => event.type === 'request.started')).toHaveLength(2);
  }, 60_000);

  it("a call beside an agent call runs once and keeps its result: the child's request waiting for the next invocation interrupts nothing", async () => {
    await treeClient.send('t-2', { type: 'user.message', content: 'beside please' });
    expect(await treeClient.result('t-2')).toMatchObject({ status: 'done', text: 'beside answer' });
    const toolMessage = (await treeClient.get('t-2'))?.messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content).toEqual([
      expect.objectContaining({ toolCallId: 'lk-beside', result: 'found beside' }),
      expect.objectContaining({ toolCallId: 'cs-2', result: 'child answer' }),
    ]);
    expect(executions.filter((entry) => entry === 'lookup beside')).toHaveLength(1);
    expect(executions.filter((entry) => entry === 'lookup sub beside')).toHaveLength(1);
  }, 60_000);

  it("a child's approval ends the invocation like the root's: tool.approve, sent to the root, reaches the child and the tree goes on", async () => {
    await treeClient.send('t-3', { type: 'user.message', content: 'deep please' });
    let view = await treeClient.get('t-3');
    for (let tries = 0; view?.status !== 'awaitingApproval' && tries < 200; tries++) {
      await sleep(50);
      view = await treeClient.get('t-3');
    }
    expect(view?.pendingApprovals).toEqual([{ toolCallId: 'rf-1', name: 'refund', args: { cents: 300 }, path: ['cs-3'] }]);
    let open = await openInvocations('t-3');
    for (let tries = 0; open.length > 0 && tries < 100; tries++) {
      await sleep(50);
      open = await openInvocations('t-3');
    }
    expect(open).toEqual([]);
    await treeClient.send('t-3', { type: 'tool.approve', toolCallId: 'rf-1' });
    expect(await treeClient.result('t-3')).toMatchObject({ status: 'done', text: 'deep answer' });
    const toolMessage = (await treeClient.get('t-3'))?.messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content).toEqual([expect.objectContaining({ toolCallId: 'cs-3', result: 'answer to refund child' })]);
    expect(executions.filter((entry) => entry === 'refund 300')).toHaveLength(1);
  }, 60_000);

  it('runs a conversation with a tool round; get reads it, result waits for it, onEvent streams it live', async () => {
    const view = await client.send('c-tools', { type: 'user.message', content: 'tools please' }, { sessionData: { user: 'u1' } });
    expect(view).toMatchObject({ id: 'c-tools', status: 'running' });
    const output = await client.result('c-tools');
    expect(output).toMatchObject({ status: 'done', text: 'answer to tools please' });
    const stored = await client.get('c-tools');
    expect(stored).toMatchObject({ status: 'done', value: 'done', pendingApprovals: [] });
    expect(stored?.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expectValidForBothWires(stored?.messages ?? []);
    expect(executions).toContain('lookup order');
    // The second turn goes on from the stored history, with the stored sessionData.
    await client.send('c-tools', { type: 'user.message', content: 'and again' });
    expect(await client.result('c-tools')).toMatchObject({ status: 'done', text: 'answer to and again' });
    expect((await client.get('c-tools'))?.messages).toHaveLength(8);

    const mine = events.filter((event) => event.conversationId === 'c-tools').map(({ event }) => event);
    const types = mine.map((event) => event.type);
    // Live, as the worker ran it: the model's deltas, the tool's result, each state change.
    expect(types).toContain('text.delta');
    expect(types).toContain('tool.result');
    expect(types).toContain('request.started');
    expect(
      mine
        .filter((event) => event.type === 'text.delta')
        .map((event) => ('delta' in event ? event.delta : ''))
        .join(''),
    ).toBe('answer to tools pleaseanswer to and again');
    expect(mine).toContainEqual(expect.objectContaining({ type: 'tool.result', toolCallId: 'lk-1', result: 'found order' }));
    expect(mine.filter((event) => event.type === 'state' && event.status === 'done')).toHaveLength(2);
  }, 60_000);

  it('an approval ends the invocation (nothing runs or waits in Restate) and tool.approve resumes the run', async () => {
    await client.send('c-refund', { type: 'user.message', content: 'refund please' });
    let view = await client.get('c-refund');
    for (let tries = 0; view?.status !== 'awaitingApproval' && tries < 200; tries++) {
      await sleep(50);
      view = await client.get('c-refund');
    }
    expect(view).toMatchObject({
      status: 'awaitingApproval',
      pendingApprovals: [{ toolCallId: 'rf-1', name: 'refund', args: { cents: 500 } }],
    });
    expect(executions).not.toContain('refund 500');
    // Once the advance that reached the approval completes, no invocation of this object is left open.
    let open = await openInvocations('c-refund');
    for (let tries = 0; open.length > 0 && tries < 100; tries++) {
      await sleep(50);
      open = await openInvocations('c-refund');
    }
    expect(open).toEqual([]);
    // A message during the run is rejected, with the host's error.
    await expect(client.send('c-refund', { type: 'user.message', content: 'hurry' })).rejects.toSatisfy(
      (error: unknown) => EventRejectedError.isInstance(error) && error.eventType === 'user.message',
    );
    const waiting = client.result('c-refund');
    await client.send('c-refund', { type: 'tool.approve', toolCallId: 'rf-1' });
    expect(await waiting).toMatchObject({ status: 'done', text: 'answer to refund please' });
    expect(executions.filter((execution) => execution === 'refund 500')).toHaveLength(1);
    const messages = (await client.get('c-refund'))?.messages ?? [];
    expect(messages).toContainEqual({
      role: 'tool',
      content: [expect.objectContaining({ toolCallId: 'rf-1', toolName: 'refund', result: 'refunded 500' })],
    });
  }, 60_000);

  it('a denial goes to the model as the denied result', async () => {
    await client.send('c-deny', { type: 'user.message', content: 'refund twice' });
    let view = await client.get('c-deny');
    for (let tries = 0; view?.status !== 'awaitingApproval' && tries < 200; tries++) {
      await sleep(50);
      view = await client.get('c-deny');
    }
    await client.send('c-deny', { type: 'tool.deny', toolCallId: 'rf-1', reason: 'too much' });
    expect(await client.result('c-deny')).toMatchObject({ status: 'done' });
    const messages = (await client.get('c-deny'))?.messages ?? [];
    expect(messages).toContainEqual({
      role: 'tool',
      content: [expect.objectContaining({ toolCallId: 'rf-1', result: 'denied by user: too much', isError: true })],
    });
  }, 60_000);

  it('a failed request backs off (a delayed advance) and is tried again', async () => {
    const retries: number[] = [];
    await client.send('c-flaky', { type: 'user.message', content: 'flaky answer' });
    expect(await client.result('c-flaky')).toMatchObject({ status: 'done', text: 'answer to flaky answer' });
    for (const { conversationId, event } of events) {
      if (conversationId === 'c-flaky' && event.type === 'request.retry') retries.push(event.delayMs);
    }
    expect(retries).toHaveLength(1);
    // Jittered: half to all of the 200 ms asked for.
    expect(retries[0]).toBeGreaterThanOrEqual(100);
    expect(
      events
        .filter(({ conversationId, event }) => conversationId === 'c-flaky' && event.type === 'state')
        .map(({ event }) => 'value' in event && event.value),
    ).toContain('retrying');
    // One request answered (the retry); the failed one was answered 503.
    expect(wire.requestLog().filter((request) => request.conversation === 'flaky answer')).toHaveLength(1);
  }, 30_000);

  it('the client throws the host errors: not found, rejected, invalid input', async () => {
    expect(await client.get('nobody')).toBeUndefined();
    await expect(client.result('nobody')).rejects.toSatisfy(
      (error: unknown) => ConversationNotFoundError.isInstance(error) && error.conversationId === 'nobody',
    );
    await expect(client.send('nobody', { type: 'tool.approve', toolCallId: 'x' })).rejects.toSatisfy((error: unknown) =>
      ConversationNotFoundError.isInstance(error),
    );
    await expect(client.send('c-tools', { type: 'tool.approve', toolCallId: 'x' })).rejects.toSatisfy(
      (error: unknown) => EventRejectedError.isInstance(error) && /the last run ended/.test(error.message),
    );
    await expect(client.send('c-x', { type: 'user.mesage' } as never)).rejects.toThrow(InvalidOptionsError);
    await expect(client.send('c-x', { type: 'user.message', content: 'hi' }, { sessionData: { at: new Date() } })).rejects.toThrow(
      /sessionData/,
    );
    expect(() => restateConversationClient({ url: 'localhost:8080' })).toThrow(/ingress URL/);
    expect(() => restateConversations({ machine: {} as never })).toThrow(InvalidOptionsError);
    expect(() =>
      restateConversations({
        machine: createConversationMachine({ provider: openaiProvider({ model: 'x', apiKey: 'x' }) }),
        name: '1 bad',
      }),
    ).toThrow(/Restate service name/);
    // Nothing of that reached a conversation.
    expect(await client.get('c-x')).toBeUndefined();
  }, 30_000);

  it('names a bad option of the client, its send and the object with what it expected and got', async () => {
    const thrown = (create: () => unknown) => {
      try {
        create();
      } catch (caught) {
        return caught;
      }
    };
    const machine = createConversationMachine({ provider: openaiProvider({ model: 'x', apiKey: 'x' }) });
    const url = server.ingressUrl;
    const cases: Array<[unknown, string, string]> = [
      [thrown(() => restateConversationClient(null as never)), 'options', 'an object { url, name?, headers? }, got null'],
      [
        thrown(() => restateConversationClient({ url: 42 as never })),
        'url',
        'the ingress URL of restate-server, e.g. "http://127.0.0.1:8080", got 42',
      ],
      [thrown(() => restateConversationClient({ url, name: '' })), 'name', 'the conversation object name, got ""'],
      [
        await client.send('c-x', { type: 'user.message', content: 'hi' }, 'now' as never).catch((caught: unknown) => caught),
        'options',
        'an object { sessionData?, idempotencyKey?, signal? }, got "now"',
      ],
      [
        await client.send('c-x', { type: 'user.message', content: 'hi' }, { idempotencyKey: '' }).catch((caught: unknown) => caught),
        'idempotencyKey',
        'a non-empty string, got ""',
      ],
      [thrown(() => restateConversations([] as never)), 'options', 'an object { machine, name?, onEvent?, options? }, got an array'],
      [
        thrown(() => restateConversations({ machine: { restoreSnapshot() {} } as never })),
        'machine',
        'a conversation machine from createConversationMachine(...), got an object',
      ],
      [
        thrown(() => restateConversations({ machine, name: 7 as never })),
        'name',
        'a Restate service name: letters, digits, _ . - (not starting with a digit), got 7',
      ],
      [thrown(() => restateConversations({ machine, onEvent: null as never })), 'onEvent', 'a function (event) => void, got null'],
      [thrown(() => restateConversations({ machine, options: 'fast' as never })), 'options.options', 'Restate ObjectOptions, got "fast"'],
    ];
    for (const [error, option, expected] of cases) {
      expect(InvalidOptionsError.isInstance(error), String(error)).toBe(true);
      expect(error).toMatchObject({ option, message: `Invalid option ${option}: expected ${expected}` });
    }
    expect(await client.get('c-x')).toBeUndefined();
  }, 30_000);
});
