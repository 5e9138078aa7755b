import { bufferTime, filter, firstValueFrom, lastValueFrom, map, scan, Subject, takeUntil, toArray } from 'rxjs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { toPromise, waitFor } from 'xstate';
import { z } from 'zod';
import { conversation$, events$, output$, RunStoppedError, state$, text$ } from '../src/observe/rx/index.js';
import type { ConversationFeed } from '../src/observe/rx/index.js';
import {
  type ConversationActor,
  type ConversationEmittedEvent,
  type ConversationSnapshot,
  defineTool,
  InvalidOptionsError,
  type RunOutput,
  type ToolResultEvent,
} from '../src/index.js';
import { deferred } from './support/run-conversation.js';
import { turnChunks } from './support/scripted-model.js';
import { listenerCounts, partialThenFail, scriptedActor } from './support/scripted-actor.js';

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => a + b,
});

const toolRun = () => [{ toolCalls: [{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }] }, { text: 'The sum is 5.' }];

const stateText = (snapshot: ConversationSnapshot) => JSON.stringify(snapshot.value);

/** Starts the actor and sends the user message. */
function go(actor: ConversationActor, content = 'What is 2+3?') {
  actor.start();
  actor.send({ type: 'user.message', content });
}

describe('state$', () => {
  it('gives the current snapshot first, then each change, and completes at done', async () => {
    const { actor } = scriptedActor(toolRun(), { tools: [add] });
    const values = lastValueFrom(state$(actor).pipe(map(stateText), toArray()));
    go(actor);
    const seen = await values;
    expect(seen[0]).toBe('"idle"');
    expect(seen.at(-1)).toBe('"done"');
    // The path of the run, without repeats of a state (deltas change the snapshot, not the state).
    const path = seen.filter((value, index) => value !== seen[index - 1]);
    expect(path).toEqual(['"idle"', '{"requesting":"waiting"}', '{"executingTools":"running"}', '{"requesting":"waiting"}', '"done"']);
  });

  it('a late subscriber starts from the state the run is in now', async () => {
    const tool = deferred<number>();
    const slow = defineTool({ name: 'add', description: 'slow add', parameters: { type: 'object' }, execute: () => tool.promise });
    const { actor } = scriptedActor(toolRun(), { tools: [slow] });
    go(actor);
    await waitFor(actor, (snapshot) => snapshot.matches('executingTools'));
    const late = lastValueFrom(state$(actor).pipe(map(stateText), toArray()));
    tool.resolve(5);
    const seen = await late;
    expect(seen[0]).toBe('{"executingTools":"running"}');
    expect(seen.at(-1)).toBe('"done"');
  });

  it('after the end, emits the final snapshot and completes at once', async () => {
    const { actor } = scriptedActor([{ text: 'hi' }]);
    go(actor);
    await toPromise(actor);
    expect(await lastValueFrom(state$(actor).pipe(map(stateText), toArray()))).toEqual(['"done"']);
  });
});

describe('events$', () => {
  it('is typed by the types given and gets only those', async () => {
    const { actor } = scriptedActor(toolRun(), { tools: [add] });
    const results = events$(actor, 'tool.result');
    expectTypeOf(results).toEqualTypeOf<import('rxjs').Observable<ToolResultEvent>>();
    const calls = events$(actor, 'tool.call', 'tool.result');
    expectTypeOf(calls).toEqualTypeOf<
      import('rxjs').Observable<Extract<ConversationEmittedEvent, { type: 'tool.call' | 'tool.result' }>>
    >();
    const collected = lastValueFrom(calls.pipe(toArray()));
    const ok = lastValueFrom(
      results.pipe(
        filter((event) => !event.isError),
        toArray(),
      ),
    );
    go(actor);
    expect((await collected).map((event) => event.type)).toEqual(['tool.call', 'tool.result']);
    expect(await ok).toEqual([{ type: 'tool.result', toolCallId: 'c1', name: 'add', result: '5', isError: false }]);
  });

  it('without types gets every event, the final step’s included, then completes', async () => {
    const { actor } = scriptedActor([{ text: 'hello' }]);
    const all = lastValueFrom(events$(actor).pipe(toArray()));
    go(actor);
    const types = (await all).map((event) => event.type);
    expect(types[0]).toBe('request.started');
    expect(types.at(-1)).toBe('request.finished');
    expect(types.filter((type) => type === 'text.delta')).toHaveLength(1);
  });

  it('counts with scan and batches deltas with bufferTime', async () => {
    const { actor } = scriptedActor([{ text: 'a long answer streamed in five-character pieces' }]);
    const count = lastValueFrom(events$(actor, 'text.delta').pipe(scan((total) => total + 1, 0)));
    const batches = lastValueFrom(
      events$(actor, 'text.delta').pipe(
        bufferTime(5),
        filter((batch) => batch.length > 0),
        map((batch) => batch.map((event) => event.delta).join('')),
        toArray(),
      ),
    );
    go(actor);
    expect(await count).toBe(10);
    expect((await batches).join('')).toBe('a long answer streamed in five-character pieces');
  });

  it('a subscriber that joins after the end completes at once, with nothing', async () => {
    const { actor } = scriptedActor([{ text: 'hi' }]);
    go(actor);
    await toPromise(actor);
    expect(await lastValueFrom(events$(actor).pipe(toArray()))).toEqual([]);
  });

  it('rejects a source that is not a conversation and a type no conversation emits, naming them', () => {
    const { actor } = scriptedActor([]);
    expect(() => events$({} as ConversationActor)).toThrow(InvalidOptionsError);
    expect(() => events$({} as ConversationActor)).toThrow(/events\$\(source\): expected a conversation actor or a feed/);
    // @ts-expect-error: not an event type
    expect(() => events$(actor, 'text.deltas')).toThrow(
      /events\$\(source, \.\.\.types\)\[0\]: expected one of request\.started, .*got "text\.deltas"/,
    );
  });
});

describe('text$', () => {
  it('grows with each delta and starts again at "" on the next request', async () => {
    const { actor } = scriptedActor(
      [{ toolCalls: [{ id: 'c1', name: 'add', args: { a: 1, b: 1 } }], text: 'Let me add.' }, { text: 'It is 2.' }],
      {
        tools: [add],
      },
    );
    const texts = lastValueFrom(text$(actor).pipe(toArray()));
    go(actor);
    expect(await texts).toEqual(['', '', 'Let m', 'Let me add', 'Let me add.', '', 'It is', 'It is 2.']);
  });

  it('starts again at "" when a retry discards the partial output', async () => {
    const { actor } = scriptedActor([partialThenFail('Half an ans', 503), { text: 'Whole.' }]);
    const texts = lastValueFrom(text$(actor).pipe(toArray()));
    const retries = lastValueFrom(events$(actor, 'request.retry').pipe(toArray()));
    go(actor);
    expect(await texts).toEqual(['', '', 'Half an ans', '', '', 'Whole', 'Whole.']);
    expect((await retries).map((event) => event.discardPartial)).toEqual([true]);
  });

  it('a subscriber that joins mid-response gets the text so far from the shared stream', async () => {
    const gate = deferred();
    const { actor } = scriptedActor([
      async function* () {
        const chunks = turnChunks({ text: 'First half' });
        for await (const chunk of chunks) {
          if (chunk.choices?.[0]?.delta?.content === ' half') await gate.promise;
          yield chunk;
        }
      },
    ]);
    const first = text$(actor).subscribe();
    const firstDelta = firstValueFrom(events$(actor, 'text.delta'));
    go(actor);
    await firstDelta;
    const late: string[] = [];
    text$(actor).subscribe((text) => late.push(text));
    expect(late).toEqual(['First']);
    gate.resolve();
    await toPromise(actor);
    expect(late).toEqual(['First', 'First half']);
    first.unsubscribe();
  });

  it('after the end, a new subscriber gets the last text and completes', async () => {
    const { actor } = scriptedActor([{ text: 'Done now.' }]);
    const during = lastValueFrom(text$(actor));
    go(actor);
    expect(await during).toBe('Done now.');
    expect(await lastValueFrom(text$(actor).pipe(toArray()))).toEqual(['Done now.']);
  });
});

describe('output$', () => {
  it('emits the RunOutput once and completes, also for a subscriber after the end', async () => {
    const { actor } = scriptedActor([{ text: 'hi' }]);
    const outputs = lastValueFrom(output$(actor).pipe(toArray()));
    go(actor);
    const [output] = await outputs;
    expectTypeOf(output).toEqualTypeOf<RunOutput | undefined>();
    expect(output).toMatchObject({ status: 'done', text: 'hi' });
    expect(await lastValueFrom(output$(actor).pipe(toArray()))).toEqual([output]);
  });

  it('fails with RunStoppedError when the actor is stopped before the end', async () => {
    const tool = deferred<number>();
    const slow = defineTool({ name: 'add', description: 'slow add', parameters: { type: 'object' }, execute: () => tool.promise });
    const { actor } = scriptedActor(toolRun(), { tools: [slow] });
    const output = firstValueFrom(output$(actor));
    go(actor);
    await waitFor(actor, (snapshot) => snapshot.matches('executingTools'));
    actor.stop();
    await expect(output).rejects.toSatisfy(RunStoppedError.isInstance);
    tool.resolve(5);
  });
});

describe('completion at every final state', () => {
  const endings: Array<{
    name: string;
    status: RunOutput['status'];
    run: () => ReturnType<typeof scriptedActor>;
    act?: (actor: ConversationActor) => Promise<void>;
  }> = [
    { name: 'done', status: 'done', run: () => scriptedActor([{ text: 'ok' }]) },
    {
      name: 'error (a request that is not retried)',
      status: 'error',
      run: () => scriptedActor([{ error: Object.assign(new Error('no'), { status: 401 }) }]),
    },
    {
      name: 'halted (cancelled while a tool runs)',
      status: 'halted',
      run: () => {
        const hang = defineTool({
          name: 'add',
          description: 'never ends',
          parameters: { type: 'object' },
          execute: () => new Promise<number>(() => undefined),
        });
        return scriptedActor(toolRun(), { tools: [hang] });
      },
      act: async (actor) => {
        await waitFor(actor, (snapshot) => snapshot.matches('executingTools'));
        actor.send({ type: 'cancel', reason: 'test' });
      },
    },
  ];

  for (const ending of endings) {
    it(`state$, events$, text$, output$ and conversation$ all complete when the run ends ${ending.name}`, async () => {
      const { actor } = ending.run();
      const streams = [
        lastValueFrom(state$(actor).pipe(toArray())),
        lastValueFrom(events$(actor).pipe(toArray())),
        lastValueFrom(text$(actor).pipe(toArray())),
        lastValueFrom(output$(actor).pipe(toArray())),
        lastValueFrom(conversation$(actor).pipe(toArray())),
      ] as const;
      go(actor);
      await ending.act?.(actor);
      const [states, , , outputs, updates] = await Promise.all(streams);
      expect(states.at(-1)?.status).toBe('done');
      expect(outputs[0]?.status).toBe(ending.status);
      const last = updates.at(-1);
      expect(last).toMatchObject({ type: 'state', status: ending.status });
    });
  }
});

describe('unsubscribing', () => {
  it('mid-run never stops the run, and takes its listeners off the actor', async () => {
    const tool = deferred<number>();
    const slow = defineTool({ name: 'add', description: 'slow add', parameters: { type: 'object' }, execute: () => tool.promise });
    const { actor } = scriptedActor(toolRun(), { tools: [slow] });
    actor.start();
    const before = listenerCounts(actor);
    const stop = new Subject<void>();
    const seen: string[] = [];
    for (const stream of [
      state$(actor).pipe(map(stateText)),
      events$(actor).pipe(map((event) => event.type)),
      text$(actor),
      events$(actor, 'tool.result').pipe(map(() => 'result')),
    ]) {
      stream.pipe(takeUntil(stop)).subscribe((value) => seen.push(value));
    }
    const outputSubscription = output$(actor).subscribe();
    actor.send({ type: 'user.message', content: 'add' });
    await waitFor(actor, (snapshot) => snapshot.matches('executingTools'));
    expect(listenerCounts(actor).eventListeners).toBeGreaterThan(before.eventListeners);
    stop.next();
    outputSubscription.unsubscribe();
    expect(listenerCounts(actor)).toEqual(before);
    const count = seen.length;
    tool.resolve(5);
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'done', text: 'The sum is 5.' });
    expect(seen.length).toBe(count);
  });

  it('takeUntil on one of its own events ends a stream mid-run, leaving the run going', async () => {
    const { actor } = scriptedActor(toolRun(), { tools: [add] });
    const untilResult = lastValueFrom(
      events$(actor).pipe(
        takeUntil(events$(actor, 'tool.result')),
        map((event) => event.type),
        toArray(),
      ),
    );
    go(actor);
    const types = await untilResult;
    expect(types).toContain('tool.call');
    expect(types).not.toContain('tool.result');
    expect(await toPromise(actor)).toMatchObject({ status: 'done' });
  });

  it('leaves no subscription or listener behind after 1,000 runs observed every way', async () => {
    let runs = 0;
    for (let index = 0; index < 1000; index++) {
      const { actor } = scriptedActor(index % 2 === 0 ? [{ text: `answer ${index}` }] : toolRun(), { tools: [add] });
      // Counts what the observers attach through the actor's own methods, and what they take off.
      let attached = 0;
      const counting = new Proxy(actor, {
        get(target, property) {
          const value = Reflect.get(target, property, target);
          if (property !== 'subscribe' && property !== 'on') return typeof value === 'function' ? value.bind(target) : value;
          return (...args: unknown[]) => {
            attached++;
            const subscription = (value as (...inner: unknown[]) => { unsubscribe(): void }).apply(target, args);
            let released = false;
            return {
              unsubscribe: () => {
                if (!released) attached--;
                released = true;
                subscription.unsubscribe();
              },
            };
          };
        },
      });
      const done = Promise.all([
        lastValueFrom(state$(counting).pipe(toArray())),
        lastValueFrom(events$(counting, 'text.delta').pipe(bufferTime(1), toArray())),
        lastValueFrom(text$(counting)),
        lastValueFrom(output$(counting)),
        lastValueFrom(conversation$(counting).pipe(toArray())),
      ]);
      const early = events$(counting).subscribe();
      go(actor);
      early.unsubscribe();
      const [, , text, output] = await done;
      expect(output.status).toBe('done');
      expect(text).toBe(index % 2 === 0 ? `answer ${index}` : 'The sum is 5.');
      expect(attached).toBe(0);
      expect(listenerCounts(actor)).toEqual({ observers: 0, eventListeners: 0 });
      runs++;
    }
    expect(runs).toBe(1000);
  }, 120_000);
});

describe('a feed (the shape of a host conversation)', () => {
  /** What `host.subscribe(id, listener)` delivers, made here from an actor. */
  function feedOf(actor: ConversationActor): ConversationFeed & { listeners: () => number } {
    let listeners = 0;
    return {
      listeners: () => listeners,
      subscribe(listener) {
        listeners++;
        const events = actor.on('*', listener);
        const states = actor.subscribe((snapshot) =>
          listener({ type: 'state', value: snapshot.value, status: snapshot.status === 'done' ? snapshot.output.status : 'running' }),
        );
        return () => {
          listeners--;
          events.unsubscribe();
          states.unsubscribe();
        };
      },
    };
  }

  it('events$, text$ and state$ work on it; they follow the feed and let go when unsubscribed', async () => {
    const { actor } = scriptedActor(toolRun(), { tools: [add] });
    const feed = feedOf(actor);
    const results: ToolResultEvent[] = [];
    const texts: string[] = [];
    const states: string[] = [];
    const subscriptions = [
      events$(feed, 'tool.result').subscribe((event) => results.push(event)),
      text$(feed).subscribe((text) => texts.push(text)),
      state$(feed).subscribe((update) => states.push(JSON.stringify(update.value))),
    ];
    go(actor);
    await toPromise(actor);
    expect(results.map((event) => event.result)).toEqual(['5']);
    expect(texts.at(-1)).toBe('The sum is 5.');
    expect(states.at(-1)).toBe('"done"');
    expect(feed.listeners()).toBe(3);
    for (const subscription of subscriptions) subscription.unsubscribe();
    expect(feed.listeners()).toBe(0);
  });

  it('output$ asks for an actor: a feed has no single output', () => {
    const { actor } = scriptedActor([]);
    expect(() => output$(feedOf(actor) as unknown as ConversationActor)).toThrow(/output\$\(source\): expected a conversation actor/);
  });
});
