/**
 * The durable conversation host (DESIGN §6) over the in-memory store; the SQLite store, crashes
 * and other processes are in sqlite-store.test.ts, host-processes.test.ts and crash.test.ts.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ConversationConflictError,
  ConversationLoadError,
  ConversationNotFoundError,
  createConversationHost,
  createConversationMachine,
  defineTool,
  EventRejectedError,
  handlerProvider,
  HostClosedError,
  InvalidOptionsError,
  memoryStore,
  resultTexts,
  type ConversationHostEvent,
  type ConversationStore,
  type StoredConversation,
  type Tool,
} from '../src/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { deferred, expectValidHistory } from './support/run-conversation.js';
import { plannedModel, type PlanStep } from './support/planned-model.js';
import type { ScriptedTurn } from './support/scripted-model.js';

const add = defineTool({
  name: 'add',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => a + b,
});

/** One round of `add` per conversation, then an answer that names the turn. */
const oneRound = (step: PlanStep): ScriptedTurn =>
  step.round === 0
    ? { toolCalls: [{ id: `call-${step.turn}`, name: 'add', args: { a: step.turn, b: 1 } }] }
    : { text: `answer ${step.turn}` };

function setup(
  plan: (step: PlanStep) => ScriptedTurn = oneRound,
  tools: Array<Tool<never, unknown>> = [add],
  store: ConversationStore = memoryStore(),
) {
  const model = plannedModel(plan);
  const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools });
  const host = createConversationHost({ machine, store, hostId: 'test-host' });
  return { host, store, machine, model };
}

/** A store that records what each save wrote (status, state value, revision) and can be told to fail or hold saves. */
function recordingStore(inner: ConversationStore = memoryStore()) {
  const saves: Array<{ id: string; status: string; value: unknown; revision: number; round: string[] | null; log: string[] }> = [];
  let loads = 0;
  let failNext: Error | undefined;
  let hold: Promise<void> | undefined;
  const store: ConversationStore = {
    ...inner,
    async load(id) {
      loads++;
      return inner.load(id);
    },
    async save(conversation, log = []) {
      if (hold) await hold;
      if (failNext) {
        const error = failNext;
        failNext = undefined;
        throw error;
      }
      await inner.save(conversation, log);
      const snapshot = JSON.parse(conversation.snapshot) as {
        value: unknown;
        context: { round: Array<{ toolCallId: string; state: string }> | null };
      };
      saves.push({
        id: conversation.id,
        status: conversation.status,
        value: snapshot.value,
        revision: conversation.revision,
        round: snapshot.context.round?.map((call) => `${call.toolCallId}:${call.state}`) ?? null,
        log: log.map(({ event }) => event.type),
      });
    },
  };
  return {
    store,
    saves,
    loads: () => loads,
    failNextSave: (error: Error) => {
      failNext = error;
    },
    holdSaves: (until: Promise<void> | undefined) => {
      hold = until;
    },
  };
}

describe('a conversation host', () => {
  it('runs a conversation: send resolves once stored, result gives the output, get the view', async () => {
    const { host, store } = setup();
    const view = await host.send('c-1', { type: 'user.message', content: 'hello' });
    expect(view).toMatchObject({ id: 'c-1', messages: [{ role: 'user', content: 'hello' }] });
    // Stored by the time send resolved.
    expect(await store.load('c-1')).toMatchObject({
      id: 'c-1',
      revision: 1,
      owner: 'test-host',
      schemaVersion: 5,
      machineId: 'conversation',
    });
    const output = await host.result('c-1');
    expect(output).toMatchObject({ status: 'done', text: 'answer 1', iterations: 1 });
    expectValidHistory(output.messages);
    expect(await host.get('c-1')).toEqual({
      id: 'c-1',
      status: 'done',
      value: 'done',
      messages: output.messages,
      pendingApprovals: [],
      usage: output.usage,
      updatedAt: expect.any(Number),
      seq: expect.any(Number),
    });
    expect(await host.get('nobody')).toBeUndefined();
    // A finished run's result comes from the store.
    expect(await host.result('c-1')).toEqual(output);
    await host.close();
  });

  it('starts the next run from the stored history, and carries sessionData over until a user.message changes it', async () => {
    const seen: unknown[] = [];
    const echo = defineTool({
      name: 'session',
      parameters: z.object({}),
      execute: (_args, { sessionData }) => {
        seen.push(sessionData);
        return 'ok';
      },
    });
    const { host } = setup(
      (step) => (step.round === 0 ? { toolCalls: [{ id: `s-${step.turn}`, name: 'session', args: {} }] } : { text: `turn ${step.turn}` }),
      [echo],
    );
    await host.send('c-1', { type: 'user.message', content: 'first' }, { sessionData: { user: 'u1' } });
    await host.result('c-1');
    await host.send('c-1', { type: 'user.message', content: 'second' });
    const second = await host.result('c-1');
    expect(second.text).toBe('turn 2');
    expect(second.messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual(['first', 'second']);
    expectValidHistory(second.messages);
    await host.send('c-1', { type: 'user.message', content: 'third' }, { sessionData: { user: 'u2' } });
    await host.result('c-1');
    await host.send('c-1', { type: 'user.message', content: 'fourth' }, { sessionData: null });
    await host.result('c-1');
    expect(seen).toEqual([{ user: 'u1' }, { user: 'u1' }, { user: 'u2' }, undefined]);
    await host.close();
  });

  it('a user.message sent the moment a run ends (its last write still under way) starts the next run', async () => {
    const { host } = setup();
    const sent = deferred<Promise<unknown>>();
    const stop = host.subscribe('c-1', (event) => {
      if (event.type !== 'state' || event.status !== 'done') return;
      stop();
      sent.resolve(host.send('c-1', { type: 'user.message', content: 'next' }));
    });
    await host.send('c-1', { type: 'user.message', content: 'first' });
    await await sent.promise;
    const output = await host.result('c-1');
    expect(output.messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual(['first', 'next']);
    expect(output.text).toBe('answer 2');
    await host.close();
  });

  it('rejects a user.message during a run like the machine does, and logs and stores nothing for it', async () => {
    const release = deferred();
    const slow = defineTool({
      name: 'slow',
      parameters: z.object({}),
      execute: async () => {
        await release.promise;
        return 'slow done';
      },
    });
    const { host, store } = setup(
      (step) => (step.round === 0 ? { toolCalls: [{ id: 'slow-1', name: 'slow', args: {} }] } : { text: 'finally' }),
      [slow],
    );
    await host.send('c-1', { type: 'user.message', content: 'go' });
    const rejected = await host.send('c-1', { type: 'user.message', content: 'are you there?' }).catch((error: unknown) => error);
    expect(EventRejectedError.isInstance(rejected)).toBe(true);
    expect(rejected).toMatchObject({ code: 'rejected', conversationId: 'c-1', eventType: 'user.message' });
    expect((rejected as Error).message).toMatch(/not accepted while the run is/);
    release.resolve();
    const output = await host.result('c-1');
    expect(output.messages.filter((message) => message.role === 'user')).toHaveLength(1);
    const logged = (await store.readLog('c-1')).filter(({ event }) => event.type === 'user.message');
    expect(logged).toHaveLength(1);
    await host.close();
  });

  it('rejects an empty first message without storing a conversation', async () => {
    const { host, store } = setup();
    await expect(host.send('c-1', { type: 'user.message', content: '  ' })).rejects.toMatchObject({ code: 'rejected' });
    expect(await store.load('c-1')).toBeUndefined();
    expect(await host.get('c-1')).toBeUndefined();
    await host.close();
  });

  it('stores the snapshot at every step that changes it and logs user messages, tool calls, results and the outcome', async () => {
    const recorded = recordingStore();
    const { host, store } = setup(
      (step) =>
        step.round === 0
          ? {
              toolCalls: [
                { id: 'a1', name: 'add', args: { a: 1, b: 2 } },
                { id: 'a2', name: 'add', args: { a: 3, b: 4 } },
              ],
            }
          : { text: 'sums' },
      [add],
      recorded.store,
    );
    await host.send('c-1', { type: 'user.message', content: 'add' });
    await host.result('c-1');
    const values = recorded.saves.map((save) => JSON.stringify(save.value));
    expect(values[0]).toBe('{"requesting":"waiting"}');
    expect(values).toContain('{"executingTools":"running"}');
    expect(values.at(-1)).toBe('"done"');
    // Entering executingTools stores both calls running (before either executes); each result is stored.
    const rounds = recorded.saves.map((save) => save.round?.join(' '));
    expect(rounds).toContain('a1:running a2:running');
    expect(recorded.saves.map((save) => save.revision)).toEqual(recorded.saves.map((_, index) => index + 1));
    expect((await store.readLog('c-1')).map(({ event }) => event.type)).toEqual([
      'user.message',
      'tool.call',
      'tool.call',
      'tool.result',
      'tool.result',
      'run.ended',
    ]);
    const ended = (await store.readLog('c-1')).at(-1)?.event;
    expect(ended).toMatchObject({ type: 'run.ended', status: 'done', text: 'sums', iterations: 1 });
    expect(ended).not.toHaveProperty('messages');
    await host.close();
  });

  it('runs no tool before the snapshot in which its call runs is stored (write-ahead)', async () => {
    const recorded = recordingStore();
    const order: string[] = [];
    const charge = defineTool({
      name: 'charge',
      parameters: z.object({}),
      execute: () => {
        order.push(`executed with ${recorded.saves.filter((save) => save.round?.includes('c1:running')).length} stored`);
        return 'charged';
      },
    });
    const { host } = setup(
      (step) => (step.round === 0 ? { toolCalls: [{ id: 'c1', name: 'charge', args: {} }] } : { text: 'ok' }),
      [charge],
      recorded.store,
    );
    const gate = deferred();
    await host.send('c-1', { type: 'user.message', content: 'charge' });
    recorded.holdSaves(gate.promise);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(order).toEqual([]);
    recorded.holdSaves(undefined);
    gate.resolve();
    await host.result('c-1');
    expect(order).toEqual(['executed with 1 stored']);
    await host.close();
  });

  it('publishes emitted events and state changes to subscribers; unsubscribing stops them, not the run', async () => {
    const { host } = setup();
    const events: ConversationHostEvent[] = [];
    const stop = host.subscribe('c-1', (event) => events.push(event));
    const other: ConversationHostEvent[] = [];
    const stopOther = host.subscribe('c-2', (event) => other.push(event));
    await host.send('c-1', { type: 'user.message', content: 'hello' });
    await host.result('c-1');
    const states = events.filter((event) => event.type === 'state');
    expect(states.map(({ type, value, status }) => ({ type, value, status }))).toEqual([
      { type: 'state', value: { requesting: 'waiting' }, status: 'running' },
      { type: 'state', value: { executingTools: 'running' }, status: 'running' },
      { type: 'state', value: { requesting: 'waiting' }, status: 'running' },
      { type: 'state', value: 'done', status: 'done' },
    ]);
    expect(events.map((event) => event.type)).toEqual(
      expect.arrayContaining(['request.started', 'text.delta', 'tool.call', 'tool.result', 'usage']),
    );
    // Each state carries the history at that state; the last one the run's output.
    expect(states.map((state) => state.messages.length)).toEqual([1, 2, 3, 4]);
    expect(states.map((state) => state.output?.text)).toEqual([undefined, undefined, undefined, 'answer 1']);
    expect(states.at(-1)?.output).toEqual(await host.result('c-1'));
    expect(other).toEqual([]);
    stop();
    stopOther();
    await host.send('c-1', { type: 'user.message', content: 'again' });
    expect((await host.result('c-1')).text).toBe('answer 2');
    expect(events.filter((event) => event.type === 'state')).toHaveLength(4);
    await host.close();
  });

  it('subscribeAll gets every conversation’s events with its id, those started later too; list() lists what is stored', async () => {
    const { host } = setup();
    const seen: Array<[string, string]> = [];
    const stop = host.subscribeAll((event, id) => {
      if (event.type === 'state') seen.push([id, event.status]);
    });
    await host.send('c-1', { type: 'user.message', content: 'one' });
    await host.result('c-1');
    await host.send('c-2', { type: 'user.message', content: 'two' });
    await host.result('c-2');
    expect(seen.filter(([id]) => id === 'c-1').map(([, status]) => status)).toEqual(['running', 'running', 'running', 'done']);
    expect(seen.filter(([id]) => id === 'c-2').map(([, status]) => status)).toEqual(['running', 'running', 'running', 'done']);
    expect((await host.list()).map(({ id, status }) => ({ id, status }))).toEqual([
      { id: 'c-1', status: 'done' },
      { id: 'c-2', status: 'done' },
    ]);
    expect(await host.list({ after: 'c-1' })).toHaveLength(1);
    expect(host.machine.id).toBe('conversation');
    stop();
    const count = seen.length;
    await host.send('c-3', { type: 'user.message', content: 'three' });
    await host.result('c-3');
    expect(seen).toHaveLength(count);
    expect(() => host.subscribeAll('nope' as never)).toThrow(/listener: expected a function \(event, conversationId\) => void/);
    await host.close();
    await expect(host.list()).rejects.toSatisfy(HostClosedError.isInstance);
  });

  it('a subscriber that throws is reported to onError and harms neither the run nor other subscribers', async () => {
    const model = plannedModel(oneRound);
    const reported: unknown[] = [];
    const host = createConversationHost({
      machine: createConversationMachine({ provider: handlerProvider(model.handler), tools: [add] }),
      store: memoryStore(),
      onError: (error) => reported.push(error),
    });
    const seen: string[] = [];
    host.subscribe('c-1', () => {
      throw new Error('listener bug');
    });
    host.subscribe('c-1', (event) => seen.push(event.type));
    await host.send('c-1', { type: 'user.message', content: 'hello' });
    expect(await host.result('c-1')).toMatchObject({ status: 'done' });
    expect(reported.length).toBeGreaterThan(0);
    expect(seen).toContain('tool.result');
    await host.close();
  });

  it('applies events to one conversation one at a time and runs different conversations at once', async () => {
    // Conversation a's tool finishes only once b's tool has started: were conversations run one
    // after the other, neither would finish.
    const bStarted = deferred();
    const aStarted = deferred();
    const meet = defineTool({
      name: 'meet',
      parameters: z.object({ who: z.string() }),
      execute: async ({ who }) => {
        if (who === 'a') {
          aStarted.resolve();
          await bStarted.promise;
        } else {
          bStarted.resolve();
          await aStarted.promise;
        }
        return `${who} met`;
      },
    });
    const { host } = setup(
      (step) =>
        step.round === 0
          ? { toolCalls: [{ id: `m-${step.conversation}`, name: 'meet', args: { who: step.conversation } }] }
          : { text: 'met' },
      [meet],
    );
    await Promise.all([host.send('a', { type: 'user.message', content: 'a' }), host.send('b', { type: 'user.message', content: 'b' })]);
    const [a, b] = await Promise.all([host.result('a'), host.result('b')]);
    expect([a.text, b.text]).toEqual(['met', 'met']);
    await host.close();
  });
});

describe('approvals', () => {
  const transfer = defineTool({
    name: 'transfer',
    parameters: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: ({ amount }) => `sent ${amount}`,
  });
  const plan = (step: PlanStep): ScriptedTurn =>
    step.round === 0
      ? {
          toolCalls: [
            { id: 't1', name: 'transfer', args: { amount: 5 } },
            { id: 't2', name: 'transfer', args: { amount: 500 } },
          ],
        }
      : { text: 'transfers handled' };

  it('stores a run waiting for approval, lets go of it in memory, and continues it when the approvals arrive', async () => {
    const recorded = recordingStore();
    const { host } = setup(plan, [transfer], recorded.store);
    const view = await host.send('c-1', { type: 'user.message', content: 'pay' });
    expect(view.status).toBe('running');
    await expect.poll(async () => (await host.get('c-1'))?.status).toBe('awaitingApproval');
    expect((await host.get('c-1'))?.pendingApprovals).toEqual([
      { toolCallId: 't1', name: 'transfer', args: { amount: 5 } },
      { toolCallId: 't2', name: 'transfer', args: { amount: 500 } },
    ]);
    // Not held in memory: reading it goes to the store.
    const loads = recorded.loads();
    await host.get('c-1');
    expect(recorded.loads()).toBe(loads + 1);
    // Sent together, applied one after the other.
    const [first, second] = await Promise.all([
      host.send('c-1', { type: 'tool.approve', toolCallId: 't1' }),
      host.send('c-1', { type: 'tool.deny', toolCallId: 't2', reason: 'too much' }),
    ]);
    expect(first.pendingApprovals).toEqual([{ toolCallId: 't2', name: 'transfer', args: { amount: 500 } }]);
    expect(second.status).toBe('running');
    const output = await host.result('c-1');
    expect(output.messages[2]).toMatchObject({
      content: [
        { toolCallId: 't1', result: 'sent 5' },
        { toolCallId: 't2', result: 'denied by user: too much', isError: true },
      ],
    });
    await expect(host.send('c-1', { type: 'tool.approve', toolCallId: 't1' })).rejects.toMatchObject({
      code: 'rejected',
      message: expect.stringContaining('the last run ended (done)'),
    });
    await host.close();
  });

  it('two hosts approving the same waiting run: one wins, the other gets a conflict, the tool runs once', async () => {
    let runs = 0;
    const once = defineTool({
      name: 'transfer',
      parameters: z.object({ amount: z.number() }),
      needsApproval: true,
      execute: ({ amount }) => {
        runs++;
        return `sent ${amount}`;
      },
    });
    const shared = memoryStore();
    const single = (step: PlanStep): ScriptedTurn =>
      step.round === 0 ? { toolCalls: [{ id: 't1', name: 'transfer', args: { amount: 5 } }] } : { text: 'sent' };
    const one = setup(single, [once], { ...shared, close: async () => undefined });
    const two = setup(single, [once], { ...shared, close: async () => undefined });
    await one.host.send('c-1', { type: 'user.message', content: 'pay' });
    await expect.poll(async () => (await one.host.get('c-1'))?.status).toBe('awaitingApproval');
    const outcomes = await Promise.allSettled([
      one.host.send('c-1', { type: 'tool.approve', toolCallId: 't1' }),
      two.host.send('c-1', { type: 'tool.approve', toolCallId: 't1' }),
    ]);
    const rejected = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(rejected).toHaveLength(1);
    expect(ConversationConflictError.isInstance((rejected[0] as PromiseRejectedResult).reason)).toBe(true);
    const winner = outcomes[0]?.status === 'fulfilled' ? one.host : two.host;
    expect(await winner.result('c-1')).toMatchObject({ status: 'done' });
    expect(runs).toBe(1);
    await one.host.close();
    await two.host.close();
  });
});

describe('failures and recovery in one process', () => {
  it('a failed write stops the run in this host, tells subscribers and result waiters, and a new host recovers it', async () => {
    const recorded = recordingStore();
    const release = deferred();
    const wait = defineTool({
      name: 'wait',
      idempotent: true,
      parameters: z.object({}),
      execute: async () => {
        await release.promise;
        return 'waited';
      },
    });
    const plan = (step: PlanStep): ScriptedTurn =>
      step.round === 0 ? { toolCalls: [{ id: 'w1', name: 'wait', args: {} }] } : { text: 'after the wait' };
    const reported: unknown[] = [];
    const model = plannedModel(plan);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools: [wait] });
    const host = createConversationHost({ machine, store: recorded.store, onError: (error) => reported.push(error) });
    const events: ConversationHostEvent[] = [];
    host.subscribe('c-1', (event) => events.push(event));
    await host.send('c-1', { type: 'user.message', content: 'wait' });
    await expect.poll(() => recorded.saves.some((save) => save.round?.includes('w1:running'))).toBe(true);
    const waiting = host.result('c-1');
    recorded.failNextSave(new Error('disk full'));
    release.resolve();
    await expect(waiting).rejects.toThrow('disk full');
    expect(events.at(-1)).toEqual({ type: 'write.failed', error: { name: 'Error', message: 'disk full' } });
    // The result waiter got it; nobody else waited.
    expect(reported).toEqual([]);
    // The store still says the call runs; a new host resumes from there.
    expect((await recorded.store.load('c-1'))?.status).toBe('running');
    await expect(host.send('c-1', { type: 'cancel' })).rejects.toMatchObject({ code: 'busy' });
    const next = createConversationHost({ machine, store: { ...recorded.store, close: async () => undefined } });
    expect(await next.recover()).toEqual({ resumed: ['c-1'], skipped: [], failed: [] });
    expect(await next.result('c-1')).toMatchObject({ status: 'done', text: 'after the wait' });
    expect(await next.recover()).toEqual({ resumed: [], skipped: [], failed: [] });
    await next.close();
    await host.close();
  });

  it('close() stops runs without writing; the next recover() resumes them, an interrupted non-idempotent call is not run again', async () => {
    const shared = memoryStore();
    let runs = 0;
    const hang = defineTool({
      name: 'charge',
      parameters: z.object({}),
      execute: () => {
        runs++;
        return new Promise<never>(() => undefined);
      },
    });
    const plan = (step: PlanStep): ScriptedTurn =>
      step.round === 0 ? { toolCalls: [{ id: 'c1', name: 'charge', args: {} }] } : { text: 'told' };
    const first = setup(plan, [hang], { ...shared, close: async () => undefined });
    await first.host.send('c-1', { type: 'user.message', content: 'charge' });
    await expect.poll(() => runs).toBe(1);
    const pending = first.host.result('c-1');
    await first.host.close();
    await expect(pending).rejects.toSatisfy(HostClosedError.isInstance);
    await expect(first.host.get('c-1')).rejects.toSatisfy(HostClosedError.isInstance);
    const second = setup(plan, [hang], shared);
    const events: ConversationHostEvent[] = [];
    second.host.subscribe('c-1', (event) => events.push(event));
    expect((await second.host.recover()).resumed).toEqual(['c-1']);
    const output = await second.host.result('c-1');
    expect(runs).toBe(1);
    expect(output.messages[2]).toMatchObject({ content: [{ toolCallId: 'c1', result: resultTexts.interrupted, isError: true }] });
    expect(events).toContainEqual({
      type: 'tool.result',
      toolCallId: 'c1',
      name: 'charge',
      result: resultTexts.interrupted,
      isError: true,
    });
    const logged = (await shared.readLog('c-1')).map(({ event }) => event);
    expect(logged.filter((event) => event.type === 'tool.result')).toEqual([
      { type: 'tool.result', toolCallId: 'c1', name: 'charge', result: resultTexts.interrupted, isError: true },
    ]);
    await second.host.close();
  });
});

describe('bad input', () => {
  it('names what was wrong: id, event, sessionData, options', async () => {
    const { host } = setup();
    const invalid = async (promise: Promise<unknown>, option: string) => {
      const error = await promise.catch((caught: unknown) => caught);
      expect(InvalidOptionsError.isInstance(error), String(error)).toBe(true);
      expect(error).toMatchObject({ option });
    };
    await invalid(host.send('', { type: 'user.message', content: 'x' }), 'id');
    await invalid(host.send(42 as never, { type: 'user.message', content: 'x' }), 'id');
    await invalid(host.send('c', { type: 'user.mesage' } as never), 'event');
    await invalid(host.send('c', { type: 'tool.approve' } as never), 'event.toolCallId');
    await invalid(host.send('c', { type: 'user.message', content: 'x' }, { sessionData: { db: new Map() } }), 'sessionData');
    await expect(host.send('c', { type: 'tool.approve', toolCallId: 'x' })).rejects.toSatisfy(ConversationNotFoundError.isInstance);
    await expect(host.result('nothing')).rejects.toSatisfy(ConversationNotFoundError.isInstance);
    expect(() => host.subscribe('c', 'not a function' as never)).toThrow(InvalidOptionsError);
    expect(() => createConversationHost({ machine: {} as never, store: memoryStore() })).toThrow(/machine/);
    expect(() => createConversationHost({ machine: setup().machine, store: {} as never })).toThrow(/store\.load/);
    await host.close();
  });

  it.each<[string, () => unknown, string]>([
    ['options', () => null, 'Invalid option options: expected an object { machine, store }, got null'],
    [
      'machine',
      () => ({ machine: { restoreSnapshot() {} }, store: memoryStore() }),
      'Invalid option machine: expected a conversation machine from createConversationMachine(...), or a state machine of yours (a workflow), got an object',
    ],
    [
      'store.load',
      () => ({ machine: setup().machine, store: 'memory' }),
      'Invalid option store.load: expected a ConversationStore (e.g. memoryStore() or sqliteStore({ path })), got "memory"',
    ],
    [
      'store.delete',
      () => ({ machine: setup().machine, store: { ...memoryStore(), delete: 1 } }),
      'Invalid option store.delete: expected a ConversationStore (e.g. memoryStore() or sqliteStore({ path })), got 1',
    ],
    [
      'hostId',
      () => ({ machine: setup().machine, store: memoryStore(), hostId: '' }),
      'Invalid option hostId: expected a non-empty string, got ""',
    ],
    [
      'onError',
      () => ({ machine: setup().machine, store: memoryStore(), onError: 'log' }),
      'Invalid option onError: expected a function (error, conversationId) => void, got "log"',
    ],
  ])('createConversationHost names a bad option %s with what it expected and got', (option, options, message) => {
    const error = (() => {
      try {
        createConversationHost(options() as never);
      } catch (caught) {
        return caught;
      }
    })();
    expect(InvalidOptionsError.isInstance(error), String(error)).toBe(true);
    expect(error).toMatchObject({ option, message });
  });

  it('send names bad options with what it expected and got', async () => {
    const { host } = setup();
    for (const [options, option, message] of [
      ['fast', 'options', 'Invalid option options: expected an object { sessionData? }, got "fast"'],
      [
        { sessionData: 1n },
        'sessionData',
        'Invalid option sessionData: expected plain JSON (null, boolean, number, string, array or plain object), got a bigint, got 1',
      ],
    ] as const) {
      const error = await host.send('c', { type: 'user.message', content: 'x' }, options as never).catch((caught: unknown) => caught);
      expect(InvalidOptionsError.isInstance(error), String(error)).toBe(true);
      expect(error).toMatchObject({ option, message });
    }
    expect(await host.get('c')).toBeUndefined();
    await host.close();
  });

  it('keeps the hostId and onError defaults for absent and null values', async () => {
    const { machine } = setup();
    const absent = createConversationHost({ machine, store: memoryStore() });
    const nulls = createConversationHost({ machine, store: memoryStore(), hostId: null as never, onError: null as never });
    expect(absent.hostId).toMatch(/^.+:\d+:[0-9a-f]{8}$/);
    expect(nulls.hostId).toMatch(/^.+:\d+:[0-9a-f]{8}$/);
    await absent.close();
    await nulls.close();
  });
});

describe.each([
  ['memoryStore', () => memoryStore()],
  ['sqliteStore', () => sqliteStore({ path: join(mkdtempSync(join(tmpdir(), 'actorloop-host-')), 'bad.db') })],
] as const)('bad stored data (%s)', (_name, createStore) => {
  it('corrupt, foreign and unknown-version conversations get an error naming them and the problem; nothing is written; others go on', async () => {
    const store = createStore();
    const { host } = setup(oneRound, [add], store);
    // A good conversation, finished, and one left running by a "crashed" host.
    await host.send('good', { type: 'user.message', content: 'good' });
    await host.result('good');
    const good = (await store.load('good'))!;
    // Stored as running, but its snapshot says the run ended: nothing to resume.
    await store.save({ ...good, id: 'in-flight', revision: 1, status: 'running' });
    const runningSnapshot = JSON.parse(good.snapshot) as Record<string, unknown>;
    await store.save({
      ...good,
      id: 'resumable',
      revision: 1,
      status: 'running',
      snapshot: JSON.stringify({
        ...runningSnapshot,
        status: 'active',
        value: { requesting: 'waiting' },
        output: undefined,
        context: { ...(runningSnapshot.context as object), status: null, messages: [{ role: 'user', content: 'resumable' }] },
      }),
    });
    const bad: Array<[string, Partial<StoredConversation>, string, RegExp]> = [
      ['not-json', { snapshot: '{"value": "done", "context": {' }, 'corrupt', /not valid JSON/],
      [
        'bad-history',
        { snapshot: JSON.stringify({ ...runningSnapshot, context: { ...(runningSnapshot.context as object), messages: [42] } }) },
        'corrupt',
        /context\.messages\[0\]: expected a message object, got number 42/,
      ],
      [
        'toggle',
        { snapshot: JSON.stringify({ status: 'active', value: 'inactive', context: { count: 1 }, children: {} }) },
        'other_machine',
        /"inactive" is not a state of machine "conversation"/,
      ],
      ['other-id', { machineId: 'checkout' }, 'other_machine', /written for machine "checkout"/],
      [
        'future',
        { schemaVersion: 6 },
        'unknown_version',
        /schemaVersion 6; this actorloop reads versions 1 to 5 \(a newer actorloop wrote it: upgrade actorloop/,
      ],
    ];
    for (const [id, change] of bad) await store.save({ ...good, id, revision: 1, status: 'running', ...change });
    const before = new Map<string, unknown>();
    for (const [id] of bad) before.set(id, await store.load(id));

    for (const [id, , problem, message] of bad) {
      for (const attempt of [
        () => host.get(id),
        () => host.result(id),
        () => host.send(id, { type: 'user.message', content: 'hello?' }),
        () => host.send(id, { type: 'tool.approve', toolCallId: 'x' }),
      ]) {
        const error = await attempt().catch((caught: unknown) => caught);
        expect(ConversationLoadError.isInstance(error), `${id}: ${String(error)}`).toBe(true);
        expect(error).toMatchObject({ conversationId: id, problem });
        expect((error as Error).message).toMatch(message);
        expect((error as Error).message).toContain(JSON.stringify(id));
      }
    }
    const report = await host.recover();
    expect(report.failed.map((failure) => failure.id).sort()).toEqual(bad.map(([id]) => id).sort());
    expect(report.resumed).toEqual(['resumable']);
    expect(report.skipped).toEqual(['in-flight']);
    expect(await host.result('resumable')).toMatchObject({ status: 'done', text: 'answer 1' });
    for (const [id] of bad) expect(await store.load(id), id).toEqual(before.get(id));
    // Other conversations go on.
    await host.send('good', { type: 'user.message', content: 'again' });
    expect(await host.result('good')).toMatchObject({ status: 'done', text: 'answer 2' });
    expect((await host.send('fresh', { type: 'user.message', content: 'fresh' })).status).toBe('running');
    await host.result('fresh');
    await host.close();
  });
});
