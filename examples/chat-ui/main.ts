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
import { liveModel, printMode } from '../support/model.js';
import { scriptedModelMode, serviceArguments } from '../support/service-arguments.js';
import { buildPage } from './build-page.js';
import { scriptedChatModel } from './scripted-model.js';
import { startChatServer } from './server.js';

const { port, host, db } = serviceArguments({ port: '3001', db: 'chat-ui.db' });

const live = await liveModel();
printMode('chat-ui', live ?? scriptedModelMode);

// The page is built for this run only: nothing built is kept in the clone.
const pageDir = mkdtempSync(join(tmpdir(), 'actorloop-chat-ui-'));
await buildPage(pageDir);
const chat = await startChatServer({
  provider: live?.provider ?? scriptedChatModel(),
  db,
  pageDir,
  port,
  hostname: host,
});
console.log(`[chat-ui] open ${chat.url}/ (conversations in ${db})`);

const stop = async () => {
  await chat.close();
  rmSync(pageDir, { recursive: true, force: true });
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
