/**
 * The workflows of the Restate workflow tests (test/restate-workflow.test.ts), shared by the test's
 * own worker and the worker processes it kills (test/support/restate-workflow-worker.ts): the
 * host's order workflow (test/support/hosted-workflow.ts — two research conversations at once,
 * then a payer whose `charge` needs approval, then `order.confirm`) with conversations whose tools
 * and model requests are recorded — in memory, and appended to side files a killed process leaves
 * behind; and a workflow with timers — a conversation whose first request fails (it backs off),
 * then a wait for `order.confirm` that expires.
 */
import { appendFileSync } from 'node:fs';
import { assign, setup } from 'xstate';
import { z } from 'zod';
import {
  conversationInput,
  createConversationMachine,
  defineTool,
  handlerProvider,
  ProviderError,
  type RunOutput,
  resultTexts,
} from '../../src/index.js';
import { orderPlan, orderWorkflow } from './hosted-workflow.js';
import { plannedModel } from './planned-model.js';

export type RestateWorkflowOptions = {
  /** Each tool execution is appended here (`<tool> <side or cents> <toolCallId>`), first thing it does. */
  executions?: string;
  /** Each model request is appended here (`<conversation>\t<round>\t<whether its history holds an interrupted result>`). */
  requests?: string;
  /** A lookup of these sides waits until its signal aborts (or the process dies). */
  hold?: readonly string[];
  /** Told as a tool starts executing. */
  onTool?: (tool: string, detail: string) => void;
};

/** What the workflow's tools and model did, in this process. */
export type RestateWorkflowProbe = { lookups: string[]; charges: number; requests: Array<{ conversation: string; round: number }> };

export function restateOrderWorkflow(options: RestateWorkflowOptions = {}) {
  const probe: RestateWorkflowProbe = { lookups: [], charges: 0, requests: [] };
  const record = (tool: string, detail: string, toolCallId: string) => {
    if (options.executions) appendFileSync(options.executions, `${tool} ${detail} ${toolCallId}\n`);
    options.onTool?.(tool, detail);
  };
  const lookup = defineTool({
    name: 'lookup',
    description: 'Looks a side up.',
    parameters: z.object({ side: z.string() }),
    execute: async ({ side }, { signal, toolCallId }) => {
      record('lookup', side, toolCallId);
      probe.lookups.push(side);
      if (options.hold?.includes(side)) {
        await new Promise<never>((_resolve, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted'))));
      }
      return `${side}: in stock`;
    },
  });
  const charge = defineTool({
    name: 'charge',
    description: 'Charges the card.',
    parameters: z.object({ cents: z.number() }),
    needsApproval: true,
    execute: ({ cents }, { toolCallId }) => {
      record('charge', String(cents), toolCallId);
      probe.charges++;
      return `charged ${cents}`;
    },
  });
  const model = plannedModel((step) => {
    const interrupted = JSON.stringify(step.messages).includes(resultTexts.interrupted);
    probe.requests.push({ conversation: step.conversation, round: step.round });
    if (options.requests) appendFileSync(options.requests, `${step.conversation}\t${step.round}\t${interrupted}\n`);
    return orderPlan(step);
  });
  const provider = handlerProvider(model.handler);
  const researcher = createConversationMachine({ provider, tools: [lookup] });
  const payer = createConversationMachine({ provider, tools: [charge] });
  const machine = orderWorkflow().machine.provide({ actors: { researcher, payer } });
  return { machine, probe };
}

/**
 * A workflow with timers: `asker` asks once — its first request fails retryably, so it backs off
 * and asks again — then the workflow waits `waitMs` for `order.confirm` (an `after` of its chart)
 * and ends `confirmed` or `expired`.
 */
export function restateTimedWorkflow() {
  let failed = false;
  const model = plannedModel(() => {
    if (failed) return { text: 'hello back' };
    failed = true;
    return { error: new ProviderError('overloaded, try again', { code: 'overloaded', retryable: true }) };
  });
  const asker = createConversationMachine({
    provider: handlerProvider(model.handler),
    retry: { initialDelayMs: 150, maxDelayMs: 200 },
  });
  const machine = setup({
    types: {
      context: {} as { waitMs: number; answer: string; outcome: string },
      input: {} as { waitMs: number },
      events: {} as { type: 'order.confirm' },
      output: {} as { status: 'done'; answer: string; outcome: string },
    },
    actors: { asker },
    delays: { wait: ({ context }) => context.waitMs },
  }).createMachine({
    id: 'timed',
    context: ({ input }) => ({ waitMs: input.waitMs, answer: '', outcome: '' }),
    initial: 'asking',
    states: {
      asking: {
        invoke: {
          id: 'asker',
          src: 'asker',
          input: () => conversationInput('flaky: hello'),
          onDone: { target: 'waiting', actions: assign({ answer: ({ event }) => (event.output as RunOutput).text }) },
        },
      },
      waiting: { on: { 'order.confirm': 'confirmed' }, after: { wait: 'expired' } },
      confirmed: { type: 'final', entry: assign({ outcome: 'confirmed' }) },
      expired: { type: 'final', entry: assign({ outcome: 'expired' }) },
    },
    output: ({ context }) => ({ status: 'done' as const, answer: context.answer, outcome: context.outcome }),
  });
  return { machine, model };
}
