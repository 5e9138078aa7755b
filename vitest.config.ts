import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { entryPoints } from './scripts/entry-points.js';

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
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/support/no-crash.ts'],
    // In CI a skipped test fails the run (test/support/fail-on-skip-reporter.ts).
    reporters: process.env.CI ? ['default', './test/support/fail-on-skip-reporter.ts'] : ['default'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
