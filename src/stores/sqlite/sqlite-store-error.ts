import { ActorloopError } from '../../errors/actorloop-error.js';

/**
 * What kept a SQLite store from working: `driver_missing` — no driver: `better-sqlite3` is not
 * installed (or does not load) and, unless it was asked for by name, this Node has no `node:sqlite`;
 * `driver_unsupported` — the driver does not run on this Node: the installed `better-sqlite3` (13.x on
 * Node 20, or older than 12), or `node:sqlite` asked for on a Node without it (before 22.13);
 * `not_a_store` — the file is not an actorloop conversation store (another SQLite database, or not
 * SQLite at all); `unknown_schema_version` — the file's schema version is one this actorloop does
 * not know (a newer actorloop wrote it); `corrupt` — SQLite finds the file damaged ("database disk
 * image is malformed"), over either driver; `not_found` — `create: false` and there is no file at the
 * path (or only an empty database, with no store in it); `closed` — the store was closed;
 * `missing_media` — a save refers to a medium (`sha256:…`) the file does not have and was not given
 * (that save is refused, nothing of it written).
 */
export type SqliteStoreErrorCode =
  | 'driver_missing'
  | 'driver_unsupported'
  | 'not_a_store'
  | 'unknown_schema_version'
  | 'corrupt'
  | 'not_found'
  | 'closed'
  | 'missing_media';

/**
 * A SQLite conversation store cannot use its file. Nothing in the file is changed.
 *
 * @example
 * ```ts
 * try {
 *   const host = createConversationHost({ machine, store: sqliteStore({ path: 'conversations.db' }) });
 *   await host.recover();
 * } catch (error) {
 *   // A driver problem is thrown by sqliteStore() itself; a problem with the file by the first call.
 *   if (SqliteStoreError.isInstance(error) && error.code === 'driver_missing') console.error(error.message);
 * }
 * ```
 */
export class SqliteStoreError extends ActorloopError {
  static override readonly errorName = 'SqliteStoreError';
  readonly code: SqliteStoreErrorCode;
  /** The database file. */
  readonly path: string;

  constructor(code: SqliteStoreErrorCode, path: string, message: string, options?: { cause?: unknown }) {
    super(`sqliteStore(${JSON.stringify(path)}): ${message}`, options);
    this.code = code;
    this.path = path;
  }
}
