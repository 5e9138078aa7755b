/**
 * WORKFLOW: what a workflow costs beside running its conversations by hand (issue 48, item 9).
 *
 * Two conversations, a writer and a reviewer, each a tool round and an answer against a
 * zero-latency scripted model (`handlerProvider` over OpenAI chunks, each answer streamed in
 * `deltas` deltas). Sides, interleaved after a warm-up, CPU µs per pair (medians):
 * - by hand: the writer's actor is created, sent its prompt and awaited; then the reviewer's, with
 *   the writer's text in its prompt — what a user writes without a workflow;
 * - workflow: an XState machine that invokes the writer with `conversationInput(prompt)`, then the
 *   reviewer with the writer's text, its `onDone`s taking each `RunOutput`; and a listener on the
 *   workflow's `agent.event`s (as a UI would follow it), each conversation's events passed up to it.
 * The ratio per round is the ratio per pair: both sides make the same four requests.
 */
import { assign, createActor, setup, toPromise } from 'xstate';
import { z } from 'zod';
import { conversationInput, createConversationMachine, defineTool, handlerProvider } from '../src/index.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai/index.js';
import { cpuNowUs, median } from './stats.js';

export type WorkflowResult = {
  reps: number;
  warmup: number;
  deltas: number;
  byHandUsPerPair: number;
  workflowUsPerPair: number;
  /** workflow / by hand. */
  ratio: number;
  /** `agent.event`s the workflow emitted per pair. */
  eventsPerPair: number;
};

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): OpenAIChatCompletionChunk => ({
  choices: [{ index: 0, delta, finish_reason: finishReason }],
});

let serial = 0;
async function* callTurn(): AsyncGenerator<OpenAIChatCompletionChunk> {
  yield chunk({ tool_calls: [{ index: 0, id: `call_${++serial}`, type: 'function', function: { name: 'look_up', arguments: '' } }] });
  yield chunk({ tool_calls: [{ index: 0, function: { arguments: '{"topic":"otters"}' } }] }, 'tool_calls');
}

async function* textTurn(text: string, pieces: number): AsyncGenerator<OpenAIChatCompletionChunk> {
  const size = Math.ceil(text.length / pieces);
  for (let start = 0; start < text.length; start += size)
    yield chunk({ content: text.slice(start, start + size) }, start + size >= text.length ? 'stop' : null);
}

export function workflowMachines(deltas: number) {
  const lookUp = defineTool({
    name: 'look_up',
    description: 'Look a topic up',
    parameters: z.object({ topic: z.string() }),
    execute: ({ topic }) => `${topic} hold hands while they sleep`,
  });
  const conversation = (text: string) =>
    createConversationMachine({
      provider: handlerProvider(({ messages }) => (messages.at(-1)?.role === 'tool' ? textTurn(text, deltas) : callTurn())),
      tools: [lookUp],
    });
  const writer = conversation('Otters hold hands while they sleep, so that they do not drift apart. '.repeat(2));
  const reviewer = conversation('APPROVED: clear, true and short enough. '.repeat(2));
  const pipeline = setup({
    types: { context: {} as { draft: string; verdict: string }, output: {} as { draft: string; verdict: string } },
    actors: { writer, reviewer },
  }).createMachine({
    context: { draft: '', verdict: '' },
    initial: 'drafting',
    states: {
      drafting: {
        invoke: {
          src: 'writer',
          input: conversationInput('Write about otters.'),
          onDone: [
            {
              guard: ({ event }) => event.output.status === 'done',
              target: 'reviewing',
              actions: assign({ draft: ({ event }) => event.output.text }),
            },
            { target: 'failed' },
          ],
          onError: 'failed',
        },
      },
      reviewing: {
        invoke: {
          src: 'reviewer',
          input: ({ context }) => conversationInput(`Review: ${context.draft}`),
          onDone: [
            {
              guard: ({ event }) => event.output.status === 'done',
              target: 'published',
              actions: assign({ verdict: ({ event }) => event.output.text }),
            },
            { target: 'failed' },
          ],
          onError: 'failed',
        },
      },
      published: { type: 'final' },
      failed: { type: 'final' },
    },
    output: ({ context }) => context,
  });
  return { writer, reviewer, pipeline };
}

export async function workflow(options: { reps: number; warmup: number; deltas: number }): Promise<WorkflowResult> {
  const { writer, reviewer, pipeline } = workflowMachines(options.deltas);
  let events = 0;
  const byHand = async () => {
    const started = cpuNowUs();
    const first = await toPromise(createActor(writer, { input: conversationInput('Write about otters.') }).start());
    if (first.status !== 'done') throw new Error(`WORKFLOW: the writer ended ${first.status}`);
    const second = await toPromise(createActor(reviewer, { input: conversationInput(`Review: ${first.text}`) }).start());
    if (second.status !== 'done') throw new Error(`WORKFLOW: the reviewer ended ${second.status}`);
    return cpuNowUs() - started;
  };
  const inWorkflow = async () => {
    const started = cpuNowUs();
    const actor = createActor(pipeline);
    actor.on('agent.event', () => {
      events++;
    });
    const output = await toPromise(actor.start());
    if (output.verdict === '') throw new Error('WORKFLOW: the workflow did not publish');
    return cpuNowUs() - started;
  };
  const sides = [byHand, inWorkflow] as const;
  for (let i = 0; i < options.warmup; i++) for (const side of sides) await side();
  events = 0;
  const samples: [number[], number[]] = [[], []];
  for (let i = 0; i < options.reps; i++) {
    // Alternating which goes first, so neither always runs on a warmer cache.
    for (let k = 0; k < 2; k++) {
      const index = (i + k) % 2;
      samples[index]?.push(await (sides[index] as () => Promise<number>)());
    }
  }
  const byHandUsPerPair = median(samples[0]);
  const workflowUsPerPair = median(samples[1]);
  return {
    reps: options.reps,
    warmup: options.warmup,
    deltas: options.deltas,
    byHandUsPerPair,
    workflowUsPerPair,
    ratio: workflowUsPerPair / byHandUsPerPair,
    eventsPerPair: events / options.reps,
  };
}
