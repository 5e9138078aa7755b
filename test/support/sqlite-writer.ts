/**
 * A child process for the mid-write crash test: saves ever newer snapshots of one conversation
 * (each 256 KiB, its payload tied to its revision) to the SQLite file in argv[2], with one log
 * entry each, and prints each revision once the save resolved, over the driver in argv[3]. The
 * parent kills it with SIGKILL.
 */
import { type SqliteDriverName, sqliteStore } from '../../src/stores/sqlite/index.js';

const [path, driver] = process.argv.slice(2) as [string | undefined, SqliteDriverName | undefined];
if (!path || !driver) throw new Error('usage: sqlite-writer.ts <path> <driver>');
const store = sqliteStore({ path, driver });
let revision = (await store.load('big'))?.revision ?? 0;
for (;;) {
  revision++;
  const snapshot = JSON.stringify({ revision, payload: String(revision % 10).repeat(256 * 1024) });
  await store.save(
    {
      id: 'big',
      schemaVersion: 1,
      machineId: 'conversation',
      status: 'running',
      snapshot,
      revision,
      owner: 'writer',
      updatedAt: Date.now(),
    },
    [{ at: Date.now(), event: { type: 'cancel', reason: `revision ${revision}` } }],
  );
  process.stdout.write(`${revision}\n`);
}
