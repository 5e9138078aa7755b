/**
 * Model registries (DESIGN §17): `'provider/model'` strings resolved to providers. A registry of
 * your own names its prefixes; `defaultModelRegistry()` knows the usual providers through whichever
 * packages are installed, and names the package to install for one that is not.
 */
import { describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { createConversationMachine, handlerProvider, InvalidOptionsError } from '../src/index.js';
import { MissingDependencyError } from '../src/errors/missing-dependency-error.js';
import { createModelRegistry, defaultModelRegistry } from '../src/providers/ai-sdk/index.js';
import { serveEachTest } from './support/serve-each-test.js';
import { openaiSse } from './support/wire-server.js';

const serve = serveEachTest();

describe('createModelRegistry', () => {
  it('resolves prefix/model to its factory, with the rest of the string as the model id', () => {
    const made: string[] = [];
    const registry = createModelRegistry({
      local: (modelId) => {
        made.push(modelId);
        return { ...handlerProvider(async function* () {}), name: 'local' };
      },
    });
    expect(registry.provider('local/meta/llama-3.3').name).toBe('local');
    expect(made).toEqual(['meta/llama-3.3']);
    expect(registry.prefixes).toEqual(['local']);
  });

  it('names the known prefixes for an unknown one, a string without one, or no model id', () => {
    const registry = createModelRegistry({
      b: () => handlerProvider(async function* () {}),
      a: () => handlerProvider(async function* () {}),
    });
    for (const id of ['c/x', 'gpt-4o', 'a/', 42]) {
      expect(() => registry.provider(id as string), String(id)).toThrow(InvalidOptionsError);
      expect(() => registry.provider(id as string)).toThrow(/'<provider>\/<model id>' with a provider one of a, b/);
    }
    expect(() => createModelRegistry({ x: 'nope' } as never)).toThrow(/factories\.x: expected a function/);
    expect(() => createModelRegistry({ 'a/b': () => handlerProvider(async function* () {}) })).toThrow(InvalidOptionsError);
  });
});

describe('defaultModelRegistry', () => {
  it('knows the usual providers', () => {
    expect(defaultModelRegistry({}).prefixes).toEqual(['anthropic', 'azure', 'bedrock', 'google', 'mistral', 'ollama', 'openai', 'vertex']);
    const gemini = defaultModelRegistry({}).provider('google/gemini-2.5-flash');
    expect([gemini.name, gemini.model]).toEqual(['google', 'gemini-2.5-flash']);
    expect(defaultModelRegistry({}).provider('openai/gpt-4o-mini').name).toBe('openai');
  });

  it('a package that is not installed is named with the command to install it, when the provider is made', () => {
    const error = (() => {
      try {
        defaultModelRegistry({}).provider('vertex/gemini-2.5-flash');
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(MissingDependencyError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/needs the optional package "@ai-sdk\/google-vertex".*npm install @ai-sdk\/google-vertex/);
  });

  it('ollama/… talks to OLLAMA_BASE_URL through the OpenAI-compatible wire', async () => {
    const server = await serve([
      openaiSse([
        {
          id: 'c',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'llama3.2',
          choices: [{ index: 0, delta: { content: 'Hi from llama.' }, finish_reason: 'stop' }],
        },
      ]),
    ]);
    const provider = defaultModelRegistry({ OLLAMA_BASE_URL: `${server.url}/v1` }).provider('ollama/llama3.2');
    const actor = createActor(createConversationMachine({ provider, retry: false }), { input: {} }).start();
    actor.send({ type: 'user.message', content: 'hi' });
    expect((await toPromise(actor)).text).toBe('Hi from llama.');
    expect(server.requests[0]?.body).toMatchObject({ model: 'llama3.2' });
  });
});
