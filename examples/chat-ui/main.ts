/**
 * A chat page built with the AI SDK's `useChat` (React, bundled by vite at start), talking to an
 * actorloop host through the UI message stream protocol: streamed answers, tool calls, approval
 * buttons, and an answer that survives a reload.
 *
 *   npm run example -- chat-ui                    offline: a SCRIPTED model, http://127.0.0.1:3001, ./chat-ui.db
 *   npm run example -- chat-ui --port 0 --db /tmp/chat.db
 *   OPENAI_API_KEY=sk-… npm run example -- chat-ui   live (or OPENAI_BASE_URL, ANTHROPIC_API_KEY: see ../support/model.ts)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { liveModel, printMode } from '../support/model.js';
import { buildPage } from './build-page.js';
import { scriptedChatModel } from './scripted-model.js';
import { startChatServer } from './server.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.PORT ?? '3001' },
    host: { type: 'string', default: '127.0.0.1' },
    db: { type: 'string', default: process.env.DB_PATH ?? 'chat-ui.db' },
  },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`--port: expected an integer from 0 to 65535, got ${JSON.stringify(values.port)}`);
  process.exit(2);
}

const live = await liveModel();
printMode(
  'chat-ui',
  live ?? {
    live: false,
    label: 'a SCRIPTED model (handlerProvider, in this process; set OPENAI_API_KEY, ANTHROPIC_API_KEY or OPENAI_BASE_URL to go live)',
  },
);

// The page is built for this run only: nothing built is kept in the clone.
const pageDir = mkdtempSync(join(tmpdir(), 'actorloop-chat-ui-'));
await buildPage(pageDir);
const chat = await startChatServer({
  provider: live?.provider ?? scriptedChatModel(),
  db: values.db,
  pageDir,
  port,
  hostname: values.host,
});
console.log(`[chat-ui] open ${chat.url}/ (conversations in ${values.db})`);

const stop = async () => {
  await chat.close();
  rmSync(pageDir, { recursive: true, force: true });
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
