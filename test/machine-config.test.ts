/**
 * `visualizations/conversation.machine.json` is a machine config: `createMachine()` takes it as it
 * is, and the machine it makes has the running machine's states and transitions — compared line
 * by line off both resolved trees (test/support/machine-shape.ts) — for the default options, a
 * machine with agents (handoffs and an agent call) and one with every §12 control on.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { and, assign, createActor, createMachine, fromPromise, not, or, setup, type AnyStateMachine } from 'xstate';
import { importedConfigSvg, visualizationsDir, visualizedMachines } from '../scripts/visualize-lib.js';
import { agentTool, createConversationMachine, defineAgent, defineTool, handlerProvider, type Provider } from '../src/index.js';
import { machineConfigOf, type MachineConfigJson } from '../src/observe/chart/machine-config.js';
import { machineShape, shapeDifferences } from './support/machine-shape.js';
import { scriptedModel } from './support/scripted-model.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Plain `createMachine(JSON.parse(text))`: the parsed value is untyped, as a user's would be. */
function machineOfJson(text: string): AnyStateMachine {
  return createMachine(JSON.parse(text) as never) as unknown as AnyStateMachine;
}

/** The config through JSON, as a file would give it, made into a machine by XState alone. */
function created(config: MachineConfigJson): AnyStateMachine {
  return machineOfJson(JSON.stringify(config));
}

/** Never asked: the machines are only built. */
const provider: Provider = handlerProvider(scriptedModel([]).handler);
const lookup = defineTool({
  name: 'lookup',
  description: 'Look something up',
  parameters: { type: 'object', properties: { q: { type: 'string' } } },
  execute: ({ q }) => `found ${String(q)}`,
});

/** Handoffs between two agents, and an agent call to a child machine. */
function machineWithAgents(): AnyStateMachine {
  const researcher = createConversationMachine({ provider, tools: [lookup], system: 'You research.' });
  return createConversationMachine({
    provider,
    tools: [agentTool(researcher, { name: 'research', description: 'Ask the researcher' })],
    agents: [
      defineAgent({ name: 'triage', handoffs: ['billing'] }),
      defineAgent({ name: 'billing', tools: [lookup], handoffs: ['triage'] }),
    ],
  });
}

/** Every §12 control on: compaction, a budget, input and output guardrails, steering, a fallback provider. */
function machineWithControls(): AnyStateMachine {
  const guardrail = (name: string) => ({ name, check: () => ({ tripped: false }), timeoutMs: 1_000 });
  return createConversationMachine({
    provider: [provider, { ...provider, name: 'fallback' }],
    tools: [lookup],
    context: { maxInputTokens: 1_000, keepLast: 1 },
    budget: { maxTotalTokens: 1_000, maxDurationMs: 60_000 },
    guardrails: { input: [guardrail('topic')], output: [guardrail('pii')] },
    steering: 'queue',
  });
}

/** The states the §12 options and agents run through: the config must hold them whatever the options. */
const optionStates = [
  'conversation.checkingInput',
  'conversation.compacting',
  'conversation.compacting.summarizing',
  'conversation.compacting.backingOff',
  'conversation.checkingOutput',
  'conversation.handingOff',
];

const stateIdsOf = (machine: AnyStateMachine) =>
  machineShape(machine)
    .filter((line) => line.startsWith('state '))
    .map((line) => line.split(' ')[1]);

describe('visualizations/conversation.machine.json is a machine config', () => {
  const file = readFileSync(join(root, visualizationsDir, 'conversation.machine.json'), 'utf8');
  const running = visualizedMachines().conversation as AnyStateMachine;

  it('createMachine() takes the file as it is, and the machine it makes has the running one’s states and transitions', () => {
    const fromFile = machineOfJson(file);
    expect(shapeDifferences(running, fromFile)).toEqual([]);
    // A real comparison: the shape holds every state and the transitions that matter.
    const shape = machineShape(fromFile);
    expect(shape.length).toBeGreaterThan(150);
    expect(shape).toContain(
      'transition conversation.requesting xstate.done.actor.providerCall #5 -> conversation.done [answerAccepted] (recordFinalText, commitResponse, recordObject)',
    );
    expect(shape).toContain(
      'transition conversation.requesting.waiting xstate.after.requestTimeout.conversation.requesting.waiting #1 -> conversation.retrying [canRetryFailure] (recordFailure)',
    );
    expect(shape).toContain(
      'transition conversation.preparing always #0 -> conversation.checkingInput [queuedMessagesWithInputGuardrails] (takeQueuedMessage, startChecks)',
    );
    expect(shape).toContain('invoke conversation.compacting.summarizing id=compaction src=compaction');
    expect(shape).toContain('state conversation.done final');
  });

  it('names guards, actions, actors and delays as the machine does, and holds no function', () => {
    const config = JSON.parse(file) as MachineConfigJson;
    expect(config).toMatchObject({ id: 'conversation', initial: 'idle' });
    expect(config).not.toHaveProperty('context');
    expect(file).not.toContain('[function]');
    expect(file).not.toContain('inline:');
    const requesting = config.states?.requesting;
    expect(requesting?.invoke).toMatchObject({ id: 'providerCall', src: 'providerCall' });
    expect(requesting?.states?.waiting?.after).toHaveProperty('requestTimeout');
    expect(requesting?.on?.['user.interrupt']).toEqual([
      { target: 'preparing', guard: 'isValidUserMessage', actions: { type: 'interruptRun', params: { state: 'requesting' } } },
      { actions: 'rejectInvalidMessage' },
    ]);
    expect(config.states?.done).toEqual({ type: 'final', entry: 'markDone' });
  });

  it('imported with plain createMachine(), it draws the same overview and full chart as the running machine', async () => {
    for (const [kind, picture, title] of [
      ['overview', 'conversation.svg', 'conversation machine: overview'],
      ['full', 'conversation.full.svg', 'conversation machine: every state and transition'],
    ] as const) {
      const committed = readFileSync(join(root, visualizationsDir, picture), 'utf8');
      expect(await importedConfigSvg(file, kind, title), `${picture} from the imported config`).toBe(committed);
    }
  });

  it('is what machineConfigOf writes for the visualized machine (the file is current)', () => {
    expect(JSON.parse(file)).toEqual(JSON.parse(JSON.stringify(machineConfigOf(running))));
  });

  it('given implementations by those names, the machine made from it runs: a message starts a request', () => {
    const named = (key: string) => new Set([...file.matchAll(new RegExp(`"${key}": "([^"]+)"`, 'g'))].map((match) => match[1] as string));
    const delays = new Set([...file.matchAll(/"after": \{\s*"([^"]+)"/g)].map((match) => match[1] as string));
    expect([...delays].sort()).toEqual(['inputGuardrailTimeout', 'outputGuardrailTimeout', 'requestTimeout', 'retryDelay', 'toolDeadline']);
    const guards = Object.fromEntries(
      [...named('guard')].map((name) => [
        name,
        ({ event }: { event: { type: string } }) => name === 'isValidUserMessage' && event.type === 'user.message',
      ]),
    );
    const never = fromPromise(() => new Promise<never>(() => {}));
    const machine = machineOfJson(file).provide({
      guards,
      delays: Object.fromEntries([...delays].map((name) => [name, 3_600_000])),
      actors: Object.fromEntries([...named('src')].map((name) => [name, never])),
    } as never);
    const actor = createActor(machine).start();
    expect(actor.getSnapshot().value).toBe('idle');
    actor.send({ type: 'user.message' });
    expect(actor.getSnapshot().value).toEqual({ requesting: 'waiting' });
    actor.send({ type: 'cancel' });
    expect(actor.getSnapshot()).toMatchObject({ value: 'halted', status: 'done' });
  });
});

describe('machineConfigOf round-trips through createMachine()', () => {
  const machines: Record<string, () => AnyStateMachine> = {
    'the default machine': () => visualizedMachines().conversation as AnyStateMachine,
    'a machine with agents': machineWithAgents,
    'a machine with every §12 control on': machineWithControls,
  };

  for (const [name, make] of Object.entries(machines)) {
    it(`${name}: the same states and transitions, the option states present in the config`, () => {
      const machine = make();
      const config = machineConfigOf(machine);
      const again = created(config);
      expect(shapeDifferences(machine, again)).toEqual([]);
      const ids = stateIdsOf(again);
      for (const state of optionStates) expect(ids, `${state} in the config of ${name}`).toContain(state);
      expect(ids).toEqual(stateIdsOf(machine));
      // Deterministic: built again, the same JSON.
      expect(JSON.stringify(machineConfigOf(make()))).toBe(JSON.stringify(config));
    });
  }

  it('the comparison fails on a dropped transition, a changed target, a renamed guard and a dropped state', () => {
    const machine = machineWithControls();
    const config = machineConfigOf(machine);
    const edit = (change: (copy: MachineConfigJson) => void) => {
      const copy = JSON.parse(JSON.stringify(config)) as MachineConfigJson;
      change(copy);
      return shapeDifferences(machine, created(copy));
    };
    const dropped = edit((copy) => {
      delete copy.states?.executingTools?.on?.cancel;
    });
    expect(dropped).toEqual([
      'missing: transition conversation.executingTools cancel #0 -> conversation.halted (finishRunningAgents, cancelRun)',
    ]);
    const retargeted = edit((copy) => {
      const always = copy.states?.repairing?.always;
      if (always && !Array.isArray(always)) always.target = 'error';
    });
    expect(retargeted).toEqual([
      'missing: transition conversation.repairing always #0 -> conversation.preparing (firstAttempt)',
      'extra:   transition conversation.repairing always #0 -> conversation.error (firstAttempt)',
    ]);
    const renamed = edit((copy) => {
      const always = copy.states?.awaitingApproval?.always;
      if (always && !Array.isArray(always)) always.guard = 'approvalsPending';
    });
    expect(renamed).toHaveLength(2);
    const withoutState = edit((copy) => {
      delete copy.states?.compacting?.states?.backingOff;
      const summarizing = copy.states?.compacting?.states?.summarizing;
      if (summarizing) {
        delete summarizing.after;
        if (summarizing.invoke && !Array.isArray(summarizing.invoke)) delete summarizing.invoke.onError;
      }
    });
    expect(withoutState).toContain('missing: state conversation.compacting.backingOff atomic');
  });
});

/** Every `guard` a config names, wherever it sits (transitions, invokes' onDone / onError, `after`, `always`). */
function guardsNamedIn(value: unknown, found: unknown[] = []): unknown[] {
  if (Array.isArray(value)) for (const item of value) guardsNamedIn(item, found);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'guard') found.push(inner);
      else guardsNamedIn(inner, found);
    }
  }
  return found;
}

describe('every guard of an exported config is a plain name the machine implements (DESIGN §18)', () => {
  const plainName = /^[A-Za-z][A-Za-z0-9]*$/;
  const machines: Record<string, () => AnyStateMachine> = {
    'the default machine': () => visualizedMachines().conversation as AnyStateMachine,
    'a machine with agents': machineWithAgents,
    'a machine with every §12 control on': machineWithControls,
  };
  /** The guards a Stately user would have to write: each a plain name, none a combination such as `and(a, b)`. */
  const problemsOf = (guards: unknown[], implemented: Record<string, unknown>) =>
    guards.flatMap((guard) => {
      if (typeof guard !== 'string' || !plainName.test(guard)) return [`not a plain name: ${JSON.stringify(guard)}`];
      return typeof implemented[guard] === 'function' ? [] : [`not implemented by the machine: ${guard}`];
    });

  for (const [name, make] of Object.entries(machines)) {
    it(`${name}: machineConfigOf names only guards the machine implements`, () => {
      const machine = make();
      const guards = guardsNamedIn(machineConfigOf(machine));
      expect(guards.length).toBeGreaterThan(40);
      expect(problemsOf(guards, machine.implementations.guards)).toEqual([]);
    });
  }

  it('visualizations/conversation.machine.json names only guards the machine implements', () => {
    const machine = visualizedMachines().conversation as AnyStateMachine;
    const guards = guardsNamedIn(JSON.parse(readFileSync(join(root, visualizationsDir, 'conversation.machine.json'), 'utf8')));
    expect(guards.length).toBeGreaterThan(40);
    expect(problemsOf(guards, machine.implementations.guards)).toEqual([]);
  });
});

describe('machineConfigOf: the config shapes XState has', () => {
  const loader = fromPromise(async () => 'loaded');
  const machine = setup({
    guards: { isReady: () => true, hasAtLeast: (_, _params: { count: number }) => true },
    actions: { log: () => {}, notify: (_, _params: { channel: string }) => {} },
    delays: { patience: 500 },
    actors: { loader },
  }).createMachine({
    id: 'shapes',
    initial: 'loading',
    context: { count: 0 },
    states: {
      loading: {
        description: 'Loads the thing',
        tags: ['busy'],
        meta: { colour: 'blue' },
        invoke: [
          { id: 'load', src: 'loader', onDone: { target: 'working', actions: assign({ count: 1 }) }, onError: 'failed' },
          { src: fromPromise(async () => 'inline'), onDone: { actions: 'log' } },
        ],
        after: { 1000: 'failed', patience: { guard: ({ context }) => context.count > 5, target: 'failed' } },
      },
      working: {
        type: 'parallel',
        onDone: 'finished',
        states: {
          left: {
            initial: 'a',
            states: {
              a: { on: { NEXT: { target: 'b', guard: and(['isReady', not({ type: 'hasAtLeast', params: { count: 2 } })]) } } },
              b: { type: 'final' },
              remembered: { type: 'history', history: 'deep', target: 'b' },
            },
          },
          right: {
            id: 'rightSide',
            initial: 'c',
            entry: [{ type: 'notify', params: { channel: 'ops' } }, () => {}],
            states: {
              c: { on: { NEXT: { target: '#shapes.finished', guard: or(['isReady', () => false]), reenter: true, description: 'jump' } } },
              d: { type: 'final' },
            },
            on: { BACK: '.d' },
          },
        },
      },
      finished: { type: 'final', output: { ok: true } },
      failed: { type: 'final' },
    },
  });

  const config = machineConfigOf(machine);

  it('writes types, ids, history, delays, invokes and names, and createMachine() makes the same machine of it', () => {
    expect(shapeDifferences(machine, created(config))).toEqual([]);
    expect(config).not.toHaveProperty('context');
    const loading = config.states?.loading;
    expect(loading).toMatchObject({ description: 'Loads the thing', tags: ['busy'], meta: { colour: 'blue' } });
    expect(loading?.invoke).toEqual([
      {
        id: 'load',
        src: 'loader',
        onDone: { target: 'working', actions: 'xstate.assign:shapes.loading/invoke/0/onDone/0/actions/0' },
        onError: { target: 'failed' },
      },
      { src: 'inline:shapes.loading/invoke/1', onDone: { actions: 'log' } },
    ]);
    expect(loading?.after).toEqual({
      1000: { target: 'failed' },
      patience: { target: 'failed', guard: 'inline:shapes.loading/after/patience/0/guard' },
    });
    const working = config.states?.working;
    expect(working).toMatchObject({ type: 'parallel', onDone: { target: 'finished' } });
    expect(working?.states?.left?.states?.remembered).toEqual({ type: 'history', history: 'deep', target: 'b' });
    expect(working?.states?.left?.states?.a?.on?.NEXT).toEqual({ target: 'b', guard: 'isReadyAndNotHasAtLeast' });
    const right = working?.states?.right;
    expect(right).toMatchObject({
      id: 'rightSide',
      entry: [{ type: 'notify', params: { channel: 'ops' } }, 'inline:rightSide/entry/1'],
      on: { BACK: { target: 'right.d' } },
    });
    expect(right?.states?.c?.on?.NEXT).toEqual({
      target: '#shapes.finished',
      guard: 'isReadyOrInline',
      reenter: true,
      description: 'jump',
    });
    expect(config.states?.finished).toEqual({ type: 'final', output: { ok: true } });
  });
});
