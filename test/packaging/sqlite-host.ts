// A durable host on actorloop/sqlite in a consumer project: one conversation with a tool round,
// stored, then read back by a second host on the same file — with better-sqlite3 when the project
// installed it, on node:sqlite when it did not.
import { createConversationHost, createConversationMachine, defineTool, handlerProvider } from 'actorloop';
import { type SqliteStore, SqliteStoreError, sqliteStore } from 'actorloop/sqlite';

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: async ({ a, b }) => Number(a) + Number(b),
});
let turn = 0;
const machine = createConversationMachine({
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
    } else yield { choices: [{ index: 0, delta: { content: 'It is 5.' }, finish_reason: 'stop' }] };
  }),
  tools: [add],
});

const path = 'conversations.db';
let store: SqliteStore;
try {
  store = sqliteStore({ path });
} catch (error) {
  // No driver this Node can use: the error names what to install.
  console.log(JSON.stringify({ failed: SqliteStoreError.isInstance(error) ? error.code : String(error) }));
  process.exit(0);
}
const host = createConversationHost({ machine, store });
await host.send('c-1', { type: 'user.message', content: 'What is 2+3?' });
const output = await host.result('c-1');
await host.close();
const again = createConversationHost({ machine, store: sqliteStore({ path }) });
const view = await again.get('c-1');
await again.close();
console.log(
  JSON.stringify({ status: output.status, text: output.text, stored: view?.status, messages: view?.messages.length, driver: store.driver }),
);
