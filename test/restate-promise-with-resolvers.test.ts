/**
 * `actorloop/restate` on Node 20: the Restate SDK (1.14+) calls `Promise.withResolvers`, which came
 * with Node 22. The subpath installs a standard one when it is missing and never replaces a native one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ensurePromiseWithResolvers } from '../src/scale/restate/promise-with-resolvers.js';

type WithResolvers = <T>() => { promise: Promise<T>; resolve: (value: T) => void; reject: (reason?: unknown) => void };
const holder = Promise as unknown as { withResolvers?: WithResolvers };
/** What is installed now (read through a function: `delete` would narrow the property's type). */
const installed = () => holder.withResolvers as WithResolvers;
const original = Object.getOwnPropertyDescriptor(Promise, 'withResolvers');

afterEach(() => {
  if (original) Object.defineProperty(Promise, 'withResolvers', original);
  else delete holder.withResolvers;
});

describe('ensurePromiseWithResolvers', () => {
  it('installs Promise.withResolvers where it is missing (Node 20), resolving and rejecting as the standard one', async () => {
    delete holder.withResolvers;
    expect(holder.withResolvers).toBeUndefined();
    ensurePromiseWithResolvers();
    const withResolvers = holder.withResolvers;
    expect(typeof withResolvers).toBe('function');
    const resolved = installed()<number>();
    resolved.resolve(7);
    await expect(resolved.promise).resolves.toBe(7);
    const rejected = installed()<number>();
    rejected.reject(new Error('no'));
    await expect(rejected.promise).rejects.toThrow('no');
    // Not enumerable, like the built-in.
    expect(Object.keys(Promise)).not.toContain('withResolvers');
    // Called on a subclass it builds the subclass.
    class Tracked<T> extends Promise<T> {}
    expect((Tracked as unknown as { withResolvers: WithResolvers }).withResolvers<number>().promise).toBeInstanceOf(Tracked);
    // Idempotent: a second call keeps the first one.
    ensurePromiseWithResolvers();
    expect(holder.withResolvers).toBe(withResolvers);
  });

  it('leaves a native Promise.withResolvers alone', () => {
    const native: WithResolvers = () => ({ promise: Promise.resolve() as never, resolve: () => undefined, reject: () => undefined });
    Object.defineProperty(Promise, 'withResolvers', { configurable: true, writable: true, value: native });
    ensurePromiseWithResolvers();
    expect(holder.withResolvers).toBe(native);
  });

  it('is in place once actorloop/restate builds an object or a client', async () => {
    delete holder.withResolvers;
    const { restateConversationClient } = await import('../src/scale/restate/client.js');
    restateConversationClient({ url: 'http://127.0.0.1:1' });
    expect(typeof holder.withResolvers).toBe('function');
  });
});
