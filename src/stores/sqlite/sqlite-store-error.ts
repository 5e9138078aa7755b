const marker = Symbol.for('actorloop.error.SqliteStoreError');

/**
 * What kept a SQLite store from working: `driver_missing` — `better-sqlite3` is not installed;
 * `driver_unsupported` — the installed `better-sqlite3` does not run on this Node (13.x on Node 20);
 * `not_a_store` — the file is not an actorloop conversation store (another SQLite database, or not
 * SQLite at all); `unknown_schema_version` — the file's schema version is one this actorloop does
 * not know (a newer actorloop wrote it); `closed` — the store was closed.
 */
export type SqliteStoreErrorCode = 'driver_missing' | 'driver_unsupported' | 'not_a_store' | 'unknown_schema_version' | 'closed';

/**
 * A SQLite conversation store cannot use its file. Nothing in the file is changed.
 *
 * @example
 * ```ts
 * try {
 *   await host.recover();
 * } catch (error) {
 *   if (SqliteStoreError.isInstance(error) && error.code === 'driver_missing') console.error('npm install better-sqlite3');
 * }
 * ```
 */
export class SqliteStoreError extends Error {
  override readonly name = 'SqliteStoreError';
  readonly code: SqliteStoreErrorCode;
  /** The database file. */
  readonly path: string;
  readonly [marker] = true;

  constructor(code: SqliteStoreErrorCode, path: string, message: string, options?: { cause?: unknown }) {
    super(`sqliteStore(${JSON.stringify(path)}): ${message}`, options);
    this.code = code;
    this.path = path;
  }

  /** True for a SqliteStoreError, also one from another copy of this package. */
  static isInstance(error: unknown): error is SqliteStoreError {
    return typeof error === 'object' && error !== null && marker in error;
  }
}
