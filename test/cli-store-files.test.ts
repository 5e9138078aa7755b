/**
 * The database file of the commands that read a store (`list`, `show`, `resume`, `cancel`,
 * `inspect`): a missing file is named and not created, an empty database is not filled, a file
 * that is not a store or is damaged is named as such — one line, exit 1, never a stack trace.
 * And `sqliteStore({ create: false })`, which they open the file with, over each driver.
 */
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { StoredConversation } from '../src/host/conversation-store.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { SqliteStoreError } from '../src/stores/sqlite/sqlite-store-error.js';
import { actorloop } from './support/cli-process.js';
import { sqliteDrivers } from './support/sqlite-drivers.js';

const work = mkdtempSync(join(tmpdir(), 'actorloop-cli-files-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const newDirectory = () => mkdtempSync(join(work, 'case-'));

const conversation = (id: string): StoredConversation => ({
  id,
  schemaVersion: 1,
  machineId: 'conversation',
  status: 'done',
  snapshot: '{}',
  revision: 1,
  owner: 'test',
  updatedAt: 1,
});

/** The commands that read a store, each with what it needs besides `--db`. */
const readers = [['list'], ['show', 'c1'], ['resume', 'c1'], ['cancel', 'c1']] as const;

describe.concurrent('commands on a database file that is not there, empty, not a store, or damaged', () => {
  for (const args of readers) {
    it(`${args[0]} on a missing file: names the path, exit 1, creates nothing`, async () => {
      const directory = newDirectory();
      const db = join(directory, 'conversations.db');
      const result = await actorloop([args[0], '--db', db, ...args.slice(1)]);
      expect(result).toEqual({
        code: 1,
        signal: null,
        stdout: '',
        stderr: `actorloop: no database at ${db} (run --db ${db} "…" creates one); nothing was created\n`,
      });
      expect(existsSync(db)).toBe(false);
      expect(readdirSync(directory)).toEqual([]);
    });

    it(`${args[0]} on an empty file: not a store, exit 1, the file stays empty`, async () => {
      const db = join(newDirectory(), 'empty.db');
      writeFileSync(db, '');
      const result = await actorloop([args[0], '--db', db, ...args.slice(1)]);
      expect(result).toEqual({
        code: 1,
        signal: null,
        stdout: '',
        stderr: `actorloop: sqliteStore(${JSON.stringify(db)}): the file is an empty database with no conversation store in it (create: false)\n`,
      });
      expect(statSync(db).size).toBe(0);
    });

    it(`${args[0]} on a damaged store: says so, exit 1, one line`, async () => {
      const db = join(newDirectory(), 'damaged.db');
      const store = sqliteStore({ path: db });
      await store.save(conversation('c1'));
      await store.close();
      // The first table's page overwritten: the header and the schema still read, the rows do not.
      const file = openSync(db, 'r+');
      writeSync(file, Buffer.alloc(4096, 0xa5), 0, 4096, 4096);
      closeSync(file);
      const result = await actorloop([args[0], '--db', db, ...args.slice(1)]);
      expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' });
      expect(result.stderr).toBe(
        `actorloop: sqliteStore(${JSON.stringify(db)}): the file is damaged (SQLite: database disk image is malformed); restore it from a backup\n`,
      );
    });

    it(`${args[0]} on a file that is not a database: says so, exit 1, the file untouched`, async () => {
      const db = join(newDirectory(), 'notes.db');
      writeFileSync(db, 'some notes, not a database\n'.repeat(200));
      const result = await actorloop([args[0], '--db', db, ...args.slice(1)]);
      expect(result).toMatchObject({
        code: 1,
        stdout: '',
        stderr: `actorloop: sqliteStore(${JSON.stringify(db)}): the file is not a SQLite database\n`,
      });
      expect(statSync(db).size).toBe('some notes, not a database\n'.length * 200);
    });
  }

  it('inspect on a missing file: names the path, exit 1, creates nothing', async () => {
    const directory = newDirectory();
    const db = join(directory, 'conversations.db');
    const result = await actorloop(['inspect', '--db', db]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({
      code: 1,
      stderr: `actorloop: no database at ${db} (run --db ${db} "…" creates one); nothing was created\n`,
    });
    expect(readdirSync(directory)).toEqual([]);
  });

  it('show of an id the file does not have: names it and the file, exit 1', async () => {
    const db = join(newDirectory(), 'conversations.db');
    const store = sqliteStore({ path: db });
    await store.save(conversation('c1'));
    await store.close();
    for (const command of ['show', 'resume', 'cancel']) {
      const result = await actorloop([command, '--db', db, 'nope']);
      expect({ code: result.code, stderr: result.stderr }).toEqual({
        code: 1,
        stderr: `actorloop: no conversation "nope" in ${db} (see actorloop list --db ${db})\n`,
      });
    }
  });
});

describe.each(sqliteDrivers)('sqliteStore({ create: false }) over %s', (driver) => {
  it('refuses a missing file at the first call (not_found), and creates nothing', async () => {
    const directory = newDirectory();
    const path = join(directory, 'missing.db');
    const store = sqliteStore({ path, driver, create: false });
    const error = await store.list().catch((thrown: unknown) => thrown);
    expect(SqliteStoreError.isInstance(error) && error.code).toBe('not_found');
    expect((error as Error).message).toBe(
      `sqliteStore(${JSON.stringify(path)}): no such file (create: false opens an existing store only)`,
    );
    await expect(store.load('c1')).rejects.toThrow('no such file');
    expect(readdirSync(directory)).toEqual([]);
    await store.close();
  });

  it('refuses an empty database without writing its schema into it', async () => {
    const path = join(newDirectory(), 'empty.db');
    writeFileSync(path, '');
    const store = sqliteStore({ path, driver, create: false });
    await expect(store.list()).rejects.toThrow(expect.objectContaining({ code: 'not_found' }));
    await store.close();
    expect(statSync(path).size).toBe(0);
  });

  it('opens an existing store as the default does; a file made meanwhile is opened at the next call', async () => {
    const path = join(newDirectory(), 'store.db');
    const reader = sqliteStore({ path, driver, create: false });
    await expect(reader.list()).rejects.toThrow('no such file');
    const writer = sqliteStore({ path, driver });
    await writer.save(conversation('c1'));
    await writer.close();
    expect((await reader.list()).map(({ id }) => id)).toEqual(['c1']);
    expect(await reader.load('c1')).toEqual(conversation('c1'));
    await reader.close();
  });

  it('create takes a boolean, and says so', () => {
    expect(() => sqliteStore({ path: 'x.db', driver, create: 'no' as unknown as boolean })).toThrow(
      'Invalid option create: expected a boolean, got "no"',
    );
  });
});
