/**
 * What only the Postgres store does (the ConversationStore contract itself runs in
 * test/stores.test.ts): its tables created once on first use by processes starting together, tables
 * it must not touch refused, leases with fencing tokens checked inside the write, a connection
 * that breaks in the middle of a save — retried, never written half or twice — and saves made at
 * once going to the database in one statement (group commit), each still refused alone, a
 * conversation's in the order made, a broken batch retried whole.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ConversationConflictError, ConversationLeaseLostError, InvalidOptionsError, type LogAppend } from '../src/index.js';
import { type PostgresPool, type PostgresStore, PostgresStoreError, postgresStore } from '../src/stores/postgres/index.js';
import { postgresUrl, queryOnce, testPool, testSchema } from './support/postgres.js';
import { storedConversation } from './support/stored-conversation.js';

const schema = testSchema('postgres_store');
afterAll(() => schema.drop());
let prefixes = 0;
const newPrefix = () => `p${++prefixes}_`;
const storeOn = (tablePrefix = newPrefix()) => postgresStore({ connectionString: postgresUrl, schema: schema.name, tablePrefix });

const conversation = storedConversation;
const textOf = (statement: string | { text: string }) => (typeof statement === 'string' ? statement : statement.text);
const cancel = (reason: string): LogAppend => ({ at: 1, event: { type: 'cancel', reason } });

/** The backends of this file's stores waiting for a lock, by the statement they run. */
async function waitingBackend(text: string): Promise<number> {
  for (;;) {
    const rows = await queryOnce<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1 AND datname = current_database()`,
      [`%${text}%`],
    );
    if (rows[0]) return rows[0].pid;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('postgresStore: its tables', () => {
  it('creates them on first use, once, when several processes start at once, and records the schema version', async () => {
    const prefix = newPrefix();
    // Eight stores (eight pools, as eight processes would have) opening the same new tables together.
    const stores = Array.from({ length: 8 }, () => storeOn(prefix));
    await Promise.all(stores.map((store, index) => store.save(conversation(`c${index}`, 1))));
    expect((await stores[0]!.list()).map(({ id }) => id)).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7']);
    const tables = await queryOnce<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name LIKE $2 ORDER BY table_name`,
      [schema.name, `${prefix}%`],
    );
    expect(tables.map(({ table_name }) => table_name)).toEqual(
      ['conversations', 'leases', 'log', 'media', 'media_refs', 'meta', 'steps', 'stream'].map((name) => prefix + name),
    );
    expect(await queryOnce(`SELECT key, value FROM "${schema.name}"."${prefix}meta"`)).toEqual([{ key: 'schema_version', value: '3' }]);
    expect(stores[0]!.tables).toBe(`${schema.name}.${prefix}`);
    await Promise.all(stores.map((store) => store.close()));
  });

  it('brings tables of schema version 1 (before steps and media) up to version 3 when opened, keeping what they hold', async () => {
    const prefix = newPrefix();
    const first = storeOn(prefix);
    await first.save(conversation('a', 1));
    await first.close();
    // As actorloop before steps left them: no steps or media tables, version 1.
    for (const table of ['steps', 'media', 'media_refs']) await queryOnce(`DROP TABLE "${schema.name}"."${prefix}${table}"`);
    await queryOnce(`UPDATE "${schema.name}"."${prefix}meta" SET value = '1' WHERE key = 'schema_version'`);
    const upgraded = storeOn(prefix);
    expect(await upgraded.load('a')).toEqual(conversation('a', 1));
    expect(await upgraded.readSteps('a')).toEqual([]);
    await upgraded.save(conversation('a', 2));
    expect((await upgraded.readSteps('a')).map((step) => step.seq)).toEqual([2]);
    expect(await queryOnce(`SELECT value FROM "${schema.name}"."${prefix}meta"`)).toEqual([{ value: '3' }]);
    await upgraded.close();
  });

  it('brings tables of schema version 2 (before media) up to version 3: the store then keeps media', async () => {
    const prefix = newPrefix();
    const first = storeOn(prefix);
    await first.save(conversation('a', 1));
    await first.close();
    for (const table of ['media', 'media_refs']) await queryOnce(`DROP TABLE "${schema.name}"."${prefix}${table}"`);
    await queryOnce(`UPDATE "${schema.name}"."${prefix}meta" SET value = '2' WHERE key = 'schema_version'`);
    const upgraded = storeOn(prefix);
    expect(await upgraded.load('a')).toEqual(conversation('a', 1));
    const ref = `sha256:${'ab'.repeat(32)}`;
    await upgraded.save(conversation('a', 2), [], undefined, { media: [{ ref, mediaType: 'image/png', bytes: 3, data: 'AQID' }] });
    expect(await upgraded.readMedia(ref)).toEqual({ ref, mediaType: 'image/png', bytes: 3, data: 'AQID' });
    expect(await queryOnce(`SELECT value FROM "${schema.name}"."${prefix}meta"`)).toEqual([{ value: '3' }]);
    await upgraded.close();
  });

  it('creates its schema when it is missing', async () => {
    const own = testSchema('created');
    const store = postgresStore({ connectionString: postgresUrl, schema: own.name });
    await store.save(conversation('a', 1));
    expect(await store.load('a')).toEqual(conversation('a', 1));
    await store.close();
    await own.drop();
  });

  it('refuses tables of its names that are not a store, and tables of a newer schema version, touching neither', async () => {
    const prefix = newPrefix();
    await queryOnce(`CREATE TABLE "${schema.name}"."${prefix}conversations" (id integer PRIMARY KEY)`);
    const other = storeOn(prefix);
    const error = await other.list().catch((caught: unknown) => caught);
    expect(PostgresStoreError.isInstance(error), String(error)).toBe(true);
    expect(error).toMatchObject({ code: 'not_a_store', operation: 'open', tables: `${schema.name}.${prefix}` });
    expect((error as Error).message).toContain('is not an actorloop store');
    await other.close();
    const columns = await queryOnce(`SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2`, [
      schema.name,
      `${prefix}conversations`,
    ]);
    expect(columns).toEqual([{ column_name: 'id' }]);

    const newer = newPrefix();
    const store = storeOn(newer);
    await store.save(conversation('a', 1));
    await store.close();
    await queryOnce(`UPDATE "${schema.name}"."${newer}meta" SET value = '7'`);
    const again = storeOn(newer);
    await expect(again.load('a')).rejects.toMatchObject({ code: 'unknown_schema_version' });
    await expect(again.load('a')).rejects.toThrow('schema version 7; this actorloop reads version 3 (a newer actorloop made them');
    await again.close();
    expect(await queryOnce(`SELECT revision FROM "${schema.name}"."${newer}conversations"`)).toEqual([{ revision: '1' }]);
  });

  it('runs as a user that may only read and write the tables once they exist', async () => {
    const prefix = newPrefix();
    const owner = storeOn(prefix);
    await owner.list();
    await owner.close();
    const role = `${schema.name}_app`;
    await queryOnce(`CREATE ROLE "${role}" LOGIN`);
    try {
      await queryOnce(`GRANT USAGE ON SCHEMA "${schema.name}" TO "${role}"`);
      await queryOnce(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "${schema.name}" TO "${role}"`);
      await queryOnce(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA "${schema.name}" TO "${role}"`);
      const url = new URL(postgresUrl);
      url.username = role;
      const app = postgresStore({ connectionString: url.toString(), schema: schema.name, tablePrefix: prefix });
      const lease = await app.acquireLease('a', 'app', 60_000);
      await app.save(
        conversation('a', 1),
        [cancel('as the app')],
        { items: [{ id: '1.1.t', event: { type: 'text.delta', delta: 'x' } }] },
        { lease: lease! },
      );
      expect(await app.load('a')).toEqual(conversation('a', 1));
      expect(await app.delete('a')).toBe(true);
      await app.close();
    } finally {
      await queryOnce(`DROP OWNED BY "${role}"`);
      await queryOnce(`DROP ROLE "${role}"`);
    }
  });

  it('ends the pool it made on close, and leaves a pool it was given open', async () => {
    const store = storeOn();
    await store.save(conversation('a', 1));
    await store.close();
    await expect(store.load('a')).rejects.toMatchObject({ code: 'closed', operation: 'load' });
    const pool = testPool();
    const given = postgresStore({ pool, schema: schema.name, tablePrefix: newPrefix() });
    await given.save(conversation('a', 1));
    await given.close();
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await pool.end();
  });

  it.each([
    [{}, 'options', 'either pool or connectionString (one of them)'],
    [{ connectionString: postgresUrl, pool: testPool(1) }, 'options', 'either pool or connectionString'],
    [{ connectionString: '' }, 'connectionString', 'a connection string'],
    [{ pool: { query: () => undefined } }, 'pool', 'a pg Pool'],
    [{ connectionString: postgresUrl, schema: 'a; DROP TABLE x' }, 'schema', 'a schema name'],
    [{ connectionString: postgresUrl, tablePrefix: '9x' }, 'tablePrefix', 'a table name prefix'],
    [{ connectionString: postgresUrl, maxConnections: 0 }, 'maxConnections', 'an integer from 1 to 1000'],
  ] as const)('names a bad option: %j', (options, option, expected) => {
    const error = (() => {
      try {
        postgresStore(options as never);
      } catch (caught) {
        return caught;
      }
    })();
    expect(InvalidOptionsError.isInstance(error), String(error)).toBe(true);
    expect(error).toMatchObject({ option });
    expect((error as Error).message).toContain(expected);
    if ('pool' in options && options.pool instanceof pg.Pool) void options.pool.end();
  });

  it('refuses a save it cannot store as given, naming the field, and writes nothing', async () => {
    const store = storeOn();
    for (const [field, value, message] of [
      ['id', 'a\u0000b', 'Invalid option conversation.id: expected a string without NUL characters'],
      ['snapshot', '{"text":"\u0000"}', 'Invalid option conversation.snapshot'],
      ['owner', undefined, 'Invalid option conversation.owner'],
      ['updatedAt', 1.5, 'Invalid option conversation.updatedAt: expected an integer'],
      ['revision', 0, 'Invalid option conversation.revision: expected a positive integer'],
    ] as const) {
      await expect(store.save(conversation('a', 1, { [field]: value }))).rejects.toThrow(message);
    }
    await expect(store.save(conversation('a', 1), [{ at: 0.5, event: { type: 'cancel' } }])).rejects.toThrow('Invalid option log[0]');
    await expect(store.save(conversation('a', 1), [], { items: 'x' } as never)).rejects.toThrow('Invalid option stream');
    expect(await store.load('a')).toBeUndefined();
    expect(await store.list()).toEqual([]);
    await store.close();
  });
});

describe('postgresStore: leases', () => {
  it('hands a conversation to one owner at a time, with a larger token for every new holder', async () => {
    const store = storeOn();
    const first = await store.acquireLease('a', 'host-1', 60_000);
    expect(first).toMatchObject({ conversationId: 'a', owner: 'host-1' });
    expect(first!.expiresAt).toBeGreaterThan(Date.now() + 50_000);
    expect(await store.acquireLease('a', 'host-2', 60_000)).toBeUndefined();
    // Another conversation is free.
    expect(await store.acquireLease('b', 'host-2', 60_000)).toBeDefined();
    // Its holder taking it again gets a new token: its writes under the old one are fenced off.
    const again = await store.acquireLease('a', 'host-1', 60_000);
    expect(again!.token).toBeGreaterThan(first!.token);
    expect(await store.renewLease(first!, 60_000)).toBeUndefined();
    const renewed = await store.renewLease(again!, 120_000);
    expect(renewed).toMatchObject({ token: again!.token, owner: 'host-1' });
    expect(renewed!.expiresAt).toBeGreaterThan(again!.expiresAt);
    // Given up: the next host takes it at once.
    await store.releaseLease(again!);
    const taken = await store.acquireLease('a', 'host-2', 60_000);
    expect(taken!.token).toBeGreaterThan(again!.token);
    // Releasing a lease no longer held changes nothing.
    await store.releaseLease(again!);
    expect(await store.acquireLease('a', 'host-1', 60_000)).toBeUndefined();
    await store.close();
  });

  it('lets another owner take a lapsed lease; the old holder can no longer write or renew', async () => {
    const store = storeOn();
    const old = await store.acquireLease('a', 'host-1', 60_000);
    await store.save(conversation('a', 1), [cancel('first')], undefined, { lease: old! });
    // Lapsed: the database's clock says so.
    await queryOnce(`UPDATE "${schema.name}"."${store.tables.split('.')[1]}leases" SET expires_at = now() - interval '1 second'`);
    const taken = await store.acquireLease('a', 'host-2', 60_000);
    expect(taken!.token).toBeGreaterThan(old!.token);
    const error = await store.save(conversation('a', 2), [cancel('stale')], undefined, { lease: old! }).catch((caught: unknown) => caught);
    expect(ConversationLeaseLostError.isInstance(error), String(error)).toBe(true);
    expect(error).toMatchObject({ conversationId: 'a', token: old!.token });
    expect((error as Error).message).toContain(`host "host-2" holds it with token ${taken!.token}, until`);
    expect(await store.renewLease(old!, 60_000)).toBeUndefined();
    // Nothing of the refused write is stored; the new holder writes.
    expect(await store.load('a')).toMatchObject({ revision: 1 });
    await store.save(conversation('a', 2, { owner: 'host-2' }), [cancel('new holder')], undefined, { lease: taken! });
    expect((await store.readLog('a')).map(({ event }) => (event as { reason: string }).reason)).toEqual(['first', 'new holder']);
    await store.close();
  });

  it('refuses a write without a lease while another host holds one, and takes it once the lease is given up', async () => {
    const store = storeOn();
    const lease = await store.acquireLease('a', 'host-1', 60_000);
    await expect(store.save(conversation('a', 1))).rejects.toThrow(
      /conversation "a": a write without a lease was refused, nothing written: host "host-1" holds it/,
    );
    expect(await store.load('a')).toBeUndefined();
    await store.releaseLease(lease!);
    await store.save(conversation('a', 1));
    // A lease of another conversation is refused as an option, not as a lost lease.
    const other = await store.acquireLease('b', 'host-1', 60_000);
    await expect(store.save(conversation('a', 2), [], undefined, { lease: other! })).rejects.toThrow(InvalidOptionsError);
    await store.close();
  });

  it('a takeover that commits while a write waits for the lease row fences that write', async () => {
    const store = storeOn();
    const prefix = store.tables.split('.')[1];
    const lease = await store.acquireLease('a', 'host-1', 60_000);
    await store.save(conversation('a', 1), [], undefined, { lease: lease! });
    // Another host takes the lease over in a transaction it keeps open...
    const other = new pg.Client({ connectionString: postgresUrl });
    await other.connect();
    await other.query('BEGIN');
    await other.query(
      `UPDATE "${schema.name}"."${prefix}leases" SET owner = 'host-2', token = nextval('"${schema.name}"."${prefix}lease_tokens"') WHERE conversation_id = 'a'`,
    );
    // ...while the old holder's write starts: it waits for the lease row.
    const write = store.save(conversation('a', 2), [cancel('late')], undefined, { lease: lease! }).catch((caught: unknown) => caught);
    await waitingBackend('WITH lease AS');
    await other.query('COMMIT');
    await other.end();
    expect(ConversationLeaseLostError.isInstance(await write)).toBe(true);
    expect(await store.load('a')).toMatchObject({ revision: 1 });
    expect(await store.readLog('a')).toEqual([]);
    await store.close();
  });
});

describe('postgresStore: a connection that breaks during a save', () => {
  it('is tried again on a new connection: the save lands once, snapshot and log together', async () => {
    const store = storeOn();
    const prefix = store.tables.split('.')[1];
    await store.save(conversation('a', 1), [cancel('one')]);
    // Hold the row so the save waits in the database, then cut its connection there.
    const blocker = new pg.Client({ connectionString: postgresUrl });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query(`SELECT 1 FROM "${schema.name}"."${prefix}conversations" WHERE id = 'a' FOR UPDATE`);
    const write = store.save(conversation('a', 2), [cancel('two')], {
      items: [{ id: '2.1.t', event: { type: 'text.delta', delta: 'x' } }],
    });
    const pid = await waitingBackend('WITH lease AS');
    expect(await queryOnce('SELECT pg_terminate_backend($1) AS done', [pid])).toEqual([{ done: true }]);
    await blocker.query('ROLLBACK');
    await blocker.end();
    await write;
    expect(await store.load('a')).toMatchObject({ revision: 2, snapshot: conversation('a', 2).snapshot });
    expect((await store.readLog('a')).map(({ event }) => (event as { reason: string }).reason)).toEqual(['one', 'two']);
    expect((await store.readStream('a')).map(({ items }) => items.map(({ id }) => id))).toEqual([['2.1.t']]);
    await store.close();
  });

  it('a save whose answer was lost after it committed is recognised as written, not written twice', async () => {
    const pool = testPool();
    let dropAnswers = 1;
    const losing: PostgresPool = {
      connect: () => pool.connect(),
      end: () => pool.end(),
      query: async (text, values) => {
        const result = await pool.query(text, values);
        if (textOf(text).startsWith('WITH lease AS') && dropAnswers-- > 0) throw new Error('Connection terminated unexpectedly');
        return result;
      },
    };
    const store = postgresStore({ pool: losing, schema: schema.name, tablePrefix: newPrefix() });
    await store.save(conversation('a', 1), [cancel('one')]);
    expect(dropAnswers).toBe(-1);
    expect(await store.load('a')).toMatchObject({ revision: 1 });
    expect((await store.readLog('a')).map(({ event }) => event.type)).toEqual(['cancel']);
    // A real conflict after a lost answer is still a conflict.
    dropAnswers = 1;
    const other = postgresStore({ pool, schema: schema.name, tablePrefix: store.tables.split('.')[1] });
    await other.save(conversation('a', 2, { owner: 'other' }));
    await expect(store.save(conversation('a', 2))).rejects.toThrow(ConversationConflictError);
    await store.close();
    await pool.end();
  });

  it('when the database stays away, fails with a connection error naming the save, having written nothing', async () => {
    const pool = testPool();
    const down: PostgresPool = {
      connect: () => pool.connect(),
      end: () => pool.end(),
      query: (text, values) =>
        textOf(text).startsWith('WITH lease AS')
          ? Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))
          : pool.query(text, values),
    };
    const store = postgresStore({ pool: down, schema: schema.name, tablePrefix: newPrefix() });
    const error = await store.save(conversation('a', 1), [cancel('lost')]).catch((caught: unknown) => caught);
    expect(PostgresStoreError.isInstance(error), String(error)).toBe(true);
    expect(error).toMatchObject({ code: 'connection', operation: 'save', conversationId: 'a' });
    expect((error as Error).message).toMatch(
      /^postgresStore\(.*\): save of conversation "a" failed: the database connection failed \(connect ECONNREFUSED/,
    );
    expect(await store.load('a')).toBeUndefined();
    expect(await store.readLog('a')).toEqual([]);
    await store.close();
    await pool.end();
  });
});

/** A pool that records the statements sent through `query` (the batch statement, for one, starts `WITH s AS`). */
function recordingPool(pool = testPool()) {
  const statements: string[] = [];
  const recording: PostgresPool = {
    connect: () => pool.connect(),
    end: () => pool.end(),
    query: (statement, values) => {
      statements.push(textOf(statement));
      return pool.query(statement, values);
    },
  };
  const batches = () => statements.filter((statement) => statement.startsWith('WITH s AS')).length;
  const singles = () => statements.filter((statement) => statement.startsWith('WITH lease AS')).length;
  return { pool: recording, statements, batches, singles };
}

const reasons = async (store: { readLog: PostgresStore['readLog'] }, id: string) =>
  (await store.readLog(id)).map(({ event }) => (event as { reason: string }).reason);

describe('postgresStore: saves at once go to the database together', () => {
  it('saves of many conversations in one turn are one statement; a conflict, a lost lease, missing media fail alone', async () => {
    const recorded = recordingPool();
    const store = postgresStore({ pool: recorded.pool, schema: schema.name, tablePrefix: newPrefix() });
    const prefix = store.tables.split('.')[1];
    const ids = Array.from({ length: 12 }, (_, index) => `c${String(index).padStart(2, '0')}`);
    await Promise.all([...ids, 'stale', 'fenced', 'imageless'].map((id) => store.save(conversation(id, 1), [cancel(`${id} 1`)])));
    // 'fenced' is held by host-1, whose lease lapses and host-2 takes over.
    const old = await store.acquireLease('fenced', 'host-1', 60_000);
    await queryOnce(`UPDATE "${schema.name}"."${prefix}leases" SET expires_at = now() - interval '1 second'`);
    const taken = await store.acquireLease('fenced', 'host-2', 60_000);
    const before = recorded.statements.length;

    const missing = `sha256:${'cd'.repeat(32)}`;
    const outcomes = await Promise.allSettled([
      ...ids.map((id) =>
        store.save(conversation(id, 2), [cancel(`${id} 2`)], { items: [{ id: `${id}.2`, event: { type: 'text.delta', delta: 'x' } }] }),
      ),
      // Stale: revision 1 is stored, so the write of revision 1 conflicts.
      store.save(conversation('stale', 1), [cancel('stale again')]),
      store.save(conversation('fenced', 2), [cancel('fenced 2')], undefined, { lease: old! }),
      store.save(conversation('imageless', 2), [cancel('imageless 2')], undefined, {
        media: [{ ref: missing, mediaType: 'image/png', bytes: 3 }],
      }),
    ]);
    const sent = recorded.statements.slice(before);
    // One statement for the fifteen saves (and the single retry of the one whose media was missing).
    expect(sent.filter((statement) => statement.startsWith('WITH s AS'))).toHaveLength(1);
    expect(sent.filter((statement) => statement.startsWith('WITH lease AS'))).toHaveLength(1);

    expect(outcomes.slice(0, ids.length).every(({ status }) => status === 'fulfilled')).toBe(true);
    const [stale, fenced, imageless] = outcomes.slice(ids.length).map((outcome) => (outcome as PromiseRejectedResult).reason as Error);
    expect(ConversationConflictError.isInstance(stale), String(stale)).toBe(true);
    expect(stale).toMatchObject({ conversationId: 'stale', expectedRevision: 0, storedRevision: 1 });
    expect(ConversationLeaseLostError.isInstance(fenced), String(fenced)).toBe(true);
    expect(fenced).toMatchObject({ conversationId: 'fenced', token: old!.token });
    expect(fenced!.message).toContain(`host "host-2" holds it with token ${taken!.token}`);
    expect(PostgresStoreError.isInstance(imageless), String(imageless)).toBe(true);
    expect(imageless).toMatchObject({ code: 'missing_media', operation: 'save', conversationId: 'imageless' });

    for (const id of ids) {
      expect(await store.load(id)).toEqual(conversation(id, 2));
      expect(await reasons(store, id)).toEqual([`${id} 1`, `${id} 2`]);
      expect((await store.readStream(id)).map(({ items }) => items.map((item) => item.id))).toEqual([[`${id}.2`]]);
      expect((await store.readSteps(id)).map(({ seq }) => seq)).toEqual([1, 2]);
    }
    for (const id of ['stale', 'fenced', 'imageless']) {
      expect(await store.load(id)).toEqual(conversation(id, 1));
      expect(await reasons(store, id)).toEqual([`${id} 1`]);
      expect((await store.readSteps(id)).map(({ seq }) => seq)).toEqual([1]);
    }
    await store.close();
    await recorded.pool.end();
  });

  it('keeps steps, media and their references as saves on their own do', async () => {
    const recorded = recordingPool();
    const store = postgresStore({ pool: recorded.pool, schema: schema.name, tablePrefix: newPrefix(), keepSteps: 2 });
    const prefix = store.tables.split('.')[1];
    const image = { ref: `sha256:${'ef'.repeat(32)}`, mediaType: 'image/png', bytes: 3, data: 'AQID' };
    for (let revision = 1; revision <= 3; revision++) {
      await Promise.all(
        ['a', 'b', 'c'].map((id) =>
          store.save(conversation(id, revision), [], undefined, {
            // 'a' gives the bytes; 'b' gives them too in the same batch; 'c' refers to them once they are stored.
            media: id === 'c' && revision === 1 ? [] : [id === 'c' ? { ...image, data: undefined } : image],
          }),
        ),
      );
    }
    expect(recorded.batches()).toBe(3);
    for (const id of ['a', 'b', 'c']) expect((await store.readSteps(id)).map(({ seq }) => seq)).toEqual([2, 3]);
    expect(await store.readMedia(image.ref)).toEqual(image);
    expect(await queryOnce(`SELECT conversation_id FROM "${schema.name}"."${prefix}media_refs" ORDER BY conversation_id`)).toEqual(
      ['a', 'b', 'c'].map((id) => ({ conversation_id: id })),
    );
    expect(await queryOnce(`SELECT count(*)::integer AS n FROM "${schema.name}"."${prefix}media"`)).toEqual([{ n: 1 }]);
    await store.close();
    await recorded.pool.end();
  });

  it('a save referring to media another save of its batch gives is written once that save is', async () => {
    const recorded = recordingPool();
    const store = postgresStore({ pool: recorded.pool, schema: schema.name, tablePrefix: newPrefix() });
    const image = { ref: `sha256:${'12'.repeat(32)}`, mediaType: 'image/png', bytes: 3, data: 'AQID' };
    await Promise.all([
      store.save(conversation('giver', 1), [], undefined, { media: [image] }),
      store.save(conversation('taker', 1), [], undefined, { media: [{ ...image, data: undefined }] }),
    ]);
    // The batch wrote the giver; the taker, refused there for want of the bytes, was written after it, on its own.
    expect([recorded.batches(), recorded.singles()]).toEqual([1, 1]);
    expect(await store.load('taker')).toEqual(conversation('taker', 1));
    await store.close();
    await recorded.pool.end();
  });

  it('saves of one conversation made in one turn land in the order they were made, each after the one before', async () => {
    const recorded = recordingPool();
    const store = postgresStore({ pool: recorded.pool, schema: schema.name, tablePrefix: newPrefix() });
    await store.save(conversation('a', 1), [cancel('1')]);
    const written = await Promise.allSettled([
      store.save(conversation('a', 2), [cancel('2')]),
      store.save(conversation('b', 1), [cancel('b1')]),
      store.save(conversation('a', 3), [cancel('3')]),
      store.save(conversation('b', 2), [cancel('b2')]),
      store.save(conversation('a', 4), [cancel('4')]),
    ]);
    expect(written.map(({ status }) => status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(await reasons(store, 'a')).toEqual(['1', '2', '3', '4']);
    expect(await reasons(store, 'b')).toEqual(['b1', 'b2']);
    // Never two saves of a conversation in one batch: [a2, b1], [a3, b2], then a4 on its own.
    expect([recorded.batches(), recorded.singles()]).toEqual([2, 2]);

    // Made in the wrong order, the later revision goes first and conflicts; the earlier one lands.
    const [early, late] = await Promise.allSettled([store.save(conversation('a', 6)), store.save(conversation('a', 5))]);
    expect(ConversationConflictError.isInstance((early as PromiseRejectedResult).reason)).toBe(true);
    expect(late.status).toBe('fulfilled');
    expect(await store.load('a')).toMatchObject({ revision: 5 });
    await store.close();
    await recorded.pool.end();
  });

  it('a batch the database refuses is written save by save: only the save at fault fails', async () => {
    const recorded = recordingPool();
    const store = postgresStore({ pool: recorded.pool, schema: schema.name, tablePrefix: newPrefix() });
    const outcomes = await Promise.allSettled([
      store.save(conversation('a', 1), [cancel('a')]),
      // A schema version the integer column cannot hold: the database refuses the statement.
      store.save(conversation('huge', 1, { schemaVersion: 2 ** 31 }), [cancel('huge')]),
      store.save(conversation('b', 1), [cancel('b')]),
    ]);
    expect(outcomes.map(({ status }) => status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const error = (outcomes[1] as PromiseRejectedResult).reason as Error;
    expect(PostgresStoreError.isInstance(error), String(error)).toBe(true);
    expect(error).toMatchObject({ code: 'query', operation: 'save', conversationId: 'huge' });
    expect(error.message).toContain('out of range');
    expect([recorded.batches(), recorded.singles()]).toEqual([1, 3]);
    expect((await store.list()).map(({ id }) => id)).toEqual(['a', 'b']);
    expect(await reasons(store, 'a')).toEqual(['a']);
    await store.close();
    await recorded.pool.end();
  });

  it('a batch whose answer was lost after it committed is tried again and recognised as written, not written twice', async () => {
    const pool = testPool();
    let dropAnswers = 1;
    const losing: PostgresPool = {
      connect: () => pool.connect(),
      end: () => pool.end(),
      query: async (statement, values) => {
        const result = await pool.query(statement, values);
        if (textOf(statement).startsWith('WITH s AS') && dropAnswers-- > 0) throw new Error('Connection terminated unexpectedly');
        return result;
      },
    };
    const store = postgresStore({ pool: losing, schema: schema.name, tablePrefix: newPrefix() });
    const ids = ['a', 'b', 'c', 'd'];
    await Promise.all(ids.map((id) => store.save(conversation(id, 1), [cancel(`${id} 1`)])));
    expect(dropAnswers).toBe(-1);
    dropAnswers = 1;
    await Promise.all(ids.map((id) => store.save(conversation(id, 2), [cancel(`${id} 2`)])));
    expect(dropAnswers).toBe(-1);
    for (const id of ids) {
      expect(await store.load(id)).toEqual(conversation(id, 2));
      expect(await reasons(store, id)).toEqual([`${id} 1`, `${id} 2`]);
    }
    await store.close();
    await pool.end();
  });

  it('a batch whose connection is cut in the database is tried again on a new one: every save lands once', async () => {
    const store = storeOn();
    const prefix = store.tables.split('.')[1];
    const ids = ['a', 'b', 'c', 'd', 'e'];
    await Promise.all(ids.map((id) => store.save(conversation(id, 1), [cancel(`${id} 1`)])));
    // Hold one of the rows so the batch waits in the database, then cut its connection there.
    const blocker = new pg.Client({ connectionString: postgresUrl });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query(`SELECT 1 FROM "${schema.name}"."${prefix}conversations" WHERE id = 'c' FOR UPDATE`);
    const writes = Promise.all(ids.map((id) => store.save(conversation(id, 2), [cancel(`${id} 2`)])));
    const pid = await waitingBackend('WITH s AS');
    expect(await queryOnce('SELECT pg_terminate_backend($1) AS done', [pid])).toEqual([{ done: true }]);
    await blocker.query('ROLLBACK');
    await blocker.end();
    await writes;
    for (const id of ids) {
      expect(await store.load(id)).toEqual(conversation(id, 2));
      expect(await reasons(store, id)).toEqual([`${id} 1`, `${id} 2`]);
    }
    await store.close();
  });

  it('when the database stays away, every save of the batch fails with a connection error naming its conversation', async () => {
    const pool = testPool();
    const down: PostgresPool = {
      connect: () => pool.connect(),
      end: () => pool.end(),
      query: (statement, values) =>
        textOf(statement).startsWith('WITH s AS')
          ? Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))
          : pool.query(statement, values),
    };
    const store = postgresStore({ pool: down, schema: schema.name, tablePrefix: newPrefix() });
    const errors = await Promise.all(['a', 'b'].map((id) => store.save(conversation(id, 1)).catch((caught: unknown) => caught)));
    expect(errors).toMatchObject([
      { code: 'connection', operation: 'save', conversationId: 'a' },
      { code: 'connection', operation: 'save', conversationId: 'b' },
    ]);
    expect(await store.list()).toEqual([]);
    await store.close();
    await pool.end();
  });

  it('lease calls at once go together too, each answered as on its own', async () => {
    const recorded = recordingPool();
    const store = postgresStore({ pool: recorded.pool, schema: schema.name, tablePrefix: newPrefix() });
    const held = await store.acquireLease('taken', 'host-2', 60_000);
    const before = recorded.statements.length;
    const leases = await Promise.all(['a', 'b', 'c', 'taken'].map((id) => store.acquireLease(id, 'host-1', 60_000)));
    expect(recorded.statements.slice(before).filter((statement) => statement.startsWith('INSERT INTO'))).toHaveLength(1);
    expect(leases.map((lease) => lease?.conversationId)).toEqual(['a', 'b', 'c', undefined]);
    expect(new Set(leases.map((lease) => lease?.token)).size).toBe(4);
    const renewed = await Promise.all([...leases.slice(0, 3), held].map((lease) => store.renewLease(lease!, 120_000)));
    expect(renewed.map((lease) => lease?.token)).toEqual([...leases.slice(0, 3), held].map((lease) => lease!.token));
    // One renewal with a token no longer held: undefined for it alone.
    await store.releaseLease(leases[0]!);
    const again = await Promise.all(leases.slice(0, 3).map((lease) => store.renewLease(lease!, 60_000)));
    expect(again.map((lease) => lease?.conversationId)).toEqual([undefined, 'b', 'c']);
    await Promise.all([leases[1], leases[2], held].map((lease) => store.releaseLease(lease!)));
    expect(await queryOnce(`SELECT count(*)::integer AS n FROM "${schema.name}"."${store.tables.split('.')[1]}leases"`)).toEqual([
      { n: 0 },
    ]);
    await store.close();
    await recorded.pool.end();
  });
});
