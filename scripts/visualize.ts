/**
 * `npm run visualize`: writes the machine definitions, Mermaid diagrams and SVG pictures of
 * `visualizations/`, generated from `src/machines`, and the conversation overview into README.md. Commit the result; `test/visualizations.test.ts` fails when the
 * committed files are stale.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readmeWithDiagram, renderVisualizations, visualizationsDir } from './visualize-lib.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, visualizationsDir);
mkdirSync(outDir, { recursive: true });
const files = await renderVisualizations();
for (const [name, content] of Object.entries(files)) {
  writeFileSync(join(outDir, name), content);
  console.log(`wrote ${visualizationsDir}/${name}`);
}
const readmePath = join(root, 'README.md');
writeFileSync(readmePath, readmeWithDiagram(readFileSync(readmePath, 'utf8'), files['conversation.core.mmd'] ?? ''));
console.log('wrote the machine diagram into README.md');
