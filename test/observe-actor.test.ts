/**
 * observeActor, the one way rx, tracing, callbacks and the live viewer watch an actor: events,
 * snapshots, and an end told exactly once — also to an observer that comes after the end — and
 * detaching never stops the run.
 */
import { describe, expect, it } from 'vitest';
import { createActor, createMachine, toPromise, waitFor } from 'xstate';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import type { ConversationEmittedEvent, ConversationSnapshot } from '../src/index.js';
import type { ConversationActorLike } from '../src/observe/conversation-source.js';
import { type ActorEnd, observeActor } from '../src/observe/observe-actor.js';
import { deferred } from './support/run-conversation.js';
import { listenerCounts, scriptedActor } from './support/scripted-actor.js';

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => a + b,
});

const toolRun = () => [{ toolCalls: [{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }] }, { text: 'The sum is 5.' }];

function record() {
  const events: string[] = [];
  const snapshots: string[] = [];
  const ends: Array<ActorEnd<ConversationSnapshot>> = [];
  return {
    events,
    snapshots,
    ends,
    observer: {
      onEvent: (event: ConversationEmittedEvent) => events.push(event.type),
      onSnapshot: (snapshot: ConversationSnapshot) => snapshots.push(JSON.stringify(snapshot.value)),
      onEnd: (end: ActorEnd<ConversationSnapshot>) => ends.push(end),
    },
  };
}

describe('observeActor', () => {
  it('tells every emitted event, the current snapshot then each change, and the end once, with the output', async () => {
    const { actor } = scriptedActor(toolRun(), { tools: [add] });
    const seen = record();
    observeActor(actor, seen.observer);
    actor.start();
    actor.send({ type: 'user.message', content: 'What is 2+3?' });
    const output = await toPromise(actor);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(seen.snapshots[0]).toBe('"idle"');
    expect(seen.snapshots.at(-1)).toBe('"done"');
    expect(seen.events).toEqual(expect.arrayContaining(['request.started', 'tool.call', 'tool.result', 'text.delta', 'usage']));
    expect(seen.ends).toHaveLength(1);
    expect(seen.ends[0]!.status).toBe('done');
    expect(seen.ends[0]!.snapshot.output).toBe(output);
    // Ended: nothing of it is left attached to the actor.
    expect(listenerCounts(actor)).toEqual({ observers: 0, eventListeners: 0 });
  });

  it('only the given types, when asked', async () => {
    const { actor } = scriptedActor(toolRun(), { tools: [add] });
    const types: string[] = [];
    observeActor(actor, { types: ['tool.call', 'tool.result', 'tool.call'], onEvent: (event) => types.push(event.type) });
    actor.start();
    actor.send({ type: 'user.message', content: 'What is 2+3?' });
    await toPromise(actor);
    expect(types).toEqual(['tool.call', 'tool.result']);
  });

  it('observing an actor that already ended tells its last snapshot and its end at once, and attaches nothing', async () => {
    const { actor } = scriptedActor([{ text: 'Hi.' }]);
    actor.start();
    actor.send({ type: 'user.message', content: 'Hi' });
    const output = await toPromise(actor);
    const seen = record();
    const detach = observeActor(actor, seen.observer);
    expect(seen.snapshots).toEqual(['"done"']);
    expect(seen.ends).toMatchObject([{ status: 'done' }]);
    expect(seen.ends[0]!.snapshot.output).toBe(output);
    expect(listenerCounts(actor)).toEqual({ observers: 0, eventListeners: 0 });
    detach();
    expect(seen.ends).toHaveLength(1);
  });

  it('an actor stopped before it started, or during its run, ends as stopped, once', async () => {
    const early = scriptedActor([{ text: 'never' }]).actor;
    early.start();
    early.stop();
    const late = record();
    observeActor(early, late.observer);
    expect(late.ends.map(({ status }) => status)).toEqual(['stopped']);

    const gate = deferred<number>();
    const hang = defineTool({ name: 'hang', description: 'Waits', parameters: z.object({}), execute: () => gate.promise });
    const { actor } = scriptedActor([{ toolCalls: [{ id: 'h', name: 'hang', args: {} }] }, { text: 'x' }], { tools: [hang] });
    const seen = record();
    observeActor(actor, seen.observer);
    actor.start();
    actor.send({ type: 'user.message', content: 'go' });
    await waitFor(actor, (snapshot) => snapshot.matches('executingTools'));
    actor.stop();
    gate.resolve(1);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(seen.ends.map(({ status }) => status)).toEqual(['stopped']);
  });

  it('detaching removes every listener it added and never stops the run; nothing is told after', async () => {
    const gate = deferred<number>();
    const wait = defineTool({ name: 'wait', description: 'Waits', parameters: z.object({}), execute: () => gate.promise });
    const { actor } = scriptedActor([{ toolCalls: [{ id: 'w', name: 'wait', args: {} }] }, { text: 'Waited.' }], { tools: [wait] });
    const seen = record();
    const detach = observeActor(actor, seen.observer);
    actor.start();
    actor.send({ type: 'user.message', content: 'go' });
    await waitFor(actor, (snapshot) => snapshot.matches('executingTools'));
    const told = { events: seen.events.length, snapshots: seen.snapshots.length };
    detach();
    expect(listenerCounts(actor)).toEqual({ observers: 0, eventListeners: 0 });
    gate.resolve(1);
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'done', text: 'Waited.' });
    expect({ events: seen.events.length, snapshots: seen.snapshots.length }).toEqual(told);
    expect(seen.ends).toEqual([]);
  });

  it('an actor that fails ends as error, with the error, once', () => {
    const failing = createActor(
      createMachine({
        initial: 'a',
        states: {
          a: {
            entry: () => {
              throw new Error('boom');
            },
          },
        },
      }),
    );
    const ends: ActorEnd[] = [];
    observeActor(failing as unknown as ConversationActorLike, { onEnd: (end) => ends.push(end) });
    failing.start();
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ status: 'error', error: new Error('boom') });
  });
});
