/**
 * Hosts on the Postgres store: the lease per conversation (one host runs it, the others answer
 * busy and leave it to recover(); a host that loses the lease stops before it writes), a
 * connection cut during a host's write, and the relay: a reader on one host follows a conversation
 * another host runs, and one that reconnects there gets exactly what it missed.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type ConversationHostEvent,
  type ConversationStreamItem,
  ConversationLeaseLostError,
  createConversationHost,
  createConversationMachine,
  defineTool,
  EventRejectedError,
  handlerProvider,
} from '../src/index.js';
import { type PostgresPool, PostgresStoreError, postgresRelay, postgresStore } from '../src/stores/postgres/index.js';
import { postgresUrl, queryOnce, testPool, testSchema } from './support/postgres.js';
import { orderWorkflow } from './support/hosted-workflow.js';
import { deferred } from './support/run-conversation.js';
import { gatedAnswer, gatedText, type ScriptedTurn, scriptedModel } from './support/scripted-model.js';

const schema = testSchema('postgres_host');
afterAll(() => schema.drop());
let prefixes = 0;

/** Two stores on the same new tables, as two processes would have. */
function sharedTables() {
  const tablePrefix = `h${++prefixes}_`;
  const table = (name: string) => `"${schema.name}"."${tablePrefix}${name}"`;
  return { prefix: tablePrefix, store: () => postgresStore({ connectionString: postgresUrl, schema: schema.name, tablePrefix }), table };
}

/** A tool that waits for its gate, and counts its runs. */
function gatedTool() {
  const started = deferred();
  const gate = deferred();
  const runs: string[] = [];
  const tool = defineTool({
    name: 'work',
    parameters: z.object({ job: z.string() }),
    execute: async ({ job }) => {
      runs.push(job);
      started.resolve();
      await gate.promise;
      return `did ${job}`;
    },
  });
  return { tool, started: started.promise, open: gate.resolve, runs };
}

const toolTurns = (): ScriptedTurn[] => [{ toolCalls: [{ id: 'call-1', name: 'work', args: { job: 'one' } }] }, { text: 'All done.' }];

function hostOn(store: ReturnType<typeof postgresStore>, turns: ScriptedTurn[], tools: ReturnType<typeof gatedTool>['tool'][], extra = {}) {
  const model = scriptedModel(turns);
  const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools });
  const errors: unknown[] = [];
  const host = createConversationHost({ machine, store, onError: (error) => errors.push(error), ...extra });
  return { host, errors };
}

async function until(check: () => boolean | Promise<boolean>) {
  for (let attempt = 0; attempt < 1_000; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(await check()).toBe(true);
}

const logTypes = async (store: ReturnType<typeof postgresStore>, id: string) => (await store.readLog(id)).map(({ event }) => event.type);

describe('hosts on one Postgres database: a lease per conversation', () => {
  it('the host holding the lease runs the conversation; another answers busy and leaves it to recover(); once let go, any host takes the next event', async () => {
    const tables = sharedTables();
    const work = gatedTool();
    const a = hostOn(tables.store(), toolTurns(), [work.tool], { hostId: 'host-a' });
    const b = hostOn(tables.store(), [{ text: 'Second answer.' }], [work.tool], { hostId: 'host-b' });
    await a.host.send('c1', { type: 'user.message', content: 'do one' });
    await work.started;
    const busy = await b.host.send('c1', { type: 'user.message', content: 'me too' }).catch((caught: unknown) => caught);
    expect(EventRejectedError.isInstance(busy), String(busy)).toBe(true);
    expect(busy).toMatchObject({ code: 'busy', conversationId: 'c1' });
    expect((busy as Error).message).toContain('another host holds its lease');
    expect(await b.host.recover()).toEqual({ resumed: [], skipped: ['c1'], failed: [] });
    expect(await queryOnce(`SELECT owner FROM ${tables.table('leases')}`)).toEqual([{ owner: 'host-a' }]);
    work.open();
    expect(await a.host.result('c1')).toMatchObject({ status: 'done', text: 'All done.' });
    // Let go: the lease is given up at once, not left to lapse.
    await until(async () => (await queryOnce(`SELECT 1 FROM ${tables.table('leases')}`)).length === 0);
    await b.host.send('c1', { type: 'user.message', content: 'and again' });
    expect(await b.host.result('c1')).toMatchObject({ status: 'done', text: 'Second answer.' });
    const store = tables.store();
    expect(await logTypes(store, 'c1')).toEqual(['user.message', 'tool.call', 'tool.result', 'run.ended', 'user.message', 'run.ended']);
    expect(await store.load('c1')).toMatchObject({ owner: 'host-b', status: 'done' });
    expect(work.runs).toEqual(['one']);
    await Promise.all([a.host.close(), b.host.close(), store.close()]);
    expect([...a.errors, ...b.errors]).toEqual([]);
  });

  it.each([
    ['its renewal finds the lease taken', 300],
    ['the store refuses its next write', 60_000],
  ])('a host that lost its lease stops its run before it writes again (%s): write.failed, nothing written', async (_how, leaseTtlMs) => {
    const tables = sharedTables();
    const work = gatedTool();
    const store = tables.store();
    const a = hostOn(store, toolTurns(), [work.tool], { hostId: 'host-a', leaseTtlMs });
    const events: ConversationHostEvent[] = [];
    a.host.subscribe('c1', (event) => events.push(event));
    await a.host.send('c1', { type: 'user.message', content: 'do one' });
    await work.started;
    const result = a.host.result('c1').catch((caught: unknown) => caught);
    const before = await store.load('c1');
    // Another host takes the conversation over (as after the lease lapsed while this one was paused).
    await queryOnce(
      `UPDATE ${tables.table('leases')} SET owner = 'host-b', token = nextval('${tables.table('lease_tokens')}'), expires_at = now() + interval '1 hour'`,
    );
    if (leaseTtlMs < 1_000) await until(() => events.some(({ type }) => type === 'write.failed'));
    work.open();
    const error = await result;
    expect(ConversationLeaseLostError.isInstance(error), String(error)).toBe(true);
    await until(() => events.some(({ type }) => type === 'write.failed'));
    expect(events.find(({ type }) => type === 'write.failed')).toMatchObject({ error: { name: 'ConversationLeaseLostError' } });
    // Stored as it was before the takeover: no tool result of the host that lost the lease.
    expect(await store.load('c1')).toEqual(before);
    expect(await logTypes(store, 'c1')).toEqual(['user.message', 'tool.call']);
    // The new holder's lease is untouched by the one that lost it.
    expect(await queryOnce(`SELECT owner FROM ${tables.table('leases')}`)).toEqual([{ owner: 'host-b' }]);
    await a.host.close();
  });

  it('a connection cut while the host writes: the write is made again, once; snapshot and log agree', async () => {
    const tables = sharedTables();
    const work = gatedTool();
    const store = tables.store();
    const a = hostOn(store, toolTurns(), [work.tool]);
    await a.host.send('c1', { type: 'user.message', content: 'do one' });
    await work.started;
    // Hold the conversation's row, so the write of the tool's result waits in the database; cut it there.
    const blocker = await import('pg').then(({ default: pg }) => new pg.Client({ connectionString: postgresUrl }));
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query(`SELECT 1 FROM ${tables.table('conversations')} WHERE id = 'c1' FOR UPDATE`);
    work.open();
    let pid: number | undefined;
    await until(async () => {
      const rows = await queryOnce<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'WITH lease AS%' AND query LIKE $1`,
        [`%${tables.table('conversations')}%`],
      );
      pid = rows[0]?.pid;
      return pid !== undefined;
    });
    await queryOnce('SELECT pg_terminate_backend($1)', [pid]);
    await blocker.query('ROLLBACK');
    await blocker.end();
    const output = await a.host.result('c1');
    expect(output).toMatchObject({ status: 'done', text: 'All done.' });
    expect(await logTypes(store, 'c1')).toEqual(['user.message', 'tool.call', 'tool.result', 'run.ended']);
    const stored = JSON.parse((await store.load('c1'))!.snapshot) as { context: { messages: Array<{ role: string }> } };
    expect(stored.context.messages.map(({ role }) => role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(work.runs).toEqual(['one']);
    await a.host.close();
    expect(a.errors).toEqual([]);
  });

  it('a database that stays away while the host writes: the run stops visibly (write.failed), nothing half written; another host resumes it', async () => {
    const tables = sharedTables();
    const work = gatedTool();
    const pool = testPool();
    let failing = false;
    // The saves fail as if the server were gone; everything else goes through.
    const flaky: PostgresPool = {
      connect: () => pool.connect(),
      end: () => pool.end(),
      query: (statement, values) =>
        failing && (typeof statement === 'string' ? statement : statement.text).startsWith('WITH lease AS')
          ? Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))
          : pool.query(statement, values),
    };
    const store = postgresStore({ pool: flaky, schema: schema.name, tablePrefix: tables.prefix });
    const a = hostOn(store, toolTurns(), [work.tool], { hostId: 'host-a' });
    const events: ConversationHostEvent[] = [];
    a.host.subscribe('c1', (event) => events.push(event));
    await a.host.send('c1', { type: 'user.message', content: 'do one' });
    await work.started;
    const result = a.host.result('c1').catch((caught: unknown) => caught);
    failing = true;
    work.open();
    const error = await result;
    expect(PostgresStoreError.isInstance(error), String(error)).toBe(true);
    expect(error).toMatchObject({ code: 'connection', operation: 'save', conversationId: 'c1' });
    expect(events.filter(({ type }) => type === 'write.failed')).toEqual([
      { type: 'write.failed', error: { name: 'PostgresStoreError', message: expect.stringContaining('the database connection failed') } },
    ]);
    // Snapshot and log agree: the call is stored as running, its result nowhere.
    const reader = tables.store();
    expect(await logTypes(reader, 'c1')).toEqual(['user.message', 'tool.call']);
    const stored = await reader.load('c1');
    const messages = (JSON.parse(stored!.snapshot) as { context: { messages: Array<{ role: string }> } }).context.messages;
    expect({ status: stored!.status, roles: messages.map(({ role }) => role) }).toEqual({
      status: 'running',
      roles: ['user', 'assistant'],
    });
    // The lease was given up with the run: another host resumes it at once.
    failing = false;
    const b = hostOn(tables.store(), [{ text: 'Resumed.' }], [work.tool], { hostId: 'host-b' });
    expect(await b.host.recover()).toEqual({ resumed: ['c1'], skipped: [], failed: [] });
    expect(await b.host.result('c1')).toMatchObject({ status: 'done', text: 'Resumed.' });
    expect(await logTypes(reader, 'c1')).toEqual(['user.message', 'tool.call', 'tool.result', 'run.ended']);
    expect(work.runs).toEqual(['one']);
    await Promise.all([a.host.close(), b.host.close(), reader.close()]);
    await pool.end().catch(() => undefined);
  });
});

const answer = gatedText;

const textOf = (items: readonly ConversationStreamItem[]) =>
  items.map(({ event }) => (event.type === 'text.delta' ? event.delta : '')).join('');

describe('hosts on one Postgres database: the relay', () => {
  it('a reader on host B sees the text host A streams, live; one that reconnects to B with the last id it saw gets exactly what it missed', async () => {
    const tables = sharedTables();
    const gate = deferred();
    const reached = deferred();
    const relay = () => postgresRelay({ connectionString: postgresUrl, channel: `test_host_relay_${prefixes}` });
    const relayA = relay();
    const relayB = relay();
    await Promise.all([relayA.whenListening(), relayB.whenListening()]);
    const a = hostOn(tables.store(), [gatedAnswer(gate.promise, reached.resolve)], [], { relay: relayA });
    const b = hostOn(tables.store(), [], [], { relay: relayB });
    // A reader that stays, and one that drops after the second delta and comes back.
    const whole: ConversationStreamItem[] = [];
    b.host.follow('c1', { next: (item) => whole.push(item) });
    const before: ConversationStreamItem[] = [];
    const stop = b.host.follow('c1', {
      next: (item) => {
        before.push(item);
        if (before.filter(({ event }) => event.type === 'text.delta').length === 2) stop();
      },
    });
    await a.host.send('c1', { type: 'user.message', content: 'say it' });
    await reached.promise;
    // Live: the first twenty characters reached B while A's run is still answering (nothing of it stored yet).
    await until(() => textOf(whole) === answer.slice(0, 20));
    expect(await a.host.get('c1')).toMatchObject({ status: 'running' });
    const after: ConversationStreamItem[] = [];
    b.host.follow('c1', { next: (item) => after.push(item) }, { after: before.at(-1)!.id });
    gate.resolve();
    await a.host.result('c1');
    await until(() => whole.some(({ event }) => event.type === 'state' && event.status === 'done'));
    await until(() => after.length === whole.length - before.length);
    expect(textOf(whole)).toBe(answer);
    expect([...before, ...after]).toEqual(whole);
    await Promise.all([a.host.close(), b.host.close()]);
    expect([...a.errors, ...b.errors]).toEqual([]);
  });
});

describe('hosts on one Postgres database: a workflow', () => {
  it('one host runs it; another answers busy and skips it in recover(); once the lease lapses, recover() there takes it over, the first stops before it writes, nothing runs twice', async () => {
    const tables = sharedTables();
    const first = orderWorkflow();
    const second = orderWorkflow();
    first.probe.hold.add('right');
    const errors: unknown[] = [];
    // Host A's process stops answering (paused, or gone): its lease renewals no longer get through.
    let paused = false;
    const storeOfA = new Proxy(tables.store(), {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        // Read when called, not when taken: the host keeps the methods it takes.
        if (property === 'renewLease')
          return async (...args: unknown[]) => (paused ? Promise.reject(new Error('host A is paused')) : value.apply(target, args));
        return value.bind(target);
      },
    });
    const a = createConversationHost({
      machine: first.machine,
      store: storeOfA,
      hostId: 'host-a',
      leaseTtlMs: 300,
      onError: (error) => errors.push(error),
    });
    const b = createConversationHost({ machine: second.machine, store: tables.store(), hostId: 'host-b', leaseTtlMs: 300 });
    const aEvents: ConversationHostEvent[] = [];
    a.subscribe('w1', (event) => aEvents.push(event));
    await a.start('w1', { input: { item: 'lamp' } });
    await until(() => first.probe.lookups.length === 2);
    await until(async () => (await a.get('w1'))?.conversations?.length === 1);

    const busy = await b.send('w1', { type: 'order.confirm' }).catch((caught: unknown) => caught);
    expect(busy).toMatchObject({ code: 'busy', conversationId: 'w1' });
    const busyStart = await b.start('w1', { input: { item: 'lamp' } }).catch((caught: unknown) => caught);
    expect(busyStart).toMatchObject({ code: 'busy' });
    expect(await b.recover()).toEqual({ resumed: [], skipped: ['w1'], failed: [] });

    // Host A stops renewing: its lease lapses, B takes the run over, and A stops the run before it writes again.
    paused = true;
    await until(async () => (await b.recover()).resumed.includes('w1'));
    await until(() => aEvents.some(({ type }) => type === 'write.failed'));
    first.probe.release();
    await until(async () => (await b.get('w1'))?.status === 'awaitingApproval');
    await b.send('w1', { type: 'tool.approve', toolCallId: 'charge-1' });
    await until(async () => String((await b.get('w1'))?.value) === 'confirming');
    await b.send('w1', { type: 'order.confirm' });
    expect(await b.result('w1')).toMatchObject({ status: 'done', findings: ['left found', 'right found'], payment: 'paid 89.00' });
    // The lookup cut off on A is not run again on B; the charge ran once.
    expect(second.probe.lookups).toEqual([]);
    expect(first.probe.charges + second.probe.charges).toBe(1);
    const store = tables.store();
    expect(await store.load('w1')).toMatchObject({ owner: 'host-b', status: 'done' });
    await Promise.all([a.close(), b.close(), store.close()]);
    expect(errors.map((error) => (error as Error).name)).toContain('ConversationLeaseLostError');
  });
});
