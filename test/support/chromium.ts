import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { type BrowserContext, chromium } from 'playwright-core';
import { cacheFolder } from './cache-folder.js';

const root = join(import.meta.dirname, '..', '..');

/**
 * The browser the suites drive: the headless Chromium shipped inside the npm package
 * `@sparticuz/chromium` (a pinned dev dependency), so `npm ci && npm test` needs no browser download,
 * no root and no apt. `ACTORLOOP_CHROMIUM=/path/to/chromium` drives another one (Debian's, say).
 *
 * The package keeps the binary brotli-compressed; it is unpacked once per package version into
 * `node_modules/.cache/actorloop-chromium/<version>/`. Its own `executablePath()` unpacks into a fixed
 * `/tmp/chromium` that parallel test files would race on and that another version may have left, so
 * the unpacking is ours (`cacheFolder`).
 */
export function chromiumPath(): string {
  const chosen = process.env.ACTORLOOP_CHROMIUM;
  if (chosen) {
    if (!existsSync(chosen))
      throw new Error(`ACTORLOOP_CHROMIUM is ${chosen}, which does not exist; unset it to use the packaged Chromium`);
    return chosen;
  }
  let manifest: string;
  try {
    // The package's exports leave out package.json: find it above its entry point.
    manifest = createRequire(join(root, 'package.json')).resolve('@sparticuz/chromium');
    while (!manifest.endsWith(join('@sparticuz', 'chromium'))) manifest = dirname(manifest);
    manifest = join(manifest, 'package.json');
  } catch {
    // A browser suite never skips: without the package it fails, naming the command that fixes it.
    throw new Error('the browser suites need the dev dependency @sparticuz/chromium, which is not installed: run `npm ci`');
  }
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  const packed = join(dirname(manifest), 'bin');
  return cacheFolder('actorloop-chromium', version, 'chromium', (folder, final) => {
    writeFileSync(join(folder, 'chromium'), brotliDecompressSync(readFileSync(join(packed, 'chromium.br'))));
    chmodSync(join(folder, 'chromium'), 0o755);
    // The fonts the package ships (Open Sans), so text is measured alike on every machine.
    writeFileSync(join(folder, 'fonts.tar'), brotliDecompressSync(readFileSync(join(packed, 'fonts.tar.br'))));
    execFileSync('tar', ['-xf', join(folder, 'fonts.tar'), '-C', folder]);
    rmSync(join(folder, 'fonts.tar'));
    writeFileSync(join(folder, 'fonts.conf'), fontConfig(join(final, 'fonts')));
  });
}

/**
 * Sans-serif text (and the families Mermaid and our pages ask for) in the packaged Open Sans; the
 * machine's own fonts only for glyphs it lacks. Measured layouts (label overlaps, a chart's width)
 * would otherwise follow whatever fonts a machine happens to have.
 */
function fontConfig(fonts: string): string {
  const families = ['sans-serif', 'system-ui', 'Arial', 'Helvetica', 'Verdana', 'trebuchet ms', 'Segoe UI'];
  return `<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir>${fonts}</dir>
  <dir>/usr/share/fonts</dir>
  <cachedir>${join(fonts, '..', 'fonts-cache')}</cachedir>
${families.map((family) => `  <match target="pattern"><test name="family"><string>${family}</string></test><edit name="family" mode="prepend" binding="strong"><string>Open Sans</string></edit></match>`).join('\n')}
</fontconfig>
`;
}

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
  const profile = mkdtempSync(join(tmpdir(), 'actorloop-chromium-'));
  const executablePath = chromiumPath();
  const env = { ...process.env } as Record<string, string>;
  const fonts = join(dirname(executablePath), 'fonts.conf');
  if (existsSync(fonts)) env.FONTCONFIG_FILE = fonts;
  const context = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args, viewport, env });
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
