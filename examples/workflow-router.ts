/**
 * A router: a classifier conversation answers one word — billing, technical or other — and the
 * workflow hands the question to the specialist for it, a conversation with its own system prompt
 * (the billing one with a real tool over an in-memory invoice table). An answer outside the three
 * goes to a fallback specialist, which asks the customer what they need. Every conversation is
 * invoked by the workflow and started with `conversationInput`; its id is the path its events are
 * printed with, so the lines show which specialist answered.
 *
 *   npx tsx examples/workflow-router.ts
 *
 * Offline a scripted model classifies and answers (it answers "shipping" for one question, outside
 * the three, to show the fallback); with OPENAI_API_KEY, ANTHROPIC_API_KEY or OPENAI_BASE_URL set,
 * a live one does (see examples/support/model.ts).
 */
import { pathToFileURL } from 'node:url';
import { type AgentEventEvent, conversationInput, createConversationMachine, defineTool, type Provider, type Tool } from 'actorloop';
import { assign, createActor, setup, toPromise } from 'xstate';
import { z } from 'zod';
import { chooseModel, printMode } from './support/model.js';
import { failureOf, outputOf } from './support/workflow-outcome.js';

const categories = ['billing', 'technical', 'other'] as const;

export type RouterOutput = {
  status: 'answered' | 'failed';
  /** What the classifier answered, as it answered it. */
  category: string;
  /** The conversation that answered: `billing`, `technical`, `general` or `fallback`. */
  specialist?: string;
  answer: string;
  failure?: string;
};

type RouterContext = Omit<RouterOutput, 'status'> & { question: string; status?: RouterOutput['status'] };

/** Stands in for your billing system. */
const invoices = new Map([
  ['INV-1042', { amountEur: 49, charged: 2 }],
  ['INV-2001', { amountEur: 120, charged: 1 }],
]);

const findInvoice = defineTool({
  name: 'find_invoice',
  description: 'Look an invoice up by its number',
  parameters: z.object({ invoiceId: z.string() }),
  execute: ({ invoiceId }) => {
    const invoice = invoices.get(invoiceId);
    if (!invoice) throw new Error(`no invoice ${invoiceId}`);
    return `${invoiceId}: €${invoice.amountEur}, charged ${invoice.charged} time(s)`;
  },
});

/** Models answer "Billing." as often as "billing". */
const wordOf = (text: string) =>
  text
    .trim()
    .toLowerCase()
    .replace(/[^a-z]/g, '');

export function routerWorkflow(provider: Provider) {
  const specialist = (system: string, tools: Tool<never, unknown>[] = []) =>
    createConversationMachine({ provider, system: `${system} Answer in at most two sentences.`, tools });
  const ask = ({ context }: { context: RouterContext }) => conversationInput(context.question);
  return setup({
    types: { context: {} as RouterContext, input: {} as { question: string }, emitted: {} as AgentEventEvent, output: {} as RouterOutput },
    actors: {
      classifier: createConversationMachine({
        provider,
        system: `You route customer messages. Answer with one word: ${categories.join(', ')}.`,
      }),
      billing: specialist('You handle billing. Look the invoice up before you answer.', [findInvoice]),
      technical: specialist('You are a support engineer: give the one step most likely to fix the problem.'),
      general: specialist('You answer general questions about the shop.'),
      fallback: specialist('The message could not be routed: ask the customer one short question to find out what they need.'),
    },
    guards: {
      finished: ({ event }) => outputOf(event).status === 'done',
      classifiedAs: ({ context }, { category }: { category: (typeof categories)[number] }) => wordOf(context.category) === category,
    },
    actions: {
      recordFailure: assign({ failure: ({ event }) => failureOf(event) }),
    },
  }).createMachine({
    id: 'router',
    context: ({ input }) => ({ question: input.question, category: '', answer: '' }),
    initial: 'classifying',
    states: {
      classifying: {
        invoke: {
          id: 'classifier',
          src: 'classifier',
          input: ({ context }) => conversationInput(`Classify this customer message: "${context.question}"`),
          onDone: [
            { guard: 'finished', target: 'answering', actions: assign({ category: ({ event }) => event.output.text }) },
            { target: 'failed', actions: 'recordFailure' },
          ],
          onError: { target: 'failed', actions: 'recordFailure' },
        },
      },
      answering: {
        initial: 'routing',
        states: {
          routing: {
            always: [
              { guard: { type: 'classifiedAs', params: { category: 'billing' } }, target: 'billing' },
              { guard: { type: 'classifiedAs', params: { category: 'technical' } }, target: 'technical' },
              { guard: { type: 'classifiedAs', params: { category: 'other' } }, target: 'general' },
              { target: 'fallback' },
            ],
          },
          billing: { invoke: { id: 'billing', src: 'billing', input: ask } },
          technical: { invoke: { id: 'technical', src: 'technical', input: ask } },
          general: { invoke: { id: 'general', src: 'general', input: ask } },
          fallback: { invoke: { id: 'fallback', src: 'fallback', input: ask } },
        },
        // Whichever specialist runs, its outcome is taken here once (the only conversations under this state).
        on: {
          'xstate.done.actor.*': [
            {
              guard: 'finished',
              target: 'answered',
              actions: assign({ answer: ({ event }) => outputOf(event).text, specialist: ({ event }) => event.actorId }),
            },
            { target: 'failed', actions: 'recordFailure' },
          ],
          'xstate.error.actor.*': { target: 'failed', actions: 'recordFailure' },
        },
      },
      answered: { type: 'final', entry: assign({ status: 'answered' as const }) },
      failed: { type: 'final', entry: assign({ status: 'failed' as const }) },
    },
    output: ({ context: { status = 'failed', category, specialist, answer, failure } }) => ({
      status,
      category,
      answer,
      ...(specialist ? { specialist } : {}),
      ...(failure ? { failure } : {}),
    }),
  });
}

async function main() {
  const model = await chooseModel(({ userText, toolResults }) => {
    if (userText.startsWith('Classify')) {
      if (/invoice|charged/i.test(userText)) return { text: 'billing' };
      if (/error|crash/i.test(userText)) return { text: 'Technical.' };
      if (/ship/i.test(userText)) return { text: 'shipping' };
      return { text: 'other' };
    }
    const invoiceId = /INV-\d+/.exec(userText)?.[0];
    if (invoiceId && toolResults.length === 0) return { toolCalls: [{ name: 'find_invoice', args: { invoiceId } }] };
    if (invoiceId) return { text: `I checked ${toolResults[0]}. The second charge is refunded within five days.` };
    if (/crash/i.test(userText)) return { text: 'Update the app to 4.2, which fixes that crash.' };
    if (/ship/i.test(userText)) return { text: 'Is this about an order you placed, or one you are about to place?' };
    return { text: 'We are open every day from 9:00 to 18:00.' };
  });
  printMode('workflow-router', model);

  const questions = [
    'I was charged twice for invoice INV-1042.',
    'The app shows an error and crashes when I open settings.',
    'Are you open on Sundays?',
    'Do you ship to Norway?',
  ];
  let failed = false;
  for (const question of questions) {
    console.log(`[question] ${question}`);
    const actor = createActor(routerWorkflow(model.provider), { input: { question } });
    actor.on('agent.event', ({ path, event }) => {
      const at = `  [${path.join('/')}]`;
      if (event.type === 'request.started') console.log(`${at} request.started`);
      if (event.type === 'tool.call') console.log(`${at} tool.call ${event.name}(${JSON.stringify(event.args)})`);
      if (event.type === 'tool.result') console.log(`${at} tool.result ${event.name} → ${event.result}`);
    });
    actor.start();
    const output = await toPromise(actor);
    console.log(`[routed] "${output.category}" → ${output.specialist ?? '(none)'}: ${output.status}`);
    console.log(`[answer] ${output.failure ?? output.answer}`);
    failed ||= output.status !== 'answered';
  }
  if (failed) process.exitCode = 1;
}

// Run as a program, not when a test imports the workflow.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
