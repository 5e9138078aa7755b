/**
 * The conversation service every runtime test serves (test/runtimes.test.ts): a memory-store host
 * behind `createConversationHandler`, one tool with a plain JSON Schema (so the tool's arguments
 * are validated the way the runtime allows: ajv where code generation works, the interpreter on
 * workerd), and two models: one scripted in-process (`handlerProvider`), the other the real
 * `@ai-sdk/openai-compatible` package through `aiSdkProvider`, calling the test's local server.
 * Imports only what the runtime claims to run: the root, `actorloop/http`, `actorloop/ai-sdk`.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createConversationHandler } from '../../src/http/index.js';
import {
  createConversationHost,
  createConversationMachine,
  defineTool,
  handlerProvider,
  memoryStore,
  type Provider,
} from '../../src/index.js';
import { aiSdkProvider } from '../../src/providers/ai-sdk/index.js';
import { runtimeName } from '../../src/util/runtime.js';

export const runtimeToken = 'runtime-token';

/** The tool the model calls: arguments checked against its JSON Schema before it runs. */
const add = defineTool({
  name: 'add',
  description: 'Adds two integers.',
  parameters: {
    type: 'object',
    properties: { a: { type: 'integer' }, b: { type: 'integer', minimum: 0 } },
    required: ['a', 'b'],
    additionalProperties: false,
  },
  execute: async ({ a, b }) => String(Number(a) + Number(b)),
});

/**
 * The scripted model: calls `add` with the arguments the user's text names (`add 2 3`, or a bad
 * call for `add 2 -3`, which the schema refuses), then answers with what the tool gave back.
 */
const scripted = handlerProvider(async function* ({ messages }) {
  const last = messages.at(-1);
  if (last?.role === 'tool') {
    yield { choices: [{ index: 0, delta: { content: `The tool said: ${String(last.content)}` }, finish_reason: 'stop' }] };
    return;
  }
  const [, a = '0', b = '0'] = String(last?.content ?? '').split(' ');
  const args = JSON.stringify({ a: Number(a), b: Number(b) });
  yield {
    choices: [
      {
        index: 0,
        delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'add', arguments: args } }] },
        finish_reason: null,
      },
    ],
  };
  yield { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] };
});

/**
 * Both models side by side: `/handler/…` is the scripted one, `/ai-sdk/…` the package calling
 * `modelUrl` (the OpenAI-compatible server's base URL, `…/v1`); `/runtime` says which runtime
 * answered and what a Node-only part says when imported there.
 */
export function runtimeApp(modelUrl: string): (request: Request) => Promise<Response> {
  const handlers = {
    handler: serviceFor(scripted, '/handler'),
    'ai-sdk': serviceFor(aiSdkProvider(createOpenAICompatible({ name: 'local', baseURL: modelUrl }).chatModel('local-model')), '/ai-sdk'),
  };
  return async (request) => {
    const [, first] = new URL(request.url).pathname.split('/');
    if (first === 'runtime') return Response.json({ runtime: runtimeName(), sqlite: await sqliteRefusal() });
    if (first === 'handler' || first === 'ai-sdk') return handlers[first](request);
    return new Response('not found', { status: 404 });
  };
}

function serviceFor(provider: Provider, basePath: string): (request: Request) => Promise<Response> {
  const host = createConversationHost({ machine: createConversationMachine({ provider, tools: [add] }), store: memoryStore() });
  return createConversationHandler(host, {
    basePath,
    authorize: (request) => request.headers.get('authorization') === `Bearer ${runtimeToken}`,
  });
}

async function sqliteRefusal(): Promise<string> {
  try {
    await import('../../src/stores/sqlite/index.js');
    return 'imported';
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}
