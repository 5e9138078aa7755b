/**
 * Approvals: a tool whose calls wait for a person. `needsApproval` decides per call from the
 * validated arguments; the run stops in `awaitingApproval`, emits `tool.approval.requested` for
 * each waiting call, and goes on once every one got `tool.approve` or `tool.deny`. A denied call
 * gets the error result `denied by user: <reason>`, so the model knows and can tell the user.
 *
 *   npx tsx examples/approvals.ts      at a terminal you are asked; otherwise a fixed policy decides
 *
 * Offline a scripted model asks for the refunds; with OPENAI_API_KEY, ANTHROPIC_API_KEY or
 * OPENAI_BASE_URL set, a live one does (see examples/support/model.ts).
 */
import { createInterface } from 'node:readline/promises';
import { createConversationMachine, defineTool, type ToolApprovalRequestedEvent } from 'actorloop';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { logRun, printOutput } from './support/log.js';
import { chooseModel, printMode } from './support/model.js';

/** Stands in for your order system. */
const orders = new Map([
  ['A-1', { amountEur: 20, refunded: false }],
  ['B-7', { amountEur: 80, refunded: false }],
  ['C-3', { amountEur: 480, refunded: false }],
]);
const amountOf = (orderId: string) => orders.get(orderId)?.amountEur ?? Number.POSITIVE_INFINITY;

const issueRefund = defineTool({
  name: 'issue_refund',
  description: 'Refund an order in full',
  parameters: z.object({ orderId: z.string() }),
  // Small refunds run at once; anything over €50 waits for a person.
  needsApproval: ({ orderId }) => amountOf(orderId) > 50,
  execute: ({ orderId }) => {
    const order = orders.get(orderId);
    if (!order) throw new Error(`no order ${orderId}`);
    if (order.refunded) throw new Error(`order ${orderId} is already refunded`);
    order.refunded = true;
    return `refunded order ${orderId}: €${order.amountEur}`;
  },
});

const model = await chooseModel(({ toolResults }) =>
  toolResults.length === 0
    ? { toolCalls: ['A-1', 'B-7', 'C-3'].map((orderId) => ({ name: 'issue_refund', args: { orderId } })) }
    : { text: `Here is what happened: ${toolResults.join('; ')}.` },
);
printMode('approvals', model);

/** Asks at a terminal; without one, approves up to €100 and denies the rest. */
async function decide(request: ToolApprovalRequestedEvent): Promise<{ approve: true } | { approve: false; reason: string }> {
  const { orderId } = request.args as { orderId: string };
  if (process.stdin.isTTY) {
    const terminal = createInterface({ input: process.stdin, output: process.stdout });
    const answer = await terminal.question(`Approve ${request.name} for order ${orderId} (€${amountOf(orderId)})? [y/N] `);
    terminal.close();
    return answer.trim().toLowerCase().startsWith('y') ? { approve: true } : { approve: false, reason: 'refused by the operator' };
  }
  if (amountOf(orderId) <= 100) return { approve: true };
  return { approve: false, reason: 'over €100, which needs a person, and no one is at a terminal' };
}

const machine = createConversationMachine({
  provider: model.provider,
  tools: [issueRefund],
  system: 'You handle refunds. Call issue_refund once per order, then report what happened.',
});

const actor = createActor(machine, { input: { messages: [] } });
logRun(actor);
// Requests of one round arrive together; decide them one at a time (one prompt at a time at a terminal).
let decisions = Promise.resolve();
actor.on('tool.approval.requested', (request) => {
  decisions = decisions.then(async () => {
    const decision = await decide(request);
    if (decision.approve) {
      console.log(`[tool.approve] ${request.toolCallId}`);
      actor.send({ type: 'tool.approve', toolCallId: request.toolCallId });
    } else {
      console.log(`[tool.deny] ${request.toolCallId}: ${decision.reason}`);
      actor.send({ type: 'tool.deny', toolCallId: request.toolCallId, reason: decision.reason });
    }
  });
});
actor.start();

const question = 'Please refund my orders A-1, B-7 and C-3.';
console.log(`[user] ${question}`);
actor.send({ type: 'user.message', content: question });
const output = await toPromise(actor);
printOutput(output);
