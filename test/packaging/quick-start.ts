// Written like the README quick start, in a fresh project with only the required peers installed
// (no provider SDK, no zod): type-checked with strict and skipLibCheck: false, then run.
import {
  type ConversationActor,
  type ConversationView,
  createConversationHost,
  memoryStore,
  type ConversationMachine,
  type ConversationSnapshot,
  createConversationMachine,
  defineTool,
  handlerProvider,
  type Message,
  type RunOutput,
  type TextDeltaEvent,
  type ToolResultEvent,
} from 'actorloop';
import { SqliteStoreError, sqliteStore } from 'actorloop/sqlite';
import { createActor, toPromise } from 'xstate';

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: async ({ a, b }, { sessionData }) => {
    const { scale } = sessionData as { scale: number };
    return (Number(a) + Number(b)) * scale;
  },
});

let turn = 0;
const machine: ConversationMachine = createConversationMachine({
  provider: handlerProvider(async function* () {
    turn += 1;
    if (turn === 1) {
      yield {
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [{ index: 0, id: 'c1', type: 'function' as const, function: { name: 'add', arguments: '{"a":2,"b":3}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
      };
    } else {
      yield { choices: [{ index: 0, delta: { content: 'It is 5.' }, finish_reason: 'stop' }] };
    }
  }),
  tools: [add],
  system: 'You are terse.',
  maxToolIterations: 10,
});

const actor: ConversationActor = createActor(machine, { input: { messages: [], sessionData: { scale: 1 } } }).start();
const deltas: string[] = [];
const results: string[] = [];
actor.on('text.delta', (event: TextDeltaEvent) => deltas.push(event.delta));
actor.on('tool.result', (event: ToolResultEvent) => results.push(event.result));
actor.send({ type: 'user.message', content: 'What is 2+3?' });
const output: RunOutput = await toPromise(actor);
const snapshot: ConversationSnapshot = actor.getSnapshot();
const history: Message[] = output.messages;

// The durable host from the root; the SQLite store's subpath loads without its optional peer
// (better-sqlite3 is not installed here): on Node 22.13+ it runs on node:sqlite; on Node 20
// sqliteStore() names what to install.
const host = createConversationHost({ machine, store: memoryStore() });
await host.send('c-1', { type: 'user.message', content: 'And again?' }, { sessionData: { scale: 1 } });
const hosted: RunOutput = await host.result('c-1');
const view: ConversationView | undefined = await host.get('c-1');
await host.close();
const sqlite = await Promise.resolve()
  .then(() => sqliteStore({ path: 'conversations.db' }).list())
  .then(
    () => 'opened',
    (error: unknown) => (SqliteStoreError.isInstance(error) ? error.code : String(error)),
  );
console.log(
  JSON.stringify({
    status: output.status,
    text: output.text,
    deltas,
    results,
    value: snapshot.value,
    messages: history.length,
    host: hosted.status,
    hostView: view?.status,
    sqlite,
  }),
);
