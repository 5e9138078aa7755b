/**
 * `actorloop/sqlite`: the embedded conversation store, one SQLite file through `better-sqlite3`
 * (an optional peer: `npm install better-sqlite3` — 12.x, or 13.x on Node 22+) when it is
 * installed, else through `node:sqlite`, built into Node 22.13+ (nothing to install).
 *
 * @example
 * ```ts
 * import { createConversationHost } from 'actorloop';
 * import { sqliteStore } from 'actorloop/sqlite';
 *
 * const host = createConversationHost({ machine, store: sqliteStore({ path: 'conversations.db' }) });
 * ```
 * @packageDocumentation
 */
export { type SqliteStore, sqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
export { SqliteStoreError, type SqliteStoreErrorCode } from './sqlite-store-error.js';
export type { SqliteDriverName } from './drivers/sqlite-driver.js';
