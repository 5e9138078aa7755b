import type { SqliteConnection, SqliteDriver, SqliteStatement, SqliteValue } from './sqlite-driver.js';

// The subset of node:sqlite this store uses, typed here: the @types/node this package builds with
// (Node 20's) has no node:sqlite.
type NodeSqliteStatement = {
  get(...parameters: SqliteValue[]): unknown;
  all(...parameters: SqliteValue[]): unknown[];
  run(...parameters: SqliteValue[]): { changes: number | bigint };
};
type NodeSqliteDatabase = {
  exec(sql: string): void;
  prepare(sql: string): NodeSqliteStatement;
  close(): void;
  /** Node 22.16+ and 24: whether a transaction is open. */
  readonly isTransaction?: boolean;
};
type NodeSqliteModule = { DatabaseSync: new (path: string) => NodeSqliteDatabase };

const isSqliteExperimentalWarning = (warning: unknown, type: unknown) =>
  (type === 'ExperimentalWarning' ||
    (typeof type === 'object' && type !== null && 'type' in type && type.type === 'ExperimentalWarning')) &&
  String(warning instanceof Error ? warning.message : warning).startsWith('SQLite is an experimental feature');

let loaded: NodeSqliteModule | null | undefined;

/**
 * node:sqlite when this Node has it without a flag (22.13+, 23.4+; 22.5–22.12 only with
 * `--experimental-sqlite`; Node 20 not at all), else `undefined`. Loaded synchronously, so
 * `sqliteStore()` can refuse a Node without it when it is called.
 *
 * Node 22 prints "ExperimentalWarning: SQLite is an experimental feature and might change at any
 * time" to stderr when node:sqlite loads (Node 24 prints nothing). A store the application asked for
 * should not make its process print that, so exactly this warning, emitted while the module loads,
 * is dropped; every other warning passes. Node emits it once per process: an application that
 * loads node:sqlite itself after this does not see it either.
 */
export function loadNodeSqlite(): NodeSqliteModule | undefined {
  if (loaded !== undefined) return loaded ?? undefined;
  // process.getBuiltinModule: Node 20.16+ and 22.3+; it returns undefined for a module this Node does not offer.
  const getBuiltinModule = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  if (typeof getBuiltinModule !== 'function') {
    loaded = null;
    return undefined;
  }
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
    if (isSqliteExperimentalWarning(warning, rest[0])) return;
    return (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    const module = getBuiltinModule.call(process, 'node:sqlite') as Partial<NodeSqliteModule> | undefined;
    loaded = typeof module?.DatabaseSync === 'function' ? (module as NodeSqliteModule) : null;
  } finally {
    process.emitWarning = emitWarning;
  }
  return loaded ?? undefined;
}

/** node:sqlite returns rows with a null prototype: copied, the store returns the same plain objects as over better-sqlite3. */
const plain = <Row>(row: unknown): Row => ({ ...(row as object) }) as Row;

function connection(db: NodeSqliteDatabase): SqliteConnection {
  return {
    driver: 'node:sqlite',
    exec: (sql) => db.exec(sql),
    prepare: <Row>(sql: string): SqliteStatement<Row> => {
      const statement = db.prepare(sql);
      return {
        get: (...parameters) => {
          const row = statement.get(...parameters);
          return row === undefined ? undefined : plain<Row>(row);
        },
        all: (...parameters) => statement.all(...parameters).map((row) => plain<Row>(row)),
        run: (...parameters) => ({ changes: Number(statement.run(...parameters).changes) }),
      };
    },
    // What better-sqlite3's transaction().immediate() does, which node:sqlite has no helper for.
    immediate: (body) => {
      db.exec('BEGIN IMMEDIATE');
      try {
        const result = body();
        db.exec('COMMIT');
        return result;
      } catch (error) {
        // After some errors (a full disk, an I/O error) SQLite has already rolled back; before
        // Node 22.16 there is no isTransaction to ask, so a ROLLBACK with nothing to undo is ignored.
        if (db.isTransaction !== false) {
          try {
            db.exec('ROLLBACK');
          } catch {}
        }
        throw error;
      }
    },
    close: () => db.close(),
  };
}

/** node:sqlite, already loaded by {@link loadNodeSqlite}. */
export function nodeSqliteDriver(sqlite: NodeSqliteModule): SqliteDriver {
  return {
    name: 'node:sqlite',
    // No `mustExist` here: node:sqlite has no flag for it, so the store checks that the file exists first.
    open: async (path) => connection(new sqlite.DatabaseSync(path)),
    // node:sqlite: code ERR_SQLITE_ERROR, SQLite's (extended) result code in errcode; its low byte is the primary code.
    fileProblem: (error) => {
      const errcode = (error as { errcode?: unknown } | null)?.errcode;
      if (typeof errcode !== 'number') return undefined;
      if ((errcode & 0xff) === 26) return 'not_a_database';
      return (errcode & 0xff) === 11 ? 'corrupt' : undefined;
    },
  };
}
