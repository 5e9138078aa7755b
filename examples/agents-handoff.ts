/**
 * Handoffs: one conversation, several agents. `defineAgent` gives each agent its own system prompt,
 * tools and (optionally) provider; each name in its `handoffs` becomes a tool `transfer_to_<name>`.
 * When the model calls one, the round completes and the run passes through `handingOff`: the next
 * request is made by the new agent over the same history, and `agent.handoff {from, to}` is emitted.
 * Here a triage desk hands a refund to billing, and billing hands the customer back.
 *
 *   npx tsx examples/agents-handoff.ts
 *
 * Offline each agent has a scripted model; with OPENAI_API_KEY, ANTHROPIC_API_KEY or
 * OPENAI_BASE_URL set, one live model serves every agent (see examples/support/model.ts).
 */
import { createConversationMachine, defineAgent, defineTool } from 'actorloop';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { logRun, printOutput } from './support/log.js';
import { chooseModel, liveModel, printMode } from './support/model.js';

/** Stands in for the payment system. */
const charges = new Map([['B-7', { amountEur: 80, times: 2 }]]);

const refundDuplicate = defineTool({
  name: 'refund_duplicate_charge',
  description: 'Refund one duplicate charge of an order',
  parameters: z.object({ orderId: z.string() }),
  execute: ({ orderId }) => {
    const charge = charges.get(orderId);
    if (!charge || charge.times < 2) throw new Error(`order ${orderId} has no duplicate charge`);
    charge.times--;
    return `refunded €${charge.amountEur} for order ${orderId}`;
  },
});

const live = await liveModel();
const triageModel = await chooseModel(({ toolResults }) =>
  toolResults.some((result) => result.startsWith('refunded'))
    ? { text: 'Your duplicate charge is refunded. To reset your password, use "Forgot password" on the sign-in page.' }
    : { toolCalls: [{ name: 'transfer_to_billing', args: {} }] },
);
const billingModel = await chooseModel(({ toolResults }) =>
  toolResults.some((result) => result.startsWith('refunded'))
    ? { toolCalls: [{ name: 'transfer_to_triage', args: {} }] }
    : { toolCalls: [{ name: 'refund_duplicate_charge', args: { orderId: 'B-7' } }] },
);
printMode('agents-handoff', live ?? triageModel);

const triage = defineAgent({
  name: 'triage',
  description: 'answers general questions and routes the customer',
  system: 'You are the front desk. Hand billing questions to billing; answer the rest yourself.',
  handoffs: ['billing'],
});
const billing = defineAgent({
  name: 'billing',
  description: 'refunds and charges',
  system: 'You handle refunds. Refund what is asked, then hand the customer back to triage.',
  tools: [refundDuplicate],
  ...(live ? {} : { provider: billingModel.provider }),
  handoffs: ['triage'],
});

const desk = createConversationMachine({ provider: (live ?? triageModel).provider, agents: [triage, billing], startAgent: 'triage' });

const actor = createActor(desk, { input: { messages: [] } });
logRun(actor);
actor.on('agent.handoff', ({ from, to }) => console.log(`[agent.handoff] ${from} → ${to}`));
actor.start();
actor.send({ type: 'user.message', content: 'I was charged twice for order B-7. Also, how do I reset my password?' });
const output = await toPromise(actor);
printOutput(output);
console.log(`[agent] the conversation ended with ${output.agent}`);
