/**
 * Versioned snapshots (DESIGN §14, issue 24 item 4): every persisted snapshot and stored
 * conversation carries `schemaVersion`; older ones are upgraded by the chain of migrations when they
 * are loaded; a newer one is refused with both versions named and the data left as it was.
 *
 * The v1 fixtures (test/fixtures/snapshots/v1/, written by scripts/write-snapshot-fixtures.ts with
 * the code before `schemaVersion`) are only read: the database is copied first.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createActor, toPromise } from 'xstate';
import {
  ConversationLoadError,
  type ConversationStore,
  createConversationHost,
  createConversationMachine,
  handlerProvider,
  memoryStore,
  type Message,
  type Provider,
  resultTexts,
} from '../src/index.js';
import { migrateSnapshot, upgradeSnapshot } from '../src/machines/snapshots/migrate-snapshot.js';
import * as migrations from '../src/machines/snapshots/snapshot-migrations.js';
import { anthropicProvider } from '../src/providers/anthropic/index.js';
import { openaiProvider } from '../src/providers/openai/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { expectValidHistory } from './support/history.js';
import { textAnswer } from './support/responses-events.js';
import {
  anthropicRedacted,
  anthropicSignature,
  type FixtureId,
  fixtureDatabaseOf,
  fixtureIds,
  fixtureModel,
  fixtureSnapshotOf,
  fixtureTools,
  responsesEncrypted,
} from './support/snapshot-fixtures.js';
import { jsonResponse, startWireServer, type WireServer } from './support/wire-server.js';

// Every step of the chain is wrapped in a spy that calls the real step: the tests see that a load
// ran the chain, which an upgrade that only adds `schemaVersion` would not show otherwise. The spies
// sit in the chain's own array for this file and are taken out after it (the quick suite shares
// loaded modules between its files).
const chain = migrations.snapshotMigrations as unknown as Record<string, migrations.SnapshotMigration>;
const stepSpies = migrations.snapshotMigrations.map((_, index) => vi.spyOn(chain, String(index)));
afterAll(() => {
  for (const spy of stepSpies) spy.mockRestore();
});
const stepCalls = () => stepSpies[0]!.mock.calls.length;

const work = mkdtempSync(join(tmpdir(), 'actorloop-snapshot-versions-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let copies = 0;
/** A copy of the committed v1 database: the committed file is never opened. */
const databaseCopy = () => {
  const path = join(work, `v1-copy-${++copies}.db`);
  copyFileSync(fixtureDatabaseOf(1), path);
  return path;
};
const fixtureJson = (id: FixtureId): Record<string, unknown> =>
  JSON.parse(readFileSync(fixtureSnapshotOf(1, id), 'utf8')) as Record<string, unknown>;
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

const servers: WireServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** The fixtures' tools, each execution counted by tool call id. */
function countedTools() {
  const executions: string[] = [];
  const tools = fixtureTools((name, args, toolCallId) => {
    executions.push(toolCallId);
    if (name === 'add') {
      const { a, b } = args as { a: number; b: number };
      return a + b;
    }
    if (name === 'weather') return `sunny in ${(args as { city: string }).city}`;
    return `${name} ran again`;
  });
  return { executions, tools };
}

const machineWith = (provider: Provider, tools: ReturnType<typeof countedTools>['tools']) =>
  createConversationMachine({ provider, tools, system: 'Be brief.', retry: false });

function chatSetup(store: ConversationStore) {
  const { executions, tools } = countedTools();
  const machine = machineWith(handlerProvider(fixtureModel), tools);
  const host = createConversationHost({ machine, store, hostId: 'v2-host' });
  return { executions, machine, host };
}

const anthropicAnswer = (text: string) =>
  jsonResponse(200, {
    id: 'msg_next',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 40, output_tokens: 3 },
  });

async function anthropicMachine() {
  const server = await startWireServer([anthropicAnswer('Still sunny.')]);
  servers.push(server);
  const provider = anthropicProvider({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant', baseURL: server.url, maxTokens: 1024, stream: false });
  return { server, machine: machineWith(provider, countedTools().tools) };
}

/** `chain`: `previousResponseId: true`, which names the last stored response instead of sending the history. */
async function responsesMachine(chain = false) {
  const server = await startWireServer([textAnswer('Still sunny in Rome.')]);
  servers.push(server);
  const provider = openaiProvider({
    api: 'responses',
    model: 'gpt-5-mini',
    apiKey: 'sk-responses',
    baseURL: `${server.url}/v1`,
    ...(chain ? { previousResponseId: true } : {}),
  });
  return { server, machine: machineWith(provider, countedTools().tools) };
}

/** The assistant turn of the Anthropic fixture, as the next request must send it back: byte for byte what came. */
const anthropicAssistantBlocks = [
  { type: 'thinking', thinking: 'The user wants the weather in Paris.', signature: anthropicSignature },
  { type: 'redacted_thinking', data: anthropicRedacted },
  { type: 'tool_use', id: 'toolu_fixture_1', name: 'weather', input: { city: 'Paris' } },
];

function expectAnthropicHistorySent(server: WireServer) {
  expect(server.requests).toHaveLength(1);
  const body = server.requests[0]!.body as { messages: Array<{ role: string; content: unknown }> };
  expect(body.messages[1]).toEqual({ role: 'assistant', content: anthropicAssistantBlocks });
  expect(server.requests[0]!.rawBody).toContain(JSON.stringify(anthropicSignature));
  expect(server.requests[0]!.rawBody).toContain(JSON.stringify(anthropicRedacted));
}

/** Stateless, the whole history goes: the reasoning item with its encrypted content, as it came. */
function expectResponsesHistorySent(server: WireServer) {
  expect(server.requests).toHaveLength(1);
  const input = (server.requests[0]!.body as { input: unknown[] }).input;
  expect(input.slice(0, 3)).toEqual([
    { role: 'user', content: 'Weather in Rome?' },
    { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Weather for Rome.' }], encrypted_content: responsesEncrypted },
    { type: 'function_call', call_id: 'call_fixture_1', name: 'weather', arguments: '{"city":"Rome"}' },
  ]);
}

/** Chained, the stored ids carry the history: the last response is named, only the new message goes. */
function expectResponsesChainSent(server: WireServer) {
  expect(server.requests).toHaveLength(1);
  expect(server.requests[0]!.body).toMatchObject({
    previous_response_id: 'resp_fixture_2',
    input: [{ role: 'user', content: 'And tomorrow?' }],
  });
}

const toolResults = (messages: Message[]) =>
  Object.fromEntries(
    messages.flatMap((message) =>
      message.role === 'tool'
        ? message.content.map((part) => [part.toolCallId, part.isError ? `error: ${String(part.result)}` : part.result])
        : [],
    ),
  );

describe('the chain of migrations', () => {
  it('v1 → v2 adds schemaVersion 2 and changes nothing else', () => {
    for (const id of fixtureIds) {
      const v1 = fixtureJson(id);
      expect(v1.schemaVersion, id).toBeUndefined();
      expect(migrations.v1ToV2(v1), id).toEqual({ ...v1, schemaVersion: 2 });
      expect(v1.schemaVersion, `${id}: the input is not changed`).toBeUndefined();
    }
  });

  it('v2 → v3 moves the Responses fields of every part into providerMetadata.openai, unchanged', () => {
    const v2 = migrations.v1ToV2(fixtureJson('responses-reasoning'));
    const before = structuredClone(v2);
    const v3 = migrations.v2ToV3(v2);
    expect(v2, 'the input is not changed').toEqual(before);
    // The same JSON with each part's `openai` renamed: nothing else moves, nothing is lost.
    const moved = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(moved);
      if (typeof value !== 'object' || value === null) return value;
      const entries = Object.entries(value).map(([key, inner]) => [key, moved(inner)] as const);
      return Object.fromEntries(entries.map(([key, inner]) => (key === 'openai' ? ['providerMetadata', { openai: inner }] : [key, inner])));
    };
    expect(v3).toEqual({ ...(moved(v2) as object), schemaVersion: 3 });
    const context = v3.context as { messages: Message[]; response: { content: unknown[] } };
    expect(context.messages[1]!.content).toEqual([
      {
        type: 'reasoning',
        text: 'Weather for Rome.',
        providerMetadata: { openai: { itemId: 'rs_fixture_1', responseId: 'resp_fixture_1', encryptedContent: responsesEncrypted } },
      },
      {
        type: 'tool-call',
        toolCallId: 'call_fixture_1',
        toolName: 'weather',
        args: { city: 'Rome' },
        providerMetadata: { openai: { itemId: 'fc_fixture_1', responseId: 'resp_fixture_1' } },
      },
    ]);
    expect(context.response.content).toEqual([
      { type: 'text', text: 'Sunny in Rome.', providerMetadata: { openai: { itemId: 'msg_fixture_r2', responseId: 'resp_fixture_2' } } },
    ]);
  });

  it('v2 → v3 leaves a snapshot without Responses fields as it was, sharing its histories', () => {
    for (const id of fixtureIds.filter((fixture) => fixture !== 'responses-reasoning')) {
      const v2 = migrations.v1ToV2(fixtureJson(id));
      const v3 = migrations.v2ToV3(v2);
      expect(v3, id).toEqual({ ...v2, schemaVersion: 3 });
      expect((v3.context as { messages: unknown }).messages, id).toBe((v2.context as { messages: unknown }).messages);
    }
  });

  it('v2 → v3 keeps other providers’ metadata, reaches a pending response and the output, and never throws on odd data', () => {
    const part = { type: 'text', text: 'hi', openai: { itemId: 'msg_1', phase: 'final_answer' }, providerMetadata: { other: { id: 7 } } };
    const snapshot = {
      schemaVersion: 2,
      context: {
        messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: [part, null, 'x'] }, null],
        response: { content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't', argsText: '{}', openai: { itemId: 'fc_1' } }] },
      },
      output: { messages: [{ role: 'assistant', content: [{ type: 'reasoning', text: '', openai: undefined }] }] },
    };
    expect(migrations.v2ToV3(snapshot)).toEqual({
      schemaVersion: 3,
      context: {
        messages: [
          { role: 'user', content: 'hi' },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'hi', providerMetadata: { other: { id: 7 }, openai: { itemId: 'msg_1', phase: 'final_answer' } } },
              null,
              'x',
            ],
          },
          null,
        ],
        response: {
          content: [
            { type: 'tool-call', toolCallId: 'c', toolName: 't', argsText: '{}', providerMetadata: { openai: { itemId: 'fc_1' } } },
          ],
        },
      },
      output: { messages: [{ role: 'assistant', content: [{ type: 'reasoning', text: '' }] }] },
    });
    for (const odd of [{}, { context: null }, { context: { messages: 'no', response: null } }, { output: 'done' }]) {
      expect(migrations.v2ToV3({ ...odd, schemaVersion: 2 })).toEqual({ ...odd, schemaVersion: 3 });
    }
  });

  it('v4 → v5: the context gains `control` (first provider, nothing queued, no limits); a run in progress keeps going', async () => {
    const v4 = {
      schemaVersion: 4,
      status: 'active',
      value: 'retrying',
      context: { messages: [{ role: 'user', content: 'hi' }], attempt: 2, agents: { depth: 0, usageByAgent: [], approvals: [] } },
    };
    expect(migrations.v4ToV5(v4)).toEqual({
      ...v4,
      schemaVersion: 5,
      context: {
        ...v4.context,
        control: { provider: 0, queued: [], limits: {}, startedAt: null, childSpend: {}, check: 0, compactedAt: null },
      },
    });
    // A context that has `control` already, and shapes without a context, only change version.
    const kept = { schemaVersion: 4, context: { control: { provider: 1 } } };
    expect(migrations.v4ToV5(kept)).toEqual({ ...kept, schemaVersion: 5 });
    for (const odd of [{}, { context: null }, { output: 'done' }])
      expect(migrations.v4ToV5({ ...odd, schemaVersion: 4 })).toEqual({ ...odd, schemaVersion: 5 });
  });

  it('the current version is counted from the steps', () => {
    expect(migrations.firstSchemaVersion).toBe(1);
    expect(migrations.currentSchemaVersion).toBe(migrations.firstSchemaVersion + migrations.snapshotMigrations.length);
    expect(migrations.currentSchemaVersion).toBe(5);
  });

  it('runs every step from the version found, in order, and none for a current snapshot', () => {
    const steps = [
      (s: Record<string, unknown>) => ({ ...s, trail: [...(s.trail as string[]), 'a'], schemaVersion: 2 }),
      (s: Record<string, unknown>) => ({ ...s, trail: [...(s.trail as string[]), 'b'], schemaVersion: 3 }),
      (s: Record<string, unknown>) => ({ ...s, trail: [...(s.trail as string[]), 'c'], schemaVersion: 4 }),
    ];
    expect(migrateSnapshot({ trail: [] }, { steps })).toEqual({ from: 1, snapshot: { trail: ['a', 'b', 'c'], schemaVersion: 4 } });
    expect(migrateSnapshot({ trail: [], schemaVersion: 3 }, { steps })).toEqual({ from: 3, snapshot: { trail: ['c'], schemaVersion: 4 } });
    // Without its own field, the version the record around it names.
    expect(migrateSnapshot({ trail: [] }, { steps, from: 2 })).toEqual({ from: 2, snapshot: { trail: ['b', 'c'], schemaVersion: 4 } });
    const current = { trail: [], schemaVersion: 4 };
    expect(migrateSnapshot(current, { steps })).toEqual({ from: 4, snapshot: current });
    expect((migrateSnapshot(current, { steps }) as { snapshot: unknown }).snapshot).toBe(current);
  });

  it('refuses a newer version or no version at all, naming the versions', () => {
    expect(migrateSnapshot({ schemaVersion: 6 })).toEqual({
      problem: {
        kind: 'unknown_version',
        message: 'it has schemaVersion 6, written by a newer actorloop; this actorloop reads versions 1 to 5: upgrade actorloop to load it',
      },
    });
    for (const bad of ['2', 0, 1.5, null]) {
      expect(migrateSnapshot({ schemaVersion: bad }).problem, String(bad)).toMatchObject({
        kind: 'unknown_version',
        message: expect.stringContaining('is not a version'),
      });
    }
    // Not a snapshot at all: that is for findSnapshotProblem to name.
    expect(migrateSnapshot('nonsense')).toEqual({ snapshot: 'nonsense', from: 1 });
  });

  it('a step that does not stamp its version is a bug, not a loaded snapshot', () => {
    expect(() => migrateSnapshot({}, { steps: [(s) => s] })).toThrow('snapshot migration 1 → 2 returned schemaVersion undefined');
  });

  it('upgradeSnapshot throws what migrateSnapshot reports', () => {
    expect(upgradeSnapshot({ value: 'idle' })).toEqual({ value: 'idle', schemaVersion: 5 });
    expect(() => upgradeSnapshot({ schemaVersion: 7 })).toThrow(
      'the persisted snapshot cannot be restored (unknown version): it has schemaVersion 7, written by a newer actorloop; this actorloop reads versions 1 to 5: upgrade actorloop to load it',
    );
  });

  it('every persisted snapshot and stored conversation carries the current schemaVersion', async () => {
    const { machine, host } = chatSetup(memoryStore());
    const actor = createActor(machine).start();
    expect(actor.getPersistedSnapshot()).toMatchObject({ schemaVersion: 5, value: 'idle' });
    actor.stop();
    await host.send('c', { type: 'user.message', content: 'What is 2 + 3?' });
    await host.result('c');
    await host.close();
  });
});

describe('v1 SQLite fixture, loaded by this actorloop', () => {
  it('holds what it was written with: v1 records, a file of store schema 1', async () => {
    const store = sqliteStore({ path: databaseCopy() });
    const statuses: Record<string, [string, number]> = {};
    for (const id of fixtureIds) {
      const stored = await store.load(id);
      statuses[id] = [stored!.status, stored!.schemaVersion];
      expect(JSON.parse(stored!.snapshot), id).toEqual(fixtureJson(id));
    }
    expect(statuses).toEqual({
      finished: ['done', 1],
      'awaiting-approval': ['awaitingApproval', 1],
      'mid-tool': ['running', 1],
      'anthropic-thinking': ['done', 1],
      'responses-reasoning': ['done', 1],
    });
    await store.close();
  });

  it('the finished run takes a next turn; nothing of it runs again; the next write is v2', async () => {
    const store = sqliteStore({ path: databaseCopy() });
    const { host, executions } = chatSetup(store);
    const before = stepCalls();
    expect(await host.get('finished')).toMatchObject({ status: 'done' });
    expect(stepCalls()).toBe(before + 1);
    await host.send('finished', { type: 'user.message', content: 'And 3 + 4?' });
    const output = await host.result('finished');
    expect(output).toMatchObject({ status: 'done', text: 'reply 2' });
    expectValidHistory(output.messages);
    expect(toolResults(output.messages)).toEqual({ 'call-add-1': '5' });
    expect(executions).toEqual([]);
    const stored = await store.load('finished');
    expect(stored).toMatchObject({ schemaVersion: 5, status: 'done' });
    expect(JSON.parse(stored!.snapshot)).toMatchObject({ schemaVersion: 5 });
    await host.close();
  });

  it('the approval run is approved and finishes: the queued call and the approved one run once', async () => {
    const { host, executions } = chatSetup(sqliteStore({ path: databaseCopy() }));
    const view = await host.get('awaiting-approval');
    expect(view?.pendingApprovals).toEqual([{ toolCallId: 'call-transfer-1', name: 'transfer', args: { cents: 4200 } }]);
    await host.send('awaiting-approval', { type: 'tool.approve', toolCallId: 'call-transfer-1' });
    const output = await host.result('awaiting-approval');
    expect(output).toMatchObject({ status: 'done', text: 'done: 2 results' });
    expect(toolResults(output.messages)).toEqual({ 'call-add-2': '2', 'call-transfer-1': 'transfer ran again' });
    expect(executions.sort()).toEqual(['call-add-2', 'call-transfer-1']);
    await host.close();
  });

  it('the approval run is denied and finishes: the denied call never runs', async () => {
    const { host, executions } = chatSetup(sqliteStore({ path: databaseCopy() }));
    await host.send('awaiting-approval', { type: 'tool.deny', toolCallId: 'call-transfer-1', reason: 'no' });
    const output = await host.result('awaiting-approval');
    expect(output).toMatchObject({ status: 'done', text: 'done: 2 results' });
    expect(toolResults(output.messages)['call-transfer-1']).toMatch(/^error: .*no/);
    expect(executions).toEqual(['call-add-2']);
    await host.close();
  });

  it('the run stopped mid-tool resumes: the settled result is kept, the idempotent call runs again, the other is interrupted', async () => {
    const store = sqliteStore({ path: databaseCopy() });
    const { host, executions } = chatSetup(store);
    const before = stepCalls();
    const report = await host.recover();
    expect(report).toEqual({ resumed: ['mid-tool'], skipped: [], failed: [] });
    expect(stepCalls()).toBeGreaterThan(before);
    const output = await host.result('mid-tool');
    expect(output).toMatchObject({ status: 'done', text: 'done: 3 results' });
    expectValidHistory(output.messages);
    expect(toolResults(output.messages)).toEqual({
      'call-add-3': '9',
      'call-lookup-1': 'lookup ran again',
      'call-charge-1': `error: ${resultTexts.interrupted}`,
    });
    expect(executions).toEqual(['call-lookup-1']);
    const log = (await store.readLog('mid-tool')).map(({ event }) => event);
    expect(log.filter((event) => event.type === 'tool.result').map((event) => (event as { toolCallId: string }).toolCallId)).toEqual([
      'call-add-3',
      'call-charge-1',
      'call-lookup-1',
    ]);
    await host.close();
  });

  it('the Anthropic run sends its signed and redacted thinking back verbatim', async () => {
    const { server, machine } = await anthropicMachine();
    const host = createConversationHost({ machine, store: sqliteStore({ path: databaseCopy() }) });
    await host.send('anthropic-thinking', { type: 'user.message', content: 'And tomorrow?' });
    expect(await host.result('anthropic-thinking')).toMatchObject({ status: 'done', text: 'Still sunny.' });
    expectAnthropicHistorySent(server);
    await host.close();
  });

  it('the Responses run sends its encrypted reasoning back, and its response ids chain the next request', async () => {
    for (const chain of [false, true]) {
      const { server, machine } = await responsesMachine(chain);
      const host = createConversationHost({ machine, store: sqliteStore({ path: databaseCopy() }) });
      await host.send('responses-reasoning', { type: 'user.message', content: 'And tomorrow?' });
      expect(await host.result('responses-reasoning')).toMatchObject({ status: 'done', text: 'Still sunny in Rome.' });
      if (chain) expectResponsesChainSent(server);
      else expectResponsesHistorySent(server);
      await host.close();
    }
  });
});

describe('v1 JSON snapshots, restored by plain actors', () => {
  it('the finished run restores as it ended, and its history takes a next turn', async () => {
    const { machine, executions } = chatSetup(memoryStore());
    const before = stepCalls();
    const restored = createActor(machine, { snapshot: fixtureJson('finished') as never }).start();
    expect(stepCalls()).toBe(before + 1);
    const ended = restored.getSnapshot();
    expect(ended.status).toBe('done');
    expect(restored.getPersistedSnapshot()).toMatchObject({ schemaVersion: 5, value: 'done' });
    const next = createActor(machine, { input: { messages: ended.output!.messages } }).start();
    next.send({ type: 'user.message', content: 'And 3 + 4?' });
    expect(await toPromise(next)).toMatchObject({ status: 'done', text: 'reply 2' });
    expect(executions).toEqual([]);
  });

  it('the approval run is approved and finishes', async () => {
    const { machine, executions } = chatSetup(memoryStore());
    const actor = createActor(machine, { snapshot: fixtureJson('awaiting-approval') as never }).start();
    expect(actor.getSnapshot().value).toBe('awaitingApproval');
    actor.send({ type: 'tool.approve', toolCallId: 'call-transfer-1' });
    expect(await toPromise(actor)).toMatchObject({ status: 'done', text: 'done: 2 results' });
    expect(executions.sort()).toEqual(['call-add-2', 'call-transfer-1']);
  });

  it('the run stopped mid-tool resumes with the durable semantics', async () => {
    const { machine, executions } = chatSetup(memoryStore());
    const actor = createActor(machine, { snapshot: fixtureJson('mid-tool') as never }).start();
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'done', text: 'done: 3 results' });
    expect(toolResults(output.messages)).toEqual({
      'call-add-3': '9',
      'call-lookup-1': 'lookup ran again',
      'call-charge-1': `error: ${resultTexts.interrupted}`,
    });
    expect(executions).toEqual(['call-lookup-1']);
  });

  it('the Anthropic run: its history still goes back to the wire verbatim', async () => {
    const { server, machine } = await anthropicMachine();
    const ended = createActor(machine, { snapshot: fixtureJson('anthropic-thinking') as never })
      .start()
      .getSnapshot();
    const next = createActor(machine, { input: { messages: ended.output!.messages } }).start();
    next.send({ type: 'user.message', content: 'And tomorrow?' });
    expect(await toPromise(next)).toMatchObject({ status: 'done', text: 'Still sunny.' });
    expectAnthropicHistorySent(server);
  });

  it('a history an earlier release wrote, handed over as input.messages, is upgraded as the run starts: its reasoning still goes back', async () => {
    // The fixture's own messages, as actorloop 0.1 wrote them: the Responses fields in each part's `openai`.
    const oldHistory = (fixtureJson('responses-reasoning') as { output: { messages: Message[] } }).output.messages;
    expect(JSON.stringify(oldHistory)).toContain('"openai":{');
    for (const chain of [false, true]) {
      const { server, machine } = await responsesMachine(chain);
      const next = createActor(machine, { input: { messages: oldHistory } }).start();
      next.send({ type: 'user.message', content: 'And tomorrow?' });
      const output = await toPromise(next);
      expect(output).toMatchObject({ status: 'done', text: 'Still sunny in Rome.' });
      if (chain) expectResponsesChainSent(server);
      else expectResponsesHistorySent(server);
      // The run's history is today's model: no part keeps the old field, and what it held is under providerMetadata.
      const parts = output.messages.flatMap((message): object[] => (Array.isArray(message.content) ? message.content : []));
      expect(parts.filter((part) => 'openai' in part)).toEqual([]);
      const upgraded = migrations.v2ToV3({ schemaVersion: 2, context: { messages: oldHistory } }).context as { messages: Message[] };
      expect(output.messages.slice(0, oldHistory.length)).toEqual(upgraded.messages);
    }
  });

  it('the Responses run: its encrypted reasoning and response ids still go back', async () => {
    for (const chain of [false, true]) {
      const { server, machine } = await responsesMachine(chain);
      const ended = createActor(machine, { snapshot: fixtureJson('responses-reasoning') as never })
        .start()
        .getSnapshot();
      const next = createActor(machine, { input: { messages: ended.output!.messages } }).start();
      next.send({ type: 'user.message', content: 'And tomorrow?' });
      expect(await toPromise(next)).toMatchObject({ status: 'done', text: 'Still sunny in Rome.' });
      if (chain) expectResponsesChainSent(server);
      else expectResponsesHistorySent(server);
    }
  });

  it('a host reads the snapshots from a store written for actorloop 0.1 (records with `version`, not `schemaVersion`)', async () => {
    const inner = memoryStore();
    const legacy: ConversationStore = {
      ...inner,
      async load(id) {
        const stored = await inner.load(id);
        if (!stored) return undefined;
        const { schemaVersion, ...rest } = stored;
        return { ...rest, version: schemaVersion } as never;
      },
    };
    for (const id of ['finished', 'awaiting-approval'] as const) {
      await inner.save({
        id,
        schemaVersion: 1,
        machineId: 'conversation',
        status: id === 'finished' ? 'done' : 'awaitingApproval',
        snapshot: JSON.stringify(fixtureJson(id)),
        revision: 1,
        owner: 'old-host',
        updatedAt: 1,
      });
    }
    const { host, executions } = chatSetup(legacy);
    await host.send('awaiting-approval', { type: 'tool.approve', toolCallId: 'call-transfer-1' });
    expect(await host.result('awaiting-approval')).toMatchObject({ status: 'done' });
    await host.send('finished', { type: 'user.message', content: 'Again' });
    expect(await host.result('finished')).toMatchObject({ status: 'done', text: 'reply 2' });
    expect(executions.sort()).toEqual(['call-add-2', 'call-transfer-1']);
    await host.close();
  });
});

describe('a snapshot from a newer actorloop', () => {
  const newer = () => ({ ...fixtureJson('finished'), schemaVersion: 6 });

  it('the host refuses it, naming the conversation and both versions; the file and the record are untouched', async () => {
    const path = join(work, 'newer.db');
    const writer = sqliteStore({ path });
    const record = {
      id: 'from-the-future',
      schemaVersion: 6,
      machineId: 'conversation',
      status: 'running' as const,
      snapshot: JSON.stringify(newer()),
      revision: 1,
      owner: 'newer-host',
      updatedAt: 1,
    };
    await writer.save(record);
    await writer.close();
    const hash = sha256(path);

    const store = sqliteStore({ path });
    const { host } = chatSetup(store);
    for (const attempt of [
      () => host.get('from-the-future'),
      () => host.result('from-the-future'),
      () => host.send('from-the-future', { type: 'user.message', content: 'hello?' }),
    ]) {
      const error = await attempt().catch((caught: unknown) => caught);
      expect(ConversationLoadError.isInstance(error), String(error)).toBe(true);
      expect(error).toMatchObject({ conversationId: 'from-the-future', problem: 'unknown_version' });
      expect((error as Error).message).toBe(
        'stored conversation "from-the-future" cannot be loaded (unknown version): it has schemaVersion 6; this actorloop reads versions 1 to 5 ' +
          '(a newer actorloop wrote it: upgrade actorloop to load it; the stored data is left as it is)',
      );
    }
    const report = await host.recover();
    expect(report.failed.map(({ id }) => id)).toEqual(['from-the-future']);
    expect(ConversationLoadError.isInstance(report.failed[0]!.error)).toBe(true);
    expect(await store.load('from-the-future')).toEqual(record);
    await host.close();
    expect(sha256(path)).toBe(hash);
  });

  it('the host refuses a snapshot whose own schemaVersion is newer than its record says', async () => {
    const store = memoryStore();
    const record = {
      id: 'mixed',
      schemaVersion: 5,
      machineId: 'conversation',
      status: 'done' as const,
      snapshot: JSON.stringify(newer()),
      revision: 1,
      owner: 'x',
      updatedAt: 1,
    };
    await store.save(record);
    const { host } = chatSetup(store);
    const error = await host.get('mixed').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ conversationId: 'mixed', problem: 'unknown_version' });
    expect((error as Error).message).toContain(
      'it has schemaVersion 6, written by a newer actorloop; this actorloop reads versions 1 to 5',
    );
    expect(await store.load('mixed')).toEqual(record);
    await host.close();
  });

  it('a plain actor restored from it stops with an error naming both versions; the snapshot is not changed', () => {
    const { machine } = chatSetup(memoryStore());
    const snapshot = newer();
    const copy = structuredClone(snapshot);
    const actor = createActor(machine, { snapshot: snapshot as never });
    const errors: unknown[] = [];
    actor.subscribe({ error: (error) => errors.push(error) });
    actor.start();
    expect(actor.getSnapshot().status).toBe('error');
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe(
      'the persisted snapshot cannot be restored (unknown version): it has schemaVersion 6, written by a newer actorloop; this actorloop reads versions 1 to 5: upgrade actorloop to load it',
    );
    expect(snapshot).toEqual(copy);
  });
});
