/**
 * `actorloop/a2a`'s server (docs/a2a.md): the official `@a2a-js/sdk` client over real sockets
 * against `createA2AHandler` on `serveA2A`, the model the planned OpenAI wire server through the
 * real `openaiProvider`. Card, send, continue, stream, approvals both ways, cancel, resubscribe, a
 * host killed mid-task and recovered by another, authorization, and hostile input.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type A2AServer, createA2AHandler, serveA2A } from '../src/protocols/a2a/index.js';
import {
  type ConversationHost,
  type ConversationStore,
  createConversationHost,
  createConversationMachine,
  defineTool,
  memoryStore,
  openaiProvider,
} from '../src/index.js';
import {
  a2aClient,
  artifactText,
  asTask,
  canceled,
  completed,
  data,
  drain,
  failedState,
  fetchWithToken,
  inputRequired,
  partText,
  send,
  text,
  until,
  working,
} from './support/a2a-client.js';
import type { PlanStep } from './support/planned-model.js';
import { type PlannedAnswer, type PlannedWireServer, startPlannedWireServer } from './support/planned-wire-server.js';

/** Conversations whose model responses wait (the test releases them). */
const held = new Set<string>();

const lastToolResult = (step: PlanStep) => {
  const tool = step.messages.findLast((message) => message.role === 'tool');
  return typeof tool?.content === 'string' ? tool.content : JSON.stringify(tool?.content);
};

/** The model: answers each request from the history it sends (the conversation is named by its first message). */
const plan = (step: PlanStep): PlannedAnswer => {
  // The wire server answers a throw with a 500: the run ends `error`.
  if (step.conversation === 'explode') throw new Error('model on fire');
  if (step.conversation === 'delete a.txt') {
    return step.round === 0
      ? { toolCalls: [{ id: `call-del-${step.turn}`, name: 'delete_file', args: { path: 'a.txt' } }] }
      : { text: `Result: ${lastToolResult(step)}` };
  }
  if (step.turn > 1) return { text: `Again you said: ${step.lastUser}` };
  return { text: `You said: ${step.lastUser}. Bye now.` };
};

let model: PlannedWireServer;
const deleted: string[] = [];

function machine() {
  const deleteFile = defineTool({
    name: 'delete_file',
    description: 'Delete a file',
    parameters: z.object({ path: z.string() }),
    needsApproval: true,
    execute: async ({ path }) => {
      deleted.push(path);
      return `deleted ${path}`;
    },
  });
  return createConversationMachine({
    provider: openaiProvider({ model: 'planned', apiKey: 'test', baseURL: `${model.url}/v1` }),
    tools: [deleteFile],
    retry: { maxRetries: 0 },
  });
}

/** A store that outlives the host that closes it: the next host reads what the first wrote. */
const lasting = (store: ConversationStore): ConversationStore => ({ ...store, close: async () => undefined });

const token = 'Bearer letmein';
const card = { name: 'Test agent', description: 'Answers tests.', version: '0.0.1' };
const authorize = (request: Request, taskId: string) => {
  if (request.headers.get('authorization') !== token) throw new Error('no token');
  return !taskId.startsWith('forbidden');
};

async function start(host: ConversationHost, heartbeatMs?: number) {
  const handler = await createA2AHandler(host, {
    card,
    authorize,
    basePath: '/a2a',
    maxBodyBytes: 10_000,
    ...(heartbeatMs ? { heartbeatMs } : {}),
  });
  return serveA2A(handler, { port: 0 });
}

const withToken = fetchWithToken(token);
const clientOf = (server: A2AServer, fetchImpl: typeof fetch = withToken) => a2aClient(`${server.url}/a2a/`, fetchImpl);

const rpc = (server: A2AServer, body: string, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  fetch(`${server.url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: token, ...headers },
    body,
    ...(signal ? { signal } : {}),
  });

describe('actorloop/a2a server', () => {
  let host: ConversationHost;
  let server: A2AServer;
  let following = 0;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    model = await startPlannedWireServer(plan, { holdResponses: ({ step }) => held.has(step.conversation) });
    host = createConversationHost({ machine: machine(), store: memoryStore() });
    // The server's view of the host counts the streams it follows, to see a client that leaves release its own.
    const follow = host.follow.bind(host);
    server = await start(
      {
        ...host,
        follow: (id, observer, options) => {
          following++;
          const stop = follow(id, observer, options);
          return () => {
            following--;
            stop();
          };
        },
      },
      30,
    );
  });
  afterAll(async () => {
    await server.close();
    await host.close();
    await model.close();
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toEqual([]);
  });

  it('serves the agent card publicly; the SDK client finds the JSON-RPC interface in it', async () => {
    const answer = await fetch(`${server.url}/a2a/.well-known/agent-card.json`);
    expect(answer.status).toBe(200);
    const json = (await answer.json()) as Record<string, unknown>;
    expect(json).toMatchObject({
      name: 'Test agent',
      version: '0.0.1',
      supportedInterfaces: [{ url: `${server.url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: true, pushNotifications: false },
    });
    const client = await clientOf(server);
    const fetched = await client.getAgentCard();
    expect(fetched.name).toBe('Test agent');
  });

  it('a message starts a task that completes with the answer; a second message on it continues the conversation', async () => {
    const client = await clientOf(server);
    const first = asTask(await client.sendMessage(send([text('hello')])));
    expect(first.status?.state).toBe(completed);
    expect(partText(first.status?.message?.parts)).toBe('You said: hello. Bye now.');
    expect(artifactText(first)).toBe('You said: hello. Bye now.');
    // The task is the conversation: same id in the host.
    expect((await host.get(first.id))?.status).toBe('done');

    const second = asTask(await client.sendMessage(send([text('and again')], first.id)));
    expect(second.id).toBe(first.id);
    expect(second.status?.state).toBe(completed);
    expect(artifactText(second)).toBe('You said: hello. Bye now.|Again you said: and again');
    expect(second.history.map((entry) => [entry.role, partText(entry.parts)])).toEqual([
      [1, 'hello'],
      [2, 'You said: hello. Bye now.'],
      [1, 'and again'],
      [2, 'Again you said: and again'],
    ]);
    const got = await client.getTask({ tenant: '', id: first.id, historyLength: 1 });
    expect(got.history).toHaveLength(1);
    expect(got.status?.state).toBe(completed);
  });

  it('streams: the task, working, the answer as it comes, then completed', async () => {
    const client = await clientOf(server);
    const { events, answer, states } = await drain(client.sendMessageStream(send([text('stream please')])));
    expect(events[0]?.payload?.$case).toBe('task');
    expect(states[0]).toBe(working);
    expect(states.at(-1)).toBe(completed);
    // Several text pieces arrived before the end (the wire server streams word by word).
    expect(events.filter((event) => event.payload?.$case === 'artifactUpdate').length).toBeGreaterThan(2);
    expect(answer).toBe('You said: stream please. Bye now.');
  });

  it('an approval is input-required naming the call; a follow-up message approves (data part) or denies (text)', async () => {
    const client = await clientOf(server);
    const waiting = asTask(await client.sendMessage(send([text('delete a.txt')])));
    expect(waiting.status?.state).toBe(inputRequired);
    expect(partText(waiting.status?.message?.parts)).toContain('delete_file({"path":"a.txt"}) [call-del-1]');
    const pending = waiting.status?.message?.parts.find((part) => part.content?.$case === 'data');
    expect(pending?.content?.value).toEqual({
      pendingApprovals: [{ toolCallId: 'call-del-1', name: 'delete_file', args: { path: 'a.txt' } }],
    });

    // Not an answer: refused, nothing approved.
    await expect(client.sendMessage(send([text('maybe?')], waiting.id))).rejects.toThrow(/waits for approval of call-del-1/);
    expect(deleted).toEqual([]);

    const approved = asTask(await client.sendMessage(send([data({ approve: true })], waiting.id)));
    expect(approved.status?.state).toBe(completed);
    expect(artifactText(approved)).toBe('Result: deleted a.txt');
    expect(deleted).toEqual(['a.txt']);

    // The next turn asks again; this time the text "deny: <reason>" answers it, streamed.
    const again = asTask(await client.sendMessage(send([text('once more')], waiting.id)));
    expect(again.status?.state).toBe(inputRequired);
    const denied = await drain(client.sendMessageStream(send([text('Deny: not today')], waiting.id)));
    expect(denied.states.at(-1)).toBe(completed);
    expect(denied.answer).toMatch(/^Result: .*not today/);
    expect(deleted).toEqual(['a.txt']);
  });

  it('a run that fails is a failed task saying why', async () => {
    const client = await clientOf(server);
    const failed = asTask(await client.sendMessage(send([text('explode')])));
    expect(failed.status?.state).toBe(failedState);
    expect(partText(failed.status?.message?.parts)).toMatch(/^error: .*500/);
    const streamed = await drain(client.resubscribeTask({ tenant: '', id: failed.id }));
    expect(streamed.states).toEqual([failedState]);
  });

  it('CancelTask cancels a working task: canceled; a finished task is not cancelable', async () => {
    const client = await clientOf(server);
    held.add('cancel me');
    try {
      const started = asTask(await client.sendMessage(send([text('cancel me')], '', true)));
      expect(started.status?.state).toBe(working);
      const cancelled = await client.cancelTask({ tenant: '', id: started.id, metadata: undefined });
      expect(cancelled.status?.state).toBe(canceled);
      expect((await host.get(started.id))?.status).toBe('halted');
      await expect(client.cancelTask({ tenant: '', id: started.id, metadata: undefined })).rejects.toThrow(/not running/);
    } finally {
      held.delete('cancel me');
    }
  });

  it('SubscribeToTask joins a working task and gets the rest of it', async () => {
    const client = await clientOf(server);
    held.add('resubscribe');
    const started = asTask(await client.sendMessage(send([text('resubscribe')], '', true)));
    expect(started.status?.state).toBe(working);
    const result = drain(client.resubscribeTask({ tenant: '', id: started.id }), (event) => {
      // The first event is the task as it stands; then the model may answer.
      if (event.payload?.$case === 'task') held.delete('resubscribe');
    });
    const { events, states, answer } = await result;
    expect(events[0]?.payload?.$case).toBe('task');
    expect(states).toEqual([working, completed]);
    expect(answer).toBe('You said: resubscribe. Bye now.');
  });

  it('a quiet stream gets heartbeats; a client that leaves it stops the following, the task goes on', async () => {
    const client = await clientOf(server);
    held.add('leave early');
    try {
      const started = asTask(await client.sendMessage(send([text('leave early')], '', true)));
      const leaving = new AbortController();
      const answer = await rpc(
        server,
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: started.id } }),
        {},
        leaving.signal,
      );
      expect(answer.headers.get('content-type')).toBe('text/event-stream');
      const reader = answer.body!.pipeThrough(new TextDecoderStream()).getReader();
      let seen = '';
      while (!seen.includes(': keep-alive')) seen += (await reader.read()).value ?? '';
      expect(seen).toContain('"TASK_STATE_WORKING"');
      expect(following).toBe(1);
      leaving.abort();
      await until(() => following === 0);
      held.delete('leave early');
      await until(async () => (await host.get(started.id))?.status === 'done');
    } finally {
      held.delete('leave early');
    }
  });

  it('a host killed mid-task: another host over the same store recovers it, and a client resubscribing on the new server sees it finish', async () => {
    const store = lasting(memoryStore());
    const first = createConversationHost({ machine: machine(), store });
    const firstServer = await start(first);
    held.add('survive');
    const started = asTask(await (await clientOf(firstServer)).sendMessage(send([text('survive')], '', true)));
    await until(() => model.requestLog().some((request) => request.conversation === 'survive'));
    await firstServer.close();
    await first.close();

    const second = createConversationHost({ machine: machine(), store });
    const secondServer = await start(second);
    try {
      expect((await second.recover()).resumed).toEqual([started.id]);
      const client = await clientOf(secondServer);
      expect((await client.getTask({ tenant: '', id: started.id, historyLength: undefined })).status?.state).toBe(working);
      const { states, answer } = await drain(client.resubscribeTask({ tenant: '', id: started.id }), (event) => {
        if (event.payload?.$case === 'task') held.delete('survive');
      });
      expect(states).toEqual([working, completed]);
      expect(answer).toBe('You said: survive. Bye now.');
      const done = await client.getTask({ tenant: '', id: started.id, historyLength: undefined });
      expect(artifactText(done)).toBe('You said: survive. Bye now.');
    } finally {
      held.delete('survive');
      await secondServer.close();
      await second.close();
    }
  });

  it('authorize: no token is 401, a refused task 403, both JSON-RPC errors that never reach the host', async () => {
    const before = model.requests();
    const anonymous = await clientOf(server, fetch);
    await expect(anonymous.sendMessage(send([text('sneaky')]))).rejects.toThrow(/unauthenticated/);
    const noToken = await fetch(`${server.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'whatever' } }),
    });
    expect(noToken.status).toBe(401);
    expect(await noToken.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32000 } });
    const forbidden = await rpc(server, JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'GetTask', params: { id: 'forbidden-1' } }));
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({ id: 8, error: { code: -32000, message: expect.stringContaining('forbidden') } });
    expect(await host.list()).not.toContainEqual(expect.objectContaining({ id: 'forbidden-1' }));
    expect(model.requests()).toBe(before);
  });

  it('a body that stops coming is cut at bodyTimeoutMs with 408 and a JSON-RPC error; the server goes on serving', async () => {
    const slow = await serveA2A(await createA2AHandler(host, { card, authorize, basePath: '/a2a', bodyTimeoutMs: 150 }), { port: 0 });
    try {
      const { port } = new URL(slow.url);
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          // Promises 200 bytes, sends 20, then nothing.
          socket.write(
            `POST /a2a HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nauthorization: ${token}\r\n` +
              'content-length: 200\r\nconnection: close\r\n\r\n{"jsonrpc":"2.0","id"',
          );
        });
        let received = '';
        socket.on('data', (chunk) => {
          received += chunk.toString();
        });
        socket.on('end', () => resolve(received));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer).toMatch(/"jsonrpc":"2\.0"/);
      expect((await rpc(slow, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: 'none' } }))).status).toBe(200);
    } finally {
      await slow.close();
    }
  });

  it('hostile input gets JSON-RPC errors, and the server goes on serving', async () => {
    const cases: Array<[string, string, number, number]> = [
      ['malformed JSON', '{"jsonrpc": "2.0", "id": 1, "method": ', 400, -32700],
      ['not JSON-RPC', JSON.stringify({ hello: 'world' }), 200, -32600],
      ['a batch', JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }]), 400, -32600],
      ['oversized', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { pad: 'x'.repeat(20_000) } }), 413, -32600],
      ['unknown method', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/explode', params: {} }), 200, -32601],
      ['unknown task', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'no-such-task' } }), 200, -32001],
      ['bad task id', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: '../../etc' } }), 200, -32001],
      ['params not an object', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: 'hi' }), 200, -32602],
      [
        'no text',
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { role: 'ROLE_USER', messageId: 'x', parts: [] } },
        }),
        200,
        -32602,
      ],
      ['ListTasks', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }), 200, -32004],
    ];
    for (const [name, body, status, code] of cases) {
      const answer = await rpc(server, body);
      expect([name, answer.status]).toEqual([name, status]);
      const json = (await answer.json()) as { error?: { code: number } };
      expect([name, json.error?.code]).toEqual([name, code]);
    }
    const wrongType = await rpc(server, '{}', { 'content-type': 'text/plain' });
    expect(wrongType.status).toBe(415);
    expect(((await wrongType.json()) as { error: { code: number } }).error.code).toBe(-32005);
    expect((await fetch(`${server.url}/a2a`)).status).toBe(405);
    // Still serving.
    const client = await clientOf(server);
    expect(asTask(await client.sendMessage(send([text('still there?')]))).status?.state).toBe(completed);
  });
});
