import { ActorloopError } from '../../errors/actorloop-error.js';

/**
 * What kept a Postgres store from working: `connection` — the database did not answer or the
 * connection broke (after the store's retries); `not_a_store` — the schema holds tables of the
 * store's names that are not an actorloop store; `unknown_schema_version` — the store's tables
 * are of a version this actorloop does not know (a newer actorloop made them); `query` — the
 * database refused a statement (permissions, a full disk…); `closed` — the store was closed;
 * `missing_media` — a save refers to a medium (`sha256:…`) the store does not have and was not
 * given (nothing of that save is written).
 */
export type PostgresStoreErrorCode = 'connection' | 'not_a_store' | 'unknown_schema_version' | 'query' | 'closed' | 'missing_media';

/**
 * A Postgres conversation store could not do what it was asked. `operation` names it (`save`,
 * `load`, `open`…) and `conversationId` the conversation when there was one; `cause` is the
 * driver's error. A write that fails this way wrote nothing.
 *
 * @example
 * ```ts
 * try {
 *   await store.load('c-42');
 * } catch (error) {
 *   if (PostgresStoreError.isInstance(error) && error.code === 'connection') console.error('database down:', error.message);
 * }
 * ```
 */
export class PostgresStoreError extends ActorloopError {
  static override readonly errorName = 'PostgresStoreError';
  readonly code: PostgresStoreErrorCode;
  /** The store's tables, as `schema.prefix` (`public.actorloop_`). */
  readonly tables: string;
  /** What the store was doing: `open`, `load`, `save`, `readLog`, `readStream`, `list`, `delete`, `lease`. */
  readonly operation: string;
  /** The conversation it was for, when it was for one. */
  readonly conversationId: string | undefined;

  constructor(
    code: PostgresStoreErrorCode,
    where: { tables: string; operation: string; conversationId?: string | undefined },
    message: string,
    options?: { cause?: unknown },
  ) {
    const subject = where.conversationId === undefined ? '' : ` of conversation ${JSON.stringify(where.conversationId)}`;
    super(`postgresStore(${where.tables}): ${where.operation}${subject} failed: ${message}`, options);
    this.code = code;
    this.tables = where.tables;
    this.operation = where.operation;
    this.conversationId = where.conversationId;
  }
}
