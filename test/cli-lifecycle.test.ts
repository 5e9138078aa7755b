/**
 * A stored run whose process died (docs/cli.md, "A killed run"), as processes: `run --db` killed
 * with SIGKILL mid-tool shows `interrupted`; nothing continues it but `resume`, on the provider
 * given to `resume`, without running a finished tool call again; `cancel` ends one with every tool
 * call answered; a run a live process holds, or one that ended, is refused (exit 3), untouched.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { createConversationHost } from '../src/host/conversation-host.js';
import type { StoredConversation } from '../src/host/conversation-store.js';
import { createConversationMachine } from '../src/machines/chart/conversation.js';
import type { Message } from '../src/model/messages.js';
import { handlerProvider } from '../src/providers/handler/handler-provider.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { defineTool } from '../src/tools/define-tool.js';
import { actorloop, type CliResult } from './support/cli-process.js';
import { openaiSse, startWireServer, type WireServer } from './support/wire-server.js';

const work = mkdtempSync(join(tmpdir(), 'actorloop-cli-lifecycle-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const key = { OPENAI_API_KEY: 'sk-test' };

const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
  id: 'c1',
  object: 'chat.completion.chunk',
  model: 'scripted',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** One round of two calls: `calculator` (done at once) and `wait` (still running when the process is killed). */
const calculatorAndWait = (prefix: string, seconds: number) =>
  openaiSse([
    chunk(
      {
        role: 'assistant',
        tool_calls: [
          { index: 0, id: `${prefix}_calc`, type: 'function', function: { name: 'calculator', arguments: '{"expression":"6*7"}' } },
          { index: 1, id: `${prefix}_wait`, type: 'function', function: { name: 'wait', arguments: JSON.stringify({ seconds }) } },
        ],
      },
      null,
    ),
    chunk({}, 'tool_calls'),
  ]);

const answer = (text: string) => openaiSse([chunk({ role: 'assistant', content: text }, null), chunk({}, 'stop')]);

type RoundCall = { toolCallId: string; state: string };

/** The stored conversation once `ready` says so of its snapshot (read from the file as another process writes it). */
async function storedWhen(db: string, id: string, ready: (snapshot: { context: { round: RoundCall[] | null } }) => boolean) {
  const store = sqliteStore({ path: db, create: false });
  try {
    for (let tries = 0; tries < 600; tries++) {
      // Before the writer has made the file, the store says not_found: try again.
      const stored = await store.load(id).catch(() => undefined);
      if (stored && ready(JSON.parse(stored.snapshot))) return stored;
      await sleep(50);
    }
    throw new Error(`conversation ${id} in ${db} never reached the state waited for`);
  } finally {
    await store.close();
  }
}

/** The calculator call settled, the wait call running: the process is mid-tool, and the finished result is stored. */
const midWait = (prefix: string) => (snapshot: { context: { round: RoundCall[] | null } }) => {
  const round = snapshot.context.round ?? [];
  return (
    round.some((call) => call.toolCallId === `${prefix}_calc` && call.state === 'settled') &&
    round.some((call) => call.toolCallId === `${prefix}_wait` && call.state === 'running')
  );
};

/** Starts `run --db` on the scripted server and kills it with SIGKILL once it is mid-tool; resolves with the run's pid. */
async function killedMidTool(db: string, id: string, server: WireServer): Promise<{ pid: number; killed: CliResult }> {
  let child: ChildProcess | undefined;
  const running = actorloop(
    ['run', '--db', db, '--id', id, '--provider', 'openai', '--base-url', `${server.url}/v1`, '--model', 'model-a', 'do both'],
    key,
    (spawned) => {
      child = spawned;
    },
  );
  await storedWhen(db, id, midWait(id));
  const pid = child?.pid as number;
  child?.kill('SIGKILL');
  const killed = await running;
  expect(killed.signal).toBe('SIGKILL');
  return { pid, killed };
}

async function load(db: string, id: string): Promise<StoredConversation | undefined> {
  const store = sqliteStore({ path: db, create: false });
  try {
    return await store.load(id);
  } finally {
    await store.close();
  }
}

async function logOf(db: string, id: string) {
  const store = sqliteStore({ path: db, create: false });
  try {
    return (await store.readLog(id)).map(({ event }) => event);
  } finally {
    await store.close();
  }
}

/** Every tool call of the history paired with its one result. */
function expectEveryCallAnswered(messages: Message[]) {
  const calls = messages.flatMap((message) =>
    message.role === 'assistant' ? message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : [])) : [],
  );
  const results = messages.flatMap((message) => (message.role === 'tool' ? message.content.map((part) => part.toolCallId) : []));
  expect(calls.length).toBeGreaterThan(0);
  expect(results.sort()).toEqual(calls.sort());
}

/** A refusal: exit 3, one line naming the conversation, and nothing on stdout. */
function expectRefused(result: CliResult, ...phrases: string[]) {
  expect({ code: result.code, stdout: result.stdout, lines: result.stderr.trimEnd().split('\n').length }).toEqual({
    code: 3,
    stdout: '',
    lines: 1,
  });
  expect(result.stderr.startsWith('actorloop: conversation "')).toBe(true);
  for (const phrase of phrases) expect(result.stderr).toContain(phrase);
}

describe('a run killed mid-tool', () => {
  const db = join(work, 'killed.db');

  it('shows interrupted; run does not continue it; resume finishes it on the provider given to resume; no finished call runs twice', async () => {
    const first = await startWireServer([calculatorAndWait('r1', 5)]);
    const second = await startWireServer([answer('Both done: 42.')]);
    try {
      const { pid, killed } = await killedMidTool(db, 'r1', first);
      expect(killed.stderr).toContain('tool calculator done');
      const interrupted = await load(db, 'r1');
      expect(interrupted).toMatchObject({ status: 'running', owner: expect.stringMatching(new RegExp(`^${hostname()}:${pid}:`)) });

      const list = await actorloop(['list', '--db', db]);
      expect(list.code).toBe(0);
      expect(list.stdout).toMatch(/^r1\tinterrupted\t\d{4}-/);
      expect(JSON.parse((await actorloop(['list', '--db', db, '--json'])).stdout)).toEqual([
        expect.objectContaining({ id: 'r1', status: 'interrupted', owner: interrupted?.owner }),
      ]);
      const show = await actorloop(['show', '--db', db, 'r1']);
      expect(show.code).toBe(0);
      expect(show.stdout.split('\n').slice(0, 3)).toEqual([
        expect.stringMatching(/^r1: interrupted \(\{"executingTools":"running"\}\), updated /),
        `process ${pid} on this machine is gone: actorloop resume --db ${db} r1 [provider options] continues the run, actorloop cancel --db ${db} r1 ends it`,
        'user: do both',
      ]);
      expect(JSON.parse((await actorloop(['show', '--db', db, 'r1', '--json'])).stdout)).toMatchObject({
        id: 'r1',
        status: 'interrupted',
        owner: interrupted?.owner,
      });

      // Another message to the file starts a conversation of its own and leaves r1 as it was.
      const other = await actorloop(['run', '--db', db, 'what is 2 plus 3?']);
      expect(other.code).toBe(0);
      expect(other.stdout).toBe('2 + 3 = 5\n');
      expect(other.stderr).toMatch(/conversation c-[0-9a-f]{8} in .* \(new\)/);
      // The same id is refused, naming the way out.
      const again = await actorloop(['run', '--db', db, '--id', 'r1', 'and now?']);
      expectRefused(again, 'conversation "r1" was interrupted', `actorloop resume --db ${db} r1`, `actorloop cancel --db ${db} r1`);
      expect(await load(db, 'r1')).toEqual(interrupted);
      expect(first.requests).toHaveLength(1);

      const resumed = await actorloop(
        ['resume', '--db', db, 'r1', '--provider', 'openai', '--base-url', `${second.url}/v1`, '--model', 'model-b'],
        key,
      );
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toBe('Both done: 42.\n');
      expect(resumed.stderr).toContain(`resuming conversation r1 in ${db} (interrupted: process ${pid} on this machine is gone`);
      // The wait was running (its tool is idempotent: it runs again); the calculator had finished: it does not.
      expect(resumed.stderr).toContain('tool wait started');
      expect(resumed.stderr).not.toContain('tool calculator');
      expect(first.requests).toHaveLength(1);
      expect(second.requests).toHaveLength(1);
      const request = second.requests[0]?.body as {
        model: string;
        messages: Array<{ role: string; tool_call_id?: string; content?: unknown }>;
      };
      expect(request.model).toBe('model-b');
      expect(request.messages.filter((message) => message.role === 'tool')).toEqual([
        expect.objectContaining({ tool_call_id: 'r1_calc', content: '42' }),
        expect.objectContaining({ tool_call_id: 'r1_wait', content: 'waited 5 seconds' }),
      ]);
      const results = (await logOf(db, 'r1')).filter((event) => event.type === 'tool.result');
      expect(results.map((event) => event.toolCallId)).toEqual(['r1_calc', 'r1_wait']);

      const done = JSON.parse((await actorloop(['show', '--db', db, 'r1', '--json'])).stdout) as {
        status: string;
        messages: Message[];
        lastOutput: { status: string; text: string };
      };
      expect(done).toMatchObject({ status: 'done', lastOutput: { status: 'done', text: 'Both done: 42.' } });
      expectEveryCallAnswered(done.messages);

      // A run that ended is not resumed again, nor cancelled.
      const stored = await load(db, 'r1');
      expectRefused(await actorloop(['resume', '--db', db, 'r1']), 'conversation "r1" is done', 'nothing to resume');
      expectRefused(await actorloop(['cancel', '--db', db, 'r1']), 'conversation "r1" is done', 'nothing to cancel');
      expect(await load(db, 'r1')).toEqual(stored);
    } finally {
      await first.close();
      await second.close();
    }
  }, 90_000);

  it('a run a live process holds is refused by resume, cancel and run; killed, cancel ends it with every call answered', async () => {
    const server = await startWireServer([calculatorAndWait('k1', 30)]);
    let child: ChildProcess | undefined;
    try {
      const running = actorloop(
        ['run', '--db', db, '--id', 'k1', '--provider', 'openai', '--base-url', `${server.url}/v1`, '--model', 'model-a', 'do both'],
        key,
        (spawned) => {
          child = spawned;
        },
      );
      const live = await storedWhen(db, 'k1', midWait('k1'));
      const pid = child?.pid as number;
      expect((await actorloop(['list', '--db', db])).stdout).toMatch(/^k1\trunning\t/m);
      const owner = `process ${pid} on this machine, which is alive`;
      expectRefused(await actorloop(['resume', '--db', db, 'k1']), 'conversation "k1" is running in', owner);
      expectRefused(await actorloop(['cancel', '--db', db, 'k1']), owner, 'Ctrl-C in that terminal cancels it');
      expectRefused(await actorloop(['run', '--db', db, '--id', 'k1', 'hi']), `is running in process ${pid} on this machine`);
      expect((await load(db, 'k1'))?.revision).toBe(live.revision);

      child?.kill('SIGKILL');
      expect((await running).signal).toBe('SIGKILL');
      expect((await actorloop(['list', '--db', db])).stdout).toMatch(/^k1\tinterrupted\t/m);

      const cancelled = await actorloop(['cancel', '--db', db, 'k1', '--reason', 'not needed any more']);
      expect({ code: cancelled.code, stdout: cancelled.stdout }).toEqual({ code: 0, stdout: '' });
      expect(cancelled.stderr).toBe(
        'actorloop: cancelled conversation k1 (was interrupted; now halted: cancelled); all 2 tool calls of its history answered\n',
      );
      const view = JSON.parse((await actorloop(['show', '--db', db, 'k1', '--json'])).stdout) as { status: string; messages: Message[] };
      expect(view.status).toBe('halted');
      expectEveryCallAnswered(view.messages);
      // The finished call keeps its result; the one the kill interrupted is answered, not run again.
      expect(view.messages.filter((message) => message.role === 'tool').flatMap((message) => message.content)).toEqual([
        expect.objectContaining({ toolCallId: 'k1_calc', result: '42' }),
        expect.objectContaining({ toolCallId: 'k1_wait', result: 'interrupted by a restart; not run again', isError: true }),
      ]);
      const log = await logOf(db, 'k1');
      expect(log.filter((event) => event.type === 'tool.result')).toHaveLength(2);
      expect(log.filter((event) => event.type === 'cancel')).toEqual([{ type: 'cancel', reason: 'not needed any more' }]);
      expect(log.at(-1)).toMatchObject({ type: 'run.ended', status: 'halted', reason: 'cancelled' });
      expect(server.requests).toHaveLength(1);

      const stored = await load(db, 'k1');
      expectRefused(await actorloop(['cancel', '--db', db, 'k1']), 'conversation "k1" is halted: its last run already ended');
      expectRefused(await actorloop(['resume', '--db', db, 'k1']), 'conversation "k1" is halted');
      expect(await load(db, 'k1')).toEqual(stored);
    } finally {
      child?.kill('SIGKILL');
      await server.close();
    }
  }, 90_000);

  it('cancel of a run waiting for approval answers its calls; resume refuses it (it is not held by a process)', async () => {
    const path = join(work, 'approval.db');
    const machine = createConversationMachine({
      provider: handlerProvider(async function* () {
        yield chunk(
          { role: 'assistant', tool_calls: [{ index: 0, id: 'a1_pay', type: 'function', function: { name: 'pay', arguments: '{}' } }] },
          null,
        );
        yield chunk({}, 'tool_calls');
      }),
      tools: [defineTool({ name: 'pay', description: 'pays', parameters: { type: 'object' }, needsApproval: true, execute: () => 'paid' })],
    });
    const host = createConversationHost({ machine, store: sqliteStore({ path }), hostId: 'test-host' });
    await host.send('a1', { type: 'user.message', content: 'pay it' });
    await host.close();
    expect(await load(path, 'a1')).toMatchObject({ status: 'awaitingApproval' });

    const show = await actorloop(['show', '--db', path, 'a1']);
    expect(show.stdout).toContain('waiting for approval: pay({}) [a1_pay]');
    expectRefused(await actorloop(['resume', '--db', path, 'a1']), 'is awaitingApproval', 'nothing to resume', 'actorloop cancel');
    const cancelled = await actorloop(['cancel', '--db', path, 'a1']);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stderr).toContain('was awaitingApproval; now halted: cancelled');
    const view = JSON.parse((await actorloop(['show', '--db', path, 'a1', '--json'])).stdout) as { status: string; messages: Message[] };
    expect(view.status).toBe('halted');
    expectEveryCallAnswered(view.messages);
  }, 60_000);

  it('a run owned by another machine shows running; resume and cancel refuse it without --force; resume --force finishes it', async () => {
    const path = join(work, 'elsewhere.db');
    // A run stored in flight by a host on another machine (the request never answered; the host closed).
    const machine = createConversationMachine({
      provider: handlerProvider(({ signal }) => ({
        async *[Symbol.asyncIterator]() {
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        },
      })),
      tools: [],
    });
    const host = createConversationHost({ machine, store: sqliteStore({ path }), hostId: 'far-away:4242:x1' });
    await host.send('f1', { type: 'user.message', content: 'what is 6*7?' });
    await host.close();

    expect((await actorloop(['list', '--db', path])).stdout).toMatch(/^f1\trunning\t/);
    expect((await actorloop(['show', '--db', path, 'f1'])).stdout.split('\n')[1]).toBe(
      'running in process 4242 on far-away (cannot be checked from this machine)',
    );
    const why = 'is running in process 4242 on far-away, which cannot be checked from this machine';
    expectRefused(await actorloop(['resume', '--db', path, 'f1']), why, `actorloop resume --db ${path} --force f1`);
    expectRefused(await actorloop(['cancel', '--db', path, 'f1']), why, `actorloop cancel --db ${path} --force f1`);
    const forced = await actorloop(['resume', '--db', path, '--force', 'f1', '--provider', 'offline']);
    expect({ code: forced.code, stdout: forced.stdout }).toEqual({ code: 0, stdout: '6*7 = 42\n' });
    expect(forced.stderr).toContain('resuming conversation f1');
  }, 60_000);
});
