/**
 * actorloop/rx on conversations of a real durable host, over memoryStore and sqliteStore:
 * docs/observe.md "A conversation of the durable host". Late subscribers start from the
 * conversation's current state, unsubscribing mid-run never stops the run, a feed follows a
 * conversation across runs, the statuses are the ones the host sends, and no host subscription is
 * left behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filter, firstValueFrom, lastValueFrom, map, type Observable, scan, takeWhile, toArray } from 'rxjs';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  ConversationLoadError,
  type ConversationHost,
  type ConversationStore,
  createConversationHost,
  createConversationMachine,
  defineTool,
  handlerProvider,
  HostClosedError,
  InvalidOptionsError,
  memoryStore,
  type ToolResultEvent,
} from '../src/index.js';
import {
  type ConversationStateUpdate,
  type ConversationUpdate,
  conversation$,
  events$,
  hostFeed,
  isRunEnd,
  state$,
  text$,
} from '../src/observe/rx/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { countingHost } from './support/counting-host.js';
import { plannedModel, type PlanStep } from './support/planned-model.js';
import { deferred } from './support/run-conversation.js';
import type { ScriptedTurn } from './support/scripted-model.js';

const work = mkdtempSync(join(tmpdir(), 'actorloop-rx-host-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let files = 0;
const stores: Array<{ name: string; open: () => ConversationStore }> = [
  { name: 'memoryStore', open: () => memoryStore() },
  { name: 'sqliteStore', open: () => sqliteStore({ path: join(work, `rx-${++files}.db`) }) },
];

/** A tool that waits for the test to let it finish. */
function gatedTool() {
  const gate = deferred();
  const tool = defineTool({
    name: 'add',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: async ({ a, b }) => {
      await gate.promise;
      return a + b;
    },
  });
  return { tool, release: () => gate.resolve() };
}

/** Resolves once the conversation's run is in its tool round (at once if it is already). */
const inToolRound = (host: ConversationHost, id: string) =>
  firstValueFrom(state$(hostFeed(host, id)).pipe(filter((update) => typeof update.value === 'object' && 'executingTools' in update.value)));

/** One round of `add` per turn, then an answer naming the turn. */
const oneRound = (step: PlanStep): ScriptedTurn =>
  step.round === 0
    ? { toolCalls: [{ id: `call-${step.turn}`, name: 'add', args: { a: step.turn, b: 1 } }] }
    : { text: `answer ${step.turn}` };

function setup(
  store: ConversationStore,
  options: { tools?: Parameters<typeof createConversationMachine>[0]['tools']; plan?: (step: PlanStep) => ScriptedTurn } = {},
) {
  const add = defineTool({ name: 'add', parameters: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });
  const model = plannedModel(options.plan ?? oneRound);
  const machine = createConversationMachine({
    provider: handlerProvider(model.handler),
    tools: options.tools ?? [add],
    retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 2, jitter: false },
  });
  const { host, subscriptions } = countingHost(createConversationHost({ machine, store, hostId: 'rx-test' }));
  return { host, open: subscriptions };
}

const statesOf = (updates: ConversationUpdate[]) =>
  updates.filter((update): update is ConversationStateUpdate => update.type === 'state').map(({ value, status }) => ({ value, status }));

/** Collects a stream until the end of the run it is in. */
const untilRunEnd = (stream: Observable<ConversationUpdate>) =>
  lastValueFrom(
    stream.pipe(
      takeWhile((update) => !isRunEnd(update), true),
      toArray(),
    ),
  );

describe.each(stores)('actorloop/rx on a host conversation ($name)', ({ open }) => {
  it('a late subscriber starts from the state the conversation is in now, with its history, and follows it to the end', async () => {
    const { tool, release } = gatedTool();
    const { host } = setup(open(), { tools: [tool] });
    await host.send('c-1', { type: 'user.message', content: 'add 1 and 1' });
    // Let the run reach its tool round.
    await inToolRound(host, 'c-1');
    const late = untilRunEnd(conversation$(hostFeed(host, 'c-1')));
    const first = await firstValueFrom(state$(hostFeed(host, 'c-1')));
    expect(first).toMatchObject({ type: 'state', value: { executingTools: 'running' }, status: 'running' });
    expect(first.messages?.map((message) => message.role)).toEqual(['user', 'assistant']);
    release();
    const updates = await late;
    expect(statesOf(updates)).toEqual([
      { value: { executingTools: 'running' }, status: 'running' },
      { value: { requesting: 'waiting' }, status: 'running' },
      { value: 'done', status: 'done' },
    ]);
    const end = updates.at(-1) as ConversationStateUpdate;
    expect(end.output).toEqual(await host.result('c-1'));
    expect(end.messages).toEqual(end.output?.messages);
    expect(updates.map((update) => update.type)).toEqual(expect.arrayContaining(['tool.result', 'request.started', 'text.delta', 'usage']));
    await host.close();
  });

  it('a subscriber before the conversation exists gets its first run from the start', async () => {
    const { host } = setup(open());
    const updates = untilRunEnd(conversation$(hostFeed(host, 'new')));
    await host.send('new', { type: 'user.message', content: 'hello' });
    const seen = await updates;
    expect(seen[0]?.type).toBe('request.started');
    expect(statesOf(seen)).toEqual([
      { value: { requesting: 'waiting' }, status: 'running' },
      { value: { executingTools: 'running' }, status: 'running' },
      { value: { requesting: 'waiting' }, status: 'running' },
      { value: 'done', status: 'done' },
    ]);
    await host.close();
  });

  it('sends the statuses the host has: running, awaitingApproval, then done, halted or error', async () => {
    const refund = defineTool({
      name: 'refund',
      parameters: z.object({ order: z.string() }),
      needsApproval: true,
      execute: ({ order }) => `refunded ${order}`,
    });
    const hang = defineTool({ name: 'hang', parameters: z.object({}), execute: () => new Promise<string>(() => undefined) });
    const { host } = setup(open(), {
      tools: [refund, hang],
      plan: (step) => {
        if (step.conversation === 'fail') return { error: Object.assign(new Error('bad key'), { status: 401 }) };
        if (step.conversation === 'hang') return { toolCalls: [{ id: 'h-1', name: 'hang', args: {} }] };
        return step.round === 0 ? { toolCalls: [{ id: 'r-1', name: 'refund', args: { order: 'A-1' } }] } : { text: 'refunded' };
      },
    });
    const approval = lastValueFrom(
      state$(hostFeed(host, 'refund')).pipe(
        takeWhile((update) => !isRunEnd(update), true),
        toArray(),
      ),
    );
    await host.send('refund', { type: 'user.message', content: 'refund' });
    const waiting = await firstValueFrom(state$(hostFeed(host, 'refund')).pipe(filter((update) => update.status === 'awaitingApproval')));
    expect(waiting.value).toBe('awaitingApproval');
    expect((await host.get('refund'))?.pendingApprovals).toEqual([{ toolCallId: 'r-1', name: 'refund', args: { order: 'A-1' } }]);
    await host.send('refund', { type: 'tool.approve', toolCallId: 'r-1' });
    expect((await approval).map(({ value, status }) => ({ value, status }))).toEqual([
      { value: { requesting: 'waiting' }, status: 'running' },
      { value: 'awaitingApproval', status: 'awaitingApproval' },
      { value: { executingTools: 'running' }, status: 'running' },
      { value: { requesting: 'waiting' }, status: 'running' },
      { value: 'done', status: 'done' },
    ]);

    const failed = lastValueFrom(
      state$(hostFeed(host, 'fail')).pipe(
        takeWhile((update) => !isRunEnd(update), true),
        toArray(),
      ),
    );
    await host.send('fail', { type: 'user.message', content: 'fail' });
    expect((await failed).at(-1)).toMatchObject({ value: 'error', status: 'error', output: { status: 'error', error: { status: 401 } } });

    const cancelled = lastValueFrom(
      state$(hostFeed(host, 'hang')).pipe(
        takeWhile((update) => !isRunEnd(update), true),
        toArray(),
      ),
    );
    await host.send('hang', { type: 'user.message', content: 'hang' });
    await inToolRound(host, 'hang');
    await host.send('hang', { type: 'cancel', reason: 'test' });
    expect((await cancelled).at(-1)).toMatchObject({ value: 'halted', status: 'halted', output: { reason: 'cancelled' } });
    await host.close();
  });

  it('follows a conversation across runs; text$ starts again at each request; events$ is typed', async () => {
    const { host } = setup(open());
    const feed = hostFeed(host, 'multi');
    const results = events$(feed, 'tool.result');
    expectTypeOf(results).toEqualTypeOf<Observable<ToolResultEvent>>();
    const collected: ToolResultEvent[] = [];
    const texts: string[] = [];
    const ends: string[] = [];
    const subscriptions = [
      results.subscribe((event) => collected.push(event)),
      text$(feed).subscribe((text) => texts.push(text)),
      conversation$(feed)
        .pipe(
          filter(isRunEnd),
          map((update) => update.output?.text ?? ''),
        )
        .subscribe((text) => ends.push(text)),
    ];
    for (let turn = 1; turn <= 3; turn++) {
      await host.send('multi', { type: 'user.message', content: `turn ${turn}` });
      await host.result('multi');
    }
    expect(collected.map((event) => event.result)).toEqual(['2', '3', '4']);
    expect(ends).toEqual(['answer 1', 'answer 2', 'answer 3']);
    expect(texts.filter((text) => text.startsWith('answer'))).toEqual(expect.arrayContaining(['answer 1', 'answer 2', 'answer 3']));
    expect(texts.filter((text) => text === '').length).toBeGreaterThanOrEqual(6); // the start, and each request
    for (const subscription of subscriptions) subscription.unsubscribe();
    await host.close();
  });

  it('unsubscribing mid-run never stops the run and takes the host subscription off', async () => {
    const { tool, release } = gatedTool();
    const { host, open: held } = setup(open(), { tools: [tool] });
    const seen: string[] = [];
    const feed = hostFeed(host, 'c-1');
    const subscriptions = [
      conversation$(feed).subscribe((update) => seen.push(update.type)),
      state$(feed).subscribe(),
      text$(feed).subscribe(),
      events$(feed, 'tool.result').subscribe(),
    ];
    expect(held()).toBe(4);
    await host.send('c-1', { type: 'user.message', content: 'go' });
    await inToolRound(host, 'c-1');
    for (const subscription of subscriptions) subscription.unsubscribe();
    expect(held()).toBe(0);
    const count = seen.length;
    release();
    expect(await host.result('c-1')).toMatchObject({ status: 'done', text: 'answer 1' });
    expect(seen).toHaveLength(count);
    await host.close();
  });

  it('leaves no host subscription behind after 200 runs observed every way, early leavers included', async () => {
    const { host, open: held } = setup(open());
    const runs = 200;
    for (let index = 0; index < runs; index++) {
      const id = `c-${index % 20}`;
      const feed = hostFeed(host, id);
      const observed = Promise.all([
        untilRunEnd(conversation$(feed)),
        lastValueFrom(
          state$(feed).pipe(
            takeWhile((update) => !isRunEnd(update)),
            toArray(),
          ),
          { defaultValue: [] },
        ),
        lastValueFrom(
          events$(feed, 'text.delta').pipe(
            scan((count) => count + 1, 0),
            takeWhile((count) => count < 2),
          ),
        ),
      ]);
      const early = text$(feed).subscribe();
      const unsubscribedAtOnce = conversation$(feed).subscribe();
      unsubscribedAtOnce.unsubscribe();
      await host.send(id, { type: 'user.message', content: `message ${index}` });
      early.unsubscribe();
      const [updates] = await observed;
      expect(updates.at(-1)).toMatchObject({ type: 'state', status: 'done' });
      expect(held()).toBe(0);
    }
    expect((await host.list()).length).toBe(20);
    await host.close();
  }, 120_000);

  it('an unsubscription before the current state is read delivers nothing and holds nothing', async () => {
    const { host, open: held } = setup(open());
    await host.send('c-1', { type: 'user.message', content: 'hello' });
    await host.result('c-1');
    const seen: ConversationUpdate[] = [];
    const subscription = conversation$(hostFeed(host, 'c-1')).subscribe((update) => seen.push(update));
    subscription.unsubscribe();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toEqual([]);
    expect(held()).toBe(0);
    await host.close();
  });
});

describe('hostFeed failures', () => {
  it('a conversation that cannot be loaded fails the stream with ConversationLoadError; a closed host with HostClosedError', async () => {
    const store = memoryStore();
    const { host, open } = setup(store);
    await store.save({
      id: 'broken',
      schemaVersion: 1,
      machineId: 'conversation',
      status: 'done',
      snapshot: '{"value": "done", "context": {',
      revision: 1,
      owner: 'someone',
      updatedAt: Date.now(),
    });
    await expect(firstValueFrom(conversation$(hostFeed(host, 'broken')))).rejects.toSatisfy(ConversationLoadError.isInstance);
    await expect(firstValueFrom(state$(hostFeed(host, 'broken')))).rejects.toThrow(/broken/);
    expect(open()).toBe(0);
    await host.close();
    await expect(firstValueFrom(events$(hostFeed(host, 'c-1')))).rejects.toSatisfy(HostClosedError.isInstance);
    expect(open()).toBe(0);
  });

  it('names what is wrong with its arguments', () => {
    const { host } = setup(memoryStore());
    expect(() => hostFeed({} as ConversationHost, 'c-1')).toThrow(InvalidOptionsError);
    expect(() => hostFeed({} as ConversationHost, 'c-1')).toThrow(/hostFeed\(host\): expected a conversation host/);
    expect(() => hostFeed(host, '')).toThrow(/hostFeed\(host, conversationId\): expected a conversation id/);
  });
});
