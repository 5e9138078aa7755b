import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The suites run against the oldest version each peer range allows, proving the floor of those
 * ranges: `npm run test:floor`. The engine's suites on the oldest xstate (`xstate-floor`, an npm
 * alias pinned in devDependencies; XSTATE_FLOOR_DIR points at another copy, used to find the
 * floor); the MCP suites on the oldest MCP SDK (`mcp-sdk-floor`) — the actorloop side, and the
 * in-process servers; the servers run as child processes use the current SDK; the OpenAI suites on
 * the oldest `openai` (`openai-floor`, 5.11.0: earlier 5.x drop the code of an in-band error event of
 * the Responses API, so it could not be classified).
 */
const floor = process.env.XSTATE_FLOOR_DIR ?? fileURLToPath(new URL('./node_modules/xstate-floor', import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^xstate(\/.*)?$/, replacement: `${floor}$1` },
      { find: /^@modelcontextprotocol\/sdk(\/.*)?$/, replacement: 'mcp-sdk-floor$1' },
      { find: /^openai(\/.*)?$/, replacement: 'openai-floor$1' },
    ],
  },
  test: {
    include: [
      'test/conversation.test.ts',
      'test/graph.test.ts',
      'test/agents.test.ts',
      'test/xstate-version.test.ts',
      'test/resume.test.ts',
      'test/xstate-restore.test.ts',
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
    ],
    setupFiles: ['test/support/no-crash.ts'],
    // In CI a skipped test fails the run (test/support/fail-on-skip-reporter.ts).
    reporters: process.env.CI ? ['default', './test/support/fail-on-skip-reporter.ts'] : ['default'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
