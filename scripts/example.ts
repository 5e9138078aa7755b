/**
 * `npm run example -- <name> [args…]`: runs `examples/<name>.ts`, or `examples/<name>/main.ts` for an
 * example that is a folder (the same as `npx tsx examples/<name>.ts [args…]`). Without a name, or
 * with an unknown one, lists the examples.
 */
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const examplesDir = fileURLToPath(new URL('../examples/', import.meta.url));
const entries = readdirSync(examplesDir, { withFileTypes: true });
const files = entries.filter((entry) => entry.isFile() && entry.name.endsWith('.ts')).map((entry) => entry.name.slice(0, -'.ts'.length));
const folders = entries
  .filter((entry) => entry.isDirectory() && existsSync(`${examplesDir}${entry.name}/main.ts`))
  .map((entry) => entry.name);
const available = [...files, ...folders].sort();
const name = process.argv[2];

if (name === undefined || !available.includes(name)) {
  console.error(`${name === undefined ? 'Name an example' : `No example "${name}"`}: npm run example -- <name>`);
  console.error(`Examples: ${available.join(', ')} (see examples/README.md)`);
  process.exit(2);
}
// The example reads its own arguments from process.argv[2] on, and its own path from process.argv[1]
// (an example that exports its machine runs only when it is the entry), as when run directly.
const file = folders.includes(name) ? `${examplesDir}${name}/main.ts` : `${examplesDir}${name}.ts`;
process.argv.splice(1, 2, file);
await import(pathToFileURL(file).href);
