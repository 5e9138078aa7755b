/**
 * Map-reduce over conversations: one summarizer conversation per document, at most four running
 * at once, then one reducer conversation that combines the summaries. The workflow spawns each
 * summarizer with `spawnChild` (`summary-<i>`, started with `conversationInput`); a counter in its
 * context and a guard keep the cap, and as one summarizer finishes the next one starts. A summary
 * that ends `halted` or `error` is left out and named in the output; the others are reduced.
 *
 *   npx tsx examples/workflow-map-reduce.ts
 *
 * Offline a scripted model summarizes and combines; with OPENAI_API_KEY, ANTHROPIC_API_KEY or
 * OPENAI_BASE_URL set, a live one does (see examples/support/model.ts).
 */
import { pathToFileURL } from 'node:url';
import { type AgentEventEvent, conversationInput, createConversationMachine, type Provider } from 'actorloop';
import { assign, createActor, enqueueActions, setup, spawnChild, toPromise } from 'xstate';
import { chooseModel, printMode } from './support/model.js';
import { failureOf, outputOf } from './support/workflow-outcome.js';

export type MapReduceOutput = {
  status: 'done' | 'failed';
  summary: string;
  /** Per document, in order: its summary, or `undefined` when its summarizer failed. */
  summaries: Array<string | undefined>;
  failures: string[];
  /** The most summarizers that ran at the same time. */
  mostAtOnce: number;
};

type MapReduceContext = Omit<MapReduceOutput, 'status'> & {
  documents: string[];
  status?: MapReduceOutput['status'];
  /** The next document to summarize, and how many summarizers run now. */
  next: number;
  running: number;
};

/** The document a summarizer's done or error event is about (its id is `summary-<i>`). */
const documentOf = (event: unknown) => Number((event as { actorId: string }).actorId.replace('summary-', ''));

export function mapReduceWorkflow(provider: Provider, { maxAtOnce = 4 } = {}) {
  return setup({
    types: {
      context: {} as MapReduceContext,
      input: {} as { documents: string[] },
      emitted: {} as AgentEventEvent,
      output: {} as MapReduceOutput,
    },
    actors: {
      summarizer: createConversationMachine({ provider, system: 'You summarize a document in one sentence.' }),
      reducer: createConversationMachine({ provider, system: 'You combine summaries into one short paragraph, keeping every fact.' }),
    },
    guards: {
      finished: ({ event }) => outputOf(event).status === 'done',
      canStartAnother: ({ context }) => context.running < maxAtOnce && context.next < context.documents.length,
      allSummarized: ({ context }) => context.running === 0 && context.next === context.documents.length,
    },
    actions: {
      recordFailure: assign({ failures: ({ context, event }) => [...context.failures, failureOf(event)] }),
      // A finished summarizer is stopped, so the workflow's snapshot does not carry its history on.
      oneLessRunning: enqueueActions(({ context, event, enqueue }) => {
        enqueue.assign({ running: context.running - 1 });
        enqueue.stopChild((event as unknown as { actorId: string }).actorId);
      }),
    },
  }).createMachine({
    id: 'map-reduce',
    context: ({ input }) => ({
      documents: input.documents,
      next: 0,
      running: 0,
      mostAtOnce: 0,
      summaries: input.documents.map(() => undefined),
      failures: [],
      summary: '',
    }),
    initial: 'mapping',
    states: {
      mapping: {
        // Taken again after each step while its guard holds: fills the free places, one summarizer each.
        always: [
          {
            guard: 'canStartAnother',
            actions: [
              spawnChild('summarizer', {
                id: ({ context }) => `summary-${context.next}`,
                input: ({ context }) => conversationInput(`Summarize this document:\n\n${context.documents[context.next]}`),
              }),
              assign({
                next: ({ context }) => context.next + 1,
                running: ({ context }) => context.running + 1,
                mostAtOnce: ({ context }) => Math.max(context.mostAtOnce, context.running + 1),
              }),
            ],
          },
          { guard: 'allSummarized', target: 'reducing' },
        ],
        // The ids are computed, so only wildcards take the summarizers' events.
        on: {
          'xstate.done.actor.*': [
            {
              guard: 'finished',
              actions: [
                assign({
                  summaries: ({ context, event }) =>
                    context.summaries.map((summary, i) => (i === documentOf(event) ? outputOf(event).text : summary)),
                }),
                'oneLessRunning',
              ],
            },
            { actions: ['recordFailure', 'oneLessRunning'] },
          ],
          'xstate.error.actor.*': { actions: ['recordFailure', 'oneLessRunning'] },
        },
      },
      reducing: {
        invoke: {
          id: 'reduce',
          src: 'reducer',
          input: ({ context }) => {
            const summaries = context.summaries.filter((summary) => summary !== undefined);
            return conversationInput(
              `Combine these ${summaries.length} summaries:\n${summaries.map((summary) => `- ${summary}`).join('\n')}`,
            );
          },
          onDone: [
            { guard: 'finished', target: 'done', actions: assign({ summary: ({ event }) => event.output.text }) },
            { target: 'failed', actions: 'recordFailure' },
          ],
          onError: { target: 'failed', actions: 'recordFailure' },
        },
      },
      done: { type: 'final', entry: assign({ status: 'done' as const }) },
      failed: { type: 'final', entry: assign({ status: 'failed' as const }) },
    },
    output: ({ context: { status = 'failed', summary, summaries, failures, mostAtOnce } }) => ({
      status,
      summary,
      summaries,
      failures,
      mostAtOnce,
    }),
  });
}

/** Stands in for your documents. */
const documents = [
  'Otters hold hands while they sleep. It keeps them from drifting apart on the water.',
  'The Pharos of Alexandria stood for about 1,500 years. Earthquakes brought it down in the 14th century.',
  'Honey found in Egyptian tombs was still edible. Its low water content keeps bacteria out.',
  'Octopuses have three hearts. Two pump blood through the gills, one through the body.',
  'A day on Venus is longer than its year. It turns once every 243 Earth days.',
  'Bananas are berries and strawberries are not. Botanists classify fruit by how the flower develops.',
  'The Eiffel Tower grows about 15 cm in summer. Iron expands in the heat.',
];

async function main() {
  const model = await chooseModel(({ userText }) => {
    if (userText.startsWith('Combine')) {
      const summaries = userText.split('\n- ').slice(1);
      return { text: `${summaries.length} facts: ${summaries.join(' ')}` };
    }
    // The document's first sentence: it comes after the blank line.
    return { text: /\n\n([^.]+\.)/.exec(userText)?.[1] ?? userText };
  });
  printMode('workflow-map-reduce', model);

  const actor = createActor(mapReduceWorkflow(model.provider), { input: { documents } });
  // The summarizers run at once: one line per event, never a streamed line.
  actor.on('agent.event', ({ path, event }) => {
    if (event.type === 'request.started') console.log(`[${path.join('/')}] request.started`);
    if (event.type === 'request.finished') console.log(`[${path.join('/')}] request.finished (${event.usage.totalTokens} tokens)`);
  });
  actor.start();

  const output = await toPromise(actor);
  const summarized = output.summaries.filter((summary) => summary !== undefined).length;
  console.log(`[output] ${output.status}: ${summarized} of ${documents.length} summaries reduced, at most ${output.mostAtOnce} at once`);
  for (const failure of output.failures) console.log(`[failure] ${failure}`);
  console.log(`[summary] ${output.summary}`);
  if (output.status !== 'done' || output.failures.length > 0) process.exitCode = 1;
}

// Run as a program, not when a test imports the workflow.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
