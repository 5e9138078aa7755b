/**
 * `serveMcp(...).connectStdio()` in process, spoken to by the official SDK `Client` over a pair of
 * streams carrying MCP's stdio framing (the SDK's own `ReadBuffer` / `serializeMessage`): the same
 * bytes a process's stdin and stdout carry, without a process. It runs on the floor of the SDK's
 * peer range too (1.24, which has no Fetch API transport: Streamable HTTP says what to install).
 */
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ElicitRequestSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createConversationMachine, defineTool } from '../src/index.js';
import { openaiProvider } from '../src/providers/openai/index.js';
import { serveMcp, type ServedMcp } from '../src/protocols/mcp/index.js';
import type { PlanStep } from './support/planned-model.js';
import { type PlannedAnswer, type PlannedWireServer, startPlannedWireServer } from './support/planned-wire-server.js';

const floorRun = process.env.XSTATE_FLOOR === '1';

/** The client's end of a stdio connection: writes lines to the server's stdin, reads its stdout. */
class StreamPairTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly buffer = new ReadBuffer();
  constructor(
    private readonly toServer: PassThrough,
    private readonly fromServer: PassThrough,
  ) {}
  async start() {
    this.fromServer.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (let message = this.buffer.readMessage(); message; message = this.buffer.readMessage()) this.onmessage?.(message);
    });
  }
  async send(message: JSONRPCMessage) {
    this.toServer.write(serializeMessage(message));
  }
  async close() {
    this.toServer.end();
    this.onclose?.();
  }
}

function plan(step: PlanStep): PlannedAnswer {
  if (step.lastUser === 'delete the draft') {
    return step.round === 0
      ? { toolCalls: [{ id: 'call_delete', name: 'delete_draft', args: { name: 'draft-1' } }] }
      : { text: `outcome: ${String(step.messages.at(-1)?.content)}` };
  }
  return { text: `echo: ${step.lastUser} (turn ${step.turn})` };
}

let wire: PlannedWireServer;
let served: ServedMcp;
/** What the server reported to `onError`: only, on the floor, that Streamable HTTP needs a newer SDK. */
const reported: unknown[] = [];

beforeAll(async () => {
  wire = await startPlannedWireServer(plan);
  const deleteDraft = defineTool({
    name: 'delete_draft',
    description: 'Deletes a draft.',
    parameters: z.object({ name: z.string() }),
    needsApproval: true,
    execute: ({ name }) => `deleted ${name}`,
  });
  const machine = createConversationMachine({
    provider: openaiProvider({ model: 'gpt-test', apiKey: 'sk-test', baseURL: `${wire.url}/v1` }),
    tools: [deleteDraft],
  });
  served = serveMcp(machine, {
    name: 'drafts',
    version: '0.1.0',
    tool: { name: 'talk', description: 'Talk to the drafts agent.' },
    onError: (error) => reported.push(error),
  });
});
afterAll(async () => {
  await served?.close();
  await wire?.close();
  expect(reported.map(String)).toEqual(floorRun ? [expect.stringMatching(/webStandardStreamableHttp/)] : []);
});

describe('serveMcp over stdio', () => {
  it('is one session: calls continue its conversation, approvals are elicited, and stdin ending ends it', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const session = await served.connectStdio({ stdin, stdout });
    expect(session.conversationId).toMatch(/^mcp-/);
    const client = new Client({ name: 'stdio-test', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    const prompts: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      prompts.push(request.params.message);
      return { action: 'accept', content: { approve: true } };
    });
    await client.connect(new StreamPairTransport(stdin, stdout));
    const { tools } = await client.listTools();
    expect(tools).toMatchObject([{ name: 'talk', description: 'Talk to the drafts agent.' }]);

    const text = async (message: string) =>
      ((await client.callTool({ name: 'talk', arguments: { message } })).content as Array<{ text: string }>)[0]?.text;
    expect(await text('hello')).toBe('echo: hello (turn 1)');
    expect(await text('delete the draft')).toBe('outcome: deleted draft-1');
    expect(prompts).toEqual([expect.stringContaining('"delete_draft"')]);
    expect(await text('bye')).toBe('echo: bye (turn 3)');
    expect((await served.host.get(session.conversationId))?.messages.filter((m) => m.role === 'user')).toHaveLength(3);

    await client.close();
    await session.closed;
  });

  it(`Streamable HTTP ${floorRun ? 'says which SDK it needs on the floor (1.24)' : 'answers an initialize'}`, async () => {
    const response = await served.fetch(
      new Request('http://localhost/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        }),
      }),
    );
    if (floorRun) {
      expect(response.status).toBe(500);
      expect(await response.text()).toMatch(/npm install @modelcontextprotocol\/sdk.*webStandardStreamableHttp/s);
    } else {
      expect(response.status).toBe(200);
      expect(response.headers.get('mcp-session-id')).toMatch(/.+/);
      await response.body?.cancel();
    }
  });
});
