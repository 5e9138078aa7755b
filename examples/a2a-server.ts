/**
 * A2A server: an actorloop conversation host served as an Agent2Agent agent with the official
 * `@a2a-js/sdk` (`actorloop/a2a`), and the SDK's own client talking to it over a real socket. A
 * task is a conversation; a tool call that needs approval makes the task `input-required`, and a
 * follow-up message on the task answers it.
 *
 *   npx tsx examples/a2a-server.ts
 *
 * Shown: the agent card, a streamed answer, a second message continuing the same task, an
 * approval answered with `{ approve: true }`, and `authorize` refusing a client without the token.
 *
 * Offline a scripted model answers; with OPENAI_API_KEY, ANTHROPIC_API_KEY or OPENAI_BASE_URL set,
 * a live one does (see examples/support/model.ts).
 */
import type { Message, Part, Task } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { createConversationHost, createConversationMachine, defineTool, memoryStore } from 'actorloop';
import { createA2AHandler, serveA2A } from 'actorloop/a2a';
import { z } from 'zod';
import { chooseModel, printMode } from './support/model.js';

const model = await chooseModel(({ userText, toolResults, turn }) => {
  if (/refund/i.test(userText) && toolResults.length === 0) return { toolCalls: [{ name: 'issue_refund', args: { orderId: 'B-7' } }] };
  if (toolResults.length > 0 && turn > 0) return { text: `Done: ${toolResults.at(-1)}.` };
  if (/where/i.test(userText)) return { text: 'Order B-7 left the warehouse this morning.' };
  return { text: 'It should arrive on Thursday.' };
});
printMode('a2a-server', model);

const issueRefund = defineTool({
  name: 'issue_refund',
  description: 'Refund an order in full',
  parameters: z.object({ orderId: z.string() }),
  needsApproval: true,
  execute: ({ orderId }) => `refunded order ${orderId}`,
});
const machine = createConversationMachine({
  provider: model.provider,
  tools: [issueRefund],
  system: 'You answer questions about orders in one sentence, and refund orders with issue_refund.',
});
const host = createConversationHost({ machine, store: memoryStore() });

// The A2A agent, under /a2a: every request that names a task is authorized with its id first.
const token = 'Bearer example-token';
const a2a = await createA2AHandler(host, {
  card: { name: 'Order desk', description: 'Answers questions about orders and refunds them.', version: '1.0.0' },
  authorize: (request) => request.headers.get('authorization') === token,
  basePath: '/a2a',
});
const server = await serveA2A(a2a, { port: 0 });

// The other side: the SDK's client, which reads the card and talks JSON-RPC to the URL in it.
const withToken: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...init?.headers, authorization: token } });
const factory = new ClientFactory({
  transports: [new JsonRpcTransportFactory({ fetchImpl: withToken })],
  cardResolver: new DefaultAgentCardResolver(),
});
const client = await factory.createFromUrl(`${server.url}/a2a/`);
const card = await client.getAgentCard();
console.log(
  `[card] ${card.name} ${card.version}: ${card.supportedInterfaces.map((entry) => `${entry.protocolBinding} ${entry.url}`).join(', ')}`,
);

const states = ['unspecified', 'submitted', 'working', 'completed', 'failed', 'canceled', 'input-required', 'rejected', 'auth-required'];
const stateOf = (task: Task) => states[task.status?.state ?? 0];
const textOf = (parts: Part[] = []) => parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
const message = (
  text: string,
  taskId = '',
  parts: Part[] = [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
) => ({
  tenant: '',
  message: {
    messageId: crypto.randomUUID(),
    contextId: '',
    taskId,
    role: 1,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  } satisfies Message,
  configuration: undefined,
  metadata: undefined,
});
const asTask = (result: Message | Task): Task => {
  if (!('status' in result)) throw new Error('expected a task');
  return result;
};

// 1. Streamed: the task first, then its status and the answer's text as it comes.
let taskId = '';
let streamed = '';
console.log('[user] Where is my order B-7?');
for await (const event of client.sendMessageStream(message('Where is my order B-7?'))) {
  const { payload } = event;
  if (payload?.$case === 'task') {
    taskId = payload.value.id;
    console.log(`[task] ${stateOf(payload.value)}`);
  }
  if (payload?.$case === 'statusUpdate') console.log(`[status] ${states[payload.value.status?.state ?? 0]}`);
  if (payload?.$case === 'artifactUpdate') streamed = (payload.value.append ? streamed : '') + textOf(payload.value.artifact?.parts);
}
console.log(`[answer] ${streamed}`);

// 2. The same task again: the conversation goes on.
console.log('[user] When will it arrive?');
const second = asTask(await client.sendMessage(message('When will it arrive?', taskId)));
console.log(`[task] ${second.id === taskId ? 'same task' : 'another task'}, ${stateOf(second)}: ${textOf(second.status?.message?.parts)}`);

// 3. A refund needs approval: input-required, answered by a data part on the task.
console.log('[user] Please refund it.');
const waiting = asTask(await client.sendMessage(message('Please refund it.', taskId)));
console.log(`[task] ${stateOf(waiting)}: ${textOf(waiting.status?.message?.parts).split('. Answer')[0]}`);
const approve: Part = {
  content: { $case: 'data', value: { approve: true } },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
};
const approved = asTask(await client.sendMessage(message('', taskId, [approve])));
console.log(`[task] ${stateOf(approved)}: ${textOf(approved.status?.message?.parts)}`);
console.log(`[history] ${approved.history.length} messages, ${approved.artifacts.length} answers`);

// 4. Without the token: refused before the host is touched.
const stranger = await new ClientFactory().createFromUrl(`${server.url}/a2a/`);
await stranger.getTask({ tenant: '', id: taskId, historyLength: undefined }).then(
  () => console.log('[auth] let in?!'),
  (error: unknown) => console.log(`[auth] refused: ${error instanceof Error ? error.message : String(error)}`),
);

await server.close();
await host.close();
