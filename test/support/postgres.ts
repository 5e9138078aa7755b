/**
 * The machine's PostgreSQL for the tests (`ACTORLOOP_TEST_POSTGRES_URL`, by default the `test`
 * database of user `postgres` on 127.0.0.1:5432; .ci/run checks it answers). Each test file works
 * in a schema of its own with a random name, dropped when the file ends, so files running in
 * parallel and CI runs one after another never see each other's tables.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const postgresUrl = process.env.ACTORLOOP_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A pool on the test database for the test's own checks, with the error listener every pool needs. */
export function testPool(max = 4): pg.Pool {
  const pool = new pg.Pool({ connectionString: postgresUrl, max });
  pool.on('error', () => undefined);
  return pool;
}

/** A schema of its own for one test file: `name`, and `drop()` for its `afterAll`. */
export function testSchema(label: string): { name: string; drop: () => Promise<void> } {
  const name = `test_${label.replace(/[^a-z0-9]/g, '_')}_${randomBytes(5).toString('hex')}`;
  return {
    name,
    drop: async () => {
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Runs `sql` once on a connection of its own. */
export async function queryOnce<Row extends Record<string, unknown>>(sql: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    return (await client.query<Row>(sql, values)).rows;
  } finally {
    await client.end();
  }
}
