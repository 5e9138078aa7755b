/**
 * POSTGRES: what the durable host's rounds cost on `postgresStore` against `sqliteStore`, in the
 * same run. Each conversation is a new one of a host, 5 tool rounds against a zero-latency scripted
 * model (so the store is what differs); C conversations at once (1, then 50), sides interleaved,
 * a fresh store (SQLite file / Postgres table prefix) per measurement, best of `reps`. Host rounds
 * per second per side and their ratio, Postgres over SQLite. On Postgres each conversation also
 * takes and gives up its lease (two statements) besides its saves (one statement each).
 *
 * The database: `ACTORLOOP_BENCH_POSTGRES_URL`, else `ACTORLOOP_TEST_POSTGRES_URL`, else the `test`
 * database of user `postgres` on 127.0.0.1:5432; its tables go in a schema of their own, dropped at
 * the end. When it does not answer, the scenario says so and the rest of the bench runs.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { type ConversationStore, createConversationHost } from '../src/index.js';
import { postgresStore } from '../src/stores/postgres/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { toolRoundsMachine } from './tool-rounds-machine.js';

export type PostgresBenchRow = {
  side: 'sqlite' | 'postgres';
  concurrency: number;
  conversations: number;
  /** Best of the reps. */
  wallMs: number;
  roundsPerSecond: number;
  /** Saves per round the store was given (the same on both sides). */
  savesPerRound: number;
};
export type PostgresBenchResult =
  | {
      database: string;
      server: string;
      rounds: number;
      reps: number;
      rows: PostgresBenchRow[];
      /** Postgres rounds/s over SQLite rounds/s, per concurrency. */
      ratios: Array<{ concurrency: number; postgresOverSqlite: number }>;
    }
  | { skipped: string };

/** The URL without its password, for the report. */
const shown = (url: string) => url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');

export async function postgresBench(options: {
  rounds: number;
  reps: number;
  concurrency: Array<{ c: number; conversations: number }>;
  log: (line: string) => void;
}): Promise<PostgresBenchResult> {
  const url =
    process.env.ACTORLOOP_BENCH_POSTGRES_URL ?? process.env.ACTORLOOP_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  admin.on('error', () => undefined);
  let server: string;
  try {
    await admin.connect();
    server = String((await admin.query('SHOW server_version')).rows[0]?.server_version);
  } catch (error) {
    return { skipped: `PostgreSQL does not answer at ${shown(url)}: ${(error as Error).message}` };
  }
  const directory = mkdtempSync(join(tmpdir(), 'actorloop-bench-postgres-'));
  const { rounds } = options;
  const machine = toolRoundsMachine({ rounds, words: 1 });
  let stores = 0;
  const storeFor = (side: PostgresBenchRow['side']): ConversationStore =>
    side === 'sqlite'
      ? sqliteStore({ path: join(directory, `bench-${++stores}.db`) })
      : postgresStore({ connectionString: url, schema, tablePrefix: `b${++stores}_`, maxConnections: 10 });

  /** C conversations at once on a fresh store: wall ms, and saves per round. */
  const measure = async (side: PostgresBenchRow['side'], concurrency: number, conversations: number) => {
    let saves = 0;
    const store = storeFor(side);
    const counted: ConversationStore = new Proxy(store, {
      get(target, key, receiver) {
        if (key === 'save') {
          return (...args: Parameters<ConversationStore['save']>) => {
            saves++;
            return target.save(...args);
          };
        }
        return Reflect.get(target, key, receiver);
      },
    });
    const host = createConversationHost({ machine, store: counted });
    // The tables are made before the clock starts: first use is not what a round costs.
    await store.list({ limit: 1 });
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < conversations) {
          const id = `c-${next++}`;
          await host.send(id, { type: 'user.message', content: 'add' });
          const output = await host.result(id);
          if (output.status !== 'done' || output.iterations !== rounds)
            throw new Error(`POSTGRES ${side}: ${output.status} after ${output.iterations}`);
        }
      }),
    );
    const wallMs = performance.now() - started;
    await host.close();
    return { wallMs, savesPerRound: saves / (conversations * rounds) };
  };

  const rows: PostgresBenchRow[] = [];
  try {
    for (const { c, conversations } of options.concurrency) {
      options.log(`POSTGRES: ${conversations} conversations × ${rounds} rounds, ${c} at once, sqlite vs postgres…`);
      // Warm-up: the JIT and both connections, on a few conversations per side.
      for (const side of ['sqlite', 'postgres'] as const) await measure(side, Math.min(c, 5), Math.min(conversations, 10));
      const best: Record<PostgresBenchRow['side'], { wallMs: number; savesPerRound: number } | undefined> = {
        sqlite: undefined,
        postgres: undefined,
      };
      for (let rep = 0; rep < options.reps; rep++) {
        // Interleaved, the order turned each rep: what the machine does meanwhile falls on both sides.
        const order = rep % 2 === 0 ? (['sqlite', 'postgres'] as const) : (['postgres', 'sqlite'] as const);
        for (const side of order) {
          const run = await measure(side, c, conversations);
          if (!best[side] || run.wallMs < (best[side]?.wallMs ?? Number.POSITIVE_INFINITY)) best[side] = run;
        }
      }
      for (const side of ['sqlite', 'postgres'] as const) {
        const run = best[side] as { wallMs: number; savesPerRound: number };
        rows.push({
          side,
          concurrency: c,
          conversations,
          wallMs: run.wallMs,
          roundsPerSecond: (conversations * rounds) / (run.wallMs / 1000),
          savesPerRound: run.savesPerRound,
        });
      }
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin.end();
  }
  const ratios = options.concurrency.map(({ c }) => {
    const of = (side: PostgresBenchRow['side']) =>
      rows.find((row) => row.side === side && row.concurrency === c)?.roundsPerSecond ?? Number.NaN;
    return { concurrency: c, postgresOverSqlite: of('postgres') / of('sqlite') };
  });
  return { database: shown(url), server, rounds, reps: options.reps, rows, ratios };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await postgresBench({
    rounds: 5,
    reps: 3,
    concurrency: [
      { c: 1, conversations: 40 },
      { c: 50, conversations: 400 },
    ],
    log: (line) => console.error(line),
  });
  console.log(JSON.stringify(result, null, 2));
}
