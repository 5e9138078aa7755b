/**
 * `actorloop/sqlite`: the embedded conversation store, one SQLite file through `better-sqlite3`
 * (an optional peer: `npm install better-sqlite3` — 12.x, or 13.x on Node 22+) when it is
 * installed, else through `node:sqlite`, built into Node 22.13+ (nothing to install).
 *
 * Node.js only (a native addon or `node:sqlite`): imported on Bun, Deno or workerd it throws an
 * `UnsupportedRuntimeError` naming the alternatives (docs/runtimes.md).
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
import { requireNodeRuntime } from '../../util/runtime.js';
import { sqliteElsewhere } from './sqlite-store.js';

requireNodeRuntime('actorloop/sqlite', sqliteElsewhere);

export { type SqliteStore, sqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
export { SqliteStoreError, type SqliteStoreErrorCode } from './sqlite-store-error.js';
export type { SqliteDriverName } from './drivers/sqlite-driver.js';
