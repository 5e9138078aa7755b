import { afterEach, expect } from 'vitest';

/**
 * Registered for every test file: any unhandled rejection or uncaught exception during a test
 * fails that test, naming what escaped — docs/behaviour.md item 1 says nothing may escape a run.
 */
const escaped: unknown[] = [];
process.on('unhandledRejection', (reason) => escaped.push(reason));
process.on('uncaughtException', (error) => escaped.push(error));

afterEach(async () => {
  // Give late rejections (a tool that settles after its timeout) a turn to surface.
  await new Promise((resolve) => setImmediate(resolve));
  const found = escaped.splice(0);
  expect(found, `escaped the run: ${found.map(String).join('; ')}`).toEqual([]);
});
