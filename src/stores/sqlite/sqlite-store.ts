import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import type {
  ConversationLogEntry,
  ConversationStatus,
  ConversationStore,
  ConversationSummary,
  ListOptions,
  LogAppend,
  StoredConversation,
} from '../../host/conversation-store.js';
import { ConversationConflictError } from '../../host/errors/conversation-conflict-error.js';
import { listLimit, statusFilter } from '../../host/list-options.js';
import { isRecord } from '../../util/is-record.js';
import { openSchema } from './schema.js';
import { SqliteStoreError } from './sqlite-store-error.js';

/**
 * What {@link sqliteStore} takes.
 *
 * @example
 * ```ts
 * const options: SqliteStoreOptions = { path: '/var/lib/app/conversations.db', synchronous: 'normal' };
 * ```
 */
export type SqliteStoreOptions = {
  /** The database file; created (with its schema) on first use. */
  path: string;
  /**
   * When a write counts as done. `'full'` (default): on disk before `save` resolves — survives a
   * power loss. `'normal'`: survives a crash of the process (the usual failure); a power loss may
   * lose the last writes, never corrupt the file. Either way a crash mid-write leaves the previous
   * snapshot readable (SQLite's write-ahead log).
   */
  synchronous?: 'full' | 'normal';
  /** How long a write waits for another process holding the file's write lock. Default 5000 ms. */
  busyTimeoutMs?: number;
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
};

type PendingSave = {
  conversation: StoredConversation;
  /** Log entries already turned into rows, so a bad one fails its own save, not the batch. */
  log: Array<{ at: number; type: string; event: string }>;
  resolve: () => void;
  reject: (error: unknown) => void;
};

/** What a store method needs of the open file. */
type Database = {
  db: BetterSqlite3.Database;
  statements: ReturnType<typeof prepare>;
  listStatements: Map<number, BetterSqlite3.Statement>;
};

function prepare(db: BetterSqlite3.Database) {
  return {
    load: db.prepare<[string], ConversationRow>(
      'SELECT id, version, machine_id, status, revision, owner, snapshot, updated_at FROM conversations WHERE id = ?',
    ),
    revision: db.prepare<[string], number>('SELECT revision FROM conversations WHERE id = ?').pluck(),
    insert: db.prepare(
      'INSERT INTO conversations (id, version, machine_id, status, revision, owner, snapshot, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    update: db.prepare(
      'UPDATE conversations SET version = ?, machine_id = ?, status = ?, revision = ?, owner = ?, snapshot = ?, updated_at = ? WHERE id = ? AND revision = ?',
    ),
    appendLog: db.prepare('INSERT INTO conversation_log (conversation_id, at, type, event) VALUES (?, ?, ?, ?)'),
    readLog: db.prepare<[string, number, number], { seq: number; at: number; event: string }>(
      'SELECT seq, at, event FROM conversation_log WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    deleteConversation: db.prepare('DELETE FROM conversations WHERE id = ?'),
    deleteLog: db.prepare('DELETE FROM conversation_log WHERE conversation_id = ?'),
  };
}

/**
 * better-sqlite3 13 is built for Node ≥ 22: loaded on Node 20 it crashes the process (a
 * segmentation fault), so its version is read from its package.json before it is loaded.
 */
export function unsupportedDriverProblem(driverVersion: string, nodeVersion: string): string | undefined {
  const driverMajor = Number.parseInt(driverVersion, 10);
  const nodeMajor = Number.parseInt(nodeVersion, 10);
  if (driverMajor >= 13 && nodeMajor < 22) {
    return `better-sqlite3 ${driverVersion} needs Node 22 or newer, and this is Node ${nodeVersion}: npm install better-sqlite3@12 (or run on Node 22+)`;
  }
  if (driverMajor < 12)
    return `better-sqlite3 ${driverVersion} is too old: actorloop/sqlite needs 12.x or 13.x (npm install better-sqlite3@12)`;
  return undefined;
}

function installedDriverVersion(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const manifest = require(require.resolve('better-sqlite3/package.json')) as { version?: unknown };
    return typeof manifest.version === 'string' ? manifest.version : undefined;
  } catch {
    return undefined;
  }
}

/** Loads the optional peer; a missing one is a clear error, not a module-resolution stack. */
async function loadDriver(path: string): Promise<typeof BetterSqlite3> {
  const version = installedDriverVersion();
  const problem = version === undefined ? undefined : unsupportedDriverProblem(version, process.versions.node);
  if (problem) throw new SqliteStoreError('driver_unsupported', path, problem);
  try {
    const module = (await import('better-sqlite3')) as { default: typeof BetterSqlite3 };
    return module.default;
  } catch (error) {
    throw new SqliteStoreError(
      'driver_missing',
      path,
      'actorloop/sqlite needs the better-sqlite3 package (12.x, or 13.x on Node 22+): npm install better-sqlite3',
      { cause: error },
    );
  }
}

/**
 * The embedded default {@link ConversationStore}: one SQLite file (`better-sqlite3` 12.x, or 13.x on Node 22+, an
 * optional peer), created with its schema on first use, in WAL mode. The file records its schema
 * version; a file of another version or another application is refused with a
 * {@link SqliteStoreError}, untouched.
 *
 * - Every `save` is one transaction: the snapshot and its log entries are written together or not
 *   at all, and only if the stored revision is the expected one (`ConversationConflictError`
 *   otherwise). A crash at any point leaves the previous snapshot readable.
 * - Saves that arrive in the same turn of the event loop share one transaction (group commit): a
 *   host running many conversations pays for one sync to disk per turn, not one per write.
 * - Several processes may open the same file: SQLite serialises their writes (waiting up to
 *   `busyTimeoutMs`), and the revision check keeps two hosts from overwriting each other's state.
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
export function sqliteStore(options: SqliteStoreOptions): ConversationStore {
  if (!isRecord(options)) throw new InvalidOptionsError('options', 'an object { path, synchronous?, busyTimeoutMs? }', options);
  const { path, synchronous = 'full', busyTimeoutMs = 5_000 } = options;
  if (typeof path !== 'string' || path === '')
    throw new InvalidOptionsError('path', 'the path of the database file (a non-empty string)', path);
  if (synchronous !== 'full' && synchronous !== 'normal') throw new InvalidOptionsError('synchronous', '"full" or "normal"', synchronous);
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new InvalidOptionsError('busyTimeoutMs', 'a non-negative integer of milliseconds', busyTimeoutMs);
  }

  let opening: Promise<Database> | undefined;
  let database: Database | undefined;
  let closed = false;
  let batch: PendingSave[] = [];
  let flushScheduled: ReturnType<typeof setImmediate> | undefined;

  const open = (): Promise<Database> => {
    if (closed) return Promise.reject(new SqliteStoreError('closed', path, 'the store is closed'));
    if (!opening) {
      opening = (async () => {
        const Driver = await loadDriver(path);
        let db: BetterSqlite3.Database | undefined;
        try {
          db = new Driver(path);
          db.pragma(`busy_timeout = ${busyTimeoutMs}`);
          // Checked first: switching the journal mode writes to the file, which must stay untouched if it is not ours.
          openSchema(db, path);
          db.pragma('journal_mode = WAL');
          db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
        } catch (error) {
          db?.close();
          if (SqliteStoreError.isInstance(error)) throw error;
          const code = (error as { code?: unknown }).code;
          if (code === 'SQLITE_NOTADB')
            throw new SqliteStoreError('not_a_store', path, 'the file is not a SQLite database', { cause: error });
          throw error;
        }
        if (closed) {
          db.close();
          throw new SqliteStoreError('closed', path, 'the store is closed');
        }
        database = { db, statements: prepare(db), listStatements: new Map() };
        return database;
      })();
      // A failed open is not kept: installing the driver or fixing the file makes the next call work.
      opening.catch(() => {
        opening = undefined;
      });
    }
    return opening;
  };

  /** Writes one save inside the batch's transaction; a conflict fails this save only. */
  const writeOne = ({ statements }: Database, { conversation, log }: PendingSave): ConversationConflictError | undefined => {
    const { id, version, machineId, status, revision, owner, snapshot, updatedAt } = conversation;
    const stored = statements.revision.get(id) ?? 0;
    if (stored !== revision - 1) return new ConversationConflictError(id, revision - 1, stored);
    if (revision === 1) statements.insert.run(id, version, machineId, status, revision, owner, snapshot, updatedAt);
    else statements.update.run(version, machineId, status, revision, owner, snapshot, updatedAt, id, stored);
    for (const entry of log) statements.appendLog.run(id, entry.at, entry.type, entry.event);
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
    let outcomes: Array<ConversationConflictError | undefined>;
    try {
      outcomes = open.db.transaction(() => saves.map((save) => writeOne(open, save))).immediate();
    } catch (error) {
      for (const save of saves) save.reject(error);
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
        'a StoredConversation { id, version, machineId, status, snapshot, revision, owner, updatedAt }',
        conversation,
      );
    }
    if (!Number.isInteger(conversation.revision) || conversation.revision < 1) {
      throw new InvalidOptionsError('conversation.revision', 'a positive integer', conversation.revision);
    }
  };

  return {
    async load(id) {
      const { statements } = await open();
      const row = statements.load.get(id);
      if (!row) return undefined;
      return {
        id: row.id,
        version: row.version,
        machineId: row.machine_id,
        status: row.status,
        snapshot: row.snapshot,
        revision: row.revision,
        owner: row.owner,
        updatedAt: row.updated_at,
      };
    },

    async save(conversation, log: readonly LogAppend[] = []) {
      checkConversation(conversation);
      const rows = log.map(({ at, event }) => ({ at, type: event.type, event: JSON.stringify(event) }));
      await open();
      return new Promise<void>((resolve, reject) => {
        batch.push({ conversation: { ...conversation }, log: rows, resolve, reject });
        flushScheduled ??= setImmediate(flush);
      });
    },

    async readLog(id, readOptions = {}): Promise<ConversationLogEntry[]> {
      const limit = listLimit(readOptions.limit, 'readLog');
      const { statements } = await open();
      return statements.readLog
        .all(id, readOptions.afterSeq ?? 0, limit)
        .map(({ seq, at, event }) => ({ seq, at, event: JSON.parse(event) as ConversationLogEntry['event'] }));
    },

    async list(listOptions: ListOptions = {}): Promise<ConversationSummary[]> {
      const statuses = statusFilter(listOptions.status);
      const limit = listLimit(listOptions.limit, 'list');
      const opened = await open();
      const wanted = statuses ? [...statuses] : [];
      let statement = opened.listStatements.get(wanted.length);
      if (!statement) {
        const byStatus = wanted.length > 0 ? `AND status IN (${wanted.map(() => '?').join(', ')})` : '';
        statement = opened.db.prepare(
          `SELECT id, status, revision, owner, updated_at AS updatedAt FROM conversations WHERE id > ? ${byStatus} ORDER BY id LIMIT ?`,
        );
        opened.listStatements.set(wanted.length, statement);
      }
      return statement.all(listOptions.after ?? '', ...wanted, limit) as ConversationSummary[];
    },

    async delete(id) {
      const { db, statements } = await open();
      // Writes waiting for the batch go first: a delete must not be overtaken by an older save.
      flush();
      return db
        .transaction(() => {
          statements.deleteLog.run(id);
          return statements.deleteConversation.run(id).changes > 0;
        })
        .immediate();
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
