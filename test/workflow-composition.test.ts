/**
 * Conversations inside a user's statechart (DESIGN §18, docs/workflows.md "Composing"):
 * `conversationInput` starts an invoked or spawned conversation at once; its `RunOutput` reaches
 * `onDone` whatever its outcome; every event it emits reaches the workflow's actor as `agent.event`
 * with its path — through nested workflows and into a conversation's own agent tree. Real
 * conversation machines over scripted models.
 */
import { type AnyActorRef, and, assign, createActor, not, setup, spawnChild, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import {
  agentTool,
  type AgentEventEvent,
  conversationInput,
  createConversationMachine,
  handlerProvider,
  type RunOutput,
} from '../src/index.js';
import { machineConfigOf } from '../src/observe/inspect/index.js';
import { events$ } from '../src/observe/rx/index.js';
import { scriptedModel, type ScriptedTurn } from './support/scripted-model.js';

const outputOf = (event: unknown) => (event as { output: RunOutput }).output;

function conversation(turns: ScriptedTurn[], options: { guardrails?: Parameters<typeof createConversationMachine>[0]['guardrails'] } = {}) {
  const model = scriptedModel(turns);
  return { model, machine: createConversationMachine({ provider: handlerProvider(model.handler), ...options }) };
}

/** `[path joined, event type]` for each `agent.event` the actor emits. */
function heard(actor: AnyActorRef) {
  const seen: Array<[string, string]> = [];
  actor.on('agent.event', (emitted) => {
    const { path, event } = emitted as AgentEventEvent;
    seen.push([path.join('/'), event.type]);
  });
  return seen;
}

describe('conversationInput', () => {
  it('a prompt, with a history before it and the session data', () => {
    const history = [
      { role: 'user' as const, content: 'Earlier.' },
      { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'Yes.' }] },
    ];
    expect(conversationInput('Now this.', { sessionData: { userId: 'u1' }, messages: history })).toEqual({
      sessionData: { userId: 'u1' },
      messages: history,
      prompt: 'Now this.',
    });
    expect(conversationInput([{ type: 'text', text: 'Parts.' }])).toEqual({ prompt: [{ type: 'text', text: 'Parts.' }] });
  });

  it('a history: the conversation waits for a user.message', async () => {
    expect(conversationInput([{ role: 'user', content: 'Hi.' }])).toEqual({ messages: [{ role: 'user', content: 'Hi.' }] });
    const { machine } = conversation([]);
    const actor = createActor(machine, { input: conversationInput([]) }).start();
    expect(actor.getSnapshot().value).toBe('idle');
    actor.stop();
  });
});

describe('a conversation started with a prompt', () => {
  it('runs at once, the prompt its first user message', async () => {
    const { machine, model } = conversation([{ text: 'Three lines.' }]);
    const actor = createActor(machine, { input: conversationInput('Summarize.', { sessionData: { n: 1 } }) });
    actor.start();
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'done', text: 'Three lines.' });
    expect(output.messages[0]).toEqual({ role: 'user', content: 'Summarize.' });
    expect(model.requests).toHaveLength(1);
  });

  it('an empty prompt ends the run in error, naming input.prompt; no request is made', async () => {
    const { machine, model } = conversation([]);
    const output = await toPromise(createActor(machine, { input: { prompt: '   ' } }).start());
    expect(output.status).toBe('error');
    expect(output.error?.message).toMatch(/^input\.prompt content must be a non-empty string/);
    expect(model.requests).toHaveLength(0);
  });

  it('the input guardrails check the prompt', async () => {
    const { machine, model } = conversation([{ text: 'never' }], {
      guardrails: {
        input: [
          { name: 'no-secrets', check: (text) => (text.includes('secret') ? { tripped: true, reason: 'a secret' } : { tripped: false }) },
        ],
      },
    });
    const output = await toPromise(createActor(machine, { input: conversationInput('Tell me the secret.') }).start());
    expect(output).toMatchObject({ status: 'halted', reason: 'guardrail', guardrail: { name: 'no-secrets', phase: 'input' } });
    expect(model.requests).toHaveLength(0);
  });
});

describe('a workflow of conversations', () => {
  function pipeline(writerTurns: ScriptedTurn[], reviewerTurns: ScriptedTurn[]) {
    const writer = conversation(writerTurns);
    const reviewer = conversation(reviewerTurns);
    const machine = setup({
      // Declared, `workflow.on('agent.event', …)` is typed.
      types: { context: {} as { draft: string; verdict: string; failed?: string }, emitted: {} as AgentEventEvent },
      actors: { writer: writer.machine, reviewer: reviewer.machine },
    }).createMachine({
      id: 'pipeline',
      context: { draft: '', verdict: '' },
      initial: 'drafting',
      states: {
        drafting: {
          invoke: {
            id: 'writer',
            src: 'writer',
            input: conversationInput('Write about otters.'),
            onDone: [
              {
                guard: ({ event }) => outputOf(event).status === 'done',
                target: 'reviewing',
                actions: assign({ draft: ({ event }) => outputOf(event).text }),
              },
              { target: 'failed', actions: assign({ failed: ({ event }) => outputOf(event).status }) },
            ],
          },
        },
        reviewing: {
          invoke: {
            id: 'reviewer',
            src: 'reviewer',
            input: ({ context }) => conversationInput(`Review: ${context.draft}`),
            onDone: { target: 'published', actions: assign({ verdict: ({ event }) => outputOf(event).text }) },
          },
        },
        published: { type: 'final' },
        failed: { type: 'final' },
      },
      output: ({ context }) => context,
    });
    return { machine, writer, reviewer };
  }

  it('each conversation starts from its input, its output reaches onDone, its events reach the workflow with its path', async () => {
    const { machine, reviewer } = pipeline([{ text: 'Otters hold hands.' }], [{ text: 'APPROVED' }]);
    const actor = createActor(machine);
    const seen = heard(actor);
    actor.start();
    expect(await toPromise(actor)).toEqual({ draft: 'Otters hold hands.', verdict: 'APPROVED' });
    expect(reviewer.model.requests[0]?.messages.at(-1)).toMatchObject({ role: 'user', content: 'Review: Otters hold hands.' });
    const types = (path: string) => seen.filter(([at]) => at === path).map(([, type]) => type);
    expect(types('writer')[0]).toBe('request.started');
    expect(types('writer')).toContain('text.delta');
    expect(types('writer').at(-1)).toBe('request.finished');
    expect(types('reviewer').at(-1)).toBe('request.finished');
    // In order: the writer's events all come before the reviewer's.
    expect(seen.findIndex(([at]) => at === 'reviewer')).toBeGreaterThan(seen.findLastIndex(([at]) => at === 'writer'));
  });

  it('a conversation that ends in error ends through onDone, its status saying how', async () => {
    const { machine } = pipeline([{ error: Object.assign(new Error('bad request'), { status: 400 }) }], []);
    const output = await toPromise(createActor(machine).start());
    expect(output).toMatchObject({ failed: 'error' });
  });

  it('a workflow inside a workflow: the outer one hears the conversation with the whole path', async () => {
    const { machine: inner } = pipeline([{ text: 'Draft.' }], [{ text: 'Fine.' }]);
    const outer = setup({ actors: { inner } }).createMachine({
      initial: 'running',
      states: { running: { invoke: { id: 'stage1', src: 'inner', onDone: 'done' } }, done: { type: 'final' } },
    });
    const actor = createActor(outer);
    const seen = heard(actor);
    actor.start();
    await toPromise(actor);
    expect(new Set(seen.map(([path]) => path))).toEqual(new Set(['stage1/writer', 'stage1/reviewer']));
  });

  it('parallel states and spawned conversations: every conversation is heard by its own id', async () => {
    const a = conversation([{ text: 'A.' }]);
    const b = conversation([{ text: 'B.' }]);
    const c = conversation([{ text: 'C.' }]);
    const machine = setup({
      types: { context: {} as { texts: string[] } },
      actors: { a: a.machine, b: b.machine, c: c.machine },
    }).createMachine({
      context: { texts: [] },
      type: 'parallel',
      entry: spawnChild('c', { id: 'spawned-c', input: conversationInput('Go C.') }),
      states: {
        left: {
          initial: 'working',
          states: {
            working: { invoke: { id: 'a', src: 'a', input: conversationInput('Go A.'), onDone: 'finished' } },
            finished: { type: 'final' },
          },
        },
        right: {
          initial: 'working',
          states: {
            working: { invoke: { id: 'b', src: 'b', input: conversationInput('Go B.'), onDone: 'finished' } },
            finished: { type: 'final' },
          },
        },
        spawned: {
          initial: 'working',
          states: {
            working: {
              on: {
                'xstate.done.actor.spawned-c': { target: 'finished', actions: assign({ texts: ({ event }) => [outputOf(event).text] }) },
              },
            },
            finished: { type: 'final' },
          },
        },
      },
      output: ({ context }) => context.texts,
    });
    const actor = createActor(machine);
    const seen = heard(actor);
    actor.start();
    expect(await toPromise(actor)).toEqual(['C.']);
    for (const path of ['a', 'b', 'spawned-c']) expect(seen).toContainEqual([path, 'request.finished']);
  });

  it("a conversation's agent tree is heard through it: its path goes on with the call's id", async () => {
    const child = scriptedModel([{ text: 'Oslo.' }]);
    const researcher = createConversationMachine({ provider: handlerProvider(child.handler) });
    const lead = conversation([
      { toolCalls: [{ id: 'call-1', name: 'research', args: { prompt: 'Capital of Norway?' } }] },
      { text: 'It is Oslo.' },
    ]);
    const leadMachine = createConversationMachine({
      provider: handlerProvider(lead.model.handler),
      tools: [agentTool(researcher, { name: 'research', description: 'Ask the researcher' })],
    });
    const machine = setup({ actors: { lead: leadMachine } }).createMachine({
      initial: 'asking',
      states: {
        asking: { invoke: { id: 'lead', src: 'lead', input: conversationInput('Capital of Norway?'), onDone: 'done' } },
        done: { type: 'final' },
      },
    });
    const actor = createActor(machine);
    const seen = heard(actor);
    actor.start();
    await toPromise(actor);
    expect(seen).toContainEqual(['lead/call-1', 'request.started']);
    expect(seen).toContainEqual(['lead/call-1', 'request.finished']);
    expect(seen).toContainEqual(['lead', 'agent.finished']);
    // Flattened: never an agent.event inside an agent.event.
    expect(seen.some(([, type]) => type === 'agent.event')).toBe(false);
  });
});

describe("a workflow's config (machineConfigOf from actorloop/inspect)", () => {
  it('names the conversations it invokes, and a combined guard by one plain name', () => {
    const { machine: writer } = conversation([]);
    const machine = setup({ actors: { writer }, guards: { approved: () => true, withinBudget: () => true } }).createMachine({
      id: 'flow',
      initial: 'writing',
      states: {
        writing: {
          invoke: {
            id: 'w',
            src: 'writer',
            input: conversationInput('Write.'),
            onDone: [{ guard: and(['approved', not('withinBudget')]), target: 'done' }, { target: 'done' }],
          },
        },
        done: { type: 'final' },
      },
    });
    const config = machineConfigOf(machine);
    expect(config.states?.writing?.invoke).toMatchObject({
      id: 'w',
      src: 'writer',
      onDone: [{ target: 'done', guard: 'approvedAndNotWithinBudget' }, { target: 'done' }],
    });
  });
});

describe("a workflow's budget, handed to a conversation", () => {
  it('conversationInput(prompt, { budget }) bounds the conversation: the tighter of it and its own budget halts it', async () => {
    const { machine, model } = conversation([
      { toolCalls: [{ id: 'c1', name: 'nothing', args: {} }], usage: { prompt: 60, completion: 40 } } as ScriptedTurn,
      { text: 'never asked' },
    ]);
    const output = await toPromise(createActor(machine, { input: conversationInput('Go.', { budget: { maxTotalTokens: 50 } }) }).start());
    expect(output).toMatchObject({ status: 'halted', reason: 'budget', budget: { limit: 'maxTotalTokens', max: 50 } });
    expect(model.requests).toHaveLength(1);
  });
});

describe("a workflow's events through actorloop/rx", () => {
  it("events$(workflow, 'agent.event') streams every conversation's events with its path, and completes with the workflow", async () => {
    const writer = conversation([{ text: 'Drafted.' }]);
    // Its emitted events declared (docs/workflows.md "Composing"), the workflow is a source rx takes.
    const machine = setup({ types: { emitted: {} as AgentEventEvent }, actors: { writer: writer.machine } }).createMachine({
      initial: 'writing',
      states: {
        writing: { invoke: { id: 'writer', src: 'writer', input: conversationInput('Write.'), onDone: 'done' } },
        done: { type: 'final' },
      },
    });
    const actor = createActor(machine);
    const seen: string[] = [];
    const completed = new Promise<void>((resolve, reject) =>
      events$(actor, 'agent.event').subscribe({
        next: ({ path, event }) => seen.push(`${path.join('/')} ${event.type}`),
        error: reject,
        complete: resolve,
      }),
    );
    actor.start();
    await completed;
    expect(seen[0]).toBe('writer request.started');
    expect(seen).toContain('writer request.finished');
  });
});
