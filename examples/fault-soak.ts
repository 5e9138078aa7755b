/**
 * The fault soak finding a planted bug. A support workflow has a conversation draft a reply (it
 * looks the order up and books a refund — a tool that must not run twice), then finishes. The
 * buggy version handles only a draft that ended `done`: any other outcome goes to a state waiting
 * for `review.done`, an event nobody sends — so when a provider fault ends the conversation
 * `error`, the workflow never ends. `faultSoak` runs both versions under random provider faults,
 * tool failures, cancels and restores: it names the stuck state, the run's seed, a shrunk plan
 * and the line that replays it; the fixed version passes.
 *
 *   npx tsx examples/fault-soak.ts
 *
 * Offline only: the model is a small in-process provider that answers from the request.
 */
import { pathToFileURL } from 'node:url';
import { conversationInput, createConversationMachine, defineTool, emptyUsage, type Provider, type RunOutput } from 'actorloop';
import { faultSoak } from 'actorloop/testing';
import { assign, setup } from 'xstate';
import { z } from 'zod';

let calls = 0;
/** A model that looks the order up and refunds it, then answers: decided from the history, so a retry or a restore gets a fitting answer. */
export const supportModel: Provider = {
  name: 'support-model',
  async *stream({ messages }) {
    const last = messages.at(-1);
    if (last?.role === 'user') {
      const id = `call_${++calls}`;
      yield { type: 'tool.call.delta', toolCallId: id, name: 'refund', argsDelta: '{"order":"A-17"}' };
      yield {
        type: 'finish',
        content: [{ type: 'tool-call', toolCallId: id, toolName: 'refund', argsText: '{"order":"A-17"}' }],
        finishReason: 'tool-calls',
        usage: { inputTokens: 20, outputTokens: 8, totalTokens: 28 },
      };
      return;
    }
    const text = 'Your refund for A-17 is on its way.';
    yield { type: 'text.delta', delta: text };
    yield { type: 'finish', content: [{ type: 'text', text }], finishReason: 'stop', usage: emptyUsage() };
  },
};

const refund = defineTool({
  name: 'refund',
  description: 'Refund an order (not idempotent: it moves money)',
  parameters: z.object({ order: z.string() }),
  execute: async ({ order }) => `refunded ${order}`,
});

const drafter = createConversationMachine({
  provider: supportModel,
  tools: [refund],
  // Short limits, so a stalled request or a hung tool ends well within the soak's runTimeoutMs.
  requestTimeoutMs: 100,
  toolTimeoutMs: 100,
  retry: { maxRetries: 2, initialDelayMs: 2, maxDelayMs: 10 },
});

type Context = { reply?: string };

function supportWorkflow(fixed: boolean) {
  return setup({
    types: { context: {} as Context },
    actors: { drafter },
    guards: { drafted: ({ event }) => (event as unknown as { output: RunOutput }).output.status === 'done' },
  }).createMachine({
    id: fixed ? 'support-fixed' : 'support-buggy',
    context: {},
    initial: 'drafting',
    states: {
      drafting: {
        invoke: {
          id: 'draft',
          src: 'drafter',
          input: () => conversationInput('Please refund order A-17.'),
          onDone: [
            { guard: 'drafted', target: 'sent', actions: assign({ reply: ({ event }) => event.output.text }) },
            // The bug: a draft that failed waits for a human review nobody was asked for. The fix escalates and ends.
            { target: fixed ? 'escalated' : 'awaitingReview' },
          ],
        },
      },
      awaitingReview: { on: { 'review.done': 'sent' } },
      escalated: { type: 'final' },
      sent: { type: 'final' },
    },
  });
}

/** The workflow with the planted bug. */
export const buggyWorkflow = supportWorkflow(false);
/** The same workflow, every outcome of the draft handled. */
export const fixedWorkflow = supportWorkflow(true);

async function main() {
  console.log('actorloop example "fault-soak" — OFFLINE: a SCRIPTED model in process, faults injected by faultSoak');
  const soak = { runs: 20, seed: 20240601, runTimeoutMs: 250, shrink: 1 };
  const buggy = await faultSoak(buggyWorkflow, soak);
  console.log(
    `[buggy] ${buggy.runs} runs in ${buggy.ms} ms, outcomes ${JSON.stringify(buggy.outcomes)}, ${buggy.violations.length} violation(s)`,
  );
  const first = buggy.violations[0];
  if (first) {
    console.log(`[violation] seed ${first.seed} (run ${first.run}): ${first.message}`);
    console.log(`[reproduction] ${first.reproduction.code}`);
    const again = await faultSoak(buggyWorkflow, { runs: 1, seed: first.seed, runTimeoutMs: 250, plan: first.reproduction.plan });
    console.log(`[replayed] seed ${first.seed}: ${again.violations[0]?.message ?? 'no violation'}`);
  }
  const fixed = await faultSoak(fixedWorkflow, soak);
  console.log(
    `[fixed] ${fixed.runs} runs in ${fixed.ms} ms, outcomes ${JSON.stringify(fixed.outcomes)}, ${fixed.violations.length} violation(s)`,
  );
  for (const violation of fixed.violations) console.log(`[violation] seed ${violation.seed}: ${violation.message}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
