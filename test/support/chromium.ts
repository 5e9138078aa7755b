import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Debian's Chromium (`npm test` installs it when it can: `scripts/ensure-chromium.mjs`), never a downloaded browser. */
export const chromiumPath = '/usr/bin/chromium';

const args = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
  '--disable-quic',
];

/** Headless Chromium with a fresh profile; `close()` removes the profile too. */
export async function launchChromium(
  viewport = { width: 1400, height: 1000 },
): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  // A browser suite never skips: without Chromium it fails, naming the command that fixes it.
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `the browser suites need Debian's Chromium at ${chromiumPath}: sudo apt-get update && sudo apt-get install -y chromium`,
    );
  }
  const profile = mkdtempSync(join(tmpdir(), 'actorloop-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath, headless: true, args, viewport });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Where a test keeps its screenshots (`test-results/<name>/`, git-ignored). */
export function resultsDir(name: string): string {
  const directory = join(import.meta.dirname, '..', '..', 'test-results', name);
  mkdirSync(directory, { recursive: true });
  return directory;
}
