/**
 * `npx tsx scripts/screenshot-config.ts`: the picture of docs/observe.md's "Open the machine in
 * Stately". With no network here, it cannot come from stately.ai: `visualizations/conversation.machine.json`
 * is imported with plain `createMachine()` and its overview (the full chart is too wide for a page)
 * drawn by actorloop's own renderer,
 * then photographed in the headless Chromium the browser tests use → `docs/images/stately-import.png`.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../test/support/chromium.js';
import { importedConfigSvg, visualizationsDir } from './visualize-lib.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const configFile = join(root, visualizationsDir, 'conversation.machine.json');
const out = join(root, 'docs', 'images', 'stately-import.png');

const svg = await importedConfigSvg(
  readFileSync(configFile, 'utf8'),
  'overview',
  'conversation.machine.json imported with createMachine(), drawn by actorloop',
);
mkdirSync(dirname(out), { recursive: true });
const browser = await launchChromium({ width: 1600, height: 1200 });
try {
  const page = await browser.context.newPage();
  await page.setContent(`<!doctype html><html><body style="margin:0;background:#fff">${svg}</body></html>`);
  const chart = await page.$('svg');
  if (!chart) throw new Error('the rendered page holds no <svg>: the chart renderer produced nothing to photograph');
  await chart.screenshot({ path: out });
  console.log(`wrote ${out.slice(root.length + 1)}`);
} finally {
  await browser.close();
}
