import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // As in tsconfig.json: `actorloop` is this package's source (the examples import it by name; tests reuse their support code).
  resolve: { alias: [{ find: /^actorloop$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) }] },
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/support/no-crash.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
