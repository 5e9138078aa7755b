/** Fails when an import in `src/` runs against the layer direction (scripts/layers.ts). */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findImportCircles, findLayerProblems, findRoomProblems, type ImportEdge, importsOf, machineRooms } from './layers.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function sourceFiles(directory: string): string[] {
  return readdirSync(join(root, directory), { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const files = sourceFiles('src');
const edges: ImportEdge[] = [];
for (const file of files) {
  for (const { specifier, line } of importsOf(readFileSync(join(root, file), 'utf8'))) {
    // `actorloop` resolves to src/index.ts here (tsconfig paths, for the examples): inside src it is an import of the root.
    if (specifier === 'actorloop') {
      edges.push({ from: file, to: 'src/index.ts', line });
      continue;
    }
    if (!specifier.startsWith('.')) continue;
    const target = posix.normalize(posix.join(posix.dirname(file), specifier)).replace(/\.js$/, '.ts');
    edges.push({ from: file, to: target, line });
  }
}
const problems = findLayerProblems(edges, files);
for (const problem of problems) console.error(problem.message);
if (problems.length > 0) {
  console.error(`\n${problems.length} import(s) against the layer direction (see scripts/layers.ts).`);
  process.exit(1);
}
const roomProblems = findRoomProblems(edges, files);
for (const problem of roomProblems) console.error(problem.message);
if (roomProblems.length > 0) {
  console.error(`\n${roomProblems.length} problem(s) with the rooms of src/machines (see machineRooms in scripts/layers.ts).`);
  process.exit(1);
}
const circles = findImportCircles(edges);
for (const circle of circles) console.error(`import circle: ${circle.join(' → ')}`);
if (circles.length > 0) {
  console.error(`\n${circles.length} import circle(s): move what both sides need into a file of its own (DESIGN §15).`);
  process.exit(1);
}
console.log(
  `layers: ${files.length} files, ${edges.length} imports, all in direction, no circle; src/machines: ${machineRooms.length} rooms, one way (${relative(process.cwd(), root) || '.'})`,
);
