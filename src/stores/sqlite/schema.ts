import type { SqliteConnection } from './drivers/sqlite-driver.js';
import { SqliteStoreError } from './sqlite-store-error.js';

/** The schema version this store writes and reads, kept in the file's `user_version`. */
export const schemaVersion = 1;
/** Marks the file as an actorloop conversation store (`application_id`, "aclp"). */
export const applicationId = 0x61636c70;

const createStatements = [
  // STRICT: a value of the wrong type is refused rather than stored.
  `CREATE TABLE conversations (
    id TEXT PRIMARY KEY NOT NULL,
    version INTEGER NOT NULL,
    machine_id TEXT NOT NULL,
    status TEXT NOT NULL,
    revision INTEGER NOT NULL,
    owner TEXT NOT NULL,
    snapshot TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT`,
  'CREATE INDEX conversations_by_status ON conversations (status, id)',
  // AUTOINCREMENT: a sequence number is never used twice, also after entries are deleted.
  `CREATE TABLE conversation_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL,
    at INTEGER NOT NULL,
    type TEXT NOT NULL,
    event TEXT NOT NULL
  ) STRICT`,
  'CREATE INDEX conversation_log_by_conversation ON conversation_log (conversation_id, seq)',
];

/**
 * The stream entries (`readStream`), the steps (`readSteps`, `loadStep`) and the media (`readMedia`): added to files of schema version 1 when they are opened, so a
 * file stays readable by the actorloop versions before streams (they leave the table alone).
 */
const streamStatements = [
  `CREATE TABLE IF NOT EXISTS conversation_stream (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL,
    run_start INTEGER NOT NULL,
    items TEXT NOT NULL
  ) STRICT`,
  'CREATE INDEX IF NOT EXISTS conversation_stream_by_conversation ON conversation_stream (conversation_id, seq)',
  // Every write's snapshot (history and fork); added like the stream table, for the same reason.
  `CREATE TABLE IF NOT EXISTS conversation_steps (
    conversation_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    version INTEGER NOT NULL,
    machine_id TEXT NOT NULL,
    status TEXT NOT NULL,
    state TEXT NOT NULL, -- '' when the writer gave none
    owner TEXT NOT NULL,
    snapshot TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, revision)
  ) STRICT`,
  // Media kept once by content (`readMedia`), as bytes; and which conversations refer to each,
  // so a medium goes with the last of them. Added like the stream table, for the same reason.
  `CREATE TABLE IF NOT EXISTS conversation_media (
    ref TEXT PRIMARY KEY NOT NULL,
    media_type TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    data BLOB NOT NULL
  ) STRICT`,
  `CREATE TABLE IF NOT EXISTS conversation_media_refs (
    conversation_id TEXT NOT NULL,
    ref TEXT NOT NULL,
    PRIMARY KEY (conversation_id, ref)
  ) STRICT, WITHOUT ROWID`,
  'CREATE INDEX IF NOT EXISTS conversation_media_refs_by_ref ON conversation_media_refs (ref)',
];

/**
 * Creates the schema in a new file, or checks that an existing file is a store of a schema
 * version this code reads. Runs in one `BEGIN IMMEDIATE` transaction, so two processes opening a
 * new file at once create it once. With `create: false` an empty database is refused, not filled.
 */
export function openSchema(db: SqliteConnection, path: string, options: { create?: boolean } = {}): void {
  db.immediate(() => {
    const version = db.prepare<{ user_version: number }>('PRAGMA user_version').get()?.user_version ?? 0;
    const application = db.prepare<{ application_id: number }>('PRAGMA application_id').get()?.application_id ?? 0;
    const tables = db.prepare<{ count: number }>("SELECT count(*) AS count FROM sqlite_schema WHERE type = 'table'").get()?.count ?? 0;
    if (application === 0 && version === 0 && tables === 0) {
      if (options.create === false) {
        throw new SqliteStoreError('not_found', path, 'the file is an empty database with no conversation store in it (create: false)');
      }
      for (const statement of [...createStatements, ...streamStatements]) db.exec(statement);
      db.exec(`PRAGMA application_id = ${applicationId}`);
      db.exec(`PRAGMA user_version = ${schemaVersion}`);
      return;
    }
    if (application !== applicationId) {
      throw new SqliteStoreError(
        'not_a_store',
        path,
        `the file is a SQLite database of something else (application_id ${application}, ${tables} table(s)), not an actorloop conversation store`,
      );
    }
    if (version !== schemaVersion) {
      throw new SqliteStoreError(
        'unknown_schema_version',
        path,
        `the file has schema version ${version}; this actorloop reads version ${schemaVersion}` +
          (version > schemaVersion ? ' (a newer actorloop wrote it: upgrade actorloop)' : ''),
      );
    }
    for (const statement of streamStatements) db.exec(statement);
  });
}
