import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { entryPoints } from './scripts/entry-points.js';
import LongestFirstSequencer from './test/support/longest-first-sequencer.js';
import { quickTestFiles } from './test/support/test-kinds.js';

const root = fileURLToPath(new URL('.', import.meta.url));
const quick = quickTestFiles(root);

/**
 * Files run in parallel, more of them than there are cores: most of the suite's wall time is spent
 * waiting — on child processes, sockets, timers, a browser, PostgreSQL — and a waiting file leaves its
 * core to another (CONTRIBUTING.md, "Where the suite's time goes"). `ACTORLOOP_TEST_WORKERS` sets
 * the number, `1` runs the files one at a time.
 */
const workers = Number(process.env.ACTORLOOP_TEST_WORKERS ?? Math.max(2, availableParallelism() * 2));

/**
 * The suites on the oldest version each peer range allows, proving the floor of those ranges
 * (`npm run test:floor`, also part of `npm test`): the engine's suites on the oldest xstate
 * (`xstate-floor`, an npm alias pinned in devDependencies; XSTATE_FLOOR_DIR points at another copy,
 * used to find the floor); the MCP suites on the oldest MCP SDK (`mcp-sdk-floor`) — the actorloop
 * side, and the in-process servers; the servers run as child processes use the current SDK; the
 * OpenAI suites on the oldest `openai` (`openai-floor`, 5.11.0: earlier 5.x drop the code of an
 * in-band error event of the Responses API, so it could not be classified).
 */
const floorXstate = process.env.XSTATE_FLOOR_DIR ?? fileURLToPath(new URL('./node_modules/xstate-floor', import.meta.url));
const floorFiles = [
  'test/conversation.test.ts',
  'test/graph.test.ts',
  'test/agents.test.ts',
  'test/xstate-version.test.ts',
  'test/resume.test.ts',
  'test/xstate-restore.test.ts',
  'test/verify-workflow.test.ts',
  'test/host.test.ts',
  'test/mcp.test.ts',
  'test/mcp-lifecycle.test.ts',
  'test/mcp-options.test.ts',
  'test/mcp-sdk-version.test.ts',
  'test/openai-provider.test.ts',
  'test/openai-network-faults.test.ts',
  'test/openai-responses-provider.test.ts',
  'test/openai-responses-network-faults.test.ts',
  'test/conformance-openai.test.ts',
  'test/conformance-openai-responses.test.ts',
  'test/conformance-openai-conversation.test.ts',
  'test/conformance-openai-responses-conversation.test.ts',
  'test/cross-wire.test.ts',
  'test/openai-sdk-version.test.ts',
];

export default defineConfig({
  // `actorloop` and its subpaths are this package's source (the examples import them by name; tests reuse their code),
  // built from package.json "exports" so a subpath is declared once (test/subpaths.test.ts checks tsconfig.json agrees).
  resolve: {
    alias: entryPoints(JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')).exports).map(
      ({ specifier, source }) => ({
        find: new RegExp(`^${specifier.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`),
        replacement: fileURLToPath(new URL(`./${source}`, import.meta.url)),
      }),
    ),
  },
  test: {
    setupFiles: ['test/support/no-crash.ts', 'test/support/file-cost.ts'],
    // In CI a skipped test fails the run (test/support/fail-on-skip-reporter.ts); every run names its slowest files.
    reporters: ['default', './test/support/timing-reporter.ts', ...(process.env.CI ? ['./test/support/fail-on-skip-reporter.ts'] : [])],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    maxWorkers: workers,
    isolate: false,
    sequence: { sequencer: LongestFirstSequencer },
    // Three projects, one pool: `quick` (files that run in their own process alone: test/support/test-kinds.ts),
    // `full` (the rest: processes, browsers, PostgreSQL), `floor` (the floor suites above).
    projects: [
      { extends: true, test: { name: 'quick', include: quick, setupFiles: ['test/support/in-process-only.ts'] } },
      {
        extends: true,
        test: { name: 'full', include: ['test/**/*.test.ts'], exclude: quick, globalSetup: ['test/support/build-before-files.ts'] },
      },
      {
        extends: true,
        resolve: {
          alias: [
            { find: /^xstate(\/.*)?$/, replacement: `${floorXstate}$1` },
            { find: /^@modelcontextprotocol\/sdk(\/.*)?$/, replacement: 'mcp-sdk-floor$1' },
            { find: /^openai(\/.*)?$/, replacement: 'openai-floor$1' },
          ],
        },
        test: { name: 'floor', include: floorFiles, env: { XSTATE_FLOOR: '1' } },
      },
    ],
  },
});
