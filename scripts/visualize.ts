/**
 * `npm run visualize`: writes the machine definitions and Mermaid diagrams of `visualizations/`,
 * generated from `src/machines`. Commit the result; `test/visualizations.test.ts` fails when the
 * committed files are stale.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderVisualizations, visualizationsDir } from './visualize-lib.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, visualizationsDir);
mkdirSync(outDir, { recursive: true });
for (const [name, content] of Object.entries(renderVisualizations())) {
  writeFileSync(join(outDir, name), content);
  console.log(`wrote ${visualizationsDir}/${name}`);
}
