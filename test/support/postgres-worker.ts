/**
 * A host process of the Postgres kill test (test/postgres-processes.test.ts). Every conversation
 * runs two tool rounds: `record` (quick), then `slow` (long enough to be killed in); each tool
 * records its execution in the `executions` table before it works, so the test can count them.
 *
 * `start`: sends each conversation its first message, reports `running` once every `slow` call has
 * started, and reports each `write.failed`. `recover`: on the parent's `recover` message, calls
 * `recover()` until it holds every conversation, reporting each attempt, then reports `done` with
 * the outputs.
 *
 * argv: <config JSON> — { url, schema, prefix, hostId, leaseTtlMs, role: 'start' | 'recover', ids, slowMs }
 */
import pg from 'pg';
import { z } from 'zod';
import { createConversationHost, createConversationMachine, defineTool, handlerProvider } from '../../src/index.js';
import { postgresStore } from '../../src/stores/postgres/index.js';
import { turnChunks } from './scripted-model.js';

type Config = {
  url: string;
  schema: string;
  prefix: string;
  hostId: string;
  leaseTtlMs: number;
  role: 'start' | 'recover';
  ids: string[];
  slowMs: number;
};
const config = JSON.parse(process.argv[2] ?? '') as Config;
const send = (message: Record<string, unknown>) => process.send?.(message);

const pool = new pg.Pool({ connectionString: config.url, max: 2 });
pool.on('error', () => undefined);
const startedSlow = new Set<string>();
const recordExecution = async (conversation: string, toolCallId: string) => {
  await pool.query(`INSERT INTO "${config.schema}".executions (conversation_id, tool_call_id, host) VALUES ($1, $2, $3)`, [
    conversation,
    toolCallId,
    config.hostId,
  ]);
};

const tools = [
  defineTool({
    name: 'record',
    parameters: z.object({ conversation: z.string() }),
    execute: async ({ conversation }, { toolCallId }) => {
      await recordExecution(conversation, toolCallId);
      return `recorded in ${config.hostId}`;
    },
  }),
  defineTool({
    name: 'slow',
    parameters: z.object({ conversation: z.string() }),
    execute: async ({ conversation }, { toolCallId }) => {
      await recordExecution(conversation, toolCallId);
      startedSlow.add(conversation);
      if (startedSlow.size === config.ids.length) send({ type: 'running' });
      await new Promise((resolve) => setTimeout(resolve, config.slowMs));
      return `slow work done in ${config.hostId}`;
    },
  }),
];

/** The model: a `record` call after the user's message, a `slow` call after its result, then the answer. */
const provider = handlerProvider(async function* (request) {
  const conversation = String(request.messages.find((message) => message.role === 'user')?.content ?? '');
  const last = request.messages.at(-1);
  const answered = last?.role === 'tool' ? String(last.tool_call_id) : '';
  if (last?.role === 'user') yield* turnChunks({ toolCalls: [{ id: `${conversation}-record`, name: 'record', args: { conversation } }] });
  else if (answered.endsWith('-record'))
    yield* turnChunks({ toolCalls: [{ id: `${conversation}-slow`, name: 'slow', args: { conversation } }] });
  else yield* turnChunks({ text: `finished ${conversation} in ${config.hostId}` });
});

const machine = createConversationMachine({ provider, tools });
const store = postgresStore({ connectionString: config.url, schema: config.schema, tablePrefix: config.prefix });
const host = createConversationHost({ machine, store, hostId: config.hostId, leaseTtlMs: config.leaseTtlMs, onError: () => undefined });
host.subscribeAll((event, id) => {
  if (event.type === 'write.failed') send({ type: 'write.failed', id, error: event.error });
});

if (config.role === 'start') {
  for (const id of config.ids) await host.send(id, { type: 'user.message', content: id });
  // Stays until killed (or until the parent lets it go after a pause).
  process.on('message', async (message: { type?: string }) => {
    if (message.type !== 'exit') return;
    await host.close().catch(() => undefined);
    await pool.end();
    send({ type: 'closed' });
    process.exit(0);
  });
} else {
  process.on('message', async (message: { type?: string }) => {
    if (message.type !== 'recover') return;
    const held = new Set<string>();
    while (held.size < config.ids.length) {
      const report = await host.recover();
      for (const id of report.resumed) held.add(id);
      send({ type: 'recovered', report });
      if (held.size < config.ids.length) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const outputs = await Promise.all(config.ids.map((id) => host.result(id)));
    await host.close();
    await pool.end();
    send({ type: 'done', outputs: outputs.map(({ status, text }) => ({ status, text })) });
    process.exit(0);
  });
  send({ type: 'ready' });
}
