/**
 * Two host processes on one PostgreSQL database (DESIGN §13): the one holding a conversation's
 * lease is killed (or paused) in the middle of a tool; the other takes the run over once the lease
 * lapsed. No tool runs twice (each records its execution in a table), no event is applied twice,
 * nothing is lost, and a paused holder that wakes up writes nothing after the takeover.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RecoverReport } from '../src/index.js';
import { postgresStore } from '../src/stores/postgres/index.js';
import { supportScript } from './support/built-tree.js';
import { postgresUrl, queryOnce, testSchema } from './support/postgres.js';

const schema = testSchema('postgres_processes');
beforeAll(() =>
  queryOnce(`CREATE SCHEMA "${schema.name}"`).then(() =>
    queryOnce(`CREATE TABLE "${schema.name}".executions (conversation_id text NOT NULL, tool_call_id text NOT NULL, host text NOT NULL)`),
  ),
);
afterAll(() => schema.drop());
/** Workers still running when a test ends (it failed): stopped before the schema goes. */
const children = new Set<ChildProcess>();
afterEach(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
});
const script = supportScript('postgres-worker.ts');
const leaseTtlMs = 1_500;
let prefixes = 0;

type Message = { type: string; [key: string]: unknown };

/** A worker process and its messages, in order. */
function worker(config: Record<string, unknown>) {
  const child: ChildProcess = spawn(process.execPath, [script, JSON.stringify(config)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  const messages: Message[] = [];
  const waiting: Array<{ type: string; resolve: (message: Message) => void; reject: (error: Error) => void }> = [];
  let exited: string | undefined;
  const exit = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = signal ?? `code ${code}`;
      for (const waiter of waiting.splice(0))
        waiter.reject(new Error(`worker ${String(config.hostId)} exited (${exited}) before it sent ${waiter.type}`));
      resolve(exited);
    }),
  );
  child.on('message', (value) => {
    const message = value as Message;
    const index = waiting.findIndex(({ type }) => type === message.type);
    if (index >= 0) waiting.splice(index, 1)[0]?.resolve(message);
    else messages.push(message);
  });
  /** The next message of `type` (an earlier one not yet taken first). */
  const next = (type: string) => {
    const index = messages.findIndex((message) => message.type === type);
    if (index >= 0) return Promise.resolve(messages.splice(index, 1)[0] as Message);
    if (exited) return Promise.reject(new Error(`worker ${String(config.hostId)} exited (${exited}) before it sent ${type}`));
    return new Promise<Message>((resolve, reject) => waiting.push({ type, resolve, reject }));
  };
  return { child, next, exit, messages };
}

/** What the database holds of the conversations once the other host finished them. */
async function stored(prefix: string, ids: string[]) {
  const store = postgresStore({ connectionString: postgresUrl, schema: schema.name, tablePrefix: prefix });
  const result = await Promise.all(
    ids.map(async (id) => {
      const conversation = await store.load(id);
      const snapshot = JSON.parse(conversation!.snapshot) as { context: { messages: Array<{ role: string; content: unknown }> } };
      const log = (await store.readLog(id)).map(({ event }) => event);
      return {
        id,
        status: conversation!.status,
        owner: conversation!.owner,
        roles: snapshot.context.messages.map(({ role }) => role),
        log,
      };
    }),
  );
  await store.close();
  return result;
}

const executions = (ids: string[]) =>
  queryOnce<{ conversation_id: string; tool_call_id: string; host: string }>(
    `SELECT conversation_id, tool_call_id, host FROM "${schema.name}".executions WHERE conversation_id = ANY($1) ORDER BY conversation_id, tool_call_id`,
    [ids],
  );

/** Every conversation: each event once, the slow call answered by the takeover, the history as the log tells it. */
function expectTakenOver(conversations: Awaited<ReturnType<typeof stored>>) {
  for (const { id, status, owner, roles, log } of conversations) {
    expect({ id, status, owner }).toEqual({ id, status: 'done', owner: 'host-b' });
    expect(log.map((event) => [event.type, 'toolCallId' in event ? event.toolCallId : undefined])).toEqual([
      ['user.message', undefined],
      ['tool.call', `${id}-record`],
      ['tool.result', `${id}-record`],
      ['tool.call', `${id}-slow`],
      ['tool.result', `${id}-slow`],
      ['run.ended', undefined],
    ]);
    expect(log[2]).toMatchObject({ result: 'recorded in host-a', isError: false });
    expect(log[4]).toMatchObject({ result: 'interrupted by a restart; not run again', isError: true });
    expect(log[5]).toMatchObject({ status: 'done', text: `finished ${id} in host-b` });
    expect(roles).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
  }
}

describe('two host processes on one Postgres database', () => {
  it('the lease holder is killed mid-tool: the other takes over once the lease lapsed; no tool twice, no event twice, nothing lost', async () => {
    const prefix = `k${++prefixes}_`;
    const ids = ['k1', 'k2', 'k3'].map((id) => `${prefix}${id}`);
    const common = { url: postgresUrl, schema: schema.name, prefix, leaseTtlMs, ids };
    const b = worker({ ...common, hostId: 'host-b', role: 'recover', slowMs: 0 });
    await b.next('ready');
    const a = worker({ ...common, hostId: 'host-a', role: 'start', slowMs: 600_000 });
    await a.next('running');
    b.child.send({ type: 'recover' });
    // While the holder lives, its leases keep the runs from the other host.
    const first = (await b.next('recovered')).report as RecoverReport;
    expect({ ...first, skipped: first.skipped.sort() }).toEqual({ resumed: [], skipped: ids, failed: [] });
    a.child.kill('SIGKILL');
    expect(await a.exit).toBe('SIGKILL');
    const done = await b.next('done');
    expect(await b.exit).toBe('code 0');
    expect(done.outputs).toEqual(ids.map((id) => ({ status: 'done', text: `finished ${id} in host-b` })));
    const resumed = b.messages.flatMap((message) => (message.report as RecoverReport).resumed);
    expect(resumed.sort()).toEqual(ids);
    expect(await executions(ids)).toEqual(
      ids.flatMap((id) => [
        { conversation_id: id, tool_call_id: `${id}-record`, host: 'host-a' },
        { conversation_id: id, tool_call_id: `${id}-slow`, host: 'host-a' },
      ]),
    );
    expectTakenOver(await stored(prefix, ids));
    expect(await queryOnce(`SELECT conversation_id FROM "${schema.name}"."${prefix}leases"`)).toEqual([]);
  }, 60_000);

  it('the lease holder is paused mid-tool and wakes after the takeover: it writes nothing, its runs stop with write.failed', async () => {
    const prefix = `p${++prefixes}_`;
    const ids = ['p1', 'p2'].map((id) => `${prefix}${id}`);
    const common = { url: postgresUrl, schema: schema.name, prefix, leaseTtlMs, ids };
    const b = worker({ ...common, hostId: 'host-b', role: 'recover', slowMs: 0 });
    await b.next('ready');
    // The slow tool finishes soon after the holder wakes: its result must not be written.
    const a = worker({ ...common, hostId: 'host-a', role: 'start', slowMs: 1_000 });
    await a.next('running');
    a.child.kill('SIGSTOP');
    b.child.send({ type: 'recover' });
    await b.next('done');
    const takenOver = await stored(prefix, ids);
    a.child.kill('SIGCONT');
    const failed = await Promise.all(ids.map(() => a.next('write.failed')));
    expect(failed.map(({ id }) => id).sort()).toEqual(ids);
    for (const { error } of failed) expect(error).toMatchObject({ name: 'ConversationLeaseLostError' });
    a.child.send({ type: 'exit' });
    await a.next('closed');
    expect(await a.exit).toBe('code 0');
    // The slow calls ran once, in the paused host; what it did after waking never reached the store.
    expect(await executions(ids)).toEqual(
      ids.flatMap((id) => [
        { conversation_id: id, tool_call_id: `${id}-record`, host: 'host-a' },
        { conversation_id: id, tool_call_id: `${id}-slow`, host: 'host-a' },
      ]),
    );
    expect(await stored(prefix, ids)).toEqual(takenOver);
    expectTakenOver(takenOver);
  }, 60_000);
});
