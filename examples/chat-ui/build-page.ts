/**
 * Bundles the page (page/main.tsx, React and @ai-sdk/react) with vite into `outDir`: no dev
 * server, no plugin (vite's own transform handles TSX with React's automatic runtime).
 */
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

export const pageSource = fileURLToPath(new URL('./page/', import.meta.url));

export async function buildPage(outDir: string): Promise<void> {
  await build({
    root: pageSource,
    configFile: false,
    logLevel: 'warn',
    mode: 'production',
    oxc: { jsx: { runtime: 'automatic' } },
    build: {
      outDir,
      emptyOutDir: true,
      reportCompressedSize: false,
      // React, the AI SDK and its schemas in one file: about 500 kB, fine for an example.
      chunkSizeWarningLimit: 1_000,
      rolldownOptions: {
        // swr's 'use client' is for React Server Components bundlers: nothing to keep in a page.
        onwarn: (warning, warn) => {
          if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
        },
      },
    },
  });
}
