/**
 * `npm run example -- <name> [args…]`: runs `examples/<name>.ts` (the same as
 * `npx tsx examples/<name>.ts [args…]`). Without a name, or with an unknown one, lists the examples.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const examplesDir = fileURLToPath(new URL('../examples/', import.meta.url));
const available = readdirSync(examplesDir)
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.slice(0, -'.ts'.length))
  .sort();
const name = process.argv[2];

if (name === undefined || !available.includes(name)) {
  console.error(`${name === undefined ? 'Name an example' : `No example "${name}"`}: npm run example -- <name>`);
  console.error(`Examples: ${available.join(', ')} (see examples/README.md)`);
  process.exit(2);
}
// The example reads its own arguments from process.argv[2] on, as when run directly.
process.argv.splice(2, 1);
await import(pathToFileURL(`${examplesDir}${name}.ts`).href);
