/**
 * Writes the stored-format fixtures of the current schema version (test/fixtures/snapshots/v<N>/,
 * N = `currentSchemaVersion`):
 * a SQLite conversation store and each run's persisted actor snapshot as JSON, for five runs — a
 * finished one, one waiting for approval, one stopped while two tool calls ran, one with Anthropic
 * signed and redacted thinking, one with OpenAI Responses encrypted reasoning.
 *
 * The fixtures pin what an older actorloop wrote, so that a newer one is tested on it: run this
 * once, with the code of the release whose format they hold (before the change that adds the next
 * version), and commit what it writes. Tests only read them (test/snapshot-versions.test.ts);
 * never regenerate a committed version's fixtures. v1 was written at commit 52f1b34 (see its README).
 *
 * ```sh
 * npx tsx scripts/write-snapshot-fixtures.ts          # refuses to overwrite an existing folder
 * npx tsx scripts/write-snapshot-fixtures.ts --force  # writes it again
 * ```
 *
 * No network: the Chat Completions runs use a scripted handler model, the Anthropic and Responses
 * runs the real providers against a local wire server. The clock is fixed (`Date.now` counts from
 * 2026-01-01 in steps of one millisecond), so the same code writes the same snapshots.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { currentSchemaVersion } from '../src/machines/snapshots/snapshot-migrations.js';
import { createConversationHost, createConversationMachine, handlerProvider, type Provider } from '../src/index.js';
import { anthropicProvider } from '../src/providers/anthropic/index.js';
import { openaiProvider } from '../src/providers/openai/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { responsesStream } from '../test/support/responses-events.js';
import {
  anthropicRedacted,
  anthropicSignature,
  fixtureDatabaseOf,
  fixtureDirOf,
  fixtureIds,
  fixtureModel,
  fixtureSnapshotOf,
  fixtureTools,
  prompts,
  responsesEncrypted,
} from '../test/support/snapshot-fixtures.js';
import { jsonResponse, startWireServer } from '../test/support/wire-server.js';

const fixtureDir = fixtureDirOf(currentSchemaVersion);
const fixtureDatabase = fixtureDatabaseOf(currentSchemaVersion);
let clock = Date.UTC(2026, 0, 1);
Date.now = () => clock++;

if (existsSync(fixtureDir) && !process.argv.includes('--force')) {
  console.error(`${fixtureDir} exists; fixtures of a released format are never rewritten (--force to write them anyway)`);
  process.exit(1);
}
rmSync(fixtureDir, { recursive: true, force: true });
mkdirSync(fixtureDir, { recursive: true });

const never = new Promise<never>(() => undefined);
const tools = fixtureTools((name, args) => {
  // The mid-tool run stops while these two run: they never answer.
  if (name === 'lookup' || name === 'charge') return never;
  if (name === 'add') {
    const { a, b } = args as { a: number; b: number };
    return a + b;
  }
  if (name === 'weather') return `sunny in ${(args as { city: string }).city}`;
  return `${name} done`;
});
const machineWith = (provider: Provider) => createConversationMachine({ provider, tools, system: 'Be brief.', retry: false });
const storeOptions = { path: fixtureDatabase, driver: 'better-sqlite3' } as const;

async function until(check: () => Promise<boolean>, what: string) {
  for (let tries = 0; tries < 500; tries++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

// Chat Completions runs: finished, waiting for approval, stopped mid-tool.
{
  const host = createConversationHost({
    machine: machineWith(handlerProvider(fixtureModel)),
    store: sqliteStore(storeOptions),
    hostId: 'fixture-host',
  });
  await host.send('finished', { type: 'user.message', content: prompts.finished });
  await host.result('finished');
  await host.send('awaiting-approval', { type: 'user.message', content: prompts['awaiting-approval'] });
  await until(async () => (await host.get('awaiting-approval'))?.status === 'awaitingApproval', 'the approval');
  await host.send('mid-tool', { type: 'user.message', content: prompts['mid-tool'] });
  await until(async () => (await storedRound('mid-tool')) === 'settled,running,running', 'the mid-tool round');
  // Stops the run without writing: the store keeps it as a crash would, two calls running.
  await host.close();
}

/** The states of the stored round's calls, read through a second connection as another process would. */
async function storedRound(id: string): Promise<string> {
  const store = sqliteStore(storeOptions);
  try {
    const stored = await store.load(id);
    if (!stored) return '';
    const snapshot = JSON.parse(stored.snapshot) as { context: { round: Array<{ state: string }> | null } };
    return (snapshot.context.round ?? []).map((call) => call.state).join(',');
  } finally {
    await store.close();
  }
}

// Anthropic: signed thinking and redacted thinking before a tool call.
{
  const server = await startWireServer([
    jsonResponse(200, {
      id: 'msg_fixture_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [
        { type: 'thinking', thinking: 'The user wants the weather in Paris.', signature: anthropicSignature },
        { type: 'redacted_thinking', data: anthropicRedacted },
        { type: 'tool_use', id: 'toolu_fixture_1', name: 'weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 20, output_tokens: 10 },
    }),
    jsonResponse(200, {
      id: 'msg_fixture_2',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: 'Sunny in Paris.' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 30, output_tokens: 5 },
    }),
  ]);
  const provider = anthropicProvider({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant', baseURL: server.url, maxTokens: 1024, stream: false });
  const host = createConversationHost({ machine: machineWith(provider), store: sqliteStore(storeOptions), hostId: 'fixture-host' });
  await host.send('anthropic-thinking', { type: 'user.message', content: 'Weather in Paris?' });
  await host.result('anthropic-thinking');
  await host.close();
  await server.close();
}

// OpenAI Responses (`store: true`, so item and response ids are kept): an encrypted reasoning item before a call.
{
  const server = await startWireServer([
    responsesStream({
      id: 'resp_fixture_1',
      items: [
        { type: 'reasoning', id: 'rs_fixture_1', summary: ['Weather for Rome.'], encrypted: responsesEncrypted },
        { type: 'function_call', id: 'fc_fixture_1', callId: 'call_fixture_1', name: 'weather', args: '{"city":"Rome"}' },
      ],
    }),
    responsesStream({ id: 'resp_fixture_2', items: [{ type: 'message', id: 'msg_fixture_r2', text: 'Sunny in Rome.' }] }),
  ]);
  const provider = openaiProvider({
    api: 'responses',
    model: 'gpt-5-mini',
    apiKey: 'sk-responses',
    baseURL: `${server.url}/v1`,
    store: true,
  });
  const host = createConversationHost({ machine: machineWith(provider), store: sqliteStore(storeOptions), hostId: 'fixture-host' });
  await host.send('responses-reasoning', { type: 'user.message', content: 'Weather in Rome?' });
  await host.result('responses-reasoning');
  await host.close();
  await server.close();
}

// Each run's stored snapshot is `JSON.stringify(actor.getPersistedSnapshot())` of its actor.
{
  const store = sqliteStore(storeOptions);
  for (const id of fixtureIds) {
    const stored = await store.load(id);
    if (!stored) throw new Error(`${id} was not stored`);
    writeFileSync(fixtureSnapshotOf(currentSchemaVersion, id), `${JSON.stringify(JSON.parse(stored.snapshot), null, 2)}\n`);
    console.log(`${id}: ${stored.status}, schema version ${stored.schemaVersion}`);
  }
  await store.close();
}
for (const suffix of ['-wal', '-shm']) rmSync(`${fixtureDatabase}${suffix}`, { force: true });
console.log(`wrote ${fixtureDir}`);
// The hung tool calls of the mid-tool run keep nothing open, but the run's abandoned promises would never settle.
process.exit(0);
