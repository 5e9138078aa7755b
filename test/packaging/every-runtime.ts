// The quick start's tool loop and a durable host on the memory store, written as a user of the
// installed package writes them, with only the parts meant to run on every runtime: the root entry
// point, actorloop/http and actorloop/ai-sdk. Compiled once in the quick start's consumer project, then
// run from that one install by Node 20, 22 and 24, Bun and Deno (test/packaging.test.ts).
import {
  createConversationHost,
  createConversationMachine,
  defineTool,
  handlerProvider,
  memoryStore,
  type RunOutput,
  type ToolResultEvent,
} from 'actorloop';
import { aiSdkProvider } from 'actorloop/ai-sdk';
import { createConversationHandler } from 'actorloop/http';
import { createActor, toPromise } from 'xstate';

/** Which runtime runs this file, by its own word: Bun and Deno also set `process.versions.node`. */
function runtime(): string {
  const globals = globalThis as { Bun?: { version: string }; Deno?: { version: { deno: string } } };
  if (globals.Bun) return `bun ${globals.Bun.version}`;
  if (globals.Deno) return `deno ${globals.Deno.version.deno}`;
  return `node ${process.versions.node}`;
}

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: async ({ a, b }) => Number(a) + Number(b),
});

const machine = createConversationMachine({
  // Each run asks twice: the first answer calls the tool, the second reads its result.
  provider: handlerProvider(async function* ({ messages }) {
    if (messages.at(-1)?.role !== 'tool') {
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
  maxToolIterations: 10,
});

const actor = createActor(machine, { input: { messages: [] } }).start();
const results: string[] = [];
actor.on('tool.result', (event: ToolResultEvent) => results.push(event.result));
actor.send({ type: 'user.message', content: 'What is 2+3?' });
const output: RunOutput = await toPromise(actor);

const host = createConversationHost({ machine, store: memoryStore() });
await host.send('c-1', { type: 'user.message', content: 'And again?' });
const hosted: RunOutput = await host.result('c-1');
await host.close();

console.log(
  JSON.stringify({
    runtime: runtime(),
    status: output.status,
    text: output.text,
    results,
    messages: output.messages.length,
    host: hosted.status,
    hostText: hosted.text,
    loaded: [typeof aiSdkProvider, typeof createConversationHandler],
  }),
);
