import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { MissingDependencyError } from '../../errors/missing-dependency-error.js';
import { isRecord } from '../../util/is-record.js';
import { option, type OptionSchema } from '../../util/option-schema.js';

/**
 * A query's answer, as `pg` gives it: the rows (column values as the driver parsed them) and how
 * many rows the statement touched.
 *
 * @example
 * ```ts
 * const { rows }: PostgresQueryResult = await pool.query('SELECT 1 AS one');
 * ```
 */
export type PostgresQueryResult = { rows: Array<Record<string, unknown>>; rowCount: number | null };

/**
 * A statement with a name: `pg` prepares it once per connection and reuses the plan.
 *
 * @example
 * ```ts
 * const statement: PostgresQueryConfig = { name: 'load', text: 'SELECT * FROM t WHERE id = $1', values: ['c-42'] };
 * ```
 */
export type PostgresQueryConfig = { name: string; text: string; values: unknown[] };

/**
 * A notification a `LISTEN`ing connection received.
 *
 * @example
 * ```ts
 * client.on('notification', ({ channel, payload }: PostgresNotification) => console.log(channel, payload));
 * ```
 */
export type PostgresNotification = { channel: string; payload?: string | undefined };

/**
 * One connection taken from a pool (`pg`'s `PoolClient`): what the store and the relay use of it.
 *
 * @example
 * ```ts
 * const client: PostgresPoolClient = await pool.connect();
 * try { await client.query('LISTEN actorloop'); } finally { client.release(); }
 * ```
 */
export interface PostgresPoolClient {
  query(text: string, values?: unknown[]): Promise<PostgresQueryResult>;
  /** Gives the connection back; with an error (or `true`) the pool closes it instead of keeping it. */
  release(error?: Error | boolean): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  on(event: 'notification', listener: (message: PostgresNotification) => void): unknown;
  removeAllListeners(event?: string): unknown;
}

/**
 * A pool of connections (`pg`'s `Pool`, or anything with its shape): what `postgresStore` and
 * `postgresRelay` need of one. Typed by its shape so `actorloop/postgres` type-checks without
 * `@types/pg`.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * const pool: PostgresPool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * ```
 */
export interface PostgresPool {
  query(statement: string | PostgresQueryConfig, values?: unknown[]): Promise<PostgresQueryResult>;
  connect(): Promise<PostgresPoolClient>;
  end(): Promise<void>;
}

/** A pool made from a connection string: it listens to the pool's errors, and is ended on close. */
type OwnPool = PostgresPool & { on(event: 'error', listener: (error: Error) => void): unknown };

type PgModule = { Pool: new (config: Record<string, unknown>) => OwnPool };

/**
 * A pool on `connectionString`, from the optional peer `pg` (loaded on first use, so the package
 * loads without it). A connection that breaks while idle is dropped and replaced on the next query:
 * the pool's `error` event is taken here, or it would end the process.
 */
async function createPool(connectionString: string, settings: { max: number; applicationName: string }): Promise<OwnPool> {
  let loaded: PgModule | { default: PgModule };
  try {
    loaded = (await import('pg')) as unknown as PgModule | { default: PgModule };
  } catch (error) {
    throw new MissingDependencyError('pg', 'actorloop/postgres', error);
  }
  const pg = 'Pool' in loaded ? loaded : loaded.default;
  const pool = new pg.Pool({ connectionString, max: settings.max, application_name: settings.applicationName });
  pool.on('error', () => {
    // An idle connection broke (the server restarted, a proxy cut it): the pool has removed it.
  });
  return pool;
}

/** The options `postgresStore` and `postgresRelay` both take to reach the database. */
export const connectionOptionShape = {
  pool: option.optional<PostgresPool>(
    option.matching('a pg Pool (an object with query, connect and end)', (value): value is PostgresPool =>
      isRecord(value) ? typeof value.query === 'function' && typeof value.connect === 'function' && typeof value.end === 'function' : false,
    ) satisfies OptionSchema<PostgresPool>,
  ),
  connectionString: option.optional(option.string({ nonEmpty: true, expected: 'a connection string (postgres://…)' })),
};

/** Where connections come from: the pool given, or one made from the connection string on first use and ended by `end()`. */
export type PoolSource = { get(): Promise<PostgresPool>; end(): Promise<void> };

/**
 * The pool of a store or relay: `pool` as given (never ended here), or a pool of its own made from
 * `connectionString` when first needed. Exactly one of them must be given.
 */
export function poolSource(
  connection: { pool: PostgresPool | undefined; connectionString: string | undefined },
  options: unknown,
  settings: { max: number; applicationName: string },
): PoolSource {
  const { pool: given, connectionString } = connection;
  if ((given === undefined) === (connectionString === undefined)) {
    throw new InvalidOptionsError('options', 'either pool or connectionString (one of them)', options);
  }
  let own: Promise<OwnPool> | undefined;
  return {
    get() {
      if (given) return Promise.resolve(given);
      if (!own) {
        const pending = createPool(connectionString as string, settings);
        own = pending;
        // A pool that could not be made (pg missing) is not kept: installing it fixes the next call.
        pending.catch(() => {
          if (own === pending) own = undefined;
        });
      }
      return own;
    },
    async end() {
      const made = await own?.catch(() => undefined);
      await made?.end();
    },
  };
}

/** SQLSTATE classes and codes of a connection that broke or could not be made. */
const connectionStates = /^(08|57P0[123]$|53300$)/;
const connectionCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
const connectionMessages =
  /Connection terminated|connection error|not queryable|timeout exceeded when trying to connect|Client was closed/i;

/** Whether `error` says the connection failed (so the statement may be tried again on another), not that the statement did. */
export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (connectionStates.test(code) || connectionCodes.has(code))) return true;
  return connectionMessages.test(error.message);
}
