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
import { acquireLease, acquireLeases, describeHolder, releaseLease, releaseLeases, renewLease, renewLeases } from './leases.js';
import { connectionOptionShape, isConnectionError, type PostgresPool, poolSource } from './postgres-pool.js';
import { PostgresStoreError } from './postgres-store-error.js';
import { batchQueue } from './batches.js';
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
 * Batches of one queue (saves; each kind of lease call) on their way at once, each on a connection
 * of its own. Two did a little better than one (Node or the database waits while the other works)
 * and than three or four (smaller batches) on `npm run bench -- --only POSTGRES` with 50
 * conversations at once; a second batch also lets saves go on while one waits for a row lock.
 */
const batchesInFlight = 2;
/** Writes in one batch at most: a batch holds its rows' locks until it commits. */
const maxBatchSize = 100;

/** A save on its way: its conversation, the statement's values, and its caller's promise. */
type PendingSave = {
  pool: PostgresPool;
  conversation: Pick<StoredConversation, 'id' | 'owner' | 'snapshot' | 'revision'>;
  leaseToken: number | undefined;
  values: unknown[];
  resolve: () => void;
  reject: (error: unknown) => void;
};

/**
 * The values of {@link batchSaveStatement} for `saves`, from each save's values of
 * {@link saveStatement} (`$1`…`$20`, in its order): the saves, their log entries and their media as
 * JSON documents (one object per save, entry, medium; `n` the save's position, from 1), and `keepSteps`.
 * JSON, not arrays: `JSON.stringify` escapes a batch's snapshots several times faster than `pg`
 * writes them as array literals.
 */
function batchValues(saves: readonly PendingSave[]): unknown[] {
  const rows: object[] = [];
  const entries: object[] = [];
  const media: object[] = [];
  saves.forEach(({ values: v }, index) => {
    const n = index + 1;
    rows.push({
      n,
      id: v[0],
      schema_version: v[1],
      machine_id: v[2],
      status: v[3],
      revision: v[4],
      owner: v[5],
      snapshot: v[6],
      updated_at: v[7],
      items: v[11],
      run_start: v[12],
      token: v[13],
      state: v[14],
    });
    const [ats, types, events] = [v[8], v[9], v[10]] as [number[], string[], string[]];
    ats.forEach((at, k) => {
      entries.push({ n, at, type: types[k], event: events[k] });
    });
    const [refs, mediaTypes, sizes, data] = [v[16], v[17], v[18], v[19]] as [string[], string[], number[], Array<Buffer | null>];
    refs.forEach((ref, k) => {
      media.push({ n, ref, media_type: mediaTypes[k], bytes: sizes[k], data: data[k]?.toString('base64') ?? null });
    });
  });
  return [JSON.stringify(rows), JSON.stringify(entries), JSON.stringify(media), saves[0]?.values[15] ?? null];
}

/** What the save statement answers. */
type SaveOutcome = { allowed: boolean; complete: boolean; written: boolean };

/** By id, as any two processes order them: the order a batch takes its conversations' locks in. */
const byConversation = (a: PendingSave, b: PendingSave) =>
  a.conversation.id < b.conversation.id ? -1 : a.conversation.id > b.conversation.id ? 1 : 0;

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

/**
 * {@link saveStatement} for several saves of different conversations at once (a batch): the same
 * checks and writes, each save's answered by its own row (in the saves' order), in one statement —
 * one round trip and one commit for the batch. The saves, their log entries and their media come as
 * JSON documents ({@link batchValues}). A save refused (conflict, lost lease, missing media) writes
 * nothing and leaves the others be: no refusal raises an error, which would roll the whole statement
 * back. The saves come in id order, and lease rows and new conversations are locked in that order.
 *
 * One difference from saves one by one: the statement sees the database as it was when it started,
 * so a save referring (without bytes) to media another save of the same batch gives finds it missing;
 * {@link postgresStore} writes such a save again on its own once the batch committed.
 */
function batchSaveStatement(names: TableNames): string {
  return `WITH s AS (
      SELECT * FROM json_to_recordset($1::json) AS s(n integer, id text, schema_version integer, machine_id text, status text,
        revision bigint, owner text, snapshot text, updated_at bigint, items text, run_start boolean, token bigint, state text)
    ),
    m AS (
      SELECT m.n, m.ref, m.media_type, m.bytes, decode(m.data, 'base64') AS data
      FROM json_to_recordset($3::json) AS m(n integer, ref text, media_type text, bytes bigint, data text)
    ),
    lease AS (
      SELECT conversation_id, token FROM ${names.leases}
      WHERE conversation_id IN (SELECT id FROM s WHERE token IS NOT NULL)
      ORDER BY conversation_id FOR SHARE
    ),
    checked AS (
      SELECT s.n,
        NOT EXISTS (
          SELECT 1 FROM m WHERE m.n = s.n AND m.data IS NULL AND NOT EXISTS (SELECT 1 FROM ${names.media} WHERE ${names.media}.ref = m.ref)
        ) AS complete,
        CASE
          WHEN s.token IS NULL THEN NOT EXISTS (SELECT 1 FROM ${names.leases} AS l WHERE l.conversation_id = s.id AND l.expires_at > now())
          ELSE EXISTS (SELECT 1 FROM lease WHERE lease.conversation_id = s.id AND lease.token = s.token)
        END AS allowed
      FROM s
    ),
    go AS (SELECT s.* FROM s JOIN checked USING (n) WHERE checked.allowed AND checked.complete),
    inserted AS (
      INSERT INTO ${names.conversations} (id, schema_version, machine_id, status, revision, owner, snapshot, updated_at)
      SELECT id, schema_version, machine_id, status, revision, owner, snapshot, updated_at FROM go WHERE revision = 1 ORDER BY id
      ON CONFLICT (id) DO NOTHING
      RETURNING id
    ),
    updated AS (
      UPDATE ${names.conversations} AS c
      SET schema_version = go.schema_version, machine_id = go.machine_id, status = go.status, revision = go.revision,
        owner = go.owner, snapshot = go.snapshot, updated_at = go.updated_at
      FROM go
      WHERE c.id = go.id AND go.revision > 1 AND c.revision = go.revision - 1
      RETURNING c.id
    ),
    written AS (SELECT go.* FROM go WHERE go.id IN (SELECT id FROM inserted UNION ALL SELECT id FROM updated)),
    logged AS (
      INSERT INTO ${names.log} (conversation_id, at, type, event)
      SELECT w.id, entry.at, entry.type, entry.event
      FROM ROWS FROM (json_to_recordset($2::json) AS (n integer, at bigint, type text, event text)) WITH ORDINALITY AS entry(n, at, type, event, k)
      JOIN written AS w ON w.n = entry.n
      ORDER BY entry.k
    ),
    pruned AS (
      DELETE FROM ${names.stream} AS st USING written AS w
      WHERE w.run_start AND st.conversation_id = w.id
        AND st.seq < (SELECT max(seq) FROM ${names.stream} WHERE conversation_id = w.id AND run_start)
    ),
    streamed AS (
      INSERT INTO ${names.stream} (conversation_id, run_start, items)
      SELECT id, run_start, items FROM written WHERE items IS NOT NULL ORDER BY n
    ),
    stepped AS (
      INSERT INTO ${names.steps} (conversation_id, revision, schema_version, machine_id, status, state, owner, snapshot, updated_at)
      SELECT id, revision, schema_version, machine_id, status, state, owner, snapshot, updated_at FROM written
      ON CONFLICT (conversation_id, revision) DO NOTHING
    ),
    mediaed AS (
      INSERT INTO ${names.media} (ref, media_type, bytes, data)
      SELECT DISTINCT ON (m.ref) m.ref, m.media_type, m.bytes, m.data
      FROM m JOIN written AS w ON w.n = m.n WHERE m.data IS NOT NULL
      ORDER BY m.ref
      ON CONFLICT (ref) DO NOTHING
    ),
    referred AS (
      INSERT INTO ${names.mediaRefs} (conversation_id, ref)
      SELECT DISTINCT w.id, m.ref FROM m JOIN written AS w ON w.n = m.n
      ON CONFLICT DO NOTHING
    ),
    unstepped AS (
      DELETE FROM ${names.steps} AS st USING written AS w
      WHERE $4::bigint IS NOT NULL AND st.conversation_id = w.id AND st.revision <= w.revision - $4::bigint
    )
    SELECT checked.allowed, checked.complete, EXISTS (SELECT 1 FROM written WHERE written.n = checked.n) AS written
    FROM checked ORDER BY checked.n`;
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
 * - Saves made in the same turn of the event loop go to the database together (group commit): one
 *   statement and one commit for the batch, each save still checked, written or refused on its own
 *   (a conflict, a lost lease or missing media fails that save only). A batch holds one save per
 *   conversation — a later save of a conversation waits behind its earlier one, so a conversation's
 *   saves land in the order they were made — and two batches at most are on their way at once; saves
 *   made meanwhile go in the next. A batch of one is the single statement above. A batch the database
 *   refuses as a whole (a value a column cannot hold, a deadlock) is sent again save by save, so only
 *   the save at fault fails. Lease calls made at once are batched the same way. A save resolves once
 *   its batch committed, so reads made after it see it.
 * - A statement whose connection broke is tried again on a new connection (a few times, over about
 *   four seconds), a batch whole; a save whose answer was lost is recognised as written, not written
 *   twice. When the database stays away it fails with a {@link PostgresStoreError} `connection`
 *   (each save of a batch naming its conversation), having written nothing.
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
  const saveText = saveStatement(names);
  const batchText = batchSaveStatement(names);
  // Prepared once per connection: planning the statement costs about as much as running it.
  const saveName = `actorloop_save_${createHash('sha1').update(saveText).digest('hex').slice(0, 16)}`;
  const batchName = `actorloop_batch_${createHash('sha1').update(batchText).digest('hex').slice(0, 16)}`;
  const where = (operation: string, conversationId?: string) => ({ tables: names.label, operation, conversationId });

  let opening: Promise<PostgresPool> | undefined;
  let closed = false;
  let closing: Promise<void> | undefined;
  const inFlight = new Set<Promise<unknown>>();

  /** Tries `body` again while its connection breaks (a few times, unless the store is closing); throws what it threw last. */
  const retrying = async <T>(body: (attempt: number) => Promise<T>): Promise<T> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await body(attempt);
      } catch (error) {
        const delay = retryDelaysMs[attempt];
        if (!ActorloopError.isInstance(error) && isConnectionError(error) && delay !== undefined && !closed) {
          await wait(delay);
          continue;
        }
        throw error;
      }
    }
  };

  /** What the database said, as the store's error (an actorloop error as it is). */
  const storeError = (error: unknown, operation: string, conversationId: string | undefined): unknown => {
    if (ActorloopError.isInstance(error)) return error;
    const message = error instanceof Error ? error.message : String(error);
    if (isConnectionError(error)) {
      return new PostgresStoreError('connection', where(operation, conversationId), `the database connection failed (${message})`, {
        cause: error,
      });
    }
    return new PostgresStoreError('query', where(operation, conversationId), message, { cause: error });
  };

  /** Tries `body` again while its connection breaks; turns what the database says into the store's errors. */
  const withRetries = async <T>(
    operation: string,
    conversationId: string | undefined,
    body: (attempt: number) => Promise<T>,
  ): Promise<T> => {
    try {
      return await retrying(body);
    } catch (error) {
      throw storeError(error, operation, conversationId);
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

  /** One store call: refused once closed, counted so `close()` waits for it. */
  const track = <T>(operation: string, conversationId: string | undefined, body: (pool: PostgresPool) => Promise<T>) => {
    if (closed) return Promise.reject(new PostgresStoreError('closed', where(operation, conversationId), 'the store is closed'));
    const call = (async () => body(await open()))();
    inFlight.add(call);
    const forget = () => inFlight.delete(call);
    call.then(forget, forget);
    return call;
  };

  /** One store call, retried on a broken connection. */
  const run = <T>(operation: string, conversationId: string | undefined, body: (pool: PostgresPool, attempt: number) => Promise<T>) =>
    track(operation, conversationId, (pool) => withRetries(operation, conversationId, (attempt) => body(pool, attempt)));

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

  /** Why a save wrote nothing (read after its statement committed); `undefined` when it was written. */
  const failureOf = async (db: PostgresPool, save: PendingSave, outcome: SaveOutcome, attempt: number) => {
    if (outcome.written) return undefined;
    const { id } = save.conversation;
    if (!outcome.complete) {
      return new PostgresStoreError(
        'missing_media',
        where('save', id),
        'the save refers to media the store does not have and was not given',
      );
    }
    if (!outcome.allowed) return new ConversationLeaseLostError(id, save.leaseToken, await describeHolder(db, names, id));
    return conflictOf(db, save.conversation, attempt);
  };

  /** A save on its own: one statement, committed on its own (as every save was before batches). */
  const writeAlone = (save: PendingSave, firstAttempt: number) =>
    withRetries('save', save.conversation.id, async (attempt) => {
      const { rows } = await save.pool.query({ name: saveName, text: saveText, values: save.values });
      const failure = await failureOf(save.pool, save, rows[0] as SaveOutcome, firstAttempt + attempt);
      if (failure) throw failure;
    }).then(save.resolve, save.reject);

  /**
   * Writes a batch and settles each of its saves. A batch of one is sent as that save's own
   * statement ({@link saveStatement}). A batch whose connection broke is tried again whole, as a single save would be: nothing
   * of it was written unless it committed, and a save that did commit before its answer was lost finds
   * its own write on the next try (same revision, same snapshot) and counts as written — never twice.
   * A batch the database refused (an error no save's answer foresees: a deadlock with another
   * process's batch, a statement timeout, a value the column cannot hold) was rolled back whole; its
   * saves are then written one by one, so such an error fails only the save that causes it.
   */
  const writeSaves = async (batch: PendingSave[]): Promise<void> => {
    if (batch.length === 1) return writeAlone(batch[0] as PendingSave, 0);
    const saves = [...batch].sort(byConversation);
    let tries = 0;
    let failures: Array<Error | undefined>;
    const pool = (saves[0] as PendingSave).pool;
    const values = batchValues(saves);
    try {
      failures = await retrying(async (attempt) => {
        tries = attempt + 1;
        const { rows } = await pool.query({ name: batchName, text: batchText, values });
        return Promise.all(saves.map((save, index) => failureOf(pool, save, rows[index] as SaveOutcome, attempt)));
      });
    } catch (error) {
      if (isConnectionError(error)) {
        for (const save of saves) save.reject(storeError(error, 'save', save.conversation.id));
        return;
      }
      // After a try that broke the connection, the next ones look for their own earlier write.
      await Promise.all(saves.map((save) => writeAlone(save, tries > 1 ? 1 : 0)));
      return;
    }
    const again: Array<Promise<void>> = [];
    saves.forEach((save, index) => {
      const failure = failures[index];
      // Media another save of the batch gave: there now, unless that save was refused too.
      if (PostgresStoreError.isInstance(failure) && failure.code === 'missing_media') again.push(writeAlone(save, tries > 1 ? 1 : 0));
      else if (failure) save.reject(failure);
      else save.resolve();
    });
    await Promise.all(again);
  };

  /** {@link writeSaves}, failing every save of the batch not settled yet if something unforeseen throws. */
  const writeBatch = (batch: PendingSave[]) =>
    writeSaves(batch).catch((error: unknown) => {
      for (const save of batch) save.reject(storeError(error, 'save', save.conversation.id));
    });

  const saveQueue = batchQueue<PendingSave>({
    conversationOf: (save) => save.conversation.id,
    maxInFlight: batchesInFlight,
    maxSize: maxBatchSize,
    write: writeBatch,
  });

  /**
   * A lease call (`operation`) that goes to the database in a batch with the calls of the same kind
   * for other conversations: `many` answers a batch in one statement, `one` a call on its own (the
   * statement a batch of one is). A batch whose connection broke is tried again whole (a lease call
   * may run twice: each is safe to repeat — acquiring again gives its owner a new token, as a retry
   * on its own does); a batch the database refused is sent again call by call, so only the call at
   * fault fails.
   */
  const leaseCalls = <Input, Output>(
    operation: string,
    one: (pool: PostgresPool, input: Input) => Promise<Output>,
    many: (pool: PostgresPool, inputs: Input[]) => Promise<Output[]>,
  ) => {
    type Call = {
      pool: PostgresPool;
      conversationId: string;
      input: Input;
      resolve: (output: Output) => void;
      reject: (error: unknown) => void;
    };
    const alone = (call: Call) =>
      withRetries(operation, call.conversationId, () => one(call.pool, call.input)).then(call.resolve, call.reject);
    const queue = batchQueue<Call>({
      conversationOf: (call) => call.conversationId,
      maxInFlight: batchesInFlight,
      maxSize: maxBatchSize,
      write: async (calls) => {
        if (calls.length === 1) return alone(calls[0] as Call);
        let outputs: Output[];
        try {
          outputs = await retrying(() =>
            many(
              (calls[0] as Call).pool,
              calls.map(({ input }) => input),
            ),
          );
        } catch (error) {
          if (isConnectionError(error)) for (const call of calls) call.reject(storeError(error, operation, call.conversationId));
          else await Promise.all(calls.map(alone));
          return;
        }
        calls.forEach((call, index) => {
          call.resolve(outputs[index] as Output);
        });
      },
    });
    return (conversationId: string, input: Input) =>
      track(
        operation,
        conversationId,
        (pool) => new Promise<Output>((resolve, reject) => queue.add({ pool, conversationId, input, resolve, reject })),
      );
  };

  const acquireCall = leaseCalls<{ conversationId: string; owner: string; ttlMs: number }, ConversationLease | undefined>(
    'acquireLease',
    (pool, { conversationId, owner, ttlMs }) => acquireLease(pool, names, conversationId, owner, ttlMs),
    (pool, inputs) => acquireLeases(pool, names, inputs),
  );
  const renewCall = leaseCalls<{ lease: ConversationLease; ttlMs: number }, ConversationLease | undefined>(
    'renewLease',
    (pool, { lease, ttlMs }) => renewLease(pool, names, lease, ttlMs),
    (pool, inputs) => renewLeases(pool, names, inputs),
  );
  const releaseCall = leaseCalls<ConversationLease, void>(
    'releaseLease',
    (pool, lease) => releaseLease(pool, names, lease),
    async (pool, leases) => {
      await releaseLeases(pool, names, leases);
      return leases.map(() => undefined);
    },
  );

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
      await track(
        'save',
        checked.id,
        (pool) =>
          new Promise<void>((resolve, reject) => {
            saveQueue.add({ pool, conversation: checked, leaseToken: lease?.token, values, resolve, reject });
          }),
      );
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
      return acquireCall(checkedId, { conversationId: checkedId, owner: checkedOwner, ttlMs: ttl });
    },

    async renewLease(lease, ttlMs) {
      const held = resolveOptionsWith(leaseSchema, lease, 'lease');
      const ttl = resolveOptionsWith(ttlSchema, ttlMs, 'ttlMs');
      return renewCall(held.conversationId, { lease: held, ttlMs: ttl });
    },

    async releaseLease(lease) {
      const held = resolveOptionsWith(leaseSchema, lease, 'lease');
      return releaseCall(held.conversationId, held);
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
