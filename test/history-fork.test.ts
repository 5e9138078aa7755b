/**
 * Time travel (DESIGN §14, issue 28 item 2): `host.history(id)` lists every stored step,
 * `host.get(id, { seq })` shows one, `host.fork(id, { seq, newId, messages? })` starts a new
 * conversation from it — on every store — with nothing that had finished by that step run again,
 * the original untouched, and clear errors that write nothing.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ConversationExistsError,
  ConversationLoadError,
  ConversationNotFoundError,
  ConversationStepNotFoundError,
  type ConversationStore,
  createConversationHost,
  createConversationMachine,
  agentTool,
  defineTool,
  handlerProvider,
  InvalidOptionsError,
  memoryStore,
  type Message,
} from '../src/index.js';
import type { ChunkHandler } from '../src/providers/handler/handler-provider.js';
import { postgresStore } from '../src/stores/postgres/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { expectValidHistory } from './support/history.js';
import { postgresUrl, testSchema } from './support/postgres.js';
import { type ScriptedTurn, scriptedModel, turnChunks } from './support/scripted-model.js';
import { fixtureDatabaseOf, fixtureModel, fixtureTools } from './support/snapshot-fixtures.js';

const work = mkdtempSync(join(tmpdir(), 'actorloop-history-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const schema = testSchema('history');
afterAll(() => schema.drop());
let made = 0;

const stores: Array<[string, (keepSteps?: number) => ConversationStore]> = [
  ['memoryStore', (keepSteps) => memoryStore(keepSteps ? { keepSteps } : {})],
  ['sqliteStore', (keepSteps) => sqliteStore({ path: join(work, `h-${++made}.db`), ...(keepSteps ? { keepSteps } : {}) })],
  [
    'postgresStore',
    (keepSteps) =>
      postgresStore({
        connectionString: postgresUrl,
        schema: schema.name,
        tablePrefix: `h${++made}_`,
        ...(keepSteps ? { keepSteps } : {}),
      }),
  ],
];

/** Tools that count their executions by call id; `transfer` needs approval. */
function countedTools() {
  const executions: string[] = [];
  const lookup = defineTool({
    name: 'lookup',
    parameters: z.object({ order: z.string() }),
    execute: async ({ order }, { toolCallId }) => {
      executions.push(toolCallId);
      return { order, status: 'processing' };
    },
  });
  const transfer = defineTool({
    name: 'transfer',
    parameters: z.object({ cents: z.number() }),
    needsApproval: true,
    execute: async ({ cents }, { toolCallId }) => {
      executions.push(toolCallId);
      return `sent ${cents}`;
    },
  });
  return { tools: [lookup, transfer], executions };
}

/** The model answers from what it was sent, so a fork's requests get answers without a script per fork. */
const echoingTurn: ScriptedTurn = (request) => {
  const last = request.messages.at(-1);
  const text = last?.role === 'tool' ? `tool said ${typeof last.content === 'string' ? last.content : JSON.stringify(last.content)}` : 'ok';
  return scriptedModel([{ text }]).handler(request) as ReturnType<Extract<ScriptedTurn, (...args: never) => unknown>>;
};

async function until<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('until: gave up');
}

function setup(store: ConversationStore, turns: ScriptedTurn[]) {
  const model = scriptedModel(turns);
  const { tools, executions } = countedTools();
  const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools });
  const host = createConversationHost({ machine, store, hostId: 'history-host' });
  return { host, machine, model, executions };
}

const lookupThenAnswer: ScriptedTurn[] = [
  { toolCalls: [{ id: 'call-lookup', name: 'lookup', args: { order: 'A-1' } }] },
  echoingTurn,
  echoingTurn,
  echoingTurn,
  echoingTurn,
];

describe.each(stores)('history and fork on %s', (_name, create) => {
  it('lists every stored step in order, and shows the conversation as each step left it', async () => {
    const { host } = setup(create(), lookupThenAnswer);
    await host.send('c-1', { type: 'user.message', content: 'where is order A-1?' });
    const output = await host.result('c-1');
    const steps = await host.history('c-1');
    expect(steps.map((step) => step.seq)).toEqual(steps.map((_, index) => index + 1));
    expect(steps.at(-1)).toMatchObject({ status: 'done', state: 'done' });
    expect(steps.some((step) => step.status === 'running' && typeof step.state === 'object' && 'executingTools' in step.state)).toBe(true);
    for (const [index, step] of steps.entries()) {
      expect(step.at).toBeGreaterThanOrEqual(steps[index - 1]?.at ?? 0);
      const view = await host.get('c-1', { seq: step.seq });
      expect(view).toMatchObject({ id: 'c-1', seq: step.seq, value: step.state, status: step.status });
    }
    // Time travel shows less history early on, the whole history at the end.
    const first = await host.get('c-1', { seq: 1 });
    expect(first?.messages.length).toBeLessThan(output.messages.length);
    expect((await host.get('c-1', { seq: steps.at(-1)!.seq }))?.messages).toEqual(output.messages);
    expect((await host.get('c-1', { seq: steps.at(-1)!.seq }))?.usage).toEqual(output.usage);
    expect(await host.history('c-1', { afterSeq: 2, limit: 2 })).toEqual(steps.slice(2, 4));
    await host.close();
  });

  it('forks from every step: the fork runs on from there, nothing finished by that step runs again, the original stays as it was', async () => {
    const store = create();
    const { host, executions } = setup(store, [
      { toolCalls: [{ id: 'call-lookup', name: 'lookup', args: { order: 'A-1' } }] },
      ...Array.from({ length: 40 }, () => echoingTurn),
    ]);
    await host.send('c-1', { type: 'user.message', content: 'where is order A-1?' });
    const original = await host.result('c-1');
    expect(executions).toEqual(['call-lookup']);
    const steps = await host.history('c-1');
    const storedBefore = await store.load('c-1');
    for (const step of steps) {
      const before = executions.length;
      const settledThen = (await host.get('c-1', { seq: step.seq }))!.messages.some((message) => message.role === 'tool');
      const forked = await host.fork('c-1', { seq: step.seq, newId: `c-1-fork-${step.seq}` });
      expect(forked).toMatchObject({ id: `c-1-fork-${step.seq}`, seq: 1 });
      const output = await host.result(`c-1-fork-${step.seq}`);
      expect(output.status).toBe('done');
      expectValidHistory(output.messages);
      // The lookup ran once in the original; a fork from a step that already had its result never runs it again.
      if (settledThen || step.status === 'done') expect(executions.length, `step ${step.seq}`).toBe(before);
      expect(await host.history(`c-1-fork-${step.seq}`)).not.toHaveLength(0);
    }
    expect(executions.filter((id) => id === 'call-lookup').length).toBeLessThanOrEqual(steps.length);
    expect(await store.load('c-1')).toEqual(storedBefore);
    expect(await host.history('c-1')).toEqual(steps);
    expect((await host.get('c-1'))?.messages).toEqual(original.messages);
    await host.close();
  });

  it('forks a run waiting for approval: the fork and the original are approved or denied apart', async () => {
    const { host, executions } = setup(create(), [
      { toolCalls: [{ id: 'call-transfer', name: 'transfer', args: { cents: 4200 } }] },
      echoingTurn,
      echoingTurn,
    ]);
    await host.send('c-1', { type: 'user.message', content: 'send 42 euros' });
    const waiting = await until(async () => {
      const view = await host.get('c-1');
      return view?.status === 'awaitingApproval' ? view : undefined;
    });
    expect(waiting.pendingApprovals).toHaveLength(1);
    // The view is the run in memory; its step is stored a moment later.
    const step = await until(async () => (await host.history('c-1')).find((candidate) => candidate.state === 'awaitingApproval'));
    const fork = await host.fork('c-1', { seq: step.seq, newId: 'c-1-approved' });
    expect(fork).toMatchObject({ status: 'awaitingApproval', pendingApprovals: [{ toolCallId: 'call-transfer' }] });
    await host.send('c-1-approved', { type: 'tool.approve', toolCallId: 'call-transfer' });
    expect((await host.result('c-1-approved')).text).toBe('tool said sent 4200');
    expect((await host.get('c-1'))?.status).toBe('awaitingApproval');
    await host.send('c-1', { type: 'tool.deny', toolCallId: 'call-transfer', reason: 'no' });
    await host.result('c-1');
    expect(executions).toEqual(['call-transfer']);
    await host.close();
  });

  it('replaces the history at a step between rounds ("what if the tool had answered X"), validated like any input', async () => {
    const { host, model } = setup(create(), lookupThenAnswer);
    await host.send('c-1', { type: 'user.message', content: 'where is order A-1?' });
    await host.result('c-1');
    const steps = await host.history('c-1');
    // The step after the round: the request with the tool's result is about to be made.
    const beforeAnswer = steps.findLast((step) => typeof step.state === 'object' && 'requesting' in step.state)!;
    const then = (await host.get('c-1', { seq: beforeAnswer.seq }))!;
    expect(then.messages.at(-1)?.role).toBe('tool');
    const whatIf: Message[] = then.messages.map((message) =>
      message.role === 'tool'
        ? { ...message, content: message.content.map((part) => ({ ...part, result: 'shipped yesterday' })) }
        : message,
    );
    await host.fork('c-1', { seq: beforeAnswer.seq, newId: 'c-1-shipped', messages: whatIf });
    const output = await host.result('c-1-shipped');
    expect(output.text).toBe('tool said shipped yesterday');
    expect(model.requests.at(-1)?.messages.at(-1)).toMatchObject({ role: 'tool', content: 'shipped yesterday' });
    expect((await host.result('c-1')).text).toContain('processing');

    // Messages at a step inside a round, or messages that are not a history: refused, nothing written.
    const inRound = steps.find((step) => typeof step.state === 'object' && 'executingTools' in step.state)!;
    const refusals = [
      { seq: inRound.seq, newId: 'x-1', messages: whatIf },
      { seq: beforeAnswer.seq, newId: 'x-2', messages: [{ role: 'robot', content: 'hi' }] as unknown as Message[] },
      { seq: beforeAnswer.seq, newId: 'x-3', messages: 'hi' as unknown as Message[] },
    ];
    for (const options of refusals) {
      const error = await host.fork('c-1', options).catch((caught: unknown) => caught);
      expect(InvalidOptionsError.isInstance(error), String(error)).toBe(true);
      expect(String(error)).toContain('options.messages');
      expect(await host.get(options.newId)).toBeUndefined();
    }
    await host.close();
  });

  it('names an unknown id, an unknown step, a newId in use and bad options, and writes nothing', async () => {
    const store = create();
    const { host } = setup(store, lookupThenAnswer);
    await host.send('c-1', { type: 'user.message', content: 'where is order A-1?' });
    await host.result('c-1');
    await host.send('c-2', { type: 'user.message', content: 'hello' });
    await host.result('c-2');
    const listed = await host.list();
    const last = (await host.history('c-1')).at(-1)!.seq;

    const expectError = async (call: Promise<unknown>, isInstance: (error: unknown) => boolean, text: string) => {
      const error = await call.catch((caught: unknown) => caught);
      expect(isInstance(error), String(error)).toBe(true);
      expect(String(error)).toContain(text);
    };
    await expectError(host.history('nobody'), ConversationNotFoundError.isInstance, '"nobody" does not exist');
    await expectError(host.get('nobody', { seq: 1 }), ConversationNotFoundError.isInstance, '"nobody"');
    await expectError(host.fork('nobody', { seq: 1, newId: 'n' }), ConversationNotFoundError.isInstance, '"nobody"');
    await expectError(host.get('c-1', { seq: last + 1 }), ConversationStepNotFoundError.isInstance, `no stored step ${last + 1}`);
    await expectError(
      host.fork('c-1', { seq: last + 5, newId: 'n' }),
      ConversationStepNotFoundError.isInstance,
      `the store keeps steps 1 to ${last}`,
    );
    await expectError(host.fork('c-1', { seq: 1, newId: 'c-2' }), ConversationExistsError.isInstance, '"c-2" already exists');
    await expectError(host.fork('c-1', { seq: 1, newId: 'c-1' }), ConversationExistsError.isInstance, '"c-1" already exists');
    for (const [options, named] of [
      [{ seq: 0, newId: 'n' }, 'options.seq'],
      [{ seq: 1.5, newId: 'n' }, 'options.seq'],
      [{ seq: '1', newId: 'n' }, 'options.seq'],
      [{ seq: 1, newId: '' }, 'options.newId'],
      [{ seq: 1, newId: 7 }, 'options.newId'],
      [{ seq: 1 }, 'options.newId'],
      [null, 'options'],
    ] as const) {
      await expectError(host.fork('c-1', options as never), InvalidOptionsError.isInstance, named);
    }
    await expectError(host.get('c-1', { seq: -1 }), InvalidOptionsError.isInstance, 'options.seq');
    await expectError(host.history('c-1', { limit: 0 }), InvalidOptionsError.isInstance, 'limit');
    expect(await host.list()).toEqual(listed);
    expect((await host.get('c-2'))?.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    await host.close();
  });

  it('keeps the latest keepSteps steps: older ones are named as gone, the kept ones fork', async () => {
    const { host } = setup(create(3), lookupThenAnswer);
    await host.send('c-1', { type: 'user.message', content: 'where is order A-1?' });
    await host.result('c-1');
    const steps = await host.history('c-1');
    expect(steps).toHaveLength(3);
    const [oldest, , newest] = steps.map((step) => step.seq) as [number, number, number];
    expect(newest - oldest).toBe(2);
    const error = await host.fork('c-1', { seq: oldest - 1, newId: 'gone' }).catch((caught: unknown) => caught);
    expect(ConversationStepNotFoundError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ seq: oldest - 1, availableSeqs: [oldest, newest] });
    expect((await host.fork('c-1', { seq: oldest, newId: 'kept' })).id).toBe('kept');
    await host.result('kept');
    await host.close();
  });
});

describe('an agent tree', () => {
  it('forks from every step of a run that called an agent: each fork ends, a child tool that had its result never runs again', async () => {
    const childRuns: string[] = [];
    const lookup = defineTool({
      name: 'lookup',
      parameters: z.object({ q: z.string() }),
      execute: async ({ q }, { toolCallId }) => {
        childRuns.push(toolCallId);
        return `found ${q}`;
      },
    });
    // Each model answers from what it is sent, so forks need no script of their own.
    const answerFrom =
      (call: { id: string; name: string; args: unknown }, text: string): ChunkHandler =>
      (request) =>
        turnChunks(request.messages.at(-1)?.role === 'tool' ? { text } : { toolCalls: [call] });
    const child = createConversationMachine({
      provider: handlerProvider(answerFrom({ id: 'child-lookup', name: 'lookup', args: { q: 'fox' } }, 'the fox is found')),
      tools: [lookup],
    });
    const machine = createConversationMachine({
      provider: handlerProvider(answerFrom({ id: 'ask-research', name: 'research', args: { prompt: 'find the fox' } }, 'done')),
      tools: [agentTool(child, { name: 'research', description: 'Ask the researcher' })],
    });
    const store = memoryStore();
    const host = createConversationHost({ machine, store });
    await host.send('tree', { type: 'user.message', content: 'find the fox' });
    expect((await host.result('tree')).text).toBe('done');
    expect(childRuns).toEqual(['child-lookup']);
    const steps = await host.history('tree');
    let seenChildAnswered = false;
    for (const step of steps) {
      const before = childRuns.length;
      const answered = (await host.get('tree', { seq: step.seq }))!.messages.some((message) => message.role === 'tool');
      // The child conversation is stored inside its parent's snapshot: had its tool answered by then?
      const stored = JSON.parse((await store.loadStep?.('tree', step.seq))!.snapshot) as {
        children?: Record<string, { snapshot?: { context?: { messages?: Message[] } } }>;
      };
      const childMessages = stored.children?.['agent:ask-research']?.snapshot?.context?.messages ?? [];
      const childAnswered = childMessages.some((message) => message.role === 'tool');
      seenChildAnswered ||= childAnswered && !answered;
      await host.fork('tree', { seq: step.seq, newId: `tree-${step.seq}` });
      const output = await host.result(`tree-${step.seq}`);
      expect(output, `step ${step.seq}`).toMatchObject({ status: 'done', text: 'done' });
      expectValidHistory(output.messages);
      // The agent call had its result by then: neither it nor its child's tool runs again.
      if (answered || childAnswered) expect(childRuns.length, `step ${step.seq}`).toBe(before);
      else expect(childRuns.length - before, `step ${step.seq}`).toBeLessThanOrEqual(1);
    }
    // Some step holds the child mid-run with its tool answered: the case the check above is about.
    expect(seenChildAnswered).toBe(true);
    await host.close();
  });
});

describe('a damaged or foreign step', () => {
  it('refuses a tampered step and a step of another machine with ConversationLoadError, writing nothing', async () => {
    const path = join(work, 'tampered.db');
    const { host } = setup(sqliteStore({ path }), lookupThenAnswer);
    await host.send('c-1', { type: 'user.message', content: 'where is order A-1?' });
    await host.result('c-1');
    await host.close();

    // Step 2's snapshot is damaged by hand in the file: history still lists it, loading it names the problem.
    const raw = (await import('better-sqlite3')).default;
    const db = new raw(path);
    db.prepare('UPDATE conversation_steps SET snapshot = \'{"value": "requesting", "context": 12\' WHERE revision = 2').run();
    db.close();
    const again = setup(sqliteStore({ path }), lookupThenAnswer);
    expect((await again.host.history('c-1')).length).toBeGreaterThan(2);
    for (const call of [again.host.get('c-1', { seq: 2 }), again.host.fork('c-1', { seq: 2, newId: 'from-damaged' })]) {
      const error = await call.catch((caught: unknown) => caught);
      expect(ConversationLoadError.isInstance(error), String(error)).toBe(true);
      expect(error).toMatchObject({ problem: 'corrupt' });
    }
    expect(await again.host.get('from-damaged')).toBeUndefined();
    await again.host.close();

    // A step written by another machine (a store shared by two services): named, not run.
    const foreignDb = new raw(path);
    foreignDb.prepare("UPDATE conversation_steps SET machine_id = 'checkout' WHERE revision = 3").run();
    foreignDb.close();
    const third = setup(sqliteStore({ path }), lookupThenAnswer);
    const error = await third.host.fork('c-1', { seq: 3, newId: 'foreign' }).catch((caught: unknown) => caught);
    expect(ConversationLoadError.isInstance(error), String(error)).toBe(true);
    expect(error).toMatchObject({ problem: 'other_machine' });
    expect(String(error)).toContain('"checkout"');
    expect((await third.host.list()).map((summary) => summary.id)).toEqual(['c-1']);
    await third.host.close();
  });
});

describe('a conversation stored by an older actorloop (schema version 1, no steps)', () => {
  it('has its current step as its history, and forks from it after the upgrade, the stored original untouched', async () => {
    const path = join(work, 'v1-copy.db');
    copyFileSync(fixtureDatabaseOf(1), path);
    const executions: string[] = [];
    const tools = fixtureTools((name, _args, toolCallId) => {
      executions.push(toolCallId);
      return name === 'transfer' ? 'transferred' : 1;
    });
    const machine = createConversationMachine({ provider: handlerProvider(fixtureModel), tools });
    const store = sqliteStore({ path });
    const host = createConversationHost({ machine, store });
    const before = await store.load('awaiting-approval');
    const history = await host.history('awaiting-approval');
    expect(history).toEqual([{ seq: before!.revision, at: before!.updatedAt, status: 'awaitingApproval', state: 'awaitingApproval' }]);
    const fork = await host.fork('awaiting-approval', { seq: before!.revision, newId: 'approved-after-upgrade' });
    expect(fork.status).toBe('awaitingApproval');
    await host.send('approved-after-upgrade', { type: 'tool.approve', toolCallId: 'call-transfer-1' });
    expect((await host.result('approved-after-upgrade')).status).toBe('done');
    // The round waited for the approval: each of its calls runs once, now.
    expect(executions.sort()).toEqual(['call-add-2', 'call-transfer-1']);
    expect(await store.load('awaiting-approval')).toEqual(before);
    expect((await store.load('approved-after-upgrade'))?.schemaVersion).toBeGreaterThan(1);
    await host.close();
  });
});
