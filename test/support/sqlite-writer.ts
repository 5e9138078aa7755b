/**
 * A child process for the mid-write crash test: saves ever newer snapshots of one conversation
 * (each 256 KiB, its payload tied to its revision) to the SQLite file in argv[2], with one log
 * entry each, and prints each revision once the save resolved. The parent kills it with SIGKILL.
 */
import { sqliteStore } from '../../src/stores/sqlite/index.js';

const path = process.argv[2];
if (!path) throw new Error('usage: sqlite-writer.ts <path>');
const store = sqliteStore({ path });
let revision = (await store.load('big'))?.revision ?? 0;
for (;;) {
  revision++;
  const snapshot = JSON.stringify({ revision, payload: String(revision % 10).repeat(256 * 1024) });
  await store.save(
    { id: 'big', version: 1, machineId: 'conversation', status: 'running', snapshot, revision, owner: 'writer', updatedAt: Date.now() },
    [{ at: Date.now(), event: { type: 'cancel', reason: `revision ${revision}` } }],
  );
  process.stdout.write(`${revision}\n`);
}
