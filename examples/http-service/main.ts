/**
 * A conversation service on actorloop/http, mounted in a Hono app: every conversation stored in
 * one SQLite file, runs a crash interrupted resumed at start, requests authorized by a bearer
 * token, events streamed as resumable Server-Sent Events.
 *
 *   npm run example -- http-service                                  offline: a SCRIPTED model, port 3000, ./conversations.db
 *   API_TOKEN=s3cret npx tsx examples/http-service/main.ts --port 0  the token to accept, any free port
 *   OPENAI_API_KEY=sk-… npm run example -- http-service               live (or OPENAI_BASE_URL, ANTHROPIC_API_KEY: see ../support/model.ts)
 *
 * Then (see README.md):
 *   curl -s localhost:3000/api/conversations/c-1/messages -H "authorization: Bearer $API_TOKEN" \
 *     -H 'content-type: application/json' -d '{"content": "Please refund order B-7"}'
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { createConversationHost, createConversationMachine } from 'actorloop';
import { answerClientError } from 'actorloop/http';
import { sqliteStore } from 'actorloop/sqlite';
import { liveModel, printMode } from '../support/model.js';
import { scriptedModelMode, serviceArguments } from '../support/service-arguments.js';
import { createApp } from './app.js';
import { orderTools } from './orders.js';
import { scriptedModel } from './scripted-model.js';

const { port, host: hostname, db } = serviceArguments({ port: '3000', db: 'conversations.db' });

const live = await liveModel();
printMode('http-service', live ?? scriptedModelMode);

// Without API_TOKEN the service makes one for this run and says it: nothing is served unauthorized.
const token = process.env.API_TOKEN || randomBytes(18).toString('base64url');
if (!process.env.API_TOKEN) console.log(`API_TOKEN is not set: this run accepts the token ${token}`);

// One machine serves every conversation.
const machine = createConversationMachine({
  provider: live?.provider ?? scriptedModel(),
  tools: orderTools(),
  system: 'You are a support agent for an online shop. Look orders up before you refund them. Be brief.',
  retry: { maxRetries: 3, initialDelayMs: 500, maxDelayMs: 10_000 },
});
const store = sqliteStore({ path: db });
const host = createConversationHost({
  machine,
  store,
  onError: (error, id) => console.error(`[host] conversation ${id}:`, error),
});

// Runs a crash (or a kill) left in flight go on from their last stored step.
const recovered = await host.recover();
console.log(
  `[recover] ${db}: resumed ${recovered.resumed.length}${recovered.resumed.length ? ` (${recovered.resumed.join(', ')})` : ''}, failed ${recovered.failed.length}`,
);
for (const { id, error } of recovered.failed) console.error(`[recover] ${id} not resumed:`, error);

const app = createApp({ host, store, token });
// Hono's Node adapter turns node:http requests into Fetch API ones for the app.
const server = createServer(getRequestListener(app.fetch));
// What node:http cannot parse (a header too large, bytes that are not HTTP) gets a problem+json answer too.
server.on('clientError', answerClientError);
await new Promise<void>((resolve, reject) => {
  server.once('error', reject);
  server.listen(port, hostname, resolve);
});
const address = server.address() as AddressInfo;
console.log(`listening on http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  console.log(`[${signal}] closing: event streams end telling clients to resume, runs in flight stay stored and resume at the next start`);
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Closing the host ends every event stream (with `event: resume`); then the connections can go.
  await host.close();
  server.closeIdleConnections();
  await closed;
}
process.once('SIGINT', () => void shutdown('SIGINT'));
process.once('SIGTERM', () => void shutdown('SIGTERM'));
