/**
 * The SQLite drivers the store tests run against on this Node: better-sqlite3 always (a dev
 * dependency), node:sqlite where Node has it unflagged. Which Node has it is written down here from
 * Node's release notes, not asked of the code under test — a detection bug must fail the tests, not
 * skip them.
 */
import { betterSqlite3Driver } from '../../src/stores/sqlite/drivers/better-sqlite3.js';
import { loadNodeSqlite, nodeSqliteDriver } from '../../src/stores/sqlite/drivers/node-sqlite.js';
import type { SqliteConnection, SqliteDriverName } from '../../src/stores/sqlite/drivers/sqlite-driver.js';

/** node:sqlite without a flag: Node 22.13+, 23.4+, 24+. */
export function nodeHasSqlite(version: string = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major >= 24 || (major === 23 && minor >= 4) || (major === 22 && minor >= 13);
}

export const sqliteDrivers: SqliteDriverName[] = nodeHasSqlite() ? ['better-sqlite3', 'node:sqlite'] : ['better-sqlite3'];

/**
 * The file opened directly, through the same driver (the same copy of SQLite) as the store under
 * test: two copies of SQLite in one process drop each other's locks on a shared file.
 */
export async function openDirectly(driver: SqliteDriverName, path: string): Promise<SqliteConnection> {
  if (driver === 'better-sqlite3') return betterSqlite3Driver().open(path);
  const sqlite = loadNodeSqlite();
  if (!sqlite) throw new Error(`node:sqlite did not load on Node ${process.versions.node}`);
  return nodeSqliteDriver(sqlite).open(path);
}

/** A pragma's value, e.g. `pragma(db, 'journal_mode')`. */
export const pragma = (db: SqliteConnection, name: string): unknown => {
  const row = db.prepare<Record<string, unknown>>(`PRAGMA ${name}`).get();
  return row?.[name];
};
