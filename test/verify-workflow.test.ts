/**
 * `verifyWorkflow` / `assertWorkflow` (docs/workflows.md "Proving your workflow"): the project's own
 * proofs for a user's machine that invokes or spawns conversations. Each problem kind has a machine
 * that has it and one that does not; the conversations are real `createConversationMachine`s, and
 * the correct review loop is also run for real, with scripted models, to where verification says
 * it can go.
 */
import {
  and,
  assign,
  createActor,
  createMachine,
  emit,
  fromPromise,
  not,
  or,
  raise,
  sendParent,
  sendTo,
  setup,
  spawnChild,
  toPromise,
} from 'xstate';
import { describe, expect, it } from 'vitest';
import {
  assertWorkflow,
  createConversationMachine,
  defineTool,
  handlerProvider,
  InvalidOptionsError,
  type RunOutput,
  verifyWorkflow,
  type WorkflowProblem,
  WorkflowProblemsError,
} from '../src/index.js';
import { scriptedModel, type ScriptedTurn } from './support/scripted-model.js';

/** A conversation machine over a scripted model (one for each test that runs it; verification alone never calls it). */
function conversation(turns: ScriptedTurn[] = []) {
  return createConversationMachine({ provider: handlerProvider(scriptedModel(turns).handler) });
}

/** The conversation's output carried by a done event (the guards below read it). */
const outputOf = (event: unknown) => (event as { output: RunOutput }).output;

const kindsByState = (problems: WorkflowProblem[]) => problems.map(({ state, kind }) => `${state} ${kind}`);

describe('a correct workflow', () => {
  /** Writer drafts, reviewer reviews; at most two revisions; every outcome of both has a way on. */
  function reviewLoop(writerTurns: ScriptedTurn[] = [], reviewerTurns: ScriptedTurn[] = []) {
    return setup({
      types: { context: {} as { draft: string; revisions: number } },
      actors: { writer: conversation(writerTurns), reviewer: conversation(reviewerTurns) },
      guards: {
        finished: ({ event }) => outputOf(event).status === 'done',
        approved: ({ event }) => outputOf(event).status === 'done' && outputOf(event).text.includes('APPROVED'),
        canRevise: ({ context }) => context.revisions < 2,
      },
    }).createMachine({
      id: 'review-loop',
      context: { draft: '', revisions: 0 },
      initial: 'drafting',
      states: {
        drafting: {
          invoke: {
            id: 'writer',
            src: 'writer',
            input: { messages: [] },
            onDone: [
              { guard: 'finished', target: 'reviewing', actions: assign({ draft: ({ event }) => outputOf(event).text }) },
              { target: 'failed' },
            ],
            onError: 'failed',
          },
          // The child state's entry runs once the invoke has started the writer, so the message reaches it.
          initial: 'asking',
          states: {
            asking: {
              entry: sendTo('writer', ({ context }) => ({
                type: 'user.message' as const,
                content: context.draft === '' ? 'Write about otters.' : `Revise: ${context.draft}`,
              })),
            },
          },
        },
        reviewing: {
          invoke: {
            id: 'reviewer',
            src: 'reviewer',
            input: { messages: [] },
            onDone: [
              { guard: 'approved', target: 'published' },
              {
                guard: and(['finished', 'canRevise']),
                target: 'drafting',
                actions: assign({ revisions: ({ context }) => context.revisions + 1 }),
              },
              { target: 'failed' },
            ],
            onError: 'failed',
          },
          initial: 'asking',
          states: {
            asking: {
              entry: sendTo('reviewer', ({ context }) => ({ type: 'user.message' as const, content: `Review: ${context.draft}` })),
            },
          },
        },
        published: { type: 'final' },
        failed: { type: 'final' },
      },
    });
  }

  it('a review loop over two real conversations has no problem, and runs to published', async () => {
    const workflow = reviewLoop(
      [{ text: 'Otters hold hands.' }, { text: 'Otters hold hands while they sleep.' }],
      [{ text: 'Say when they do it.' }, { text: 'APPROVED' }],
    );
    expect(verifyWorkflow(workflow)).toEqual([]);
    expect(() => assertWorkflow(workflow)).not.toThrow();

    const actor = createActor(workflow).start();
    await toPromise(actor);
    expect(actor.getSnapshot().value).toBe('published');
    expect(actor.getSnapshot().context).toEqual({ draft: 'Otters hold hands while they sleep.', revisions: 1 });
  });

  it("the conversation machine itself passes: the project's chart, with tools, approvals and retries", () => {
    const lookup = defineTool({
      name: 'lookup',
      description: 'Look up',
      parameters: { type: 'object', properties: {} },
      execute: () => 'ok',
    });
    const guarded = defineTool({
      name: 'guarded',
      description: 'Needs approval',
      parameters: { type: 'object', properties: {} },
      needsApproval: true,
      execute: () => 'ok',
    });
    const machine = createConversationMachine({
      provider: handlerProvider(scriptedModel([]).handler),
      tools: [lookup, guarded],
      budget: { maxTotalTokens: 1_000 },
      guardrails: { input: [{ name: 'topic', check: () => ({ tripped: false }) }] },
    });
    // It waits for `user.message` (idle) and for `tool.approve` / `tool.deny` (approvals): what a host sends.
    expect(verifyWorkflow(machine)).toEqual([]);
  });
});

describe('unreachable-final', () => {
  it('names a dead-end state, and only it', () => {
    const machine = createMachine({
      id: 'wf',
      initial: 'working',
      states: {
        working: { after: { 1000: 'done' }, on: { 'work.abandon': 'abandoned' } },
        abandoned: {},
        done: { type: 'final' },
      },
    });
    expect(verifyWorkflow(machine, { externalEvents: ['work.abandon'] })).toEqual([
      {
        state: 'abandoned',
        kind: 'unreachable-final',
        message: "no final state of the machine can be reached from 'abandoned': no transition leads out of it",
      },
    ]);
  });

  it('names every state of a loop with no way out, with the states it reaches', () => {
    const machine = createMachine({
      id: 'wf',
      initial: 'start',
      states: {
        start: { on: { go: 'ping', finish: 'done' } },
        ping: { after: { 10: 'pong' } },
        pong: { after: { 10: 'ping' } },
        done: { type: 'final' },
      },
    });
    const problems = verifyWorkflow(machine, { externalEvents: ['go', 'finish'] });
    expect(kindsByState(problems)).toEqual(['ping unreachable-final', 'pong unreachable-final']);
    expect(problems[0]?.message).toContain("from it the machine only reaches 'pong', none of which ends it");
  });

  it("a compound state's final child ends the machine only through the compound state's onDone", () => {
    const review = (onDone: string | undefined) =>
      createMachine({
        id: 'wf',
        initial: 'review',
        states: {
          review: {
            initial: 'reading',
            states: { reading: { after: { 10: 'approved' } }, approved: { type: 'final' } },
            ...(onDone ? { onDone } : {}),
          },
          published: { type: 'final' },
        },
      });
    expect(verifyWorkflow(review('published'))).toEqual([]);
    const problems = verifyWorkflow(review(undefined));
    expect(kindsByState(problems)).toEqual(['review.reading unreachable-final', 'review.approved unreachable-final']);
    expect(problems[1]?.message).toContain("it ends 'review', which has no onDone to go on by");
  });

  it('a parallel state is done when every region is: one region that never ends holds all of them', () => {
    const machine = (rightEnds: boolean) =>
      createMachine({
        id: 'wf',
        initial: 'both',
        states: {
          both: {
            type: 'parallel',
            states: {
              left: { initial: 'a1', states: { a1: { after: { 10: 'a2' } }, a2: { type: 'final' } } },
              right: {
                initial: 'b1',
                states: rightEnds
                  ? { b1: { after: { 10: 'b2' } }, b2: { type: 'final' } }
                  : { b1: { after: { 10: 'b2' } }, b2: { after: { 10: 'b1' } } },
              },
            },
            onDone: 'done',
          },
          done: { type: 'final' },
        },
      });
    expect(verifyWorkflow(machine(true))).toEqual([]);
    expect(kindsByState(verifyWorkflow(machine(false)))).toEqual([
      'both.left.a1 unreachable-final',
      'both.left.a2 unreachable-final',
      'both.right.b1 unreachable-final',
      'both.right.b2 unreachable-final',
    ]);
  });

  it('a region that leaves the parallel state on its own frees the other regions', () => {
    const machine = createMachine({
      id: 'wf',
      type: 'parallel',
      states: {
        watch: { initial: 'idle', states: { idle: {} } },
        clock: { initial: 'ticking', states: { ticking: { after: { 1000: 'over' } }, over: { type: 'final' } } },
      },
    });
    // `watch.idle` never ends, so the root (parallel) is never done: every state is a dead end.
    expect(kindsByState(verifyWorkflow(machine))).toEqual([
      'watch.idle unreachable-final',
      'clock.ticking unreachable-final',
      'clock.over unreachable-final',
    ]);
    const leaving = createMachine({
      id: 'wf',
      initial: 'running',
      states: {
        running: {
          type: 'parallel',
          states: {
            watch: { initial: 'idle', states: { idle: {} } },
            clock: { initial: 'ticking', states: { ticking: { after: { 1000: '#wf.over' } } } },
          },
        },
        over: { type: 'final' },
      },
    });
    expect(verifyWorkflow(leaving)).toEqual([]);
  });
});

describe('unhandled-outcome and unhandled-error', () => {
  /** A workflow that invokes a conversation in `writing` with the given onDone / onError (and setup guards). */
  function invoking(invoke: Record<string, unknown>, extra: { on?: Record<string, unknown> } = {}) {
    return setup({
      actors: { writer: conversation() },
      guards: {
        isDone: ({ event }) => outputOf(event).status === 'done',
        isError: ({ event }) => outputOf(event).status === 'error',
        hasStatus: ({ event }, params: { status: string }) => outputOf(event).status === params.status,
      },
    }).createMachine({
      id: 'wf',
      initial: 'writing',
      ...(extra as { on?: never }),
      states: {
        writing: { invoke: { id: 'writer', src: 'writer', ...invoke } },
        done: { type: 'final' },
        failed: { type: 'final' },
      },
    });
  }

  it("an onDone whose only guard is for 'done' leaves 'halted' and 'error' unhandled", () => {
    const problems = verifyWorkflow(invoking({ onDone: { guard: 'isDone', target: 'done' }, onError: 'failed' }));
    expect(problems).toEqual([
      {
        state: 'writing',
        kind: 'unhandled-outcome',
        message: "the conversation invoked here as 'writer' can end 'halted' and 'error', and no transition takes them",
      },
    ]);
  });

  it('every halt reason is tried: a guard on one reason leaves the others unhandled', () => {
    const problems = verifyWorkflow(
      invoking({
        onDone: [
          { guard: ({ event }: { event: unknown }) => outputOf(event).reason === 'max_iterations', target: 'failed' },
          { guard: or(['isDone', 'isError']), target: 'done' },
        ],
        onError: 'failed',
      }),
    );
    expect(problems.map(({ message }) => message)).toEqual([
      "the conversation invoked here as 'writer' can end 'halted' (reason 'tool_halt', 'doom_loop', 'cancelled', 'agent_failed', 'budget', 'guardrail'), and no transition takes them",
    ]);
  });

  it('named guards with params, and/or/not and inline guards are evaluated as XState evaluates them', () => {
    const handled = invoking({
      onDone: [
        { guard: { type: 'hasStatus', params: { status: 'done' } }, target: 'done' },
        { guard: and([not('isDone'), not('isError')]), target: 'failed' },
        { guard: ({ event }: { event: unknown }) => outputOf(event).error !== undefined, target: 'failed' },
      ],
      onError: 'failed',
    });
    expect(verifyWorkflow(handled)).toEqual([]);
    const withoutError = invoking({
      onDone: [
        { guard: { type: 'hasStatus', params: { status: 'done' } }, target: 'done' },
        { guard: and([not('isDone'), not('isError')]), target: 'failed' },
      ],
      onError: 'failed',
    });
    expect(verifyWorkflow(withoutError).map(({ message }) => message)).toEqual([
      "the conversation invoked here as 'writer' can end 'error', and no transition takes it",
    ]);
  });

  it('no onDone: every outcome unhandled; no onError: an actor error unhandled', () => {
    expect(verifyWorkflow(invoking({}))).toEqual([
      {
        state: 'writing',
        kind: 'unreachable-final',
        message: "no final state of the machine can be reached from 'writing': no transition leads out of it",
      },
      {
        state: 'writing',
        kind: 'unhandled-outcome',
        message: "the conversation invoked here as 'writer' has no onDone: no transition takes its outcomes 'done', 'halted' and 'error'",
      },
      {
        state: 'writing',
        kind: 'unhandled-error',
        message:
          "the conversation invoked here as 'writer' has no onError: if its actor fails (its input function throws, say), XState fails the whole workflow with it",
      },
    ]);
  });

  it("a transition of an ancestor (here the machine's) takes what onDone leaves out, as in a run", () => {
    const machine = invoking(
      { onDone: { guard: 'isDone', target: 'done' }, onError: 'failed' },
      { on: { 'xstate.done.actor.writer': { target: '.failed' } } },
    );
    expect(verifyWorkflow(machine)).toEqual([]);
  });

  it('a conversation in a compound state: each child state is checked, with its own transitions first', () => {
    const machine = (secondTakesEverything: boolean) =>
      setup({
        actors: { reviewer: conversation() },
        guards: { isDone: ({ event }) => outputOf(event).status === 'done' },
      }).createMachine({
        id: 'wf',
        initial: 'review',
        states: {
          review: {
            invoke: { id: 'reviewer', src: 'reviewer', onDone: { guard: 'isDone', target: 'published' }, onError: 'failed' },
            initial: 'first',
            states: {
              first: { after: { 60000: 'second' } },
              // Here every outcome the parent's onDone leaves out is taken.
              second: secondTakesEverything ? { on: { 'xstate.done.actor.reviewer': { target: '#wf.failed' } } } : {},
            },
          },
          published: { type: 'final' },
          failed: { type: 'final' },
        },
      });
    expect(verifyWorkflow(machine(true))).toEqual([
      {
        state: 'review.first',
        kind: 'unhandled-outcome',
        message: "the conversation invoked here as 'reviewer' can end 'halted' and 'error', and no transition takes them",
      },
    ]);
    // The same outcomes left out in every child state: one problem, named by the invoking state.
    expect(kindsByState(verifyWorkflow(machine(false)))).toEqual(['review unhandled-outcome']);
  });

  it('conversations in parallel regions: each checked, with the transitions of every region', () => {
    const machine = setup({
      actors: { left: conversation(), right: conversation() },
      guards: { isDone: ({ event }) => outputOf(event).status === 'done' },
    }).createMachine({
      id: 'wf',
      initial: 'both',
      states: {
        both: {
          type: 'parallel',
          states: {
            a: {
              initial: 'running',
              states: {
                running: { invoke: { id: 'left', src: 'left', onDone: 'finished', onError: 'finished' } },
                finished: { type: 'final' },
              },
            },
            b: {
              initial: 'running',
              states: {
                running: { invoke: { id: 'right', src: 'right', onDone: { guard: 'isDone', target: 'finished' }, onError: 'finished' } },
                finished: { type: 'final' },
              },
            },
          },
          onDone: 'done',
        },
        done: { type: 'final' },
      },
    });
    expect(kindsByState(verifyWorkflow(machine))).toEqual(['both.b.running unhandled-outcome']);
  });

  it('a guard that throws on the initial context is reported; given `input`, the context is the one a run has', () => {
    const machine = setup({
      types: { context: {} as { limits: { done: boolean } }, input: {} as { limits: { done: boolean } } },
      actors: { writer: conversation() },
    }).createMachine({
      id: 'wf',
      context: ({ input }) => ({ limits: input.limits }),
      initial: 'writing',
      states: {
        writing: {
          invoke: {
            id: 'writer',
            src: 'writer',
            onDone: [{ guard: ({ context }) => context.limits.done, target: 'done' }, { target: 'done' }],
            onError: 'done',
          },
        },
        done: { type: 'final' },
      },
    });
    const [problem] = verifyWorkflow(machine);
    expect(problem?.kind).toBe('unhandled-outcome');
    expect(problem?.message).toContain(
      "a guard threw: Unable to evaluate guard in transition for event 'xstate.done.actor.writer' in state node 'wf.writing': Cannot read properties of undefined (reading 'done') — given `input`",
    );
    expect(verifyWorkflow(machine, { input: { limits: { done: false } } })).toEqual([]);
  });

  it('a provided conversation machine is still a conversation; a machine only named like one is not', () => {
    const provided = conversation().provide({});
    const plain = createMachine({ id: 'conversation', initial: 'a', states: { a: { type: 'final' } } });
    const guarded = createMachine({
      id: 'wf',
      initial: 'working',
      states: {
        working: { invoke: { id: 'child', src: provided, onDone: { guard: () => false, target: 'done' }, onError: 'done' } },
        done: { type: 'final' },
      },
    });
    expect(kindsByState(verifyWorkflow(guarded))).toEqual(['working unhandled-outcome']);
    const plainGuarded = createMachine({
      id: 'wf',
      initial: 'working',
      states: {
        working: { invoke: { id: 'child', src: plain, onDone: { guard: () => false, target: 'done' }, onError: 'done' } },
        done: { type: 'final' },
      },
    });
    expect(verifyWorkflow(plainGuarded)).toEqual([]);
  });

  it('a spawned conversation: its done event is checked where the spawn lands, under its id', () => {
    const spawning = (handled: boolean) =>
      setup({
        actors: { writer: conversation() },
        guards: { isDone: ({ event }) => outputOf(event).status === 'done' },
      }).createMachine({
        id: 'wf',
        initial: 'working',
        states: {
          working: {
            entry: spawnChild('writer', { id: 'background' }),
            on: {
              'xstate.done.actor.background': handled
                ? [{ guard: 'isDone', target: 'done' }, { target: 'failed' }]
                : { guard: 'isDone', target: 'done' },
              'xstate.error.actor.background': 'failed',
            },
          },
          done: { type: 'final' },
          failed: { type: 'final' },
        },
      });
    expect(verifyWorkflow(spawning(true))).toEqual([]);
    expect(verifyWorkflow(spawning(false))).toEqual([
      {
        state: 'working',
        kind: 'unhandled-outcome',
        message: "the conversation spawned here as 'background' can end 'halted' and 'error', and no transition takes them",
      },
    ]);
  });

  it('a conversation spawned without an id: only a wildcard transition takes its events', () => {
    const machine = (on: Record<string, unknown>) =>
      setup({ actors: { writer: conversation() } }).createMachine({
        id: 'wf',
        initial: 'working',
        states: {
          working: { entry: spawnChild('writer'), on: on as never, after: { 60000: 'done' } },
          done: { type: 'final' },
        },
      });
    expect(verifyWorkflow(machine({ 'xstate.done.actor.*': 'done', 'xstate.error.actor.*': 'done' }))).toEqual([]);
    expect(kindsByState(verifyWorkflow(machine({})))).toEqual(['working unhandled-outcome', 'working unhandled-error']);
  });
});

describe('waits-forever', () => {
  const waiting = (extra: { entry?: unknown; on?: Record<string, unknown> } = {}) =>
    createMachine({
      id: 'wf',
      initial: 'drafting',
      states: {
        drafting: { after: { 10: 'waiting' }, ...(extra.entry ? { entry: extra.entry as never } : {}) },
        waiting: { on: { 'approval.given': 'published', ...extra.on } },
        published: { type: 'final' },
      },
    });

  it('a state waiting for an event nothing sends; then the same with that event named external', () => {
    expect(verifyWorkflow(waiting())).toEqual([
      {
        state: 'waiting',
        kind: 'waits-forever',
        message:
          "'waiting' waits for 'approval.given', which nothing in the machine sends (raise, sendTo, a child machine's sendParent) and externalEvents does not name: it waits forever",
      },
    ]);
    expect(verifyWorkflow(waiting(), { externalEvents: ['approval.given'] })).toEqual([]);
    expect(verifyWorkflow(waiting(), { externalEvents: ['approval.*'] })).toEqual([]);
    expect(kindsByState(verifyWorkflow(waiting(), { externalEvents: ['approval.denied'] }))).toEqual(['waiting waits-forever']);
  });

  it('an event the machine raises, or sends, is sent; one it only emits is not', () => {
    expect(verifyWorkflow(waiting({ entry: raise({ type: 'approval.given' }, { delay: 50 }) }))).toEqual([]);
    expect(verifyWorkflow(waiting({ entry: sendTo(({ self }) => self, { type: 'approval.given' }) }))).toEqual([]);
    expect(kindsByState(verifyWorkflow(waiting({ entry: emit({ type: 'approval.given' }) })))).toEqual(['waiting waits-forever']);
  });

  it("a child machine's sendParent is sent to the workflow", () => {
    const approver = createMachine({
      id: 'approver',
      initial: 'deciding',
      states: { deciding: { entry: sendParent({ type: 'approval.given' }), type: 'final' } },
    });
    const machine = createMachine({
      id: 'wf',
      type: 'parallel',
      states: {
        flow: {
          initial: 'waiting',
          states: { waiting: { on: { 'approval.given': 'published' } }, published: { type: 'final' } },
        },
        approvals: {
          initial: 'asking',
          states: { asking: { invoke: { src: approver, onDone: 'asked', onError: 'asked' } }, asked: { type: 'final' } },
        },
      },
    });
    expect(verifyWorkflow(machine)).toEqual([]);
  });

  it('what a host sends for a person (user.message, tool.approve, tool.deny) is external; cancel is not', () => {
    const machine = (event: string) =>
      createMachine({
        id: 'wf',
        initial: 'asking',
        states: { asking: { on: { [event]: 'done' } }, done: { type: 'final' } },
      });
    for (const event of ['user.message', 'tool.approve', 'tool.deny'])
      expect({ event, problems: verifyWorkflow(machine(event)) }).toEqual({ event, problems: [] });
    expect(kindsByState(verifyWorkflow(machine('cancel')))).toEqual(['asking waits-forever']);
    expect(verifyWorkflow(machine('cancel'), { externalEvents: ['cancel'] })).toEqual([]);
  });

  it('a transition that only runs actions moves nothing on: a handler of the machine does not free a waiting state', () => {
    const machine = createMachine({
      id: 'wf',
      initial: 'waiting',
      on: { 'user.message': { actions: assign({}) } },
      states: { waiting: { on: { 'approval.given': 'done' } }, done: { type: 'final' } },
    });
    expect(kindsByState(verifyWorkflow(machine))).toEqual(['waiting waits-forever']);
  });

  it('a timer, an eventless transition or an invoke — its own or an ancestor’s — moves a state on', () => {
    const moving = {
      after: { after: { 1000: 'done' } },
      always: { always: { guard: () => false, target: 'done' } },
      invoke: { invoke: { src: fromPromise(async () => 'ok'), onDone: 'done', onError: 'done' } },
      nothing: {},
    };
    const machine = (outer: object) =>
      createMachine({
        id: 'wf',
        initial: 'outer',
        states: {
          outer: {
            ...outer,
            initial: 'inner',
            states: { inner: { on: { 'never.sent': 'other' } }, other: { on: { 'never.sent': 'inner' } } },
          },
          done: { type: 'final' },
        },
      });
    for (const [name, outer] of Object.entries(moving)) {
      const problems = kindsByState(verifyWorkflow(machine(outer))).filter((line) => line.endsWith('waits-forever'));
      expect({ name, problems }).toEqual({
        name,
        problems: name === 'nothing' ? ['outer.inner waits-forever', 'outer.other waits-forever'] : [],
      });
    }
  });
});

describe('assertWorkflow', () => {
  it('throws one WorkflowProblemsError listing every problem, one a line', () => {
    const machine = createMachine({
      id: 'wf',
      initial: 'waiting',
      states: { waiting: { on: { 'approval.given': 'done', 'work.abandon': 'abandoned' } }, abandoned: {}, done: { type: 'final' } },
    });
    let thrown: unknown;
    try {
      assertWorkflow(machine);
    } catch (error) {
      thrown = error;
    }
    expect(WorkflowProblemsError.isInstance(thrown)).toBe(true);
    const error = thrown as WorkflowProblemsError;
    expect(error.message).toBe(
      [
        'workflow "wf" has 2 problems:',
        "- waiting (waits-forever): 'waiting' waits for 'approval.given' or 'work.abandon', which nothing in the machine sends (raise, sendTo, a child machine's sendParent) and externalEvents does not name: it waits forever",
        "- abandoned (unreachable-final): no final state of the machine can be reached from 'abandoned': no transition leads out of it",
      ].join('\n'),
    );
    expect(error.problems).toEqual(verifyWorkflow(machine));
    expect(error.machineId).toBe('wf');
    expect(() => assertWorkflow(machine, { externalEvents: ['approval.given', 'work.abandon'] })).toThrow(
      /^workflow "wf" has 1 problem:\n- abandoned \(unreachable-final\)/,
    );
  });

  it('bad arguments: an InvalidOptionsError naming what was wrong', () => {
    expect(() => verifyWorkflow({} as never)).toThrow(InvalidOptionsError);
    expect(() => verifyWorkflow({} as never)).toThrow('Invalid option machine: expected an XState v5 machine');
    const machine = createMachine({ id: 'wf', initial: 'done', states: { done: { type: 'final' } } });
    expect(() => verifyWorkflow(machine, { externalEvents: 'approval.given' as never })).toThrow('Invalid option externalEvents');
    expect(() => verifyWorkflow(machine, { externalEvent: ['x'] } as never)).toThrow(InvalidOptionsError);
  });
});
