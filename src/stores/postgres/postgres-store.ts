import { createHash } from 'node:crypto';
import { ActorloopError } from '../../errors/actorloop-error.js';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import type { ConversationLease, SaveOptions } from '../../host/conversation-lease.js';
import type {
  ConversationLogEntry,
  ConversationStatus,
  ConversationStore,
  ConversationSummary,
  ListOptions,
  LogAppend,
  StoredConversation,
  StoredStep,
  StoredStreamEntry,
  StreamAppend,
} from '../../host/conversation-store.js';
import { ConversationConflictError } from '../../host/errors/conversation-conflict-error.js';
import { ConversationLeaseLostError } from '../../host/errors/conversation-lease-lost-error.js';
import { listOptionsSchema, readLogOptionsSchema } from '../../host/list-options.js';
import { keepStepsSchema } from '../../host/step-retention.js';
import { isRecord } from '../../util/is-record.js';
import { option, resolveOptionsWith } from '../../util/option-schema.js';
import { acquireLease, describeHolder, releaseLease, renewLease } from './leases.js';
import { connectionOptionShape, isConnectionError, type PostgresPool, poolSource } from './postgres-pool.js';
import { PostgresStoreError } from './postgres-store-error.js';
import { openSchema, type TableNames, tableNames } from './schema.js';

/**
 * What {@link postgresStore} takes: a `pool` of yours or a `connectionString` (then the store makes
 * its own pool, and ends it on `close()`), and where its tables go.
 *
 * @example
 * ```ts
 * const options: PostgresStoreOptions = { connectionString: process.env.DATABASE_URL, schema: 'chat', tablePrefix: 'actorloop_' };
 * ```
 */
export type PostgresStoreOptions = {
  /**
   * A `pg` pool to run on (`new pg.Pool(…)`). The store never ends it: `close()` leaves it to you.
   * Give it an `error` listener (`pool.on('error', …)`): `pg` emits one when an idle connection
   * breaks, and an unheard `error` event ends the process.
   */
  pool?: PostgresPool;
  /** Where to connect when no `pool` is given, e.g. `postgres://user@host:5432/db`; needs the optional peer `pg`. */
  connectionString?: string;
  /** The schema the tables go in; created if missing. Default `public`. */
  schema?: string;
  /** Put before each table's name (`actorloop_conversations`…), so several stores can share a schema. Default `actorloop_`. */
  tablePrefix?: string;
  /** Connections of the pool the store makes from `connectionString`. Default 10. */
  maxConnections?: number;
  /**
   * How many of a conversation's latest steps (one per write) to keep for `host.history` and
   * `host.fork`. Default: all. Each step holds a copy of that write's snapshot; `1` keeps the current step only.
   */
  keepSteps?: number;
};

/**
 * A {@link ConversationStore} on PostgreSQL: the contract's conversations, logs and streams, plus
 * leases (`acquireLease`, `renewLease`, `releaseLease`) that let several host processes share the
 * database without two of them applying events to one conversation at once.
 */
export type PostgresStore = ConversationStore &
  Required<
    Pick<ConversationStore, 'readStream' | 'readSteps' | 'loadStep' | 'acquireLease' | 'renewLease' | 'releaseLease' | 'readMedia'>
  > & {
    /** Where the tables are, as `schema.prefix`. */
    readonly tables: string;
  };

/** A name PostgreSQL takes unquoted-safe (quoted anyway): letters, digits, `_`, `$`. */
const identifier = (expected: string, maxLength: number, allowEmpty: boolean) =>
  option.matching(
    expected,
    (value): value is string =>
      typeof value === 'string' && value.length <= maxLength && (value === '' ? allowEmpty : /^[A-Za-z_][A-Za-z0-9_$]*$/.test(value)),
  );

const postgresStoreOptionsSchema = option.object(
  {
    ...connectionOptionShape,
    schema: option.withDefault(identifier('a schema name (letters, digits, _ or $, at most 63 characters)', 63, false), 'public'),
    tablePrefix: option.withDefault(
      identifier('a table name prefix (letters, digits, _ or $, at most 40 characters)', 40, true),
      'actorloop_',
    ),
    maxConnections: option.withDefault(option.integer({ minimum: 1, maximum: 1000 }), 10),
    keepSteps: keepStepsSchema,
  },
  { expected: 'an object { pool? | connectionString?, schema?, tablePrefix?, maxConnections?, keepSteps? }' },
);

/** Text PostgreSQL can hold: any string but one with a NUL character. */
const text = option.matching('a string without NUL characters (PostgreSQL text cannot hold them)', (value): value is string =>
  typeof value === 'string' ? !value.includes('\u0000') : false,
);
const storedInteger = option.integer({ expected: 'an integer' });

/** A conversation to save, checked before the statement: a bad one fails its own save with the field it got wrong. */
const conversationSchema = option.object(
  {
    id: text,
    schemaVersion: storedInteger,
    machineId: text,
    status: text,
    snapshot: text,
    revision: option.integer({ minimum: 1, expected: 'a positive integer' }),
    owner: text,
    updatedAt: storedInteger,
    state: option.optional(text),
  },
  {
    expected: 'a StoredConversation { id, schemaVersion, machineId, status, snapshot, revision, owner, updatedAt }',
    unknownKeys: 'ignore',
  },
);

const logSchema = option.array(
  option.matching(
    'a LogAppend { at (integer milliseconds), event }',
    (entry): entry is LogAppend =>
      isRecord(entry) && Number.isSafeInteger(entry.at) && isRecord(entry.event) && typeof entry.event.type === 'string',
  ),
);

const streamSchema = option.optional(
  option.matching('a StreamAppend { items: ConversationStreamItem[], runStart? }', (stream): stream is StreamAppend =>
    isRecord(stream) ? Array.isArray(stream.items) : false,
  ),
);

const leaseSchema = option.matching(
  'a ConversationLease from acquireLease',
  (lease): lease is ConversationLease =>
    isRecord(lease) && typeof lease.conversationId === 'string' && Number.isSafeInteger(lease.token) && typeof lease.owner === 'string',
);

const mediaSchema = option.array(
  option.object(
    {
      ref: option.string({ nonEmpty: true }),
      mediaType: option.string(),
      bytes: option.integer({ minimum: 0 }),
      data: option.optional(option.string()),
    },
    { expected: 'a StoredMedia { ref, mediaType, bytes, data? }' },
  ),
);

const saveOptionsSchema = option.object(
  { lease: option.optional(leaseSchema), media: option.optional(mediaSchema) },
  { expected: 'an object { lease?, media? }', unknownKeys: 'ignore' },
);

const ttlSchema = option.integer({ minimum: 1, maximum: 2_147_483_647, expected: 'a positive integer of milliseconds' });

/** Waits before each new try of a statement whose connection broke: a restarting server has a few seconds to come back. */
const retryDelaysMs = [50, 250, 1_000, 2_500];

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One statement writes a whole save: the lease check, the conditional update (or insert, for a new
 * conversation), the log entries, the stream entry and the step, each with its pruning — so a save is atomic
 * without a transaction held open across round trips, and costs one round trip.
 */
function saveStatement(names: TableNames): string {
  return `WITH lease AS (
      SELECT token FROM ${names.leases} WHERE conversation_id = $1 FOR SHARE
    ),
    complete AS (
      SELECT NOT EXISTS (
        SELECT 1 FROM unnest($17::text[], $20::bytea[]) AS m(ref, data)
        WHERE m.data IS NULL AND NOT EXISTS (SELECT 1 FROM ${names.media} WHERE ${names.media}.ref = m.ref)
      ) AS ok
    ),
    allowed AS (
      SELECT CASE
        WHEN $14::bigint IS NULL THEN NOT EXISTS (SELECT 1 FROM ${names.leases} WHERE conversation_id = $1 AND expires_at > now())
        ELSE EXISTS (SELECT 1 FROM lease WHERE token = $14::bigint)
      END AS ok
    ),
    inserted AS (
      INSERT INTO ${names.conversations} (id, schema_version, machine_id, status, revision, owner, snapshot, updated_at)
      SELECT $1, $2::integer, $3, $4, $5::bigint, $6, $7, $8::bigint
      WHERE $5::bigint = 1 AND (SELECT ok FROM allowed) AND (SELECT ok FROM complete)
      ON CONFLICT (id) DO NOTHING
      RETURNING id
    ),
    updated AS (
      UPDATE ${names.conversations}
      SET schema_version = $2::integer, machine_id = $3, status = $4, revision = $5::bigint, owner = $6, snapshot = $7, updated_at = $8::bigint
      WHERE id = $1 AND revision = $5::bigint - 1 AND $5::bigint > 1 AND (SELECT ok FROM allowed) AND (SELECT ok FROM complete)
      RETURNING id
    ),
    written AS (SELECT id FROM inserted UNION ALL SELECT id FROM updated),
    logged AS (
      INSERT INTO ${names.log} (conversation_id, at, type, event)
      SELECT $1, entry.at, entry.type, entry.event
      FROM unnest($9::bigint[], $10::text[], $11::text[]) WITH ORDINALITY AS entry(at, type, event, n)
      WHERE EXISTS (SELECT 1 FROM written)
      ORDER BY entry.n
    ),
    pruned AS (
      DELETE FROM ${names.stream}
      WHERE conversation_id = $1 AND $13::boolean AND EXISTS (SELECT 1 FROM written)
        AND seq < (SELECT max(seq) FROM ${names.stream} WHERE conversation_id = $1 AND run_start)
    ),
    streamed AS (
      INSERT INTO ${names.stream} (conversation_id, run_start, items)
      SELECT $1, $13::boolean, $12 WHERE $12::text IS NOT NULL AND EXISTS (SELECT 1 FROM written)
    ),
    stepped AS (
      INSERT INTO ${names.steps} (conversation_id, revision, schema_version, machine_id, status, state, owner, snapshot, updated_at)
      SELECT $1, $5::bigint, $2::integer, $3, $4, $15, $6, $7, $8::bigint WHERE EXISTS (SELECT 1 FROM written)
      ON CONFLICT (conversation_id, revision) DO NOTHING
    ),
    mediaed AS (
      INSERT INTO ${names.media} (ref, media_type, bytes, data)
      SELECT m.ref, m.media_type, m.bytes, m.data
      FROM unnest($17::text[], $18::text[], $19::bigint[], $20::bytea[]) AS m(ref, media_type, bytes, data)
      WHERE m.data IS NOT NULL AND EXISTS (SELECT 1 FROM written)
      ON CONFLICT (ref) DO NOTHING
    ),
    referred AS (
      INSERT INTO ${names.mediaRefs} (conversation_id, ref)
      SELECT $1, r.ref FROM unnest($17::text[]) AS r(ref) WHERE EXISTS (SELECT 1 FROM written)
      ON CONFLICT DO NOTHING
    ),
    unstepped AS (
      DELETE FROM ${names.steps}
      WHERE conversation_id = $1 AND $16::bigint IS NOT NULL AND revision <= $5::bigint - $16::bigint AND EXISTS (SELECT 1 FROM written)
    )
    SELECT (SELECT ok FROM allowed) AS allowed, (SELECT ok FROM complete) AS complete, EXISTS (SELECT 1 FROM written) AS written`;
}

type ConversationRow = {
  id: string;
  schema_version: number;
  machine_id: string;
  status: ConversationStatus;
  revision: string;
  owner: string;
  snapshot: string;
  updated_at: string;
  /** Steps only: the state text the writer gave. */
  state?: string | null;
};

/** A row of the conversations or the steps table as the store contract gives it (bigint columns come back as text). */
function conversationOf(row: ConversationRow): StoredConversation {
  return {
    id: row.id,
    schemaVersion: row.schema_version,
    machineId: row.machine_id,
    status: row.status,
    snapshot: row.snapshot,
    revision: Number(row.revision),
    owner: row.owner,
    updatedAt: Number(row.updated_at),
    ...(typeof row.state === 'string' ? { state: row.state } : {}),
  };
}

/**
 * The {@link ConversationStore} for services with several processes: PostgreSQL through `pg` (an
 * optional peer, `npm install pg`), with the tables created on first use (under an advisory lock,
 * so processes starting at once create them once).
 *
 * - Every `save` is one statement: the snapshot, its log entries and its stream entry are written
 *   together or not at all, only if the stored revision is the expected one
 *   (`ConversationConflictError`) and the write's lease is still the conversation's
 *   (`ConversationLeaseLostError`).
 * - A statement whose connection broke is tried again on a new connection (a few times, over about
 *   four seconds); a save whose answer was lost is recognised as written, not written twice. When
 *   the database stays away it fails with a {@link PostgresStoreError} `connection`, having written nothing.
 * - Leases (`acquireLease`, `renewLease`, `releaseLease`): a host created on this store holds each
 *   conversation's lease while it runs it, so two host processes never apply events to one
 *   conversation at once (docs/postgres.md).
 *
 * @example
 * ```ts
 * import { createConversationHost } from 'actorloop';
 * import { postgresStore } from 'actorloop/postgres';
 *
 * const store = postgresStore({ connectionString: 'postgres://app@db.internal:5432/app' });
 * const host = createConversationHost({ machine, store });
 * await host.recover();
 * ```
 */
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  const resolved = resolveOptionsWith(postgresStoreOptionsSchema, options);
  const pools = poolSource(resolved, options, { max: resolved.maxConnections, applicationName: 'actorloop' });
  const names = tableNames(resolved.schema, resolved.tablePrefix);
  const keepSteps = resolved.keepSteps;
  const save = saveStatement(names);
  // Prepared once per connection: planning the statement costs about as much as running it.
  const saveName = `actorloop_save_${createHash('sha1').update(save).digest('hex').slice(0, 16)}`;
  const where = (operation: string, conversationId?: string) => ({ tables: names.label, operation, conversationId });

  let opening: Promise<PostgresPool> | undefined;
  let closed = false;
  let closing: Promise<void> | undefined;
  const inFlight = new Set<Promise<unknown>>();

  /** Tries `body` again while its connection breaks; turns what the database says into the store's errors. */
  const withRetries = async <T>(
    operation: string,
    conversationId: string | undefined,
    body: (attempt: number) => Promise<T>,
  ): Promise<T> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await body(attempt);
      } catch (error) {
        if (ActorloopError.isInstance(error)) throw error;
        const delay = retryDelaysMs[attempt];
        if (isConnectionError(error) && delay !== undefined && !closed) {
          await wait(delay);
          continue;
        }
        const message = error instanceof Error ? error.message : String(error);
        if (isConnectionError(error)) {
          throw new PostgresStoreError('connection', where(operation, conversationId), `the database connection failed (${message})`, {
            cause: error,
          });
        }
        throw new PostgresStoreError('query', where(operation, conversationId), message, { cause: error });
      }
    }
  };

  const open = (): Promise<PostgresPool> => {
    if (!opening) {
      const pending = (async () => {
        const pool = await pools.get();
        await withRetries('open', undefined, () => openSchema(pool, names));
        return pool;
      })();
      opening = pending;
      // A failed open is not kept: fixing the database makes the next call work.
      pending.catch(() => {
        if (opening === pending) opening = undefined;
      });
    }
    return opening;
  };

  /** One store call: refused once closed, counted so `close()` waits for it, retried on a broken connection. */
  const run = <T>(operation: string, conversationId: string | undefined, body: (pool: PostgresPool, attempt: number) => Promise<T>) => {
    if (closed) return Promise.reject(new PostgresStoreError('closed', where(operation, conversationId), 'the store is closed'));
    const call = (async () => {
      const pool = await open();
      return withRetries(operation, conversationId, (attempt) => body(pool, attempt));
    })();
    inFlight.add(call);
    const forget = () => inFlight.delete(call);
    call.then(forget, forget);
    return call;
  };

  /** Why a save wrote nothing although its lease allowed it: the revision, unless the save landed before its answer was lost. */
  const conflictOf = async (
    pool: PostgresPool,
    conversation: Pick<StoredConversation, 'id' | 'owner' | 'snapshot' | 'revision'>,
    attempt: number,
  ) => {
    const { rows } = await pool.query(`SELECT revision, owner = $2 AND snapshot = $3 AS same FROM ${names.conversations} WHERE id = $1`, [
      conversation.id,
      conversation.owner,
      conversation.snapshot,
    ]);
    const row = rows[0] as { revision: string; same: boolean } | undefined;
    const stored = row ? Number(row.revision) : 0;
    // A try after a broken connection that finds its own write: the first try committed and its answer was lost.
    if (attempt > 0 && stored === conversation.revision && row?.same) return undefined;
    return new ConversationConflictError(conversation.id, conversation.revision - 1, stored);
  };

  return {
    tables: names.label,

    async load(id) {
      return run('load', id, async (pool) => {
        const { rows } = await pool.query(
          `SELECT id, schema_version, machine_id, status, revision, owner, snapshot, updated_at FROM ${names.conversations} WHERE id = $1`,
          [id],
        );
        const row = rows[0] as ConversationRow | undefined;
        return row ? conversationOf(row) : undefined;
      });
    },

    async save(conversation, log: readonly LogAppend[] = [], stream?: StreamAppend, saveOptions: SaveOptions = {}) {
      const checked = resolveOptionsWith(conversationSchema, conversation, 'conversation');
      const entries = resolveOptionsWith(logSchema, log, 'log');
      const streamed = resolveOptionsWith(streamSchema, stream, 'stream');
      const { lease, media = [] } = resolveOptionsWith(saveOptionsSchema, saveOptions, 'options');
      if (lease && lease.conversationId !== checked.id) {
        throw new InvalidOptionsError('options.lease', `the lease of conversation ${JSON.stringify(checked.id)}`, lease.conversationId);
      }
      // Serialised before anything is sent, so an entry that is not JSON fails this save and writes nothing.
      const events = entries.map(({ event }) => JSON.stringify(event));
      const items = streamed && streamed.items.length > 0 ? JSON.stringify(streamed.items) : null;
      const values = [
        checked.id,
        checked.schemaVersion,
        checked.machineId,
        checked.status,
        checked.revision,
        checked.owner,
        checked.snapshot,
        checked.updatedAt,
        entries.map(({ at }) => at),
        entries.map(({ event }) => event.type),
        events,
        items,
        streamed?.runStart === true,
        lease?.token ?? null,
        checked.state ?? null,
        Number.isFinite(keepSteps) ? keepSteps : null,
        media.map(({ ref }) => ref),
        media.map(({ mediaType }) => mediaType),
        media.map(({ bytes }) => bytes),
        // As bytes: stored as bytea, a medium costs its size, not the third more of base64.
        media.map(({ data }) => (data === undefined ? null : Buffer.from(data, 'base64'))),
      ];
      await run('save', checked.id, async (pool, attempt) => {
        const { rows } = await pool.query({ name: saveName, text: save, values });
        const outcome = rows[0] as { allowed: boolean; complete: boolean; written: boolean };
        if (outcome.written) return;
        if (!outcome.complete) {
          throw new PostgresStoreError(
            'missing_media',
            where('save', checked.id),
            'the save refers to media the store does not have and was not given',
          );
        }
        if (!outcome.allowed) {
          const holder = await describeHolder(pool, names, checked.id);
          throw new ConversationLeaseLostError(checked.id, lease?.token, holder);
        }
        const conflict = await conflictOf(pool, checked, attempt);
        if (conflict) throw conflict;
      });
    },

    async readLog(id, readOptions = {}): Promise<ConversationLogEntry[]> {
      const { afterSeq, limit } = resolveOptionsWith(readLogOptionsSchema, readOptions);
      return run('readLog', id, async (pool) => {
        const { rows } = await pool.query(
          `SELECT seq, at, event FROM ${names.log} WHERE conversation_id = $1 AND seq > $2::bigint ORDER BY seq LIMIT $3`,
          [id, afterSeq, limit],
        );
        return (rows as Array<{ seq: string; at: string; event: string }>).map(({ seq, at, event }) => ({
          seq: Number(seq),
          at: Number(at),
          event: JSON.parse(event) as ConversationLogEntry['event'],
        }));
      });
    },

    async readStream(id, readOptions = {}): Promise<StoredStreamEntry[]> {
      const { afterSeq, limit } = resolveOptionsWith(readLogOptionsSchema, readOptions);
      return run('readStream', id, async (pool) => {
        const { rows } = await pool.query(
          `SELECT seq, run_start, items FROM ${names.stream} WHERE conversation_id = $1 AND seq > $2::bigint ORDER BY seq LIMIT $3`,
          [id, afterSeq, limit],
        );
        return (rows as Array<{ seq: string; run_start: boolean; items: string }>).map(({ seq, run_start, items }) => ({
          seq: Number(seq),
          items: JSON.parse(items) as StoredStreamEntry['items'],
          ...(run_start ? { runStart: true as const } : {}),
        }));
      });
    },

    async readSteps(id, readOptions = {}): Promise<StoredStep[]> {
      const { afterSeq, limit } = resolveOptionsWith(readLogOptionsSchema, readOptions);
      return run('readSteps', id, async (pool) => {
        const { rows } = await pool.query(
          `SELECT revision, updated_at, status, state FROM ${names.steps} WHERE conversation_id = $1 AND revision > $2::bigint ORDER BY revision LIMIT $3`,
          [id, afterSeq, limit],
        );
        return (rows as Array<{ revision: string; updated_at: string; status: ConversationStatus; state: string | null }>).map((row) => ({
          seq: Number(row.revision),
          at: Number(row.updated_at),
          status: row.status,
          ...(row.state === null ? {} : { state: row.state }),
        }));
      });
    },

    async loadStep(id, seq) {
      return run('loadStep', id, async (pool) => {
        const { rows } = await pool.query(
          `SELECT conversation_id AS id, schema_version, machine_id, status, revision, owner, snapshot, updated_at, state
           FROM ${names.steps} WHERE conversation_id = $1 AND revision = $2::bigint`,
          [id, seq],
        );
        const row = rows[0] as ConversationRow | undefined;
        return row ? conversationOf(row) : undefined;
      });
    },

    async list(listOptions: ListOptions = {}): Promise<ConversationSummary[]> {
      const { status, after, limit } = resolveOptionsWith(listOptionsSchema, listOptions);
      return run('list', undefined, async (pool) => {
        const { rows } = await pool.query(
          `SELECT id, status, revision, owner, updated_at FROM ${names.conversations}
           WHERE id > $1 AND ($2::text[] IS NULL OR status = ANY($2::text[])) ORDER BY id LIMIT $3`,
          [after ?? '', status ? [...status] : null, limit],
        );
        return (rows as Array<Pick<ConversationRow, 'id' | 'status' | 'revision' | 'owner' | 'updated_at'>>).map((row) => ({
          id: row.id,
          status: row.status,
          revision: Number(row.revision),
          owner: row.owner,
          updatedAt: Number(row.updated_at),
        }));
      });
    },

    async readMedia(ref) {
      return run('readMedia', undefined, async (pool) => {
        const { rows } = await pool.query(`SELECT media_type, bytes, data FROM ${names.media} WHERE ref = $1`, [ref]);
        const row = rows[0] as { media_type: string; bytes: string; data: Buffer } | undefined;
        return row ? { ref, mediaType: row.media_type, bytes: Number(row.bytes), data: row.data.toString('base64') } : undefined;
      });
    },

    async delete(id) {
      return run('delete', id, async (pool) => {
        const { rows } = await pool.query(
          `WITH unreferred AS (DELETE FROM ${names.mediaRefs} WHERE conversation_id = $1 RETURNING ref),
             unmedia AS (
               DELETE FROM ${names.media} AS m WHERE m.ref IN (SELECT ref FROM unreferred)
                 AND NOT EXISTS (SELECT 1 FROM ${names.mediaRefs} AS r WHERE r.ref = m.ref AND r.conversation_id <> $1)
             ),
             logged AS (DELETE FROM ${names.log} WHERE conversation_id = $1),
             streamed AS (DELETE FROM ${names.stream} WHERE conversation_id = $1),
             stepped AS (DELETE FROM ${names.steps} WHERE conversation_id = $1),
             removed AS (DELETE FROM ${names.conversations} WHERE id = $1 RETURNING id)
           SELECT count(*)::integer AS removed FROM removed`,
          [id],
        );
        return (rows[0] as { removed: number }).removed > 0;
      });
    },

    async acquireLease(id, owner, ttlMs) {
      const checkedId = resolveOptionsWith(text, id, 'id');
      const checkedOwner = resolveOptionsWith(text, owner, 'owner');
      const ttl = resolveOptionsWith(ttlSchema, ttlMs, 'ttlMs');
      return run('acquireLease', checkedId, (pool) => acquireLease(pool, names, checkedId, checkedOwner, ttl));
    },

    async renewLease(lease, ttlMs) {
      const held = resolveOptionsWith(leaseSchema, lease, 'lease');
      const ttl = resolveOptionsWith(ttlSchema, ttlMs, 'ttlMs');
      return run('renewLease', held.conversationId, (pool) => renewLease(pool, names, held, ttl));
    },

    async releaseLease(lease) {
      const held = resolveOptionsWith(leaseSchema, lease, 'lease');
      return run('releaseLease', held.conversationId, (pool) => releaseLease(pool, names, held));
    },

    close() {
      closing ??= (async () => {
        closed = true;
        // Calls already accepted finish first (a save in flight is written or fails, never cut off).
        await Promise.allSettled([...inFlight]);
        await pools.end();
      })();
      return closing;
    },
  };
}
