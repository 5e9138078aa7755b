/**
 * `serveMcp` (actorloop/mcp) spoken to by the official MCP SDK client over Streamable HTTP on a real
 * socket: the model is the planned OpenAI Chat Completions server (test/support) reached through
 * the real `openaiProvider`; the host, the SDK server and client, and the socket are real. What
 * each case proves is what docs/mcp-server.md promises.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, EmptyResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assign, setup } from 'xstate';
import { z } from 'zod';
import {
  conversationInput,
  createConversationHost,
  createConversationMachine,
  defineTool,
  InvalidOptionsError,
  memoryStore,
  type ConversationHost,
  type RunOutput,
} from '../src/index.js';
import { openaiProvider } from '../src/providers/openai/index.js';
import { serveMcp, type ServedMcp } from '../src/protocols/mcp/index.js';
import type { PlanStep } from './support/planned-model.js';
import { type PlannedAnswer, type PlannedWireServer, startPlannedWireServer } from './support/planned-wire-server.js';

/** The last tool result the request carries, as the model read it. */
const lastToolResult = (step: PlanStep) => {
  const last = step.messages.at(-1);
  return last?.role === 'tool' ? String(last.content) : '';
};

function plan(step: PlanStep): PlannedAnswer {
  if (step.lastUser === 'refund order 7') {
    return step.round === 0
      ? { toolCalls: [{ id: 'call_refund', name: 'refund', args: { amount: 40 } }] }
      : { text: `refund outcome: ${lastToolResult(step)}` };
  }
  if (step.lastUser === 'look it up') {
    return step.round === 0
      ? { toolCalls: [{ id: 'call_lookup', name: 'lookup', args: { what: 'lamp' } }] }
      : { text: `found: ${lastToolResult(step)}` };
  }
  if (step.conversation.startsWith('summarize ')) {
    return step.round === 0
      ? { toolCalls: [{ id: 'call_publish', name: 'publish', args: { item: step.conversation.slice(10) } }] }
      : { text: `summary of ${step.conversation.slice(10)} (${lastToolResult(step)})` };
  }
  return { text: `echo: ${step.lastUser} (turn ${step.turn})` };
}

let wire: PlannedWireServer;
let host: ConversationHost;
let served: ServedMcp;
let url: string;
const clients: Client[] = [];
let refunds = 0;
/** What the server reported to `onError`: nothing, whatever the clients sent. */
const reported: unknown[] = [];

const provider = () => openaiProvider({ model: 'gpt-test', apiKey: 'sk-test', baseURL: `${wire.url}/v1` });

async function connect(
  options: {
    elicit?: (message: string) => { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> };
    to?: string;
    headers?: Record<string, string>;
  } = {},
) {
  const client = new Client({ name: 'test-client', version: '1.0.0' }, { capabilities: options.elicit ? { elicitation: {} } : {} });
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params.message));
  }
  await client.connect(
    new StreamableHTTPClientTransport(
      new URL(options.to ?? url),
      options.headers ? { requestInit: { headers: options.headers } } : undefined,
    ),
  );
  clients.push(client);
  return client;
}

const textOf = (result: Awaited<ReturnType<Client['callTool']>>) =>
  (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('');

async function eventually<T>(read: () => Promise<T> | T, until: (value: T) => boolean, ms = 3_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (until(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The MCP conversations of the host, newest last. */
const mcpConversations = async () => (await host.list()).filter(({ id }) => id.startsWith('mcp-'));

beforeAll(async () => {
  wire = await startPlannedWireServer(plan, { holdResponses: ({ step }) => step.lastUser === 'hold on' });
  const lookup = defineTool({
    name: 'lookup',
    description: 'Looks a thing up.',
    parameters: z.object({ what: z.string() }),
    execute: ({ what }) => `${what} is in stock`,
  });
  const refund = defineTool({
    name: 'refund',
    description: 'Refunds an amount.',
    parameters: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: ({ amount }) => {
      refunds++;
      return `refunded ${amount}`;
    },
  });
  host = createConversationHost({
    machine: createConversationMachine({ provider: provider(), tools: [lookup, refund] }),
    store: memoryStore(),
  });
  served = serveMcp(host, { name: 'support-agent', version: '1.2.3', onError: (error) => reported.push(error) });
  ({ url } = await served.listen());
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await served?.close();
  await host?.close();
  await wire?.close();
  expect(reported).toEqual([]);
});

describe('serveMcp over Streamable HTTP', () => {
  it('answers a call; a second call in the session continues its conversation, another session has its own', async () => {
    const first = await connect();
    expect(first.getServerVersion()).toMatchObject({ name: 'support-agent', version: '1.2.3' });
    const { tools } = await first.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['ask']);
    expect(tools[0]?.inputSchema).toMatchObject({ type: 'object', required: ['message'] });

    expect(textOf(await first.callTool({ name: 'ask', arguments: { message: 'hello' } }))).toBe('echo: hello (turn 1)');
    expect(textOf(await first.callTool({ name: 'ask', arguments: { message: 'again' } }))).toBe('echo: again (turn 2)');
    const second = await connect();
    expect(textOf(await second.callTool({ name: 'ask', arguments: { message: 'hi there' } }))).toBe('echo: hi there (turn 1)');

    const ids = (await mcpConversations()).map(({ id }) => id);
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
  });

  it('sends progress notifications while the run goes, saying what it does', async () => {
    const client = await connect();
    const progress: Array<{ progress: number; message?: string }> = [];
    const result = await client.callTool({ name: 'ask', arguments: { message: 'look it up' } }, undefined, {
      onprogress: (update) => progress.push({ progress: update.progress, ...(update.message ? { message: update.message } : {}) }),
    });
    expect(textOf(result)).toBe('found: lamp is in stock');
    expect(progress.map(({ message }) => message)).toEqual([
      'round 1: asking the model',
      'calling tool lookup',
      'tool lookup answered',
      'round 2: asking the model',
    ]);
    expect(progress.map(({ progress: value }) => value)).toEqual([1, 2, 3, 4]);
  });

  it("cancels the run when the client cancels the call, and the session's conversation goes on after", async () => {
    const client = await connect();
    const before = new Set((await mcpConversations()).map(({ id }) => id));
    const aborter = new AbortController();
    const call = client.callTool({ name: 'ask', arguments: { message: 'hold on' } }, undefined, { signal: aborter.signal });
    const outcome = call.then(
      () => 'answered',
      (error: unknown) => (error instanceof Error ? error.name : String(error)),
    );
    const requested = await eventually(
      () => wire.requestLog().some((request) => request.conversation === 'hold on'),
      (seen) => seen,
    );
    expect(requested).toBe(true);
    aborter.abort('the user pressed stop');
    expect(await outcome).not.toBe('answered');

    const id = (await mcpConversations()).map((summary) => summary.id).find((candidate) => !before.has(candidate));
    expect(id).toBeDefined();
    const view = await eventually(
      () => host.get(id as string),
      (current) => current?.status === 'halted',
    );
    expect(view?.status).toBe('halted');
    const output: RunOutput = await host.result(id as string);
    expect(output.reason).toBe('cancelled');
    // The same session goes on: its conversation takes the next message.
    expect(textOf(await client.callTool({ name: 'ask', arguments: { message: 'still there?' } }))).toBe('echo: still there? (turn 2)');
  });

  it('asks an approval by elicitation: approved, the tool runs', async () => {
    const asked: string[] = [];
    const client = await connect({
      elicit: (message) => {
        asked.push(message);
        return { action: 'accept', content: { approve: true } };
      },
    });
    const before = refunds;
    const result = await client.callTool({ name: 'ask', arguments: { message: 'refund order 7' } });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('refund outcome: refunded 40');
    expect(refunds).toBe(before + 1);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('"refund"');
    expect(asked[0]).toContain('{"amount":40}');
    expect(asked[0]).toContain('call_refund');
  });

  it('asks an approval by elicitation: declined, the call is denied with the reason', async () => {
    const client = await connect({ elicit: () => ({ action: 'accept', content: { approve: false, reason: 'too much' } }) });
    const before = refunds;
    const result = await client.callTool({ name: 'ask', arguments: { message: 'refund order 7' } });
    expect(refunds).toBe(before);
    expect(textOf(result)).toMatch(/^refund outcome: .*too much/);
    const declined = await connect({ elicit: () => ({ action: 'decline' }) });
    expect(textOf(await declined.callTool({ name: 'ask', arguments: { message: 'refund order 7' } }))).toMatch(/declined/);
    expect(refunds).toBe(before);
  });

  it('denies an approval the client does not answer within approvalTimeoutMs, naming why; the tool does not run', async () => {
    const patient = serveMcp(host, { name: 'patient', version: '1.0.0', approvalTimeoutMs: 150, onError: (error) => reported.push(error) });
    try {
      const { url: endpoint } = await patient.listen();
      const client = new Client({ name: 'silent', version: '1.0.0' }, { capabilities: { elicitation: {} } });
      // Asked, it never answers.
      client.setRequestHandler(ElicitRequestSchema, () => new Promise<never>(() => undefined));
      await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));
      clients.push(client);
      const before = refunds;
      const result = await client.callTool({ name: 'ask', arguments: { message: 'refund order 7' } });
      expect(refunds).toBe(before);
      expect(textOf(result)).toMatch(/^refund outcome: .*did not answer the approval/);
    } finally {
      await patient.close();
    }
  });

  it('fails a call that waits for an approval when the client cannot elicit, naming the approval', async () => {
    const client = await connect();
    const result = await client.callTool({ name: 'ask', arguments: { message: 'refund order 7' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('"refund" (call call_refund');
    expect(textOf(result)).toContain('elicitation');
    // The session's next call is refused while the run waits, naming the approval again.
    const again = await client.callTool({ name: 'ask', arguments: { message: 'and now?' } });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toMatch(/^nothing was sent: the run waits for approval of "refund" \(call call_refund/);
    const waiting = (await mcpConversations()).find(({ status }) => status === 'awaitingApproval');
    expect(waiting).toBeDefined();
    // Answered through the host, as the message says, the run ends.
    await host.send(waiting!.id, { type: 'tool.deny', toolCallId: 'call_refund', reason: 'not today' });
    expect((await host.result(waiting!.id)).text).toMatch(/not today/);
  });

  it('answers hostile or wrong input with protocol errors and keeps serving', async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body,
      });
    const malformed = await post('{"jsonrpc": "2.0", "method": ');
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const oversized = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { pad: 'x'.repeat(1_100_000) } }));
    expect(oversized.status).toBe(413);
    await oversized.body?.cancel();
    const sessionless = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    expect(sessionless.status).toBe(400);
    const unknownSession = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), {
      'mcp-session-id': 'no-such-session',
    });
    expect(unknownSession.status).toBe(404);
    const elsewhere = await fetch(new URL('/other', url), { method: 'POST', body: '{}' });
    expect(elsewhere.status).toBe(404);
    // A web page's request (DNS rebinding to a local server): its Origin is not allowed.
    const fromPage = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }), {
      origin: 'http://evil.example',
    });
    expect(fromPage.status).toBe(403);

    const client = await connect();
    const refused = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (error: unknown) => (error instanceof McpError ? error.code : String(error)),
      );
    expect(await refused(client.request({ method: 'no/such/method' } as never, EmptyResultSchema))).toBe(-32601);
    expect(await refused(client.callTool({ name: 'no_such_tool', arguments: {} }))).toBe(-32602);
    expect(await refused(client.callTool({ name: 'ask', arguments: { message: 42 } }))).toBe(-32602);
    expect(await refused(client.callTool({ name: 'ask', arguments: {} }))).toBe(-32602);
    // Still serving.
    expect(textOf(await client.callTool({ name: 'ask', arguments: { message: 'fine' } }))).toBe('echo: fine (turn 1)');
  });

  it('ends a session the client ends (DELETE): its id is unknown after, and a new session starts afresh', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(url));
    const client = new Client({ name: 'leaving', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    expect(textOf(await client.callTool({ name: 'ask', arguments: { message: 'bye soon' } }))).toBe('echo: bye soon (turn 1)');
    const sessionId = transport.sessionId as string;
    await transport.terminateSession();
    const after = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(after.status).toBe(404);
    expect(((await after.json()) as { error: { message: string } }).error.message).toMatch(/session not found/);
  });

  it('closes a session left idle past sessionIdleMs (a client that left without DELETE), never one whose call runs', async () => {
    // Long enough that a loaded machine's pauses between one client's own requests never reach it.
    const idle = serveMcp(host, { name: 'idle', version: '1.0.0', sessionIdleMs: 300, onError: (error) => reported.push(error) });
    try {
      const { url: endpoint } = await idle.listen();
      const open = async () => {
        const transport = new StreamableHTTPClientTransport(new URL(endpoint));
        const client = new Client({ name: 'leaves', version: '1.0.0' });
        await client.connect(transport);
        clients.push(client);
        return { client, sessionId: transport.sessionId as string };
      };
      const listTools = (sessionId: string) =>
        fetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
          body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
        }).then(async (response) => {
          await response.body?.cancel();
          return response.status;
        });
      const left = await open();
      expect(textOf(await left.client.callTool({ name: 'ask', arguments: { message: 'short visit' } }))).toBe('echo: short visit (turn 1)');
      const busy = await open();
      const aborter = new AbortController();
      const held = busy.client
        .callTool({ name: 'ask', arguments: { message: 'hold on' } }, undefined, { signal: aborter.signal })
        .catch(() => 'cancelled');
      // No request from either for several idle periods (a poll would keep them active).
      await new Promise((resolve) => setTimeout(resolve, 900));
      expect(await listTools(left.sessionId)).toBe(404);
      expect(await listTools(busy.sessionId)).toBe(200);
      aborter.abort();
      expect(await held).toBe('cancelled');
    } finally {
      await idle.close();
    }
  });

  it('refuses options that cannot work, naming the option', () => {
    expect(() => serveMcp(host, { name: '', version: '1.0.0' })).toThrow(InvalidOptionsError);
    expect(() => serveMcp(host, { name: 'x', version: '1.0.0', maxBodyBytes: -1 })).toThrow(/maxBodyBytes/);
    expect(() => serveMcp(host, { name: 'x', version: '1.0.0', path: 'mcp' })).toThrow(/path/);
  });

  it('serves a workflow given as a machine (its own host), behind authorize, its approvals elicited, and closes that host', async () => {
    // The workflow's conversation calls a tool that needs approval: the workflow waits in `awaitingApproval`.
    const publish = defineTool({
      name: 'publish',
      description: 'Publishes a summary.',
      parameters: z.object({ item: z.string() }),
      needsApproval: true,
      execute: ({ item }) => `published ${item}`,
    });
    const writer = createConversationMachine({ provider: provider(), tools: [publish] });
    const workflow = setup({
      types: {
        context: {} as { item: string; summary: string },
        input: {} as { item: string },
        output: {} as { item: string; summary: string },
      },
      actors: { writer },
    }).createMachine({
      id: 'summarize',
      context: ({ input }) => ({ item: input.item, summary: '' }),
      initial: 'writing',
      states: {
        writing: {
          invoke: {
            src: 'writer',
            input: ({ context }) => conversationInput(`summarize ${context.item}`),
            onDone: { target: 'done', actions: assign({ summary: ({ event }) => (event.output as RunOutput).text }) },
          },
        },
        done: { type: 'final' },
      },
      output: ({ context }) => ({ item: context.item, summary: context.summary }),
    });
    const servedWorkflow = serveMcp(workflow, {
      name: 'summarizer',
      version: '1.0.0',
      tool: { name: 'summarize', inputSchema: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] } },
      authorize: (request) => request.headers.get('authorization') === 'Bearer right',
      onError: (error) => reported.push(error),
    });
    try {
      const { url: endpoint } = await servedWorkflow.listen();
      const refused = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(refused.status).toBe(401);
      await expect(connect({ to: endpoint, headers: { authorization: 'Bearer wrong' } })).rejects.toThrow();
      const prompts: string[] = [];
      const client = await connect({
        to: endpoint,
        headers: { authorization: 'Bearer right' },
        elicit: (message) => {
          prompts.push(message);
          return { action: 'accept', content: { approve: true } };
        },
      });
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['summarize']);
      const result = await client.callTool({ name: 'summarize', arguments: { item: 'lamp' } });
      const output = { item: 'lamp', summary: 'summary of lamp (published lamp)' };
      expect(result.structuredContent).toEqual(output);
      expect(JSON.parse(textOf(result))).toEqual(output);
      // The approval of the conversation inside the workflow was asked, and reached it through the host.
      expect(prompts).toEqual([expect.stringMatching(/^The agent wants to call the tool "publish" \(in \S.*\) with \{"item":"lamp"\}/)]);
    } finally {
      await servedWorkflow.close();
    }
    // The host serveMcp made is closed with it.
    await expect(servedWorkflow.host.start('after-close', { input: { item: 'x' } })).rejects.toThrow();
  });
});
