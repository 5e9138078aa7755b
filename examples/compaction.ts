/**
 * The context window: `context: { maxInputTokens, keepLast }`. A long support conversation goes on
 * turn after turn; once the next prompt would not fit the window, the run passes through
 * `compacting`: the oldest messages become one summary (a request of its own), the last `keepLast`
 * stay as they are, and `context.compacted` says how much was removed. A tool call is never parted
 * from its result. The full transcript stays in the host's log (see docs/context-window.md).
 *
 *   npx tsx examples/compaction.ts
 *
 * Offline a scripted model answers (and summarizes); with OPENAI_API_KEY, ANTHROPIC_API_KEY or
 * OPENAI_BASE_URL set, a live one does (see examples/support/model.ts).
 */
import { createConversationMachine, defineTool, type Message } from 'actorloop';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { chooseModel, printMode } from './support/model.js';

const orderStatus = defineTool({
  name: 'order_status',
  description: 'The status of an order',
  parameters: z.object({ orderId: z.string() }),
  execute: ({ orderId }) => `order ${orderId}: shipped, arriving Thursday; ${'tracking events '.repeat(30)}`,
});

const model = await chooseModel(({ userText, toolResults, turn }) => {
  if (userText.startsWith('Summarize') || userText.includes('<transcript>') || userText.includes('Transcript'))
    return { text: 'The customer asked about orders A-1 to A-3; all shipped, arriving Thursday.' };
  const asked = /A-\d/.exec(userText)?.[0];
  if (asked && !toolResults.some((result) => result.startsWith(`order ${asked}`)) && turn % 2 === 0)
    return { toolCalls: [{ name: 'order_status', args: { orderId: asked } }] };
  return { text: `Order ${asked ?? '?'} is on its way and arrives Thursday.` };
});
printMode('compaction', model);

const machine = createConversationMachine({
  provider: model.provider,
  tools: [orderStatus],
  system: 'You are a support agent. Look orders up with order_status.',
  context: { maxInputTokens: 600, keepLast: 4 },
});

let history: Message[] = [];
for (const orderId of ['A-1', 'A-2', 'A-3', 'A-4']) {
  const actor = createActor(machine, { input: { messages: history } });
  actor.on('context.compacted', (event) =>
    console.log(
      `[context.compacted] ${event.removedMessages} messages → summary; ${event.beforeTokens} → ${event.afterTokens} tokens (kept ${event.keptMessages})`,
    ),
  );
  actor.start();
  actor.send({ type: 'user.message', content: `Where is my order ${orderId}?` });
  const output = await toPromise(actor);
  console.log(`[turn ${orderId}] ${output.status}: ${output.text} (${output.messages.length} messages in the history)`);
  history = output.messages;
}
console.log(`[history] ${history.map((message) => message.role).join(' → ')}`);
