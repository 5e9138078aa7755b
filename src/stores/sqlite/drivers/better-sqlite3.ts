import type BetterSqlite3 from 'better-sqlite3';
import { SqliteStoreError } from '../sqlite-store-error.js';
import type { SqliteConnection, SqliteDriver, SqliteStatement, SqliteValue } from './sqlite-driver.js';
import { nodeBuiltin } from '../../../util/runtime.js';

/**
 * better-sqlite3 13 is built for Node ≥ 22: loaded on Node 20 it crashes the process (a
 * segmentation fault), so its version is read from its package.json before it is loaded.
 */
export function unsupportedDriverProblem(driverVersion: string, nodeVersion: string): string | undefined {
  const driverMajor = Number.parseInt(driverVersion, 10);
  const nodeMajor = Number.parseInt(nodeVersion, 10);
  if (driverMajor >= 13 && nodeMajor < 22) {
    return `better-sqlite3 ${driverVersion} needs Node 22 or newer, and this is Node ${nodeVersion}: npm install better-sqlite3@12 (or run on Node 22+)`;
  }
  if (driverMajor < 12)
    return `better-sqlite3 ${driverVersion} is too old: actorloop/sqlite needs 12.x or 13.x (npm install better-sqlite3@12)`;
  return undefined;
}

/** The installed better-sqlite3's version, read without loading it; `undefined` when it is not installed. */
export function installedBetterSqlite3Version(): string | undefined {
  try {
    const createRequire = nodeBuiltin<typeof import('node:module')>('node:module')?.createRequire;
    if (!createRequire) return undefined;
    const require = createRequire(import.meta.url);
    const manifest = require(require.resolve('better-sqlite3/package.json')) as { version?: unknown };
    return typeof manifest.version === 'string' ? manifest.version : undefined;
  } catch {
    return undefined;
  }
}

function connection(db: BetterSqlite3.Database): SqliteConnection {
  return {
    driver: 'better-sqlite3',
    exec: (sql) => {
      db.exec(sql);
    },
    prepare: <Row>(sql: string): SqliteStatement<Row> => {
      const statement = db.prepare<SqliteValue[], Row>(sql);
      return {
        get: (...parameters) => statement.get(...parameters),
        all: (...parameters) => statement.all(...parameters),
        run: (...parameters) => ({ changes: statement.run(...parameters).changes }),
      };
    },
    // better-sqlite3's own wrapper: it also rolls back only when SQLite has not already done so.
    immediate: (body) => db.transaction(body).immediate(),
    close: () => {
      db.close();
    },
  };
}

/**
 * The installed better-sqlite3 (its version already checked). Loaded by `import()` on first use,
 * not `require`: bundlers see the optional peer, and a store that is never used never loads it.
 */
export function betterSqlite3Driver(): SqliteDriver {
  return {
    name: 'better-sqlite3',
    async open(path, options = {}) {
      let Database: typeof BetterSqlite3;
      try {
        Database = ((await import('better-sqlite3')) as { default: typeof BetterSqlite3 }).default;
      } catch (error) {
        throw new SqliteStoreError(
          'driver_missing',
          path,
          'better-sqlite3 is installed but does not load (reinstall it: npm install better-sqlite3)',
          { cause: error },
        );
      }
      return connection(new Database(path, { fileMustExist: options.mustExist === true }));
    },
    // better-sqlite3: SqliteError, SQLite's (extended) result code by name in `code`.
    fileProblem: (error) => {
      const code = (error as { code?: unknown } | null)?.code;
      if (code === 'SQLITE_NOTADB') return 'not_a_database';
      return typeof code === 'string' && (code === 'SQLITE_CORRUPT' || code.startsWith('SQLITE_CORRUPT_')) ? 'corrupt' : undefined;
    },
  };
}
