/**
 * postgresRelay on the machine's PostgreSQL: relays on one database hand each other their items in
 * order (split under the 8000-byte payload limit), never their own; an item too big for a
 * notification is reported, not relayed; a listening connection the server cuts is taken again.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ConversationStreamItem } from '../src/index.js';
import { type PostgresRelay, postgresRelay } from '../src/stores/postgres/index.js';
import { postgresUrl, queryOnce, testPool } from './support/postgres.js';

const newChannel = () => `test_relay_${randomBytes(5).toString('hex')}`;
const delta = (id: string, text: string): ConversationStreamItem => ({ id, event: { type: 'text.delta', delta: text } });

/** What a relay received, by conversation, and a way to wait for a count. */
function recorder(relay: PostgresRelay) {
  const received: Array<[string, string]> = [];
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  relay.subscribe((conversationId, items) => {
    for (const item of items) received.push([conversationId, item.id]);
    for (const waiter of waiting.filter(({ count }) => received.length >= count)) waiter.resolve();
  });
  return {
    received,
    until: (count: number) =>
      received.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ count, resolve })),
  };
}

describe('postgresRelay', () => {
  it('two relays on one database deliver each other’s items in order, split into notifications under the payload limit', async () => {
    const channel = newChannel();
    const errors: unknown[] = [];
    const a = postgresRelay({ connectionString: postgresUrl, channel, onError: (error) => errors.push(error) });
    const b = postgresRelay({ connectionString: postgresUrl, channel, onError: (error) => errors.push(error) });
    const atA = recorder(a);
    const atB = recorder(b);
    await Promise.all([a.whenListening(), b.whenListening()]);
    // 300 items of ~1 KB in one turn (about forty notifications), across two conversations, then more in later turns.
    const sent: Array<[string, string]> = [];
    for (let turn = 0; turn < 3; turn++) {
      for (const conversation of ['c1', 'c2']) {
        const items = Array.from({ length: 50 }, (_, index) => delta(`${turn + 1}.${index + 1}.a`, 'x'.repeat(1_000)));
        a.publish(conversation, items);
        for (const item of items) sent.push([conversation, item.id]);
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    b.publish('c3', [delta('1.1.b', 'from b')]);
    await atB.until(sent.length);
    await atA.until(1);
    expect(atB.received).toEqual(sent);
    // Each relay hears only the other.
    expect(atA.received).toEqual([['c3', '1.1.b']]);
    await Promise.all([a.close(), b.close()]);
    expect(errors).toEqual([]);
  });

  it('a busy publisher: 15,000 turns of one item each, faster than statements go, all relayed in order (the waiting payloads go out together)', async () => {
    const channel = newChannel();
    const errors: unknown[] = [];
    const a = postgresRelay({ connectionString: postgresUrl, channel, onError: (error) => errors.push(error) });
    const b = postgresRelay({ connectionString: postgresUrl, channel, onError: (error) => errors.push(error) });
    const atB = recorder(b);
    await Promise.all([a.whenListening(), b.whenListening()]);
    const sent: Array<[string, string]> = [];
    // Each turn's items are one flush: one statement each, were statements not coalesced, and turns
    // come faster than statements go — past the 10,000 payloads a relay holds, the rest were dropped.
    for (let turn = 1; turn <= 15_000; turn++) {
      const conversation = `c${turn % 7}`;
      a.publish(conversation, [delta(`${turn}.1.a`, 'x')]);
      sent.push([conversation, `${turn}.1.a`]);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await atB.until(sent.length);
    expect(atB.received).toEqual(sent);
    await Promise.all([a.close(), b.close()]);
    expect(errors).toEqual([]);
  });

  it('reports an item too big for one notification and relays the rest', async () => {
    const channel = newChannel();
    const errors: unknown[] = [];
    const a = postgresRelay({ connectionString: postgresUrl, channel, onError: (error) => errors.push(error) });
    const b = postgresRelay({ connectionString: postgresUrl, channel });
    const atB = recorder(b);
    await Promise.all([a.whenListening(), b.whenListening()]);
    a.publish('c1', [delta('1.1.a', 'before'), delta('1.2.a', 'é'.repeat(4_000)), delta('1.3.a', 'after')]);
    await atB.until(2);
    expect(atB.received).toEqual([
      ['c1', '1.1.a'],
      ['c1', '1.3.a'],
    ]);
    expect(errors.map(String)).toEqual([
      expect.stringContaining('item 1.2.a of conversation "c1" is 8055 bytes, too big for one notification: not relayed'),
    ]);
    await Promise.all([a.close(), b.close()]);
  });

  it('listens again after the server cut its listening connection', async () => {
    const channel = newChannel();
    const errors: unknown[] = [];
    const errorsAtA: unknown[] = [];
    const a = postgresRelay({ connectionString: postgresUrl, channel, onError: (error) => errorsAtA.push(error) });
    const b = postgresRelay({ connectionString: postgresUrl, channel, onError: (error) => errors.push(error) });
    const atB = recorder(b);
    await Promise.all([a.whenListening(), b.whenListening()]);
    const listeners = await queryOnce<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE query = $1', [`LISTEN "${channel}"`]);
    expect(listeners).toHaveLength(2);
    a.publish('c1', [delta('1.1.a', 'before')]);
    await atB.until(1);
    // Cut both listening connections (b's is one of them).
    for (const { pid } of listeners) await queryOnce('SELECT pg_terminate_backend($1)', [pid]);
    // Both must have seen the break: a relay that has not yet is still "listening" on its dead
    // connection, and `whenListening()` would not wait for its new one.
    await new Promise<void>((resolve) => {
      const check = () => (errors.length > 0 && errorsAtA.length > 0 ? resolve() : setTimeout(check, 10));
      check();
    });
    expect(String(errors[0])).toContain(`the listening connection on channel "${channel}" broke; connecting again`);
    await Promise.all([a.whenListening(), b.whenListening()]);
    a.publish('c1', [delta('1.2.a', 'after')]);
    await atB.until(2);
    expect(atB.received).toEqual([
      ['c1', '1.1.a'],
      ['c1', '1.2.a'],
    ]);
    const again = await queryOnce<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE query = $1', [`LISTEN "${channel}"`]);
    expect(again).toHaveLength(2);
    expect(again.map(({ pid }) => pid)).not.toContain(listeners[0]!.pid);
    await Promise.all([a.close(), b.close()]);
  });

  it('runs on a pool it is given and leaves it open; closed, it stops listening', async () => {
    const channel = newChannel();
    const pool = testPool();
    const relay = postgresRelay({ pool, channel });
    relay.subscribe(() => undefined);
    await relay.whenListening();
    await relay.close();
    await expect(relay.whenListening()).rejects.toThrow('closed');
    expect(await queryOnce('SELECT pid FROM pg_stat_activity WHERE query = $1', [`LISTEN "${channel}"`])).toEqual([]);
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    // Publishing after close is a no-op, never a throw.
    relay.publish('c1', [delta('1.1.a', 'late')]);
    await pool.end();
  });

  it.each([
    [{}, 'options'],
    [{ connectionString: postgresUrl, channel: 'no spaces' }, 'channel'],
    [{ connectionString: postgresUrl, onError: 'log' }, 'onError'],
  ] as const)('names a bad option: %j', (options, option) => {
    expect(() => postgresRelay(options as never)).toThrow(`Invalid option ${option}`);
  });
});
