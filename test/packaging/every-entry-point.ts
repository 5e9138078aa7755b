// Every entry point of the package, as a strict consumer project imports it with all the optional
// peers installed: type-checked (strict, skipLibCheck: false) by TypeScript 5.9 and by TypeScript 7,
// then run. The list must match package.json "exports" (test/subpaths.test.ts checks).
import * as root from 'actorloop';
import * as a2a from 'actorloop/a2a';
import * as aiSdk from 'actorloop/ai-sdk';
import * as anthropic from 'actorloop/anthropic';
import * as http from 'actorloop/http';
import * as inspect from 'actorloop/inspect';
import * as mcp from 'actorloop/mcp';
import * as openai from 'actorloop/openai';
import * as otel from 'actorloop/otel';
import * as postgres from 'actorloop/postgres';
import * as restate from 'actorloop/restate';
import * as restateClient from 'actorloop/restate/client';
import * as rx from 'actorloop/rx';
import * as sqlite from 'actorloop/sqlite';
import * as testing from 'actorloop/testing';
// Registers its matchers with vitest's `expect`, which loads and extends outside a test run too.
import * as testingVitest from 'actorloop/testing/vitest';

// A few names each, used as a user would, so the declarations behind them are resolved.
const machine: root.ConversationMachine = root.createConversationMachine({ provider: root.handlerProvider(async function* () {}) });
const store: root.ConversationStore = sqlite.sqliteStore({ path: 'every-entry-point.db' });
const host = root.createConversationHost({ machine, store });
const used: Array<(...args: never[]) => unknown> = [
  a2a.createA2AHandler,
  aiSdk.aiSdkProvider,
  anthropic.toAnthropicMessages,
  http.createConversationHandler,
  inspect.startLiveViewer,
  mcp.mcpTools,
  openai.toOpenAIMessages,
  otel.traceConversation,
  postgres.postgresStore,
  restate.restateConversations,
  restateClient.restateConversationClient,
  rx.output$,
  testing.scriptedProvider,
  testingVitest.matchers.toCallTool,
];
await host.close();

const entryPoints = {
  root,
  a2a,
  aiSdk,
  anthropic,
  http,
  inspect,
  mcp,
  openai,
  otel,
  postgres,
  restate,
  restateClient,
  rx,
  sqlite,
  testing,
  testingVitest,
};
console.log(
  JSON.stringify({
    exports: Object.fromEntries(Object.entries(entryPoints).map(([name, module]) => [name, Object.keys(module).length > 0])),
    used: used.length,
  }),
);
