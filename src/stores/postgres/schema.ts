import type { PostgresPool, PostgresPoolClient } from './postgres-pool.js';
import { PostgresStoreError } from './postgres-store-error.js';

/** The quoted names of a store's tables in its schema, each `"schema"."<prefix>name"`. */
export type TableNames = {
  /** `schema.prefix`, as errors name the store. */
  label: string;
  /** The advisory lock key text: one per store, so two stores in one database never wait for each other. */
  lockKey: string;
  /** Quoted. */
  schema: string;
  schemaName: string;
  conversations: string;
  log: string;
  stream: string;
  steps: string;
  leases: string;
  leaseTokens: string;
  media: string;
  mediaRefs: string;
  meta: string;
  /** Unquoted `schema.name`, for `to_regclass`. */
  regclass: (table: 'conversations' | 'meta') => string;
};

const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

export function tableNames(schema: string, prefix: string): TableNames {
  const table = (name: string) => `${quote(schema)}.${quote(`${prefix}${name}`)}`;
  return {
    label: `${schema}.${prefix}`,
    lockKey: `actorloop store ${schema}.${prefix}`,
    schema: quote(schema),
    schemaName: schema,
    conversations: table('conversations'),
    log: table('log'),
    stream: table('stream'),
    steps: table('steps'),
    leases: table('leases'),
    leaseTokens: table('lease_tokens'),
    media: table('media'),
    mediaRefs: table('media_refs'),
    meta: table('meta'),
    regclass: (name) => table(name),
  };
}

/**
 * The schema's versions, each the statements that lead to it from the one before: a store of an
 * older version is brought up to date when it is opened; one of a newer version is refused.
 */
const migrations: Array<(names: TableNames) => string[]> = [
  // Version 1.
  (names) => [
    // COLLATE "C": ids sort by their bytes, as the SQLite store sorts them, whatever the database's locale.
    `CREATE TABLE ${names.conversations} (
      id text COLLATE "C" PRIMARY KEY,
      schema_version integer NOT NULL,
      machine_id text NOT NULL,
      status text NOT NULL,
      revision bigint NOT NULL,
      owner text NOT NULL,
      snapshot text NOT NULL,
      updated_at bigint NOT NULL
    )`,
    `CREATE INDEX ON ${names.conversations} (status, id)`,
    // Events as the JSON text they were given in: jsonb would reorder keys and drop duplicates.
    `CREATE TABLE ${names.log} (
      seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      conversation_id text COLLATE "C" NOT NULL,
      at bigint NOT NULL,
      type text NOT NULL,
      event text NOT NULL
    )`,
    `CREATE INDEX ON ${names.log} (conversation_id, seq)`,
    `CREATE TABLE ${names.stream} (
      seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      conversation_id text COLLATE "C" NOT NULL,
      run_start boolean NOT NULL,
      items text NOT NULL
    )`,
    `CREATE INDEX ON ${names.stream} (conversation_id, seq)`,
    // No foreign key to conversations: a lease is taken before a new conversation's first write.
    `CREATE TABLE ${names.leases} (
      conversation_id text COLLATE "C" PRIMARY KEY,
      owner text NOT NULL,
      token bigint NOT NULL,
      expires_at timestamptz NOT NULL
    )`,
    // One sequence for every conversation's tokens: a token is never handed out twice, also after a lease row is deleted.
    `CREATE SEQUENCE ${names.leaseTokens}`,
  ],
  // Version 2: every write's snapshot, for history and fork.
  (names) => [
    `CREATE TABLE ${names.steps} (
      conversation_id text COLLATE "C" NOT NULL,
      revision bigint NOT NULL,
      schema_version integer NOT NULL,
      machine_id text NOT NULL,
      status text NOT NULL,
      state text,
      owner text NOT NULL,
      snapshot text NOT NULL,
      updated_at bigint NOT NULL,
      PRIMARY KEY (conversation_id, revision)
    )`,
  ],
  // Version 3: media kept once by content (`readMedia`), and which conversations refer to each.
  (names) => [
    `CREATE TABLE ${names.media} (
      ref text COLLATE "C" PRIMARY KEY,
      media_type text NOT NULL,
      bytes bigint NOT NULL,
      data bytea NOT NULL
    )`,
    `CREATE TABLE ${names.mediaRefs} (
      conversation_id text COLLATE "C" NOT NULL,
      ref text COLLATE "C" NOT NULL,
      PRIMARY KEY (conversation_id, ref)
    )`,
    `CREATE INDEX ON ${names.mediaRefs} (ref)`,
  ],
];

/** The schema version this code writes and reads. */
export const schemaVersion = migrations.length;

/**
 * Creates the store's tables on first use, brings older ones up to date, or refuses what it must
 * not touch — under a transaction-scoped advisory lock, so processes that start at once create them
 * once and wait for each other.
 */
export async function openSchema(pool: PostgresPool, names: TableNames): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  client.on('error', (error) => {
    broken = error;
  });
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [names.lockKey]);
    // Asked first: CREATE SCHEMA IF NOT EXISTS needs the right to create schemas even when it exists.
    const schemaFound = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [names.schemaName]);
    if (schemaFound.rows.length === 0) await client.query(`CREATE SCHEMA IF NOT EXISTS ${names.schema}`);
    const found = await client.query('SELECT to_regclass($1) IS NOT NULL AS meta, to_regclass($2) IS NOT NULL AS conversations', [
      names.regclass('meta'),
      names.regclass('conversations'),
    ]);
    const { meta, conversations } = found.rows[0] as { meta: boolean; conversations: boolean };
    let version = 0;
    if (meta) {
      const row = await client.query(`SELECT value FROM ${names.meta} WHERE key = 'schema_version'`);
      version = Number(row.rows[0]?.value ?? Number.NaN);
      if (!Number.isInteger(version) || version < 1) {
        throw new PostgresStoreError(
          'not_a_store',
          { tables: names.label, operation: 'open' },
          `${names.meta} has no schema_version: it is not an actorloop store's table; choose another schema or tablePrefix`,
        );
      }
    } else if (conversations) {
      throw new PostgresStoreError(
        'not_a_store',
        { tables: names.label, operation: 'open' },
        `${names.conversations} exists but is not an actorloop store's table (no ${names.meta}); choose another schema or tablePrefix`,
      );
    } else {
      await client.query(`CREATE TABLE ${names.meta} (key text PRIMARY KEY, value text NOT NULL)`);
      await client.query(`INSERT INTO ${names.meta} (key, value) VALUES ('schema_version', '0')`);
    }
    if (version > schemaVersion) {
      throw new PostgresStoreError(
        'unknown_schema_version',
        { tables: names.label, operation: 'open' },
        `the tables have schema version ${version}; this actorloop reads version ${schemaVersion} (a newer actorloop made them: upgrade actorloop)`,
      );
    }
    for (const migration of migrations.slice(version)) for (const statement of migration(names)) await client.query(statement);
    if (version < schemaVersion) {
      await client.query(`UPDATE ${names.meta} SET value = $1 WHERE key = 'schema_version'`, [String(schemaVersion)]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await rollback(client);
    client.release(broken ?? true);
    throw error;
  }
  client.release(broken);
}

async function rollback(client: PostgresPoolClient): Promise<void> {
  try {
    await client.query('ROLLBACK');
  } catch {
    // The connection is gone: the server rolled the transaction back with it.
  }
}
