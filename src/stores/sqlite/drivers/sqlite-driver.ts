/**
 * The SQLite drivers `sqliteStore` runs on: an installed `better-sqlite3`, or the `node:sqlite`
 * built into Node 22.13+ and 23.4+.
 *
 * @example
 * ```ts
 * const driver: SqliteDriverName = process.env.SQLITE_DRIVER === 'node' ? 'node:sqlite' : 'better-sqlite3';
 * const store = sqliteStore({ path: 'conversations.db', driver });
 * ```
 */
export type SqliteDriverName = 'better-sqlite3' | 'node:sqlite';

/** A value SQLite stores in the tables of this store: the store binds nothing else. */
export type SqliteValue = string | number | Uint8Array;

/** A prepared statement; rows come back as plain objects keyed by column name. */
export type SqliteStatement<Row> = {
  get(...parameters: SqliteValue[]): Row | undefined;
  all(...parameters: SqliteValue[]): Row[];
  run(...parameters: SqliteValue[]): { changes: number };
};

/**
 * The part of an open database the store uses, the same over both drivers, so that everything
 * above it — schema, pragmas, transactions, error mapping — is one code path.
 */
export type SqliteConnection = {
  readonly driver: SqliteDriverName;
  exec(sql: string): void;
  prepare<Row = unknown>(sql: string): SqliteStatement<Row>;
  /**
   * Runs `body` in `BEGIN IMMEDIATE … COMMIT`, rolled back when it throws. Immediate: the write
   * lock is taken up front, so a busy file waits `busy_timeout` here instead of failing mid-way.
   */
  immediate<T>(body: () => T): T;
  close(): void;
};

/** How a driver opens a file. */
export type SqliteOpenOptions = {
  /** Refuse to open a file that does not exist rather than create it (where the driver can say so atomically). */
  mustExist?: boolean;
};

/** A driver chosen for a file: opening it creates the file when it does not exist, unless `mustExist`. */
export type SqliteDriver = {
  readonly name: SqliteDriverName;
  open(path: string, options?: SqliteOpenOptions): Promise<SqliteConnection>;
  /**
   * Whether `error`, thrown by this driver, says the file is not a database (SQLITE_NOTADB) or is
   * damaged (SQLITE_CORRUPT): each driver reports SQLite's result codes its own way.
   */
  fileProblem(error: unknown): 'not_a_database' | 'corrupt' | undefined;
};
