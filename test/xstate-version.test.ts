import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import pkg from '../package.json' with { type: 'json' };

/**
 * Which xstate the suites run against: the pinned dev copy under `npm test`, the floor of the peer
 * range under `npm run test:floor` (the `floor` project of vitest.config.ts aliases `xstate` to it).
 */
describe('xstate under test', () => {
  it('is the version this run is meant to prove', async () => {
    const require = createRequire(import.meta.url);
    const floorRun = process.env.XSTATE_FLOOR === '1';
    const expected = floorRun ? require('xstate-floor/package.json').version : pkg.devDependencies.xstate;
    const { default: loaded } = await import('xstate/package.json', { with: { type: 'json' } });
    expect(typeof createActor).toBe('function');
    expect(loaded.version).toBe(expected);
    if (floorRun) expect(pkg.peerDependencies.xstate).toBe(`^${expected}`);
  });
});
