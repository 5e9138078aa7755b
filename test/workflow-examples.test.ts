/**
 * The workflows of the four workflow examples (examples/workflow-*.ts, docs/workflows.md
 * "Examples"), proven as "Proving your workflow" says a user's workflow is: each factory's machine
 * passes `assertWorkflow` and `verifyWorkflow` finds no problem in it; one with an outcome left out
 * is reported. test/examples.test.ts runs each example as a process along its happy path; here the
 * machines also run in-process along the paths the examples do not take (a person who never
 * approves, a summarizer that fails, a classifier that fails).
 */
import { type AnyStateMachine, createActor, createMachine, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { agentTreeWorkflow } from '../examples/workflow-agent-tree.js';
import { mapReduceWorkflow } from '../examples/workflow-map-reduce.js';
import { reviewWorkflow } from '../examples/workflow-review.js';
import { routerWorkflow } from '../examples/workflow-router.js';
import { type Script, scriptedProvider } from '../examples/support/script.js';
import { assertWorkflow, handlerProvider, type RunOutput, verifyWorkflow } from '../src/index.js';

/** Verification never runs a conversation: a provider that answers nothing will do. */
const unused = handlerProvider(async function* () {});

/** A provider error no retry follows: the conversation ends `error`. */
const badRequest = () => {
  throw Object.assign(new Error('bad request'), { status: 400 });
};

const examples: Array<{ name: string; machine: AnyStateMachine; input: unknown; externalEvents: string[] }> = [
  {
    name: 'workflow-review',
    machine: reviewWorkflow(unused),
    input: { topic: 'a lamp' },
    // The person's decisions come from outside: the workflow waits for them.
    externalEvents: ['review.approve', 'review.reject'],
  },
  { name: 'workflow-map-reduce', machine: mapReduceWorkflow(unused), input: { documents: ['One.', 'Two.'] }, externalEvents: [] },
  { name: 'workflow-router', machine: routerWorkflow(unused), input: { question: 'Hello?' }, externalEvents: [] },
  { name: 'workflow-agent-tree', machine: agentTreeWorkflow(unused), input: { topic: 'lighthouses' }, externalEvents: [] },
];

describe('the workflow examples are proven', () => {
  for (const { name, machine, input, externalEvents } of examples) {
    it(`${name}: assertWorkflow passes`, () => {
      assertWorkflow(machine, { input, externalEvents });
    });

    it(`${name}: verifyWorkflow finds no problem`, () => {
      expect(verifyWorkflow(machine, { input, externalEvents })).toEqual([]);
    });
  }

  it("the review's person is what moves it on: without externalEvents, awaitingDecision waits forever", () => {
    expect(verifyWorkflow(reviewWorkflow(unused), { input: { topic: 'a lamp' } }).map(({ state, kind }) => `${state} ${kind}`)).toEqual([
      'awaitingDecision waits-forever',
    ]);
  });

  it("map-reduce with a summarizer's error left out of its done handling is reported", () => {
    const machine = mapReduceWorkflow(unused);
    const config = machine.config as unknown as { states: Record<string, { on: Record<string, object[]> }> };
    const mapping = config.states.mapping!;
    const [finished, fallback] = mapping.on['xstate.done.actor.*']!;
    // The fallback that took `halted` and `error` now takes `halted` only.
    const haltedOnly = { ...fallback, guard: ({ event }: { event: { output: RunOutput } }) => event.output.status === 'halted' };
    const states = { ...config.states, mapping: { ...mapping, on: { ...mapping.on, 'xstate.done.actor.*': [finished, haltedOnly] } } };
    const variant = createMachine({ ...machine.config, states } as never, machine.implementations as never);
    expect(verifyWorkflow(variant, { input: { documents: ['One.'] } })).toEqual([
      {
        state: 'mapping',
        kind: 'unhandled-outcome',
        message:
          "the conversation spawned here without a fixed id can end 'error', and no transition takes it (only an xstate.done.actor.* transition can take the events of an actor with a computed id)",
      },
    ]);
  });
});

describe('the workflow examples along the paths their runs do not take', () => {
  it('review: a person who rejects every draft; after two revisions it gives up', async () => {
    let drafts = 0;
    const actor = createActor(
      reviewWorkflow(scriptedProvider(({ userText }) => ({ text: userText.startsWith('Review') ? 'Fine.' : `Draft ${++drafts}.` }))),
      {
        input: { topic: 'a lamp' },
      },
    );
    actor.on('review.requested', ({ revision }) => actor.send({ type: 'review.reject', note: `No (${revision}).` }));
    actor.start();
    expect(await toPromise(actor)).toEqual({
      outcome: 'gave-up',
      draft: 'Draft 3.',
      revisions: 2,
      notes: ['No (0).', 'No (1).', 'No (2).'],
    });
  });

  it('review: a writer that fails ends the workflow failed, naming it', async () => {
    const actor = createActor(reviewWorkflow(scriptedProvider(badRequest)), { input: { topic: 'a lamp' } }).start();
    expect(await toPromise(actor)).toMatchObject({ outcome: 'failed', failure: expect.stringMatching(/^writer ended error: /) });
  });

  it('map-reduce: a failed summary is left out and named; the rest are reduced, never more than the cap at once', async () => {
    const script: Script = ({ userText }) => {
      if (userText.startsWith('Combine')) return { text: userText };
      if (userText.includes('Three.')) badRequest();
      return { text: userText.split('\n\n')[1] ?? '' };
    };
    const documents = ['One.', 'Two.', 'Three.', 'Four.', 'Five.'];
    const actor = createActor(mapReduceWorkflow(scriptedProvider(script), { maxAtOnce: 2 }), { input: { documents } }).start();
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'done', summaries: ['One.', 'Two.', undefined, 'Four.', 'Five.'], mostAtOnce: 2 });
    expect(output.failures).toEqual([expect.stringMatching(/^summary-2 ended error: /)]);
    expect(output.summary).toBe('Combine these 4 summaries:\n- One.\n- Two.\n- Four.\n- Five.');
  });

  it('router: a classifier that fails ends the workflow failed, no specialist asked', async () => {
    const actor = createActor(routerWorkflow(scriptedProvider(badRequest)), { input: { question: 'Hello?' } });
    const paths = new Set<string>();
    actor.on('agent.event', ({ path }) => paths.add(path.join('/')));
    actor.start();
    expect(await toPromise(actor)).toMatchObject({ status: 'failed', failure: expect.stringMatching(/^classifier ended error: /) });
    expect([...paths]).toEqual(['classifier']);
  });

  it('agent tree: a researcher that fails gives the lead an error result; the workflow goes on to format', async () => {
    const script: Script = ({ userText, toolResults }) => {
      if (userText.startsWith('Format')) return { text: '- formatted' };
      if (userText.startsWith('Ask')) badRequest();
      return toolResults.length === 0
        ? { toolCalls: [{ name: 'ask_researcher', args: { prompt: 'Ask this.' } }] }
        : { text: toolResults[0] };
    };
    const actor = createActor(agentTreeWorkflow(scriptedProvider(script)), { input: { topic: 'lighthouses' } }).start();
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'done', list: '- formatted' });
    expect(output.notes).toBe('Error: agent "ask_researcher" ended error: bad request');
  });
});
