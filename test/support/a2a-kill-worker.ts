/**
 * The A2A server of the kill test (test/a2a-server-kill.test.ts) as a process: a conversation host
 * over the SQLite file, `recover()` first (a killed predecessor's working task goes on here), then
 * `createA2AHandler` on `serveA2A` on a free port. It reports over IPC where it listens and what it
 * resumed; SIGTERM closes it cleanly, SIGKILL (what the test aims at it) does not.
 *
 * argv: <database path> <wire server url>
 */
import { createConversationHost, createConversationMachine, openaiProvider } from '../../src/index.js';
import { createA2AHandler, serveA2A } from '../../src/protocols/a2a/index.js';
import { sqliteStore } from '../../src/stores/sqlite/index.js';

export type KillWorkerMessage = { type: 'ready'; url: string; resumed: string[] };

const [path, modelUrl] = process.argv.slice(2) as Array<string | undefined>;
if (!path || !modelUrl) throw new Error('usage: a2a-kill-worker.ts <database> <wire server url>');

const machine = createConversationMachine({
  provider: openaiProvider({ model: 'planned', apiKey: 'test', baseURL: `${modelUrl}/v1` }),
  retry: { maxRetries: 0 },
});
const host = createConversationHost({ machine, store: sqliteStore({ path }) });
const { resumed } = await host.recover();
const handler = await createA2AHandler(host, {
  card: { name: 'Survivor', description: 'Answers after a kill.', version: '0.0.1' },
  authorize: () => true,
});
const server = await serveA2A(handler, { port: 0 });
process.on('SIGTERM', () => {
  void server
    .close()
    .then(() => host.close())
    .finally(() => process.exit(0));
});
process.send?.({ type: 'ready', url: server.url, resumed } satisfies KillWorkerMessage);
