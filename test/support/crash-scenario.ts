/**
 * The crash test's world, shared by the worker processes (test/support/crash-worker.ts) and the
 * test that kills them (test/crash.test.ts): what the model answers, the tools (each execution is
 * appended to a side file before it does anything else), and a driver that takes a conversation
 * through its turns from wherever it stands.
 */
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { agentTool, createConversationMachine, defineTool, openaiProvider, type ConversationHost } from '../../src/index.js';
import { childPlan, consultCall } from './consult-child.js';
import type { PlanStep } from './planned-model.js';

export { childChargeId, childText, consultId } from './consult-child.js';
import type { PlannedAnswer } from './planned-wire-server.js';

/** Turns (user messages) per conversation, and tool rounds per turn; each round calls both tools. */
export const turns = 3;
export const roundsPerTurn = 2;
export const conversationIds = Array.from({ length: 12 }, (_, index) => `c${index}`);

export const chargeId = (conversation: string, turn: number, round: number) => `ch-${conversation}-t${turn}-r${round}`;
export const lookupId = (conversation: string, turn: number, round: number) => `lk-${conversation}-t${turn}-r${round}`;
export const finalText = (conversation: string, turn: number) => `done ${conversation} turn ${turn}`;
/** These conversations' last round of each turn also asks `consult`: an agent call whose child charges too. */
export const agentIds = conversationIds.filter((_id, index) => index % 3 === 1);

/** The model: the same history always gets the same answer (ids included), so a request made again is a true repeat. */
export function plan(step: PlanStep): PlannedAnswer {
  const child = childPlan(step);
  if (child) return child;
  const conversation = step.conversation.split(' ')[0] ?? '';
  if (step.round >= roundsPerTurn) return { text: finalText(conversation, step.turn) };
  const consult = agentIds.includes(conversation) && step.round === roundsPerTurn - 1 ? [consultCall(conversation, step.turn)] : [];
  return {
    toolCalls: [
      { id: chargeId(conversation, step.turn, step.round), name: 'charge', args: { cents: 100 * (step.round + 1) } },
      { id: lookupId(conversation, step.turn, step.round), name: 'lookup', args: { key: `${conversation}/${step.turn}` } },
      ...consult,
    ],
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `charge` is not idempotent (it must never run twice), `lookup` is. Each records its execution in
 * `sideFile` (synchronously, first thing) and then takes 5–40 ms.
 */
export function crashMachine(baseURL: string, sideFile: string, onExecute: (name: string) => void = () => undefined) {
  const record = (name: string, toolCallId: string) => {
    appendFileSync(sideFile, `${name} ${toolCallId}\n`);
    onExecute(name);
  };
  const charge = defineTool({
    name: 'charge',
    description: 'Charge the customer',
    parameters: z.object({ cents: z.number() }),
    execute: async ({ cents }, { toolCallId }) => {
      record('charge', toolCallId);
      await sleep(5 + Math.random() * 35);
      return `charged ${cents}`;
    },
  });
  const lookup = defineTool({
    name: 'lookup',
    description: 'Look a key up',
    idempotent: true,
    parameters: z.object({ key: z.string() }),
    execute: async ({ key }, { toolCallId }) => {
      record('lookup', toolCallId);
      await sleep(5 + Math.random() * 35);
      return `found ${key}`;
    },
  });
  const provider = openaiProvider({ model: 'planned', apiKey: 'test', baseURL: `${baseURL}/v1` });
  const retry = { maxRetries: 5, initialDelayMs: 10, maxDelayMs: 50 };
  const consultant = createConversationMachine({ provider, tools: [charge, lookup], retry });
  return createConversationMachine({
    provider,
    tools: [charge, lookup, agentTool(consultant, { name: 'consult', description: 'Ask the consultant' })],
    retry,
  });
}

/**
 * Takes a conversation through all its turns from wherever it stands: waits for a run in
 * progress, sends the next user message when the last run is done. `acknowledged` is told of
 * each user message once `send` resolved (it is stored then, so it must never be lost).
 */
export async function drive(host: ConversationHost, id: string, acknowledged: (id: string, turn: number) => void): Promise<void> {
  for (;;) {
    const view = await host.get(id);
    if (view && (view.status === 'running' || view.status === 'awaitingApproval')) {
      await host.result(id);
      continue;
    }
    if (view && view.status !== 'done') throw new Error(`conversation ${id} ended ${view.status}`);
    const sent = view ? view.messages.filter((message) => message.role === 'user').length : 0;
    if (sent >= turns) return;
    await host.send(id, { type: 'user.message', content: `${id} turn-${sent + 1}` });
    acknowledged(id, sent + 1);
  }
}
