/**
 * A worker process of the crash test: a host on the SQLite file that recovers what a killed
 * predecessor left in flight and drives every conversation on. It reports over IPC what it is
 * doing — requests, tool executions, results, writes, acknowledged messages — so the test can kill
 * it (SIGKILL) at the point it aims for.
 *
 * argv: <database path> <side file> <wire server url> <SQLite driver>
 */
import { createConversationHost, type ConversationStore } from '../../src/index.js';
import { type SqliteDriverName, sqliteStore } from '../../src/stores/sqlite/index.js';
import { conversationIds, crashMachine, drive } from './crash-scenario.js';

export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'phase'; phase: 'request' | 'tool' | 'result' | 'write' | 'child' }
  | { type: 'ack'; id: string; turn: number }
  | { type: 'finished' };

const [path, sideFile, url, driver] = process.argv.slice(2) as Array<string | undefined>;
if (!path || !sideFile || !url || (driver !== 'better-sqlite3' && driver !== 'node:sqlite')) {
  throw new Error('usage: crash-worker.ts <database> <side file> <url> <better-sqlite3|node:sqlite>');
}
const report = (message: WorkerMessage) => process.send?.(message);

const sqlite = sqliteStore({ path, driver: driver satisfies SqliteDriverName });
const store: ConversationStore = {
  ...sqlite,
  save: (conversation, log) => {
    report({ type: 'phase', phase: 'write' });
    return sqlite.save(conversation, log);
  },
};
const host = createConversationHost({ machine: crashMachine(url, sideFile, () => report({ type: 'phase', phase: 'tool' })), store });
for (const id of conversationIds) {
  host.subscribe(id, (event) => {
    if (event.type === 'request.started') report({ type: 'phase', phase: 'request' });
    if (event.type === 'tool.result') report({ type: 'phase', phase: 'result' });
    // An agent call's child starts a tool: a kill now leaves a tree stored mid-child.
    if (event.type === 'agent.event' && event.event.type === 'tool.started') report({ type: 'phase', phase: 'child' });
  });
}
report({ type: 'ready' });
await host.recover();
await Promise.all(conversationIds.map((id) => drive(host, id, (conversation, turn) => report({ type: 'ack', id: conversation, turn }))));
await host.close();
report({ type: 'finished' });
process.disconnect?.();
