import { afterEach, expect } from 'vitest';

/**
 * Registered for every test file: any unhandled rejection or uncaught exception during a test
 * fails that test, naming what escaped — docs/behaviour.md item 1 says nothing may escape a run.
 * The listeners are the process's, added once: the quick suite runs many files in one process
 * (vitest's `isolate: false`), and this file runs again for each of them.
 */
const key = Symbol.for('actorloop.test.escaped');
const shared = globalThis as { [key]?: unknown[] };
if (!shared[key]) {
  const found: unknown[] = [];
  process.on('unhandledRejection', (reason) => found.push(reason));
  process.on('uncaughtException', (error) => found.push(error));
  shared[key] = found;
}
const escaped = shared[key];

afterEach(async () => {
  // Give late rejections (a tool that settles after its timeout) a turn to surface.
  await new Promise((resolve) => setImmediate(resolve));
  const found = escaped.splice(0);
  expect(found, `escaped the run: ${found.map(String).join('; ')}`).toEqual([]);
});
