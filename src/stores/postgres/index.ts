/**
 * `actorloop/postgres`: the conversation store for services with several processes — PostgreSQL
 * through `pg` (an optional peer: `npm install pg`), with a lease per conversation so two host
 * processes never run one conversation at once, and a relay over LISTEN/NOTIFY so a reader may
 * follow a conversation from any of them.
 *
 * @example
 * ```ts
 * import { createConversationHost } from 'actorloop';
 * import { postgresRelay, postgresStore } from 'actorloop/postgres';
 *
 * const connectionString = 'postgres://app@db.internal:5432/app';
 * const host = createConversationHost({ machine, store: postgresStore({ connectionString }), relay: postgresRelay({ connectionString }) });
 * ```
 * @packageDocumentation
 */
export { type PostgresStore, postgresStore, type PostgresStoreOptions } from './postgres-store.js';
export { PostgresStoreError, type PostgresStoreErrorCode } from './postgres-store-error.js';
export type { PostgresNotification, PostgresPool, PostgresPoolClient, PostgresQueryResult } from './postgres-pool.js';
export { type PostgresRelay, postgresRelay, type PostgresRelayOptions } from './postgres-relay.js';
