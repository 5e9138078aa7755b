import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // As in tsconfig.json: `actorloop` and its subpaths are this package's source (the examples import them by name; tests
  // reuse their code).
  resolve: {
    alias: [
      { find: /^actorloop$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
      ...Object.entries({
        inspect: 'observe/inspect',
        mcp: 'tools/mcp',
        otel: 'observe/otel',
        restate: 'scale/restate',
        'restate/client': 'scale/restate/client',
        rx: 'observe/rx',
        sqlite: 'stores/sqlite',
      }).map(([subpath, folder]) => ({
        find: new RegExp(`^actorloop/${subpath}$`),
        replacement: fileURLToPath(new URL(`./src/${folder}/index.ts`, import.meta.url)),
      })),
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/support/no-crash.ts'],
    // In CI a skipped test fails the run (test/support/fail-on-skip-reporter.ts).
    reporters: process.env.CI ? ['default', './test/support/fail-on-skip-reporter.ts'] : ['default'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
