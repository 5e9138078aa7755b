/**
 * An agent as an MCP server: `serveMcp` hands a support conversation — tools, an approval, memory
 * across calls — to any MCP client as one tool, `ask_support`. Here it listens on Streamable HTTP
 * on 127.0.0.1 and the official MCP SDK client calls it over the socket, as Claude Desktop or
 * another agent would; `served.connectStdio()` serves the same over stdin/stdout.
 *
 *   npx tsx examples/mcp-server.ts
 *
 * Shown: progress notifications while a call runs; a second call in the session continuing the
 * conversation; an approval asked by MCP elicitation (the client approves); a client without
 * elicitation, whose call fails naming the approval, answered then through the host; `close()`.
 *
 * Offline a scripted model decides what to call; with OPENAI_API_KEY, ANTHROPIC_API_KEY or
 * OPENAI_BASE_URL set, a live one does (see examples/support/model.ts).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createConversationMachine, defineTool } from 'actorloop';
import { serveMcp } from 'actorloop/mcp';
import { z } from 'zod';
import { chooseModel, printMode } from './support/model.js';

/** Stands in for your order system. */
const orders = new Map([
  ['A-1', { item: 'desk lamp', amountEur: 20, status: 'shipped' }],
  ['B-7', { item: 'office chair', amountEur: 80, status: 'delivered' }],
  ['C-3', { item: 'standing desk', amountEur: 480, status: 'delivered' }],
]);

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Looks an order up',
  parameters: z.object({ orderId: z.string() }),
  execute: ({ orderId }) => {
    const order = orders.get(orderId);
    if (!order) throw new Error(`no order ${orderId}`);
    return `order ${orderId}: ${order.item}, €${order.amountEur}, ${order.status}`;
  },
});
const refund = defineTool({
  name: 'refund',
  description: 'Refunds an order in full',
  parameters: z.object({ orderId: z.string() }),
  // Every refund waits for a person: over MCP, the client's user, asked by elicitation.
  needsApproval: true,
  execute: ({ orderId }) => `refunded order ${orderId}: €${orders.get(orderId)?.amountEur ?? 0}`,
});

/** The scripted model: one tool call per request that names an order, then an answer from its result. */
const answered = new Set<string>();
const model = await chooseModel(({ userText, toolResults, turn }) => {
  const orderId = /\b([A-Z]-\d+)\b/.exec(userText)?.[1];
  if (orderId && !answered.has(userText)) {
    answered.add(userText);
    return { toolCalls: [{ name: /refund/i.test(userText) ? 'refund' : 'lookup_order', args: { orderId } }] };
  }
  if (orderId) return { text: `Done: ${toolResults.at(-1)}.` };
  // `turn` counts the replies before this one: a conversation that went on has some.
  if (/my name/i.test(userText)) return { text: `You are Ana — this conversation has ${turn} earlier replies.` };
  return { text: 'Hello Ana! Ask me about an order.' };
});
printMode('mcp-server', model);

const machine = createConversationMachine({
  provider: model.provider,
  tools: [lookupOrder, refund],
  system: 'You are a support agent. Use the tools for orders; answer in one sentence.',
});
const served = serveMcp(machine, {
  name: 'support-agent',
  version: '1.0.0',
  tool: { name: 'ask_support', description: 'Ask the support agent about orders; calls of one session continue one conversation.' },
});
const { url } = await served.listen();
console.log(`[mcp] serving ask_support on ${url}`);

/** An MCP client; with `approve`, it declares elicitation and answers approval prompts with it. */
async function connect(name: string, approve?: boolean): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: approve === undefined ? {} : { elicitation: {} } });
  if (approve !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      console.log(`[elicitation] ${request.params.message}`);
      console.log(`[elicitation] answered approve=${approve}`);
      return { action: 'accept', content: { approve } };
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

async function ask(client: Client, message: string): Promise<void> {
  console.log(`\n[user] ${message}`);
  const result = await client.callTool({ name: 'ask_support', arguments: { message } }, undefined, {
    onprogress: ({ progress, message: what }) => console.log(`[progress ${progress}] ${what}`),
  });
  const text = (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('');
  console.log(`[${result.isError ? 'error' : 'answer'}] ${text}`);
}

const desk = await connect('help-desk', true);
await ask(desk, 'Hi, I am Ana.');
await ask(desk, 'Where is order A-1?');
await ask(desk, 'Refund order B-7, please.');
await ask(desk, 'What is my name?');

// A client that cannot elicit: its call fails naming the approval, which waits in the host.
const script = await connect('batch-script');
await ask(script, 'Refund order C-3, please.');
const [waiting] = await served.host.list({ status: 'awaitingApproval' });
if (waiting) {
  console.log(`[host] ${waiting.id} waits for approval: a person denies it there`);
  const [pending] = (await served.host.get(waiting.id))?.pendingApprovals ?? [];
  if (pending) await served.host.send(waiting.id, { type: 'tool.deny', toolCallId: pending.toolCallId, reason: 'over the limit' });
  console.log(`[host] the run ended: ${(await served.host.result(waiting.id)).text}`);
}

await Promise.all([desk.close(), script.close()]);
await served.close();
console.log('\n[mcp] closed');
