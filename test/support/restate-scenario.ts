/**
 * The world of the Restate fault test (test/restate-faults.test.ts), shared by the worker processes
 * (test/support/restate-worker.ts) and the test: what the model answers, the tools (each execution
 * is appended to a side file before it does anything else), and a driver that takes a conversation
 * through its turns over Restate's ingress, riding out a restarting server.
 */
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import type { FetchFunction } from '../../src/providers/transport/fetch-function.js';
import { agentTool, createConversationMachine, defineTool, openaiProvider } from '../../src/index.js';
import type { RestateConversationClient } from '../../src/scale/restate/client.js';
import { childPlan, consultCall } from './consult-child.js';
import type { PlanStep } from './planned-model.js';

export { childChargeId, childText, consultId } from './consult-child.js';
import type { PlannedAnswer } from './planned-wire-server.js';

/** Turns per conversation and tool rounds per turn; each round calls `charge` and `lookup`. */
export const turns = 2;
export const roundsPerTurn = 2;
export const conversationCount = 100;
export const conversationIds = Array.from({ length: conversationCount }, (_, index) => `r${index}`);
/** These conversations' first turn asks for a `refund`, which needs approval. */
export const approvalIds = ['r0', 'r1'];
/**
 * These conversations' last round of each turn also asks `consult`, an agent call: a child
 * conversation (`sub <id> t<turn>`) whose one round calls `charge` too, then answers.
 */
export const agentIds = conversationIds.filter((_id, index) => index % 10 === 2);

export const chargeId = (conversation: string, turn: number, round: number) => `ch-${conversation}-t${turn}-r${round}`;
export const lookupId = (conversation: string, turn: number, round: number) => `lk-${conversation}-t${turn}-r${round}`;
export const refundId = (conversation: string) => `rf-${conversation}`;
export const finalText = (conversation: string, turn: number) => `done ${conversation} turn ${turn}`;
export const userText = (conversation: string, turn: number) => `${conversation} turn-${turn}`;

/** The rounds of a turn: a `refund` round first for the approval conversations' first turn. */
export function roundsOf(conversation: string, turn: number): number {
  return approvalIds.includes(conversation) && turn === 1 ? roundsPerTurn + 1 : roundsPerTurn;
}

/** The model: the same history always gets the same answer (ids included), so a request made again is a true repeat. */
export function plan(step: PlanStep): PlannedAnswer {
  const child = childPlan(step);
  if (child) return child;
  const conversation = step.conversation.split(' ')[0] ?? '';
  const refundFirst = roundsOf(conversation, step.turn) > roundsPerTurn;
  if (step.round >= roundsOf(conversation, step.turn)) return { text: finalText(conversation, step.turn) };
  if (refundFirst && step.round === 0) return { toolCalls: [{ id: refundId(conversation), name: 'refund', args: { cents: 500 } }] };
  const round = refundFirst ? step.round - 1 : step.round;
  const consult = agentIds.includes(conversation) && round === roundsPerTurn - 1 ? [consultCall(conversation, step.turn)] : [];
  return {
    toolCalls: [
      { id: chargeId(conversation, step.turn, round), name: 'charge', args: { cents: 100 * (round + 1) } },
      { id: lookupId(conversation, step.turn, round), name: 'lookup', args: { key: `${conversation}/${step.turn}` } },
      ...consult,
    ],
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `charge` and `refund` are not idempotent (they must never run twice), `lookup` is; `refund` needs
 * approval. Each records its execution in `sideFile` (synchronously, first thing), tells `onExecute`,
 * and then takes 5–40 ms.
 */
export function restateScenarioMachine(baseURL: string, sideFile: string, onExecute: (name: string) => void = () => undefined) {
  const record = (name: string, toolCallId: string) => {
    appendFileSync(sideFile, `${name} ${toolCallId}\n`);
    onExecute(name);
  };
  const work = () => sleep(5 + Math.random() * 35);
  const charge = defineTool({
    name: 'charge',
    description: 'Charge the customer',
    parameters: z.object({ cents: z.number() }),
    execute: async ({ cents }, { toolCallId }) => {
      record('charge', toolCallId);
      await work();
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
      await work();
      return `found ${key}`;
    },
  });
  const refund = defineTool({
    name: 'refund',
    description: 'Refund the customer',
    needsApproval: true,
    parameters: z.object({ cents: z.number() }),
    execute: async ({ cents }, { toolCallId }) => {
      record('refund', toolCallId);
      await work();
      return `refunded ${cents}`;
    },
  });
  // Each request says which process sent it, so the fault test can kill the one whose request it holds.
  const fetchAs: FetchFunction = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('x-worker', String(process.pid));
    return fetch(input, { ...init, headers });
  };
  const provider = openaiProvider({ model: 'planned', apiKey: 'test', baseURL: `${baseURL}/v1`, fetch: fetchAs });
  const retry = { maxRetries: 5, initialDelayMs: 10, maxDelayMs: 50 };
  const consultant = createConversationMachine({ provider, tools: [charge, lookup], retry });
  return createConversationMachine({
    provider,
    tools: [charge, lookup, refund, agentTool(consultant, { name: 'consult', description: 'Ask the consultant' })],
    retry,
  });
}

/** Retries `call` while Restate cannot be reached (a server restarting); errors a handler threw go through. */
export async function untilReachable<T>(call: () => Promise<T>, deadline: number): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const status = (error as { status?: unknown }).status;
      const unreachable = typeof status === 'number' ? status >= 500 : isTransport(error);
      if (!unreachable || Date.now() > deadline) throw error;
      await sleep(Math.min(500, 50 * 2 ** Math.min(attempt, 4)));
    }
  }
}

function isTransport(error: unknown): boolean {
  const text = `${(error as Error).message ?? ''} ${String((error as { cause?: unknown }).cause ?? '')}`;
  return /fetch failed|ECONNREFUSED|ECONNRESET|socket|other side closed|terminated|UND_ERR/i.test(text);
}

/**
 * Takes a conversation through its turns: each user message is sent with an idempotency key (a
 * send retried after a lost connection is applied once), then the run's output is awaited.
 * Approval conversations stop at their first approval: `awaitApproval` decides when to approve.
 */
export async function driveOverRestate(
  client: RestateConversationClient,
  id: string,
  options: { deadline: number; awaitApproval?: (id: string, toolCallId: string) => Promise<void> },
): Promise<void> {
  for (let turn = 1; turn <= turns; turn++) {
    await untilReachable(
      () => client.send(id, { type: 'user.message', content: userText(id, turn) }, { idempotencyKey: `${id}/turn-${turn}` }),
      options.deadline,
    );
    if (approvalIds.includes(id) && turn === 1) {
      let pending: string | undefined;
      while (!pending) {
        const view = await untilReachable(() => client.get(id), options.deadline);
        pending = view?.pendingApprovals[0]?.toolCallId;
        if (!pending) {
          if (Date.now() > options.deadline) throw new Error(`${id} never asked for approval`);
          await sleep(50);
        }
      }
      await options.awaitApproval?.(id, pending);
      const approved = pending;
      await untilReachable(
        () => client.send(id, { type: 'tool.approve', toolCallId: approved }, { idempotencyKey: `${id}/approve` }),
        options.deadline,
      );
    }
    const output = await untilReachable(
      () => client.result(id, { signal: AbortSignal.timeout(Math.max(1, options.deadline - Date.now())) }),
      options.deadline,
    );
    if (output.status !== 'done')
      throw new Error(`${id} turn ${turn} ended ${output.status}: ${JSON.stringify(output.error ?? output.reason)}`);
  }
}
