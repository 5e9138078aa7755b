/**
 * Pins the workaround in src/machines/restore/xstate-restore.ts to the XState range actorloop supports: this
 * file runs under `npm test` (the latest XState) and `npm run test:floor` (the floor of the peer
 * range). The first block checks each XState internal the file relies on, by its number in that
 * file's header, so a release that changes one fails here with the internal's name; the second
 * proves the restore behaviour built on them end to end.
 */
import { describe, expect, it } from 'vitest';
import { type AnyActorRef, createActor, createMachine, type Snapshot, toPromise, waitFor } from 'xstate';
import { z } from 'zod';
import { createConversationMachine, defineTool, handlerProvider, resultTexts } from '../src/index.js';
import { currentSchemaVersion } from '../src/machines/snapshots/snapshot-migrations.js';
import { rearmDelayedTransitions, type RestoreScope } from '../src/machines/restore/xstate-restore.js';
import { scriptedModel } from './support/scripted-model.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const never = () => new Promise<never>(() => undefined);

/** a --go--> b --back--> a; `a` leaves for `c` after 60 ms. */
const chart = () =>
  createMachine({
    id: 'pin',
    initial: 'a',
    states: {
      a: { after: { 60: 'c' }, on: { go: 'b' } },
      b: { on: { back: 'a', ping: 'b' } },
      c: {},
    },
  });

/** The persisted JSON of a fresh `chart()` actor that is in `a`. */
function persistedInA(): unknown {
  const actor = createActor(chart()).start();
  const persisted: unknown = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
  actor.stop();
  return persisted;
}

type StartArgs = [snapshot: Snapshot<unknown>, actorScope?: RestoreScope];

describe('the XState internals xstate-restore.ts relies on', () => {
  it('1. the actor calls restoreSnapshot, getPersistedSnapshot and start off the machine object, and provide() drops them', () => {
    const machine = chart();
    const calls: string[] = [];
    const { restoreSnapshot, getPersistedSnapshot, start } = machine;
    machine.restoreSnapshot = ((...args: Parameters<typeof restoreSnapshot>) => {
      calls.push('restoreSnapshot');
      return restoreSnapshot.apply(machine, args);
    }) as typeof restoreSnapshot;
    machine.getPersistedSnapshot = ((...args: Parameters<typeof getPersistedSnapshot>) => {
      calls.push('getPersistedSnapshot');
      return getPersistedSnapshot.apply(machine, args);
    }) as typeof getPersistedSnapshot;
    machine.start = ((...args: Parameters<typeof start>) => {
      calls.push('start');
      return start.apply(machine, args);
    }) as typeof start;
    const actor = createActor(machine, { snapshot: persistedInA() as never }).start();
    actor.getPersistedSnapshot();
    actor.stop();
    expect(calls, 'internal 1: own restoreSnapshot/start/getPersistedSnapshot of a machine instance are no longer called').toEqual([
      'restoreSnapshot',
      'start',
      'getPersistedSnapshot',
    ]);
    const provided = machine.provide({});
    expect(
      (['restoreSnapshot', 'getPersistedSnapshot', 'start'] as const).filter((name) => provided[name] === machine[name]),
      'internal 1: machine.provide() now keeps the overrides; restoreOnXState would apply them twice',
    ).toEqual([]);
  });

  it('2. start gets the actor scope, and an event its self.send()s is handled before actor.start() returns', () => {
    const machine = chart();
    const start = machine.start.bind(machine) as (...args: StartArgs) => void;
    let scopeSelf: AnyActorRef | undefined;
    machine.start = ((snapshot: Snapshot<unknown>, actorScope?: RestoreScope) => {
      start(snapshot, actorScope);
      scopeSelf = actorScope?.self;
      actorScope?.self.send({ type: 'go' });
    }) as typeof machine.start;
    const actor = createActor(machine, { snapshot: persistedInA() as never });
    actor.start();
    expect(scopeSelf, 'internal 2: StateMachine.start is no longer called with (snapshot, actorScope)').toBe(actor);
    expect(actor.getSnapshot().value, 'internal 2: an event sent from start is no longer handled within actor.start()').toBe('b');
    actor.stop();
  });

  it('3. the actor scope has system.scheduler.schedule(source, target, event, delay, id), and it delivers', async () => {
    const machine = chart();
    const start = machine.start.bind(machine) as (...args: StartArgs) => void;
    machine.start = ((snapshot: Snapshot<unknown>, actorScope?: RestoreScope) => {
      start(snapshot, actorScope);
      expect(typeof actorScope?.system.scheduler.schedule, 'internal 3: actorScope.system.scheduler.schedule is gone').toBe('function');
      actorScope?.system.scheduler.schedule(actorScope.self, actorScope.self, { type: 'go' }, 10, 'pinned');
    }) as typeof machine.start;
    const actor = createActor(machine, { snapshot: persistedInA() as never }).start();
    expect(actor.getSnapshot().value).toBe('a');
    await sleep(30);
    expect(actor.getSnapshot().value, 'internal 3: an event scheduled with system.scheduler.schedule was not delivered').toBe('b');
    actor.stop();
  });

  it('4. an `after` timer is scheduled under its eventType and cancelled by it on exit; the chart is public to read', async () => {
    const machine = chart();
    const after = machine.root.states.a?.after ?? [];
    expect(
      after.map(({ eventType, delay }) => ({ eventType, delay })),
      'internal 4: StateNode.after no longer lists { eventType, delay }',
    ).toEqual([{ eventType: 'xstate.after.60.pin.a', delay: 60 }]);
    const actor = createActor(machine).start();
    expect(
      Object.values(actor.system.getSnapshot()._scheduledEvents).map(({ id }) => id),
      'internal 4: the timer of an `after` transition is no longer scheduled under its eventType',
    ).toEqual(['xstate.after.60.pin.a']);
    actor.stop();

    // Re-armed on restore, then the state is left and entered again at once: a re-armed timer that
    // leaving did not cancel would move the actor to `c` before the fresh one is due.
    const restoredMachine = chart();
    const start = restoredMachine.start.bind(restoredMachine) as (...args: StartArgs) => void;
    restoredMachine.start = ((snapshot: Snapshot<unknown>, actorScope?: RestoreScope) => {
      start(snapshot, actorScope);
      if (actorScope) rearmDelayedTransitions(restoredMachine, snapshot as never, actorScope);
    }) as typeof restoredMachine.start;
    const restored = createActor(restoredMachine, { snapshot: persistedInA() as never }).start();
    await sleep(30);
    restored.send({ type: 'go' });
    restored.send({ type: 'back' });
    await sleep(45);
    expect(restored.getSnapshot().value, 'internal 4: leaving a state no longer cancels a timer scheduled under its eventType').toBe('a');
    await sleep(45);
    expect(restored.getSnapshot().value, 'a re-armed `after` timer did not fire').toBe('c');
    restored.stop();
  });

  it('5. StateMachine.getPersistedSnapshot keeps the fields of the snapshot and puts back the context it is given', () => {
    const machine = chart();
    const actor = createActor(machine).start();
    const context = { kept: true };
    const persisted = machine.getPersistedSnapshot({ ...actor.getSnapshot(), context } as never) as unknown as Record<string, unknown>;
    actor.stop();
    expect(persisted.context, 'internal 5: getPersistedSnapshot no longer returns the context it is given').toEqual(context);
    expect(persisted, 'internal 5: the persisted snapshot lost a field restoring needs').toMatchObject({
      value: 'a',
      status: 'active',
      children: {},
    });
  });
});

describe('restore through the public API, on this XState', () => {
  it('a run restored in requesting makes the request again, and its request window is armed', async () => {
    let calls = 0;
    // A stream that never sends a chunk: the first process never hears back, and the restored one
    // waits on it until its window ends, then retries.
    async function* silent(): AsyncGenerator<never> {
      calls++;
      await never();
      yield* [];
    }
    const model = scriptedModel([silent, silent, { text: 'answered' }]);
    const machine = createConversationMachine({
      provider: handlerProvider(model.handler),
      requestTimeoutMs: 50,
      retry: { initialDelayMs: 1, maxDelayMs: 1, jitter: false },
    });
    const first = createActor(machine, { input: {} }).start();
    first.send({ type: 'user.message', content: 'go' });
    while (calls === 0) await sleep(1);
    const persisted: unknown = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();
    expect(persisted).toMatchObject({ schemaVersion: currentSchemaVersion, value: { requesting: 'waiting' } });
    const started = Date.now();
    const restored = createActor(machine, { snapshot: persisted as never, input: {} }).start();
    await sleep(10);
    expect(calls, 'the restored run did not make its request again at once').toBe(2);
    const output = await toPromise(restored);
    expect(model.requests).toHaveLength(3);
    // The restored request waited out its whole window before the retry.
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(output).toMatchObject({ status: 'done', text: 'answered' });
  });

  it('a run restored in retrying makes its next attempt when the backoff ends', async () => {
    const model = scriptedModel([{ error: Object.assign(new Error('busy'), { status: 503 }) }, { text: 'second try' }]);
    const machine = createConversationMachine({
      provider: handlerProvider(model.handler),
      retry: { initialDelayMs: 40, maxDelayMs: 40, jitter: false },
    }).provide({});
    const first = createActor(machine, { input: {} }).start();
    first.send({ type: 'user.message', content: 'go' });
    await waitFor(first, (snapshot) => snapshot.matches('retrying'));
    const persisted: unknown = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();
    const restored = createActor(machine, { snapshot: persisted as never, input: {} }).start();
    expect(restored.getSnapshot().value).toBe('retrying');
    const output = await toPromise(restored);
    expect(output).toMatchObject({ status: 'done', text: 'second try' });
    expect(model.requests).toHaveLength(2);
  });

  it('a run restored in executingTools times out a call that hangs again', async () => {
    let runs = 0;
    const hang = defineTool({
      name: 'hang',
      idempotent: true,
      parameters: z.object({}),
      execute: () => {
        runs++;
        return never();
      },
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'h1', name: 'hang', args: {} }] }, { text: 'gave up' }]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools: [hang], toolTimeoutMs: 50 });
    const first = createActor(machine, { input: {} }).start();
    first.send({ type: 'user.message', content: 'go' });
    await waitFor(first, (snapshot) => snapshot.matches('executingTools') && runs === 1);
    const persisted: unknown = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();
    const output = await toPromise(createActor(machine, { snapshot: persisted as never, input: {} }).start());
    expect(runs).toBe(2);
    expect(output).toMatchObject({ status: 'done', text: 'gave up' });
    expect(output.messages[2]).toMatchObject({ content: [{ toolCallId: 'h1', result: resultTexts.timedOut('hang', 50), isError: true }] });
  });
});
