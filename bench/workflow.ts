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
 *
 * Hosted on SQLite (a file per host, the store's default `keepSteps`), the same two ways:
 * - hosted by hand: a host per conversation machine; the writer's conversation `send` its prompt
 *   and `result` awaited, then the reviewer's — every step of each stored;
 * - hosted workflow: one host of the workflow, `start`ed and its `result` awaited — every step of
 *   the workflow and of both conversations inside stored.
 */
import { assign, createActor, setup, toPromise } from 'xstate';
import { z } from 'zod';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { conversationInput, createConversationHost, createConversationMachine, defineTool, handlerProvider } from '../src/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
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
  hostedByHandUsPerPair: number;
  hostedWorkflowUsPerPair: number;
  /** hosted workflow / hosted by hand. */
  hostedRatio: number;
  /** Steps stored per pair: both conversations' by hand, the workflow's (its conversations' inside) hosted. */
  hostedByHandSteps: number;
  hostedWorkflowSteps: number;
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
  const folder = mkdtempSync(join(tmpdir(), 'actorloop-bench-workflow-'));
  // A file per host: each host owns (and closes) its store.
  const store = (name: string) => sqliteStore({ path: join(folder, `${name}.db`) });
  const writerHost = createConversationHost({ machine: writer, store: store('writer') });
  const reviewerHost = createConversationHost({ machine: reviewer, store: store('reviewer') });
  const workflowHost = createConversationHost({ machine: pipeline, store: store('workflow') });
  let run = 0;
  const stepsOf = async (host: { history: (id: string) => Promise<unknown[]> }, id: string) => (await host.history(id)).length;
  const steps = { byHand: 0, workflow: 0 };
  const hostedByHand = async () => {
    const id = `pair-${++run}`;
    const started = cpuNowUs();
    await writerHost.send(id, { type: 'user.message', content: 'Write about otters.' });
    const first = await writerHost.result(id);
    if (first.status !== 'done') throw new Error(`WORKFLOW: the hosted writer ended ${first.status}`);
    await reviewerHost.send(id, { type: 'user.message', content: `Review: ${first.text}` });
    const second = await reviewerHost.result(id);
    if (second.status !== 'done') throw new Error(`WORKFLOW: the hosted reviewer ended ${second.status}`);
    const used = cpuNowUs() - started;
    steps.byHand = (await stepsOf(writerHost, id)) + (await stepsOf(reviewerHost, id));
    return used;
  };
  const hostedWorkflow = async () => {
    const id = `flow-${++run}`;
    const started = cpuNowUs();
    await workflowHost.start(id);
    const output = (await workflowHost.result(id)) as { verdict: string };
    if (output.verdict === '') throw new Error('WORKFLOW: the hosted workflow did not publish');
    const used = cpuNowUs() - started;
    steps.workflow = await stepsOf(workflowHost, id);
    return used;
  };
  const sides = [byHand, inWorkflow, hostedByHand, hostedWorkflow] as const;
  for (let i = 0; i < options.warmup; i++) for (const side of sides) await side();
  events = 0;
  const samples: [number[], number[], number[], number[]] = [[], [], [], []];
  for (let i = 0; i < options.reps; i++) {
    // Rotating which goes first, so none always runs on a warmer cache.
    for (let k = 0; k < sides.length; k++) {
      const index = (i + k) % sides.length;
      samples[index]?.push(await (sides[index] as () => Promise<number>)());
    }
  }
  await Promise.all([writerHost.close(), reviewerHost.close(), workflowHost.close()]);
  rmSync(folder, { recursive: true, force: true });
  const byHandUsPerPair = median(samples[0]);
  const workflowUsPerPair = median(samples[1]);
  const hostedByHandUsPerPair = median(samples[2]);
  const hostedWorkflowUsPerPair = median(samples[3]);
  return {
    hostedByHandUsPerPair,
    hostedWorkflowUsPerPair,
    hostedRatio: hostedWorkflowUsPerPair / hostedByHandUsPerPair,
    hostedByHandSteps: steps.byHand,
    hostedWorkflowSteps: steps.workflow,
    reps: options.reps,
    warmup: options.warmup,
    deltas: options.deltas,
    byHandUsPerPair,
    workflowUsPerPair,
    ratio: workflowUsPerPair / byHandUsPerPair,
    eventsPerPair: events / options.reps,
  };
}
