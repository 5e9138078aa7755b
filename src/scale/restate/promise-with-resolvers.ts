type WithResolvers = <T>() => { promise: Promise<T>; resolve: (value: T | PromiseLike<T>) => void; reject: (reason?: unknown) => void };

/**
 * The Restate SDK (1.14 and later) calls `Promise.withResolvers`, which Node 20 lacks (it came with
 * Node 22). Installs the standard behaviour when it is missing and leaves a native one alone; called
 * before anything of the SDK runs (building the object, a client), so `actorloop/restate` works on
 * Node 20 without the caller doing anything.
 */
export function ensurePromiseWithResolvers(): void {
  const promise = Promise as unknown as { withResolvers?: WithResolvers };
  if (typeof promise.withResolvers === 'function') return;
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>(this: PromiseConstructor) {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      // Called on a subclass, it builds that subclass, as the native method does.
      const Constructor = typeof this === 'function' ? this : Promise;
      const created = new Constructor<T>((resolveWith, rejectWith) => {
        resolve = resolveWith;
        reject = rejectWith;
      });
      return { promise: created, resolve, reject };
    },
  });
}
