import { SqliteStoreError, type SqliteStoreErrorCode } from '../sqlite-store-error.js';
import { betterSqlite3Driver, installedBetterSqlite3Version, unsupportedDriverProblem } from './better-sqlite3.js';
import { loadNodeSqlite, nodeSqliteDriver } from './node-sqlite.js';
import type { SqliteDriver, SqliteDriverName } from './sqlite-driver.js';

/** What the choice depends on; `hasNodeSqlite` is asked only when node:sqlite is a candidate (asking loads it). */
export type DriverFacts = {
  requested: SqliteDriverName | undefined;
  /** The installed better-sqlite3's version, `undefined` when it is not installed. */
  betterSqlite3Version: string | undefined;
  hasNodeSqlite: () => boolean;
  nodeVersion: string;
};

export type DriverChoice = { driver: SqliteDriverName } | { code: Extract<SqliteStoreErrorCode, `driver_${string}`>; problem: string };

const nodeSqliteVersions = 'node:sqlite is built into Node 22.13+ and 23.4+ (22.5–22.12 only with --experimental-sqlite)';

/**
 * Which driver a store uses: the one asked for, else better-sqlite3 when it is installed and runs
 * on this Node, else node:sqlite when this Node has it — or why none can be used, naming the ways out.
 */
export function chooseDriver({ requested, betterSqlite3Version, hasNodeSqlite, nodeVersion }: DriverFacts): DriverChoice {
  const betterProblem = betterSqlite3Version === undefined ? undefined : unsupportedDriverProblem(betterSqlite3Version, nodeVersion);
  if (requested === 'better-sqlite3') {
    if (betterProblem) return { code: 'driver_unsupported', problem: betterProblem };
    if (betterSqlite3Version === undefined) {
      return {
        code: 'driver_missing',
        problem:
          "driver 'better-sqlite3' needs the better-sqlite3 package (12.x, or 13.x on Node 22+): npm install better-sqlite3" +
          (hasNodeSqlite() ? ", or use driver 'node:sqlite', built into this Node" : ''),
      };
    }
    return { driver: 'better-sqlite3' };
  }
  if (requested === 'node:sqlite') {
    if (hasNodeSqlite()) return { driver: 'node:sqlite' };
    return {
      code: 'driver_unsupported',
      problem: `driver 'node:sqlite' is not available on Node ${nodeVersion}: ${nodeSqliteVersions}. Run on Node 22.13 or newer, or install better-sqlite3 (npm install better-sqlite3) and use driver 'better-sqlite3'`,
    };
  }
  if (betterSqlite3Version !== undefined && !betterProblem) return { driver: 'better-sqlite3' };
  if (hasNodeSqlite()) return { driver: 'node:sqlite' };
  if (betterProblem) {
    return {
      code: 'driver_unsupported',
      problem: `${betterProblem}; the other driver, node:sqlite, is not available on Node ${nodeVersion} (it needs Node 22.13+)`,
    };
  }
  return {
    code: 'driver_missing',
    problem: `actorloop/sqlite needs a SQLite driver and finds none on Node ${nodeVersion}: install better-sqlite3 (npm install better-sqlite3; 12.x, or 13.x on Node 22+), or run on Node 22.13 or newer, which has node:sqlite built in`,
  };
}

/** The driver for a new store, or a {@link SqliteStoreError} naming why there is none — when the store is created, not at its first write. */
export function resolveDriver(path: string, requested: SqliteDriverName | undefined): SqliteDriver {
  const choice = chooseDriver({
    requested,
    betterSqlite3Version: installedBetterSqlite3Version(),
    hasNodeSqlite: () => loadNodeSqlite() !== undefined,
    nodeVersion: process.versions.node,
  });
  if ('code' in choice) throw new SqliteStoreError(choice.code, path, choice.problem);
  if (choice.driver === 'better-sqlite3') return betterSqlite3Driver();
  const sqlite = loadNodeSqlite();
  if (!sqlite) throw new SqliteStoreError('driver_unsupported', path, `node:sqlite did not load on Node ${process.versions.node}`);
  return nodeSqliteDriver(sqlite);
}
