/**
 * `host.follow`: a conversation's stream with ids that are the same in every process, replayed from
 * a position out of memory and the store (after a restart too), relayed between hosts.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type ConversationRelay,
  type ConversationStore,
  type ConversationStreamItem,
  createConversationHost,
  createConversationMachine,
  defineTool,
  handlerProvider,
  HostClosedError,
  InvalidOptionsError,
  memoryStore,
} from '../src/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { deferred } from './support/run-conversation.js';
import { gatedAnswer, gatedText, type ScriptedTurn, scriptedModel } from './support/scripted-model.js';

const answer = gatedText;

const lookup = defineTool({ name: 'lookup', parameters: z.object({ q: z.string() }), execute: async ({ q }) => `found ${q}` });

function setup(turns: ScriptedTurn[], store: ConversationStore = memoryStore(), relay?: ConversationRelay) {
  const model = scriptedModel(turns);
  const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools: [lookup] });
  const host = createConversationHost({ machine, store, hostId: `host-${Math.random()}`, ...(relay ? { relay } : {}) });
  return { host, machine, model };
}

function collect() {
  const items: ConversationStreamItem[] = [];
  const errors: unknown[] = [];
  return {
    items,
    errors,
    observer: { next: (item: ConversationStreamItem) => items.push(item), error: (error: unknown) => errors.push(error) },
  };
}

const textOf = (items: readonly ConversationStreamItem[]) =>
  items.map(({ event }) => (event.type === 'text.delta' ? event.delta : '')).join('');

async function until(check: () => boolean) {
  for (let attempt = 0; attempt < 500 && !check(); attempt++) await new Promise((resolve) => setTimeout(resolve, 2));
  expect(check()).toBe(true);
}

describe('host.follow', () => {
  it('follows before the first message, with ids that grow and never repeat, and state changes without the history', async () => {
    const { host } = setup([{ toolCalls: [{ id: 'c1', name: 'lookup', args: { q: 'fox' } }] }, { text: answer }]);
    const reader = collect();
    host.follow('c-1', reader.observer);
    await host.send('c-1', { type: 'user.message', content: 'find the fox' });
    await host.result('c-1');
    const ids = reader.items.map(({ id }) => id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => /^\d+\.\d+\.[a-z0-9]+$/.test(id))).toBe(true);
    const types = reader.items.map(({ event }) => event.type);
    expect(types).toContain('tool.call');
    expect(types).toContain('tool.result');
    expect(textOf(reader.items)).toBe(answer);
    const states = reader.items.flatMap(({ event }) => (event.type === 'state' ? [event] : []));
    expect(states.at(-1)).toMatchObject({ status: 'done', output: { text: answer } });
    for (const state of states) expect(state).not.toHaveProperty('messages');
    expect(states.at(-1)?.output).not.toHaveProperty('messages');
    await host.close();
  });

  it('replays exactly what a reader missed mid-answer, from memory and the store, then goes on live', async () => {
    const gate = deferred();
    const reached = deferred();
    const { host } = setup([gatedAnswer(gate.promise, reached.resolve)]);
    const first = collect();
    const stopFirst = host.follow('c-2', first.observer);
    await host.send('c-2', { type: 'user.message', content: 'say it' });
    await reached.promise;
    await until(() => textOf(first.items).length === 20);
    stopFirst();
    const seen = first.items.at(-1);
    expect(textOf(first.items)).toBe(answer.slice(0, 20));
    const second = collect();
    host.follow('c-2', second.observer, { after: seen?.id as string });
    gate.resolve();
    await host.result('c-2');
    await until(() => second.items.some(({ event }) => event.type === 'state' && event.status === 'done'));
    expect(textOf(first.items) + textOf(second.items)).toBe(answer);
    const ids = [...first.items, ...second.items].map(({ id }) => id);
    expect(new Set(ids).size).toBe(ids.length);
    await host.close();
  });

  it('after a restart, a new host on the same file replays the rest of the last run from the store', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'actorloop-follow-')), 'conversations.db');
    const before = setup([{ text: answer }], sqliteStore({ path }));
    const all = collect();
    before.host.follow('c-3', all.observer);
    await before.host.send('c-3', { type: 'user.message', content: 'say it' });
    await before.host.result('c-3');
    await before.host.close();
    expect(all.errors).toHaveLength(1);
    expect(HostClosedError.isInstance(all.errors[0])).toBe(true);

    const cut = all.items.findIndex(({ event }) => event.type === 'text.delta') + 2;
    const after = setup([], sqliteStore({ path }));
    const resumed = collect();
    after.host.follow('c-3', resumed.observer, { after: all.items[cut - 1]?.id as string });
    await until(() => resumed.items.length === all.items.length - cut);
    expect(resumed.items).toEqual(all.items.slice(cut));

    const whole = collect();
    after.host.follow('c-3', whole.observer, { from: 'run' });
    await until(() => whole.items.length === all.items.length);
    expect(whole.items).toEqual(all.items);
    await after.host.close();
  });

  it("from: 'run' starts at the first event of the run in progress, not the run before", async () => {
    const gate = deferred();
    const reached = deferred();
    const { host } = setup([{ text: 'first run' }, gatedAnswer(gate.promise, reached.resolve)]);
    await host.send('c-4', { type: 'user.message', content: 'one' });
    await host.result('c-4');
    await host.send('c-4', { type: 'user.message', content: 'two' });
    await reached.promise;
    const reader = collect();
    host.follow('c-4', reader.observer, { from: 'run' });
    gate.resolve();
    await host.result('c-4');
    await until(() => reader.items.some(({ event }) => event.type === 'state' && event.status === 'done'));
    expect(textOf(reader.items)).toBe(answer);
    expect(reader.items[0]?.event).toMatchObject({ type: 'request.started' });
    expect(reader.items.filter(({ event }) => event.type === 'request.started')).toHaveLength(1);
    await host.close();
  });

  it('an id the store never kept (its run stopped before the write) gets that write again', async () => {
    const { host } = setup([{ text: answer }]);
    const all = collect();
    host.follow('c-5', all.observer);
    await host.send('c-5', { type: 'user.message', content: 'go' });
    await host.result('c-5');
    const [revision] = String(all.items.at(-1)?.id).split('.');
    const reader = collect();
    host.follow('c-5', reader.observer, { after: `${revision}.1.zzzz` });
    await until(() => reader.items.length > 0);
    expect(reader.items).toEqual(all.items.filter(({ id }) => id.startsWith(`${revision}.`)));
    await host.close();
  });

  it('refuses an after that is not a stream id, and tells a reader once when the store cannot be read', async () => {
    const failing: ConversationStore = {
      ...memoryStore(),
      readStream: async () => {
        throw new Error('disk gone');
      },
    };
    const { host } = setup([], failing);
    expect(() => host.follow('c-6', { next: () => undefined }, { after: 'yesterday' })).toThrow(InvalidOptionsError);
    expect(() => host.follow('c-6', { next: () => undefined }, { after: 'yesterday' })).toThrow(/stream id/);
    expect(() => host.follow('c-6', {} as never)).toThrow(/observer/);
    const reader = collect();
    host.follow('c-6', reader.observer, { from: 'run' });
    await until(() => reader.errors.length === 1);
    expect((reader.errors[0] as Error).message).toBe('disk gone');
    await host.close();
    expect(reader.errors).toHaveLength(1);
  });

  it('a reader that throws is reported and the run goes on', async () => {
    const reported: unknown[] = [];
    const model = scriptedModel([{ text: answer }]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler) });
    const host = createConversationHost({ machine, store: memoryStore(), onError: (error) => reported.push(error) });
    host.follow('c-7', {
      next: () => {
        throw new Error('reader broke');
      },
    });
    await host.send('c-7', { type: 'user.message', content: 'go' });
    expect((await host.result('c-7')).text).toBe(answer);
    expect(reported.length).toBeGreaterThan(0);
    await host.close();
  });

  it('relayed: a reader on another host sees the live answer, and one that reconnects there misses nothing', async () => {
    const listeners = new Set<(id: string, items: readonly ConversationStreamItem[]) => void>();
    const relayOf = (): ConversationRelay => {
      const own = new Set<(id: string, items: readonly ConversationStreamItem[]) => void>();
      return {
        publish: (id, items) => {
          for (const listener of listeners) if (!own.has(listener)) listener(id, JSON.parse(JSON.stringify(items)));
        },
        subscribe: (listener) => {
          own.add(listener);
          listeners.add(listener);
          return () => listeners.delete(listener);
        },
        close: async () => undefined,
      };
    };
    const store = memoryStore();
    const gate = deferred();
    const reached = deferred();
    const writer = setup([gatedAnswer(gate.promise, reached.resolve)], store, relayOf());
    const other = setup([], { ...store, close: async () => undefined }, relayOf());
    const live = collect();
    other.host.follow('c-8', live.observer);
    await writer.host.send('c-8', { type: 'user.message', content: 'go' });
    await reached.promise;
    await until(() => textOf(live.items).length === 20);
    const reconnect = collect();
    other.host.follow('c-8', reconnect.observer, { after: live.items[1]?.id as string });
    gate.resolve();
    await writer.host.result('c-8');
    await until(() => live.items.some(({ event }) => event.type === 'state' && event.status === 'done'));
    await until(() => reconnect.items.length === live.items.length - 2);
    expect(reconnect.items).toEqual(live.items.slice(2));
    expect(textOf(live.items)).toBe(answer);
    await writer.host.close();
    await other.host.close();
  });
});
