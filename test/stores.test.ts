/**
 * The ConversationStore contract, run against both stores — the SQLite one over each driver this
 * Node has — then what only the SQLite file does: created on first use, WAL, a recorded schema
 * version, refusing files it must not touch, surviving a process killed in the middle of a write,
 * and one driver reading what the other wrote.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConversationConflictError, InvalidOptionsError, memoryStore, type ConversationStore } from '../src/index.js';
import { postgresStore } from '../src/stores/postgres/index.js';
import { type SqliteDriverName, SqliteStoreError, sqliteStore } from '../src/stores/sqlite/index.js';
import { supportScript } from './support/built-tree.js';
import { postgresUrl, testSchema } from './support/postgres.js';
import { nodeHasSqlite, openDirectly, pragma, sqliteDrivers } from './support/sqlite-drivers.js';
import { storedConversation } from './support/stored-conversation.js';

const work = mkdtempSync(join(tmpdir(), 'actorloop-stores-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
// The Postgres stores of this file: one schema, a table prefix per store, so each starts empty.
const postgresSchema = testSchema('stores');
afterAll(() => postgresSchema.drop());
let postgresStores = 0;
let files = 0;
const newPath = () => join(work, `store-${++files}.db`);

const conversation = storedConversation;

type StoreOptions = { keepSteps?: number };
const stores: Array<[string, (options?: StoreOptions) => ConversationStore]> = [
  ['memoryStore', (options = {}) => memoryStore(options)],
  ...sqliteDrivers.map((driver): [string, (options?: StoreOptions) => ConversationStore] => [
    `sqliteStore over ${driver}`,
    (options = {}) => sqliteStore({ path: newPath(), driver, ...options }),
  ]),
  [
    'postgresStore',
    (options = {}) =>
      postgresStore({ connectionString: postgresUrl, schema: postgresSchema.name, tablePrefix: `s${++postgresStores}_`, ...options }),
  ],
];

describe.each(stores)('%s keeps the ConversationStore contract', (_name, create) => {
  it('saves and loads a conversation; each save must carry the next revision', async () => {
    const store = create();
    expect(await store.load('a')).toBeUndefined();
    await store.save(conversation('a', 1));
    expect(await store.load('a')).toEqual(conversation('a', 1));
    for (const stale of [1, 3]) {
      const error = await store.save(conversation('a', stale)).catch((caught: unknown) => caught);
      expect(ConversationConflictError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ conversationId: 'a', expectedRevision: stale - 1, storedRevision: 1 });
    }
    await expect(store.save(conversation('b', 2))).rejects.toMatchObject({ storedRevision: 0 });
    await store.save(conversation('a', 2, { status: 'done' }));
    expect(await store.load('a')).toMatchObject({ revision: 2, status: 'done' });
    await store.close();
  });

  it('appends the log with the snapshot, atomically: a refused save appends nothing', async () => {
    const store = create();
    await store.save(conversation('a', 1), [{ at: 1, event: { type: 'user.message', content: 'hi' } }]);
    await expect(store.save(conversation('a', 1), [{ at: 2, event: { type: 'cancel' } }])).rejects.toThrow(ConversationConflictError);
    await store.save(conversation('b', 1), [{ at: 3, event: { type: 'user.message', content: 'other' } }]);
    await store.save(conversation('a', 2), [
      { at: 4, event: { type: 'tool.call', toolCallId: 't', name: 'add', args: { a: 1 } } },
      { at: 5, event: { type: 'tool.result', toolCallId: 't', name: 'add', result: '2', isError: false } },
    ]);
    const log = await store.readLog('a');
    expect(log.map(({ at, event }) => [at, event.type])).toEqual([
      [1, 'user.message'],
      [4, 'tool.call'],
      [5, 'tool.result'],
    ]);
    expect(log[1]?.event).toEqual({ type: 'tool.call', toolCallId: 't', name: 'add', args: { a: 1 } });
    expect(log.map((entry) => entry.seq)).toEqual([...log.map((entry) => entry.seq)].sort((x, y) => x - y));
    expect(await store.readLog('a', { afterSeq: log[0]!.seq, limit: 1 })).toEqual([log[1]]);
    expect(await store.readLog('nobody')).toEqual([]);
    await store.close();
  });

  it('keeps the stream of each save with it, atomically, in order, and deletes it with the conversation', async () => {
    const store = create();
    const item = (id: string, delta: string) => ({ id, event: { type: 'text.delta' as const, delta } });
    await store.save(conversation('a', 1), [], { items: [item('1.1.t', 'Hel'), item('1.2.t', 'lo')], runStart: true });
    await expect(store.save(conversation('a', 1), [], { items: [item('1.3.t', 'lost')] })).rejects.toThrow(ConversationConflictError);
    await store.save(conversation('b', 1), [], { items: [item('1.1.u', 'other')] });
    await store.save(conversation('a', 2), [], { items: [] });
    await store.save(conversation('a', 3), [{ at: 1, event: { type: 'cancel' } }], { items: [item('3.1.t', '!')] });
    const stream = (await store.readStream?.('a')) ?? [];
    expect(stream.map(({ items, runStart }) => [items.map(({ id }) => id), runStart ?? false])).toEqual([
      [['1.1.t', '1.2.t'], true],
      [['3.1.t'], false],
    ]);
    expect(stream[0]?.items[0]).toEqual(item('1.1.t', 'Hel'));
    expect(stream[0]!.seq).toBeLessThan(stream[1]!.seq);
    expect(await store.readStream?.('a', { afterSeq: stream[0]!.seq, limit: 1 })).toEqual([stream[1]]);
    expect(await store.readStream?.('nobody')).toEqual([]);
    expect(await store.delete('a')).toBe(true);
    expect(await store.readStream?.('a')).toEqual([]);
    expect(await store.readStream?.('b')).toHaveLength(1);
    await store.close();
  });

  it('keeps the stream of the last two runs: a run that starts drops the ones before the run before it', async () => {
    const store = create();
    const entry = (run: number, write: number) => ({
      id: `${write}.1.r${run}`,
      event: { type: 'text.delta' as const, delta: `run ${run}` },
    });
    let revision = 0;
    for (const run of [1, 2, 3, 4]) {
      for (const write of [0, 1]) {
        revision++;
        await store.save(conversation('a', revision), [], {
          items: [entry(run, revision)],
          ...(write === 0 ? { runStart: true as const } : {}),
        });
      }
    }
    const kept = (await store.readStream?.('a')) ?? [];
    expect(kept.map(({ items }) => items[0]?.id)).toEqual(['5.1.r3', '6.1.r3', '7.1.r4', '8.1.r4']);
    expect(kept.map(({ runStart }) => runStart ?? false)).toEqual([true, false, true, false]);
    await store.close();
  });

  it('keeps snapshots verbatim, also ones that are not JSON', async () => {
    const store = create();
    const text = '{"broken": [1, 2,';
    await store.save(conversation('a', 1, { snapshot: text }));
    expect((await store.load('a'))?.snapshot).toBe(text);
    await store.close();
  });

  it('lists by status in id order, page by page', async () => {
    const store = create();
    for (const [id, status] of [
      ['c', 'running'],
      ['a', 'done'],
      ['b', 'running'],
      ['d', 'awaitingApproval'],
    ] as const) {
      await store.save(conversation(id, 1, { status }));
    }
    expect((await store.list()).map((summary) => summary.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(await store.list({ status: 'running' })).toEqual([
      { id: 'b', status: 'running', revision: 1, owner: 'test', updatedAt: 1_700_000_000_001 },
      { id: 'c', status: 'running', revision: 1, owner: 'test', updatedAt: 1_700_000_000_001 },
    ]);
    expect((await store.list({ status: ['done', 'awaitingApproval'] })).map((summary) => summary.id)).toEqual(['a', 'd']);
    expect((await store.list({ after: 'a', limit: 2 })).map((summary) => summary.id)).toEqual(['b', 'c']);
    await expect(store.list({ status: 'finished' as never })).rejects.toThrow(InvalidOptionsError);
    await expect(store.list({ limit: 0 })).rejects.toThrow(InvalidOptionsError);
    await store.close();
  });

  it.each([
    [
      'list status',
      (store: ConversationStore) => store.list({ status: ['done', 'finished'] as never }),
      'status',
      'Invalid option status: expected a conversation status or an array of them (idle, running, awaitingApproval, done, halted, error), got an array',
    ],
    [
      'list limit',
      (store: ConversationStore) => store.list({ limit: 1.5 }),
      'list: limit',
      'Invalid option list: limit: expected a positive integer, got 1.5',
    ],
    [
      'readLog limit',
      (store: ConversationStore) => store.readLog('a', { limit: 0 }),
      'readLog: limit',
      'Invalid option readLog: limit: expected a positive integer, got 0',
    ],
  ] as const)('names a bad %s option', async (_case, call, option, message) => {
    const store = create();
    const error = await call(store).catch((caught: unknown) => caught);
    expect(InvalidOptionsError.isInstance(error), String(error)).toBe(true);
    expect(error).toMatchObject({ option, message });
    await store.close();
  });

  it('deletes a conversation with its log', async () => {
    const store = create();
    await store.save(conversation('a', 1), [{ at: 1, event: { type: 'cancel' } }]);
    expect(await store.delete('a')).toBe(true);
    expect(await store.delete('a')).toBe(false);
    expect(await store.load('a')).toBeUndefined();
    expect(await store.readLog('a')).toEqual([]);
    // A new conversation under the same id starts again at revision 1.
    await store.save(conversation('a', 1));
    await store.close();
  });

  it('takes many saves at once (one transaction per turn for SQLite) and keeps each conversation consistent', async () => {
    const store = create();
    await Promise.all(Array.from({ length: 200 }, (_, index) => store.save(conversation(`c${index}`, 1))));
    const results = await Promise.allSettled(Array.from({ length: 200 }, (_, index) => store.save(conversation(`c${index % 100}`, 2))));
    // Two saves of revision 2 per conversation: the first wins, the second conflicts.
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(100);
    expect(results.filter((result) => result.status === 'rejected')).toHaveLength(100);
    expect((await store.list({ limit: 1000 })).filter((summary) => summary.revision === 2)).toHaveLength(100);
    await store.close();
  });
});

describe.each(stores)('%s keeps each write as a step (history and fork)', (_name, create) => {
  it('lists every write as a step, loads each verbatim, adds none for a refused save, and deletes them with the conversation', async () => {
    const store = create();
    expect(await store.readSteps?.('a')).toEqual([]);
    await store.save(conversation('a', 1, { state: '"requesting"' }));
    await store.save(conversation('a', 2, { status: 'awaitingApproval', state: '"awaitingApproval"' }));
    await store.save(conversation('b', 1, { state: '"requesting"' }));
    await expect(store.save(conversation('a', 2, { snapshot: 'lost' }))).rejects.toMatchObject({ storedRevision: 2 });
    // A writer that gives no state text still gets a step.
    await store.save(conversation('a', 3, { status: 'done' }));
    expect(await store.readSteps?.('a')).toEqual([
      { seq: 1, at: 1_700_000_000_001, status: 'running', state: '"requesting"' },
      { seq: 2, at: 1_700_000_000_002, status: 'awaitingApproval', state: '"awaitingApproval"' },
      { seq: 3, at: 1_700_000_000_003, status: 'done' },
    ]);
    expect(await store.readSteps?.('a', { afterSeq: 1, limit: 1 })).toEqual([
      { seq: 2, at: 1_700_000_000_002, status: 'awaitingApproval', state: '"awaitingApproval"' },
    ]);
    expect(await store.loadStep?.('a', 2)).toEqual(conversation('a', 2, { status: 'awaitingApproval', state: '"awaitingApproval"' }));
    expect(await store.loadStep?.('a', 3)).toEqual(conversation('a', 3, { status: 'done' }));
    expect(await store.loadStep?.('a', 4)).toBeUndefined();
    expect(await store.loadStep?.('nobody', 1)).toBeUndefined();
    expect(await store.delete('a')).toBe(true);
    expect(await store.readSteps?.('a')).toEqual([]);
    expect(await store.loadStep?.('a', 1)).toBeUndefined();
    expect(await store.readSteps?.('b')).toHaveLength(1);
    await store.close();
  });

  it('keeps the latest keepSteps steps of each conversation, and refuses a keepSteps that is not a positive integer', async () => {
    const store = create({ keepSteps: 2 });
    for (let revision = 1; revision <= 5; revision++) await store.save(conversation('a', revision));
    await store.save(conversation('b', 1));
    expect((await store.readSteps?.('a'))?.map((step) => step.seq)).toEqual([4, 5]);
    expect(await store.loadStep?.('a', 3)).toBeUndefined();
    expect(await store.loadStep?.('a', 4)).toEqual(conversation('a', 4));
    expect((await store.readSteps?.('b'))?.map((step) => step.seq)).toEqual([1]);
    await store.close();
    for (const keepSteps of [0, -1, 1.5, '3']) {
      let error: unknown;
      try {
        await create({ keepSteps: keepSteps as number }).close();
      } catch (caught) {
        error = caught;
      }
      expect(InvalidOptionsError.isInstance(error), String(keepSteps)).toBe(true);
      expect(String(error)).toContain('keepSteps');
    }
  });
});

const hashOf = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe.each(sqliteDrivers)('sqliteStore over %s', (driver) => {
  it('creates its file on first use, in WAL mode, with the schema version recorded in it', async () => {
    const path = newPath();
    const store = sqliteStore({ path, driver });
    expect(store.driver).toBe(driver);
    // Unasked, the installed better-sqlite3 wins.
    expect(sqliteStore({ path: newPath() }).driver).toBe('better-sqlite3');
    expect(existsSync(path)).toBe(false);
    await store.save(conversation('a', 1));
    expect(existsSync(path)).toBe(true);
    const db = await openDirectly(driver, path);
    expect(pragma(db, 'journal_mode')).toBe('wal');
    expect(pragma(db, 'user_version')).toBe(1);
    expect(pragma(db, 'application_id')).toBe(0x61636c70);
    db.close();
    await store.close();
    // Reopened: the data is there.
    const again = sqliteStore({ path, driver });
    expect(await again.load('a')).toEqual(conversation('a', 1));
    await again.close();
    await expect(again.load('a')).rejects.toMatchObject({ code: 'closed' });
  });

  it('refuses a file of an unknown schema version and leaves it untouched', async () => {
    const path = newPath();
    const store = sqliteStore({ path, driver });
    await store.save(conversation('a', 1));
    await store.close();
    const db = await openDirectly(driver, path);
    db.exec('PRAGMA user_version = 7');
    db.close();
    const before = hashOf(path);
    const error = await sqliteStore({ path, driver })
      .load('a')
      .catch((caught: unknown) => caught);
    expect(SqliteStoreError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'unknown_schema_version', path });
    expect((error as Error).message).toContain('schema version 7; this actorloop reads version 1 (a newer actorloop wrote it');
    expect(hashOf(path)).toBe(before);
  });

  it('refuses another application’s database and a file that is not SQLite', async () => {
    const other = newPath();
    const db = await openDirectly(driver, other);
    db.exec('CREATE TABLE users (id INTEGER PRIMARY KEY)');
    db.close();
    const before = hashOf(other);
    await expect(sqliteStore({ path: other, driver }).list()).rejects.toMatchObject({ code: 'not_a_store' });
    expect(hashOf(other)).toBe(before);
    const text = newPath();
    writeFileSync(text, 'just some text, long enough to look like a header of something else entirely'.repeat(20));
    await expect(sqliteStore({ path: text, driver }).list()).rejects.toMatchObject({ code: 'not_a_store' });
  });

  it('refuses a damaged file with the same error over either driver, and leaves it untouched', async () => {
    const path = newPath();
    const store = sqliteStore({ path, driver });
    for (let index = 0; index < 20; index++) await store.save(conversation(`c${index}`, 1, { snapshot: 'x'.repeat(2_000) }));
    await store.close();
    // Page 2 onwards overwritten: the header and schema (page 1) still read, the tables do not.
    const bytes = readFileSync(path);
    const pageSize = bytes.readUInt16BE(16);
    bytes.fill(0xab, pageSize, pageSize * 3);
    writeFileSync(path, bytes);
    const before = hashOf(path);
    const damaged = sqliteStore({ path, driver });
    for (const call of [() => damaged.list(), () => damaged.load('c1'), () => damaged.save(conversation('c1', 2))]) {
      const error = await call().catch((caught: unknown) => caught);
      expect(SqliteStoreError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'corrupt', path });
      expect((error as Error).message).toContain('the file is damaged (SQLite: database disk image is malformed)');
    }
    await damaged.close();
    expect(hashOf(path)).toBe(before);
  });

  it('rolls a failed transaction back whole, and the connection takes the next one', async () => {
    const db = await openDirectly(driver, newPath());
    db.exec('CREATE TABLE t (n INTEGER NOT NULL) STRICT');
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const count = () => db.prepare<{ count: number }>('SELECT count(*) AS count FROM t').get()?.count;
    expect(() =>
      db.immediate(() => {
        insert.run(1);
        throw new Error('in the middle');
      }),
    ).toThrow('in the middle');
    // A statement SQLite itself refuses, after a row was written.
    expect(() =>
      db.immediate(() => {
        insert.run(2);
        insert.run('three');
      }),
    ).toThrow(/cannot store TEXT value in INTEGER column/);
    expect(count()).toBe(0);
    expect(db.immediate(() => insert.run(4).changes)).toBe(1);
    expect(count()).toBe(1);
    db.close();
  });

  it('names a bad option', () => {
    expect(() => sqliteStore({ path: '' })).toThrow(/Invalid option path/);
    expect(() => sqliteStore({ path: 'x.db', synchronous: 'off' as never })).toThrow(/Invalid option synchronous/);
    expect(() => sqliteStore({ path: 'x.db', busyTimeoutMs: -1 })).toThrow(/Invalid option busyTimeoutMs/);
    expect(() => sqliteStore({ path: 'x.db', driver: 'sqlite3' as never })).toThrow(/Invalid option driver/);
  });

  it.each([
    [
      'options',
      null,
      'Invalid option options: expected an object { path, synchronous?, busyTimeoutMs?, driver?, create?, keepSteps? }, got null',
    ],
    ['path', { path: 42 }, 'Invalid option path: expected the path of the database file (a non-empty string), got 42'],
    ['synchronous', { path: 'x.db', synchronous: null }, 'Invalid option synchronous: expected "full" or "normal", got null'],
    [
      'busyTimeoutMs',
      { path: 'x.db', busyTimeoutMs: 2.5 },
      'Invalid option busyTimeoutMs: expected a non-negative integer of milliseconds, got 2.5',
    ],
    ['driver', { path: 'x.db', driver: null }, 'Invalid option driver: expected "better-sqlite3" or "node:sqlite", got null'],
  ] as const)('names a bad option %s with what it expected and got', (option, options, message) => {
    const error = (() => {
      try {
        sqliteStore(options as never);
      } catch (caught) {
        return caught;
      }
    })();
    expect(InvalidOptionsError.isInstance(error), String(error)).toBe(true);
    expect(error).toMatchObject({ option, message });
  });

  it('refuses a save with a field the table cannot hold, the same way over either driver', async () => {
    const store = sqliteStore({ path: newPath(), driver });
    for (const [field, value] of [
      ['status', true],
      ['owner', undefined],
      ['updatedAt', 1.5],
      ['schemaVersion', '1'],
    ] as const) {
      await expect(store.save(conversation('a', 1, { [field]: value }))).rejects.toThrow(`Invalid option conversation.${field}`);
    }
    await expect(store.save(conversation('a', 1), [{ at: 0.5, event: { type: 'cancel' } }])).rejects.toThrow('Invalid option log[0]');
    expect(await store.load('a')).toBeUndefined();
    await store.close();
  });
});

/** Every writer–reader pair of drivers on this Node: a file one driver leaves behind is read by the other. */
const driverPairs = sqliteDrivers.flatMap((writer) =>
  sqliteDrivers.map((reader): [SqliteDriverName, SqliteDriverName] => [writer, reader]),
);

describe.each(driverPairs)('sqliteStore: a writer over %s killed mid-write, read over %s', (writer, reader) => {
  it('leaves the last written snapshot whole and readable', async () => {
    const path = newPath();
    const script = supportScript('sqlite-writer.ts');
    let lastSeen = 0;
    for (let round = 0; round < 4; round++) {
      // The writer saves ever newer 256 KiB snapshots as fast as it can and prints each revision once stored.
      const child = spawn(process.execPath, [script, path, writer], { stdio: ['ignore', 'pipe', 'inherit'] });
      let acknowledged = lastSeen;
      let buffered = '';
      child.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) if (line) acknowledged = Number(line);
      });
      await new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (acknowledged >= lastSeen + 5) {
            clearInterval(check);
            resolve();
          }
        }, 5);
      });
      // Somewhere in the next few writes.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 30));
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const store = sqliteStore({ path, driver: reader });
      const stored = await store.load('big');
      expect(stored).toBeDefined();
      const snapshot = JSON.parse(stored!.snapshot) as { revision: number; payload: string };
      expect(snapshot.revision).toBe(stored!.revision);
      expect(snapshot.payload).toBe(String(stored!.revision % 10).repeat(256 * 1024));
      // Nothing acknowledged is lost; at most the write in flight is.
      expect(stored!.revision).toBeGreaterThanOrEqual(acknowledged);
      const log = await store.readLog('big', { limit: 100_000 });
      expect(log.at(-1)?.event).toMatchObject({ type: 'cancel', reason: `revision ${stored!.revision}` });
      await store.close();
      lastSeen = stored!.revision;
    }
    const db = await openDirectly(reader, path);
    expect(pragma(db, 'integrity_check')).toBe('ok');
    db.close();
  }, 60_000);
});

if (nodeHasSqlite()) {
  describe('sqliteStore: one file, both drivers', () => {
    it('each driver reads and continues what the other wrote', async () => {
      const path = newPath();
      const steps: Array<[SqliteDriverName, number]> = [
        ['better-sqlite3', 1],
        ['node:sqlite', 2],
        ['better-sqlite3', 3],
      ];
      for (const [driver, revision] of steps) {
        const store = sqliteStore({ path, driver });
        if (revision > 1) {
          // What the other driver wrote, exactly: row, log (JSON and sequence numbers) and list.
          expect(await store.load('a')).toEqual(conversation('a', revision - 1, { owner: `owner ${revision - 1}` }));
          const log = await store.readLog('a');
          expect(log.map(({ at, event }) => [at, event])).toEqual(
            Array.from({ length: revision - 1 }, (_, index) => [index + 1, { type: 'user.message', content: `from ${steps[index]?.[0]}` }]),
          );
          expect(log.map(({ seq }) => seq)).toEqual(Array.from({ length: revision - 1 }, (_, index) => index + 1));
          expect(await store.list()).toEqual([
            {
              id: 'a',
              status: 'running',
              revision: revision - 1,
              owner: `owner ${revision - 1}`,
              updatedAt: 1_700_000_000_000 + revision - 1,
            },
          ]);
          // Its revision check holds across drivers too.
          await expect(store.save(conversation('a', revision - 1))).rejects.toThrow(ConversationConflictError);
        }
        await store.save(conversation('a', revision, { owner: `owner ${revision}` }), [
          { at: revision, event: { type: 'user.message', content: `from ${driver}` } },
        ]);
        await store.close();
      }
      const db = await openDirectly('node:sqlite', path);
      expect(pragma(db, 'integrity_check')).toBe('ok');
      expect(pragma(db, 'journal_mode')).toBe('wal');
      db.close();
    });
  });
} else {
  describe(`sqliteStore over node:sqlite on Node ${process.versions.node}, which has none`, () => {
    it('is refused when the store is created, naming the Node version and both ways out', () => {
      let error: unknown;
      try {
        sqliteStore({ path: newPath(), driver: 'node:sqlite' });
      } catch (caught) {
        error = caught;
      }
      expect(SqliteStoreError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'driver_unsupported' });
      const { message } = error as Error;
      expect(message).toContain(`driver 'node:sqlite' is not available on Node ${process.versions.node}`);
      expect(message).toContain('Node 22.13');
      expect(message).toContain('npm install better-sqlite3');
    });
  });
}
