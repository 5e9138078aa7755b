/**
 * `@a2a-js/sdk` is an optional peer: `actorloop/a2a` loads without it, and `createA2AHandler`
 * says what to install. The SDK is made unloadable here; the rest of the suite uses the real one.
 */
import { describe, expect, it, vi } from 'vitest';
import { MissingDependencyError } from '../src/errors/missing-dependency-error.js';
import { createConversationHost, createConversationMachine, memoryStore } from '../src/index.js';
import { scriptedProvider } from '../examples/support/script.js';

vi.mock('@a2a-js/sdk/server', () => {
  throw new Error("Cannot find package '@a2a-js/sdk' imported from actorloop");
});

describe('actorloop/a2a without @a2a-js/sdk', () => {
  it('loads, and createA2AHandler rejects saying npm install @a2a-js/sdk', async () => {
    const a2a = await import('../src/protocols/a2a/index.js');
    const host = createConversationHost({
      machine: createConversationMachine({ provider: scriptedProvider(() => ({ text: 'hi' })) }),
      store: memoryStore(),
    });
    const created = a2a.createA2AHandler(host, { card: { name: 'a', description: 'b', version: '1' }, authorize: () => true });
    await expect(created).rejects.toSatisfy(MissingDependencyError.isInstance);
    await expect(created).rejects.toThrow(/npm install @a2a-js\/sdk/);
    await host.close();
  });
});
