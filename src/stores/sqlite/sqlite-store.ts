import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
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
import { listOptionsSchema, readLogOptionsSchema } from '../../host/list-options.js';
import { keepStepsSchema } from '../../host/step-retention.js';
import { isRecord } from '../../util/is-record.js';
import { base64FromBytes, bytesFromBase64 } from '../../util/base64.js';
import type { SaveOptions } from '../../host/conversation-lease.js';
import { option, resolveOptionsWith } from '../../util/option-schema.js';
import { nodeBuiltin, requireNodeRuntime } from '../../util/runtime.js';
import { resolveDriver } from './drivers/choose-driver.js';
import type { SqliteConnection, SqliteDriverName, SqliteStatement } from './drivers/sqlite-driver.js';
import { openSchema } from './schema.js';
import { SqliteStoreError } from './sqlite-store-error.js';

/** What to use where SQLite cannot run: said by the error and in docs/runtimes.md. */
export const sqliteElsewhere =
  'use memoryStore() from actorloop, a ConversationStore of your own, or actorloop/postgres from a Node.js process';

/**
 * What {@link sqliteStore} takes.
 *
 * @example
 * ```ts
 * const options: SqliteStoreOptions = { path: '/var/lib/app/conversations.db', synchronous: 'normal' };
 * ```
 */
export type SqliteStoreOptions = {
  /** The database file; created (with its schema) on first use, unless `create` is `false`. */
  path: string;
  /**
   * `false`: open an existing store only. A path with no file, or a file that is an empty SQLite
   * database, is refused with a {@link SqliteStoreError} (`not_found`) at the first call, and
   * nothing is created or written — for tools that read or continue what is there (`actorloop list`).
   * Default `true`: the file and its schema are created on first use.
   *
   * @example
   * ```ts
   * const store = sqliteStore({ path: 'conversations.db', create: false });
   * await store.list(); // SqliteStoreError not_found when conversations.db does not exist; no file made
   * ```
   */
  create?: boolean;
  /**
   * When a write counts as done. `'full'` (default): on disk before `save` resolves — survives a
   * power loss. `'normal'`: survives a crash of the process (the usual failure); a power loss may
   * lose the last writes, never corrupt the file. Either way a crash mid-write leaves the previous
   * snapshot readable (SQLite's write-ahead log).
   */
  synchronous?: 'full' | 'normal';
  /** How long a write waits for another process holding the file's write lock. Default 5000 ms. */
  busyTimeoutMs?: number;
  /**
   * The SQLite driver. By default `better-sqlite3` when it is installed and runs on this Node
   * (12.x, or 13.x on Node 22+), else `node:sqlite`, built into Node 22.13+ and 23.4+. Both write the
   * same file, which either reads. When the one named (or, by default, every one) is not available,
   * `sqliteStore()` throws a {@link SqliteStoreError} (`driver_missing` or `driver_unsupported`)
   * naming the Node version and what to install or run instead.
   *
   * Several processes may share a file whatever driver each uses; inside one process, open a file
   * through one driver only: each driver has its own copy of SQLite, and a copy closing the file
   * drops the locks the other holds on it (SQLite's "How To Corrupt", multiple copies of SQLite).
   *
   * @example
   * ```ts
   * import { sqliteStore } from 'actorloop/sqlite';
   *
   * // No native addon to install or build: Node's own SQLite (Node 22.13+).
   * const store = sqliteStore({ path: 'conversations.db', driver: 'node:sqlite' });
   * ```
   */
  driver?: SqliteDriverName;
  /**
   * How many of a conversation's latest steps (one per write) to keep for `host.history` and
   * `host.fork`. Default: all. Each step holds a copy of that write's snapshot, so a long
   * conversation's steps grow with its history; `1` keeps the current step only.
   *
   * @example
   * ```ts
   * const store = sqliteStore({ path: 'conversations.db', keepSteps: 200 });
   * ```
   */
  keepSteps?: number;
};

type ConversationRow = {
  id: string;
  version: number;
  machine_id: string;
  status: ConversationStatus;
  revision: number;
  owner: string;
  snapshot: string;
  updated_at: number;
  /** Steps only: the state text the writer gave (`''` for none). */
  state?: string;
};

/** A row of the conversations or the steps table as the store contract gives it. */
function conversationOf(row: ConversationRow): StoredConversation {
  return {
    id: row.id,
    schemaVersion: row.version,
    machineId: row.machine_id,
    status: row.status,
    snapshot: row.snapshot,
    revision: row.revision,
    owner: row.owner,
    updatedAt: row.updated_at,
    ...(row.state ? { state: row.state } : {}),
  };
}

type PendingSave = {
  conversation: StoredConversation;
  /** Log entries already turned into rows, so a bad one fails its own save, not the batch. */
  log: Array<{ at: number; type: string; event: string }>;
  stream: { runStart: number; items: string } | undefined;
  /** The media the write refers to; bytes decoded before the batch. */
  media: Array<{ ref: string; mediaType: string; bytes: number; data: Uint8Array | undefined }>;
  resolve: () => void;
  reject: (error: unknown) => void;
};

/** What a store method needs of the open file. */
type Database = {
  db: SqliteConnection;
  statements: ReturnType<typeof prepare>;
  listStatements: Map<number, SqliteStatement<ConversationSummary>>;
};

function prepare(db: SqliteConnection) {
  return {
    load: db.prepare<ConversationRow>(
      'SELECT id, version, machine_id, status, revision, owner, snapshot, updated_at FROM conversations WHERE id = ?',
    ),
    revision: db.prepare<{ revision: number }>('SELECT revision FROM conversations WHERE id = ?'),
    insert: db.prepare(
      'INSERT INTO conversations (id, version, machine_id, status, revision, owner, snapshot, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    update: db.prepare(
      'UPDATE conversations SET version = ?, machine_id = ?, status = ?, revision = ?, owner = ?, snapshot = ?, updated_at = ? WHERE id = ? AND revision = ?',
    ),
    appendLog: db.prepare('INSERT INTO conversation_log (conversation_id, at, type, event) VALUES (?, ?, ?, ?)'),
    readLog: db.prepare<{ seq: number; at: number; event: string }>(
      'SELECT seq, at, event FROM conversation_log WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    appendStream: db.prepare('INSERT INTO conversation_stream (conversation_id, run_start, items) VALUES (?, ?, ?)'),
    readStream: db.prepare<{ seq: number; run_start: number; items: string }>(
      'SELECT seq, run_start, items FROM conversation_stream WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    deleteStream: db.prepare('DELETE FROM conversation_stream WHERE conversation_id = ?'),
    pruneStream: db.prepare(
      'DELETE FROM conversation_stream WHERE conversation_id = ? AND seq < (SELECT max(seq) FROM conversation_stream WHERE conversation_id = ? AND run_start = 1)',
    ),
    appendStep: db.prepare(
      'INSERT INTO conversation_steps (conversation_id, revision, version, machine_id, status, state, owner, snapshot, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    readSteps: db.prepare<{ revision: number; updated_at: number; status: ConversationStatus; state: string }>(
      'SELECT revision, updated_at, status, state FROM conversation_steps WHERE conversation_id = ? AND revision > ? ORDER BY revision LIMIT ?',
    ),
    loadStep: db.prepare<ConversationRow>(
      'SELECT conversation_id AS id, version, machine_id, status, revision, owner, snapshot, updated_at, state FROM conversation_steps WHERE conversation_id = ? AND revision = ?',
    ),
    pruneSteps: db.prepare('DELETE FROM conversation_steps WHERE conversation_id = ? AND revision <= ?'),
    deleteSteps: db.prepare('DELETE FROM conversation_steps WHERE conversation_id = ?'),
    deleteConversation: db.prepare('DELETE FROM conversations WHERE id = ?'),
    deleteLog: db.prepare('DELETE FROM conversation_log WHERE conversation_id = ?'),
    insertMedia: db.prepare('INSERT OR IGNORE INTO conversation_media (ref, media_type, bytes, data) VALUES (?, ?, ?, ?)'),
    hasMedia: db.prepare<{ found: number }>('SELECT 1 AS found FROM conversation_media WHERE ref = ?'),
    readMedia: db.prepare<{ media_type: string; bytes: number; data: Uint8Array }>(
      'SELECT media_type, bytes, data FROM conversation_media WHERE ref = ?',
    ),
    referMedia: db.prepare('INSERT OR IGNORE INTO conversation_media_refs (conversation_id, ref) VALUES (?, ?)'),
    // Before the conversation's references go: its media that no other conversation refers to.
    deleteOwnMedia: db.prepare(
      'DELETE FROM conversation_media WHERE ref IN (SELECT ref FROM conversation_media_refs WHERE conversation_id = ?) AND ref NOT IN (SELECT ref FROM conversation_media_refs WHERE conversation_id <> ?)',
    ),
    deleteMediaRefs: db.prepare('DELETE FROM conversation_media_refs WHERE conversation_id = ?'),
  };
}

/** A {@link ConversationStore} on one SQLite file, saying which driver it chose. */
export type SqliteStore = ConversationStore &
  Required<Pick<ConversationStore, 'readStream' | 'readSteps' | 'loadStep' | 'readMedia'>> & {
    /** The driver this store runs on: the one asked for, or the one chosen when none was. */
    readonly driver: SqliteDriverName;
  };

/** Unknown keys are ignored, not refused: sqliteStore never refused them, so options that worked still do. */
const sqliteStoreOptionsSchema = option.object(
  {
    path: option.string({ nonEmpty: true, expected: 'the path of the database file (a non-empty string)' }),
    create: option.withDefault(option.boolean(), true),
    synchronous: option.withDefault(option.choice(['full', 'normal']), 'full'),
    busyTimeoutMs: option.withDefault(option.integer({ minimum: 0, expected: 'a non-negative integer of milliseconds' }), 5_000),
    driver: option.optional(option.choice<SqliteDriverName>(['better-sqlite3', 'node:sqlite'])),
    keepSteps: keepStepsSchema,
  },
  { expected: 'an object { path, synchronous?, busyTimeoutMs?, driver?, create?, keepSteps? }', unknownKeys: 'ignore' },
);

/**
 * The embedded default {@link ConversationStore}: one SQLite file, created with its schema on first
 * use, in WAL mode, through `better-sqlite3` (12.x, or 13.x on Node 22+, an optional peer) when it
 * is installed, else through `node:sqlite` (Node 22.13+) — see {@link SqliteStoreOptions.driver}.
 * The file records its schema version; a file of another version or another application is refused
 * with a {@link SqliteStoreError}, untouched.
 *
 * - Every `save` is one transaction: the snapshot and its log entries are written together or not
 *   at all, and only if the stored revision is the expected one (`ConversationConflictError`
 *   otherwise). A crash at any point leaves the previous snapshot readable.
 * - Saves that arrive in the same turn of the event loop share one transaction (group commit): a
 *   host running many conversations pays for one sync to disk per turn, not one per write.
 * - Several processes may open the same file: SQLite serialises their writes (waiting up to
 *   `busyTimeoutMs`), and the revision check keeps two hosts from overwriting each other's state.
 * - With no driver it can use, it throws a {@link SqliteStoreError} here, when it is created.
 *
 * @example
 * ```ts
 * import { createConversationHost } from 'actorloop';
 * import { sqliteStore } from 'actorloop/sqlite';
 *
 * const host = createConversationHost({ machine, store: sqliteStore({ path: 'conversations.db' }) });
 * await host.recover();
 * ```
 */
export function sqliteStore(options: SqliteStoreOptions): SqliteStore {
  requireNodeRuntime('actorloop/sqlite', sqliteElsewhere);
  // Past the check above, so node:fs is there; read lazily so the import itself names the runtime.
  const { existsSync } = nodeBuiltin<typeof import('node:fs')>('node:fs') as typeof import('node:fs');
  const { path, create, synchronous, busyTimeoutMs, driver: requested, keepSteps } = resolveOptionsWith(sqliteStoreOptionsSchema, options);
  const driver = resolveDriver(path, requested);

  let opening: Promise<Database> | undefined;
  let database: Database | undefined;
  let closed = false;
  let batch: PendingSave[] = [];
  let flushScheduled: ReturnType<typeof setImmediate> | undefined;

  const missingFile = () => new SqliteStoreError('not_found', path, 'no such file (create: false opens an existing store only)');

  /** The same error for a bad file over either driver; any other error as the driver threw it. */
  const fileError = (error: unknown): unknown => {
    const problem = driver.fileProblem(error);
    if (problem === 'not_a_database')
      return new SqliteStoreError('not_a_store', path, 'the file is not a SQLite database', { cause: error });
    if (problem === 'corrupt') {
      return new SqliteStoreError('corrupt', path, `the file is damaged (SQLite: ${(error as Error).message}); restore it from a backup`, {
        cause: error,
      });
    }
    return error;
  };
  /** Runs SQLite calls, turning a bad-file error into its {@link SqliteStoreError}. */
  const reading = <T>(body: () => T): T => {
    try {
      return body();
    } catch (error) {
      throw fileError(error);
    }
  };

  const open = (): Promise<Database> => {
    if (closed) return Promise.reject(new SqliteStoreError('closed', path, 'the store is closed'));
    if (!opening) {
      opening = (async () => {
        let db: SqliteConnection | undefined;
        try {
          if (!create && !existsSync(path)) throw missingFile();
          db = await driver.open(path, { mustExist: !create });
          db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
          // Checked first: switching the journal mode writes to the file, which must stay untouched if it is not ours.
          openSchema(db, path, { create });
          db.exec('PRAGMA journal_mode = WAL');
          db.exec(`PRAGMA synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
        } catch (error) {
          db?.close();
          if (SqliteStoreError.isInstance(error)) throw error;
          // Removed between the check and the open: better-sqlite3 refuses it (fileMustExist) with SQLITE_CANTOPEN.
          if (!create && !existsSync(path)) throw missingFile();
          throw fileError(error);
        }
        if (closed) {
          db.close();
          throw new SqliteStoreError('closed', path, 'the store is closed');
        }
        database = { db, statements: prepare(db), listStatements: new Map() };
        return database;
      })();
      // A failed open is not kept: fixing the file makes the next call work.
      opening.catch(() => {
        opening = undefined;
      });
    }
    return opening;
  };

  /** Writes one save inside the batch's transaction; a conflict fails this save only. */
  const writeOne = ({ statements }: Database, { conversation, log, stream, media }: PendingSave): Error | undefined => {
    // The column keeps its 0.1 name `version`: renaming it would make older files need a migration for nothing.
    const { id, schemaVersion: version, machineId, status, revision, owner, snapshot, updatedAt, state } = conversation;
    const stored = statements.revision.get(id)?.revision ?? 0;
    if (stored !== revision - 1) return new ConversationConflictError(id, revision - 1, stored);
    // Checked before anything of this save is written: it refers only to bytes the file has or gets now.
    const missing = media.find((item) => item.data === undefined && statements.hasMedia.get(item.ref) === undefined);
    if (missing)
      return new SqliteStoreError(
        'missing_media',
        path,
        `the save of conversation ${JSON.stringify(id)} refers to media ${missing.ref}, which the file does not have`,
      );
    for (const item of media) {
      if (item.data !== undefined) statements.insertMedia.run(item.ref, item.mediaType, item.bytes, item.data);
      statements.referMedia.run(id, item.ref);
    }
    if (revision === 1) statements.insert.run(id, version, machineId, status, revision, owner, snapshot, updatedAt);
    else statements.update.run(version, machineId, status, revision, owner, snapshot, updatedAt, id, stored);
    statements.appendStep.run(id, revision, version, machineId, status, state ?? '', owner, snapshot, updatedAt);
    if (revision > keepSteps) statements.pruneSteps.run(id, revision - keepSteps);
    for (const entry of log) statements.appendLog.run(id, entry.at, entry.type, entry.event);
    if (stream) {
      // A new run: the stream of the run before it stays, older ones go.
      if (stream.runStart === 1) statements.pruneStream.run(id, id);
      statements.appendStream.run(id, stream.runStart, stream.items);
    }
    return undefined;
  };

  const flush = () => {
    if (flushScheduled !== undefined) clearImmediate(flushScheduled);
    flushScheduled = undefined;
    const saves = batch;
    batch = [];
    if (saves.length === 0) return;
    if (!database) {
      for (const save of saves) save.reject(new SqliteStoreError('closed', path, 'the store is closed'));
      return;
    }
    const open = database;
    let outcomes: Array<Error | undefined>;
    try {
      outcomes = open.db.immediate(() => saves.map((save) => writeOne(open, save)));
    } catch (error) {
      for (const save of saves) save.reject(fileError(error));
      return;
    }
    saves.forEach((save, index) => {
      const conflict = outcomes[index];
      if (conflict) save.reject(conflict);
      else save.resolve();
    });
  };

  const checkConversation = (conversation: StoredConversation) => {
    if (!isRecord(conversation) || typeof conversation.id !== 'string' || typeof conversation.snapshot !== 'string') {
      throw new InvalidOptionsError(
        'conversation',
        'a StoredConversation { id, schemaVersion, machineId, status, snapshot, revision, owner, updatedAt }',
        conversation,
      );
    }
    if (!Number.isInteger(conversation.revision) || conversation.revision < 1) {
      throw new InvalidOptionsError('conversation.revision', 'a positive integer', conversation.revision);
    }
    // Checked here, not left to the STRICT table: the two drivers bind and refuse other values
    // differently (node:sqlite 24 stores true as 1, better-sqlite3 refuses it), and the error must not depend on the driver.
    for (const field of ['machineId', 'status', 'owner'] as const) {
      if (typeof conversation[field] !== 'string') throw new InvalidOptionsError(`conversation.${field}`, 'a string', conversation[field]);
    }
    if (conversation.state !== undefined && typeof conversation.state !== 'string') {
      throw new InvalidOptionsError('conversation.state', 'the state value as JSON text (a string), or absent', conversation.state);
    }
    for (const field of ['schemaVersion', 'updatedAt'] as const) {
      if (!Number.isSafeInteger(conversation[field]))
        throw new InvalidOptionsError(`conversation.${field}`, 'an integer', conversation[field]);
    }
  };

  const checkLog = (log: readonly LogAppend[]) => {
    for (const [index, entry] of log.entries()) {
      if (!isRecord(entry) || !Number.isSafeInteger(entry.at) || !isRecord(entry.event) || typeof entry.event.type !== 'string') {
        throw new InvalidOptionsError(`log[${index}]`, 'a LogAppend { at (integer milliseconds), event }', entry);
      }
    }
  };

  return {
    driver: driver.name,
    async load(id) {
      const { statements } = await open();
      const row = reading(() => statements.load.get(id));
      return row ? conversationOf(row) : undefined;
    },

    async save(conversation, log: readonly LogAppend[] = [], stream?: StreamAppend, saveOptions: SaveOptions = {}) {
      checkConversation(conversation);
      checkLog(log);
      const rows = log.map(({ at, event }) => ({ at, type: event.type, event: JSON.stringify(event) }));
      const streamRow = streamRowOf(stream);
      const media = (saveOptions.media ?? []).map(({ ref, mediaType, bytes, data }) => ({
        ref,
        mediaType,
        bytes,
        data: data === undefined ? undefined : bytesFromBase64(data),
      }));
      await open();
      return new Promise<void>((resolve, reject) => {
        batch.push({ conversation: { ...conversation }, log: rows, stream: streamRow, media, resolve, reject });
        flushScheduled ??= setImmediate(flush);
      });
    },

    async readLog(id, readOptions = {}): Promise<ConversationLogEntry[]> {
      const { afterSeq, limit } = resolveOptionsWith(readLogOptionsSchema, readOptions);
      const { statements } = await open();
      return reading(() => statements.readLog.all(id, afterSeq, limit)).map(({ seq, at, event }) => ({
        seq,
        at,
        event: JSON.parse(event) as ConversationLogEntry['event'],
      }));
    },

    async readStream(id, readOptions = {}): Promise<StoredStreamEntry[]> {
      const { afterSeq, limit } = resolveOptionsWith(readLogOptionsSchema, readOptions);
      const { statements } = await open();
      return reading(() => statements.readStream.all(id, afterSeq, limit)).map(({ seq, run_start, items }) => ({
        seq,
        items: JSON.parse(items) as StoredStreamEntry['items'],
        ...(run_start === 1 ? { runStart: true as const } : {}),
      }));
    },

    async readSteps(id, readOptions = {}): Promise<StoredStep[]> {
      const { afterSeq, limit } = resolveOptionsWith(readLogOptionsSchema, readOptions);
      const { statements } = await open();
      return reading(() => statements.readSteps.all(id, afterSeq, limit)).map(({ revision, updated_at, status, state }) => ({
        seq: revision,
        at: updated_at,
        status,
        ...(state === '' ? {} : { state }),
      }));
    },

    async loadStep(id, seq) {
      const { statements } = await open();
      const row = reading(() => statements.loadStep.get(id, seq));
      return row ? conversationOf(row) : undefined;
    },

    async list(listOptions: ListOptions = {}): Promise<ConversationSummary[]> {
      const { status: statuses, after, limit } = resolveOptionsWith(listOptionsSchema, listOptions);
      const opened = await open();
      const wanted = statuses ? [...statuses] : [];
      return reading(() => {
        let statement = opened.listStatements.get(wanted.length);
        if (!statement) {
          const byStatus = wanted.length > 0 ? `AND status IN (${wanted.map(() => '?').join(', ')})` : '';
          statement = opened.db.prepare(
            `SELECT id, status, revision, owner, updated_at AS updatedAt FROM conversations WHERE id > ? ${byStatus} ORDER BY id LIMIT ?`,
          );
          opened.listStatements.set(wanted.length, statement);
        }
        return statement.all(after ?? '', ...wanted, limit);
      });
    },

    async readMedia(ref) {
      const { statements } = await open();
      const row = reading(() => statements.readMedia.get(ref));
      return row ? { ref, mediaType: row.media_type, bytes: row.bytes, data: base64FromBytes(row.data) } : undefined;
    },

    async delete(id) {
      const { db, statements } = await open();
      // Writes waiting for the batch go first: a delete must not be overtaken by an older save.
      flush();
      return reading(() =>
        db.immediate(() => {
          statements.deleteOwnMedia.run(id, id);
          statements.deleteMediaRefs.run(id);
          statements.deleteLog.run(id);
          statements.deleteStream.run(id);
          statements.deleteSteps.run(id);
          return statements.deleteConversation.run(id).changes > 0;
        }),
      );
    },

    async close() {
      if (closed) return;
      // Saves already accepted are written before the file closes.
      if (database) flush();
      closed = true;
      database?.db.close();
      database = undefined;
    },
  };
}

/** A save's stream as its row; checked like the log, so a bad one fails its own save before the batch. */
function streamRowOf(stream: StreamAppend | undefined): PendingSave['stream'] {
  if (stream === undefined) return undefined;
  if (!isRecord(stream) || !Array.isArray(stream.items)) {
    throw new InvalidOptionsError('stream', 'a StreamAppend { items: ConversationStreamItem[], runStart? }', stream);
  }
  if (stream.items.length === 0) return undefined;
  return { runStart: stream.runStart === true ? 1 : 0, items: JSON.stringify(stream.items) };
}
