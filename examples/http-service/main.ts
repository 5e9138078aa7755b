/**
 * An HTTP + Server-Sent Events service over the durable conversation host, on node:http, storing
 * every conversation in one SQLite file. It resumes what a crash interrupted when it starts.
 *
 *   npx tsx examples/http-service/main.ts                          offline: a SCRIPTED model, port 3000, ./conversations.db
 *   npx tsx examples/http-service/main.ts --port 0 --db /tmp/c.db  any free port, another file
 *   OPENAI_API_KEY=sk-… npx tsx examples/http-service/main.ts      live (or OPENAI_BASE_URL, ANTHROPIC_API_KEY: see ../support/model.ts)
 *
 * Then: curl -s localhost:3000/conversations -d '{"content":"refund order B-7"}'   (see README.md)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createConversationHost, createConversationMachine } from 'actorloop';
import { sqliteStore } from 'actorloop/sqlite';
import { liveModel, printMode } from '../support/model.js';
import { orderTools } from './orders.js';
import { scriptedModel } from './scripted-model.js';
import { createConversationService } from './service.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.PORT ?? '3000' },
    host: { type: 'string', default: '127.0.0.1' },
    db: { type: 'string', default: process.env.DB_PATH ?? 'conversations.db' },
  },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`--port: expected an integer from 0 to 65535, got ${JSON.stringify(values.port)}`);
  process.exit(2);
}

const live = await liveModel();
printMode(
  'http-service',
  live ?? {
    live: false,
    label: 'a SCRIPTED model (handlerProvider, in this process; set OPENAI_API_KEY, ANTHROPIC_API_KEY or OPENAI_BASE_URL to go live)',
  },
);

// One machine serves every conversation.
const machine = createConversationMachine({
  provider: live?.provider ?? scriptedModel(),
  tools: orderTools(),
  system: 'You are a support agent for an online shop. Look orders up before you refund them. Be brief.',
  retry: { maxRetries: 3, initialDelayMs: 500, maxDelayMs: 10_000 },
});
const host = createConversationHost({
  machine,
  store: sqliteStore({ path: values.db }),
  onError: (error, id) => console.error(`[host] conversation ${id}:`, error),
});

// Runs a crash (or a kill) left in flight go on from their last stored step.
const recovered = await host.recover();
console.log(
  `[recover] ${values.db}: resumed ${recovered.resumed.length}${recovered.resumed.length ? ` (${recovered.resumed.join(', ')})` : ''}, failed ${recovered.failed.length}`,
);
for (const { id, error } of recovered.failed) console.error(`[recover] ${id} not resumed:`, error);

const service = createConversationService({ host });
const server = createServer(service.handle);
await new Promise<void>((resolve, reject) => {
  server.once('error', reject);
  server.listen(port, values.host, resolve);
});
const address = server.address() as AddressInfo;
console.log(`listening on http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  console.log(`[${signal}] closing: open event streams end, runs in flight stay stored and resume at the next start`);
  service.close();
  server.closeIdleConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await host.close();
}
process.once('SIGINT', () => void shutdown('SIGINT'));
process.once('SIGTERM', () => void shutdown('SIGTERM'));
