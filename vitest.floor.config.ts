import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The engine's own suites run against the oldest xstate the peer range allows (`xstate-floor`, an
 * npm alias pinned in devDependencies), proving the floor of that range: `npm run test:floor`.
 * XSTATE_FLOOR_DIR points at another copy (used to find the floor).
 */
const floor = process.env.XSTATE_FLOOR_DIR ?? fileURLToPath(new URL('./node_modules/xstate-floor', import.meta.url));

export default defineConfig({
  resolve: { alias: [{ find: /^xstate(\/.*)?$/, replacement: `${floor}$1` }] },
  test: {
    include: ['test/conversation.test.ts', 'test/graph.test.ts', 'test/xstate-version.test.ts', 'test/resume.test.ts', 'test/host.test.ts'],
    setupFiles: ['test/support/no-crash.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
