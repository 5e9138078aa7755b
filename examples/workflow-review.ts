/**
 * A review loop with a person in it: a writer drafts, a reviewer reviews, and the workflow waits
 * in `awaitingDecision` for a person's `review.approve` or `review.reject` (with a note). A
 * rejected draft goes back to the writer — its own history and the note — at most twice; a third
 * rejection ends the workflow `gave-up`. Writer and reviewer are conversation machines the
 * workflow invokes, started with `conversationInput`; a conversation that ends `halted` or `error`
 * ends the workflow `failed`, saying which and why.
 *
 *   npx tsx examples/workflow-review.ts     at a terminal you decide; otherwise a fixed policy
 *                                           rejects the first draft and approves the second
 *
 * Offline a scripted model writes and reviews; with OPENAI_API_KEY, ANTHROPIC_API_KEY or
 * OPENAI_BASE_URL set, a live one does (see examples/support/model.ts).
 */
import { createInterface } from 'node:readline/promises';
import { pathToFileURL } from 'node:url';
import { type AgentEventEvent, conversationInput, createConversationMachine, type Message, type Provider } from 'actorloop';
import { assign, createActor, emit, setup, toPromise } from 'xstate';
import { chooseModel, printMode } from './support/model.js';
import { failureOf, outputOf } from './support/workflow-outcome.js';

/** What a person sends the workflow while it waits. */
export type ReviewDecision = { type: 'review.approve'; note?: string } | { type: 'review.reject'; note: string };

/** What the workflow emits when it starts waiting for a person. */
export type ReviewRequestedEvent = { type: 'review.requested'; revision: number; draft: string; review: string };

export type ReviewOutput = {
  outcome: 'published' | 'gave-up' | 'failed';
  draft: string;
  revisions: number;
  notes: string[];
  failure?: string;
};

type ReviewContext = Omit<ReviewOutput, 'outcome'> & {
  topic: string;
  outcome?: ReviewOutput['outcome'];
  review: string;
  /** The writer's conversation so far: a revision goes on from it. */
  writerMessages: Message[];
};

export function reviewWorkflow(provider: Provider, { maxRevisions = 2 } = {}) {
  return setup({
    types: {
      context: {} as ReviewContext,
      input: {} as { topic: string },
      events: {} as ReviewDecision,
      emitted: {} as AgentEventEvent | ReviewRequestedEvent,
      output: {} as ReviewOutput,
    },
    actors: {
      writer: createConversationMachine({ provider, system: 'You write product announcements: two sentences, plain words.' }),
      reviewer: createConversationMachine({
        provider,
        system: 'You review product announcements for an editor: in one sentence, what works and what is missing.',
      }),
    },
    guards: {
      finished: ({ event }) => outputOf(event).status === 'done',
      canRevise: ({ context }) => context.revisions < maxRevisions,
    },
    actions: {
      recordFailure: assign({ failure: ({ event }) => failureOf(event) }),
      recordNote: assign({
        notes: ({ context, event }) => ('note' in event && event.note ? [...context.notes, event.note] : context.notes),
      }),
    },
  }).createMachine({
    id: 'review',
    context: ({ input }) => ({ topic: input.topic, draft: '', review: '', revisions: 0, notes: [], writerMessages: [] }),
    initial: 'drafting',
    states: {
      drafting: {
        invoke: {
          id: 'writer',
          src: 'writer',
          input: ({ context }) =>
            context.revisions === 0
              ? conversationInput(`Announce ${context.topic}.`)
              : conversationInput(`Rejected by the editor: ${context.notes.at(-1)} Write it again.`, { messages: context.writerMessages }),
          onDone: [
            {
              guard: 'finished',
              target: 'reviewing',
              actions: assign({ draft: ({ event }) => event.output.text, writerMessages: ({ event }) => event.output.messages }),
            },
            { target: 'failed', actions: 'recordFailure' },
          ],
          onError: { target: 'failed', actions: 'recordFailure' },
        },
      },
      reviewing: {
        invoke: {
          id: 'reviewer',
          src: 'reviewer',
          input: ({ context }) => conversationInput(`Review this announcement:\n\n${context.draft}`),
          onDone: [
            { guard: 'finished', target: 'awaitingDecision', actions: assign({ review: ({ event }) => event.output.text }) },
            { target: 'failed', actions: 'recordFailure' },
          ],
          onError: { target: 'failed', actions: 'recordFailure' },
        },
      },
      awaitingDecision: {
        // Nothing in the machine decides: a person does, through actor.send (verifyWorkflow's externalEvents).
        entry: emit(({ context }) => ({
          type: 'review.requested' as const,
          revision: context.revisions,
          draft: context.draft,
          review: context.review,
        })),
        on: {
          'review.approve': { target: 'published', actions: 'recordNote' },
          'review.reject': [
            {
              guard: 'canRevise',
              target: 'drafting',
              actions: ['recordNote', assign({ revisions: ({ context }) => context.revisions + 1 })],
            },
            { target: 'gaveUp', actions: 'recordNote' },
          ],
        },
      },
      published: { type: 'final', entry: assign({ outcome: 'published' as const }) },
      gaveUp: { type: 'final', entry: assign({ outcome: 'gave-up' as const }) },
      failed: { type: 'final', entry: assign({ outcome: 'failed' as const }) },
    },
    output: ({ context: { outcome = 'failed', draft, revisions, notes, failure } }) => ({
      outcome,
      draft,
      revisions,
      notes,
      ...(failure ? { failure } : {}),
    }),
  });
}

/** Asks at a terminal; without one, rejects the first draft and approves the next. */
async function decide(request: ReviewRequestedEvent): Promise<ReviewDecision> {
  if (process.stdin.isTTY) {
    const terminal = createInterface({ input: process.stdin, output: process.stdout });
    const approve = (await terminal.question(`Publish draft ${request.revision + 1}? [y/N] `)).trim().toLowerCase().startsWith('y');
    const note = approve ? undefined : await terminal.question('Note for the writer: ');
    terminal.close();
    return approve ? { type: 'review.approve' } : { type: 'review.reject', note: note?.trim() || 'Make it better.' };
  }
  if (request.revision === 0) return { type: 'review.reject', note: 'Say what it costs and when it ships.' };
  return { type: 'review.approve', note: 'Good to go.' };
}

async function main() {
  const model = await chooseModel(({ userText }) => {
    if (userText.startsWith('Review')) {
      const complete = userText.includes('€');
      return { text: complete ? 'Clear, with the price and the date.' : 'Friendly, but it never says what it costs or when it ships.' };
    }
    if (userText.startsWith('Rejected')) return { text: 'Lumen, our desk lamp, ships on 3 March for €89. Warm light, one touch, no app.' };
    return { text: 'Meet Lumen, the desk lamp that simply works. Warm light, one touch, no app.' };
  });
  printMode('workflow-review', model);

  const actor = createActor(reviewWorkflow(model.provider), { input: { topic: 'Lumen, our new desk lamp' } });
  // The conversations run one after the other: each answer streams on a line of its own.
  actor.on('agent.event', ({ path, event }) => {
    if (event.type === 'request.started') process.stdout.write(`[${path.join('/')}] `);
    if (event.type === 'text.delta') process.stdout.write(event.delta);
    if (event.type === 'request.finished') process.stdout.write('\n');
  });
  actor.on('review.requested', async (request) => {
    const decision = await decide(request);
    console.log(`[person] ${decision.type}${decision.note ? `: ${decision.note}` : ''}`);
    actor.send(decision);
  });
  actor.start();

  const output = await toPromise(actor);
  console.log(`[output] ${output.outcome} after ${output.revisions} revision(s)${output.failure ? `: ${output.failure}` : ''}`);
  console.log(`[published] ${output.outcome === 'published' ? output.draft : '(nothing)'}`);
  if (output.outcome !== 'published') process.exitCode = 1;
}

// Run as a program, not when a test imports the workflow.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
