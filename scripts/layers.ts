/**
 * The layer direction of the source tree (docs/architecture.md): each file belongs to one layer and
 * may import only from the layers listed for it. `cli`, `scale`, `observe` → `host` → `machines` →
 * `actors` → `providers` / `tools` → the neutral model. The public entry points (`src/index.ts` and
 * the subpath `index.ts` files named in `entryPoints`) may import anything below them.
 */

export type Layer = { name: string; paths: string[]; mayImport: string[] };

/** First match wins. */
export const layers: Layer[] = [
  // The neutral model: messages, usage, JSON, the `Provider` interface and provider-neutral errors,
  // over the error base and pure helpers; free of any wire, so every room may hold it.
  { name: 'model', paths: ['src/model/', 'src/errors/', 'src/util/'], mayImport: ['model'] },
  { name: 'providers', paths: ['src/providers/'], mayImport: ['model', 'providers'] },
  { name: 'tools', paths: ['src/tools/'], mayImport: ['model', 'tools'] },
  // Request middleware shapes a provider request through the Provider interface only.
  { name: 'middleware', paths: ['src/middleware/'], mayImport: ['model', 'middleware'] },
  // The machine knows providers only through the `Provider` interface (the model), never a wire.
  { name: 'actors', paths: ['src/actors/'], mayImport: ['model', 'tools', 'middleware', 'actors'] },
  { name: 'machines', paths: ['src/machines/'], mayImport: ['model', 'tools', 'middleware', 'actors', 'machines'] },
  { name: 'host', paths: ['src/host/'], mayImport: ['model', 'tools', 'machines', 'host'] },
  { name: 'stores', paths: ['src/stores/'], mayImport: ['model', 'host', 'stores'] },
  { name: 'observe', paths: ['src/observe/'], mayImport: ['model', 'tools', 'machines', 'host', 'observe'] },
  // HTTP over the host: the Fetch API and node:http only, no server library.
  { name: 'http', paths: ['src/http/'], mayImport: ['model', 'tools', 'machines', 'host', 'http'] },
  { name: 'scale', paths: ['src/scale/'], mayImport: ['model', 'tools', 'machines', 'host', 'stores', 'scale'] },
  {
    name: 'cli',
    paths: ['src/cli/'],
    mayImport: ['model', 'providers', 'tools', 'middleware', 'machines', 'host', 'stores', 'observe', 'scale', 'http', 'cli'],
  },
  // Not `scale`: its integrations need optional peers, and the root must load with none installed.
  {
    name: 'root',
    paths: ['src/index.ts'],
    mayImport: ['model', 'providers', 'tools', 'middleware', 'actors', 'machines', 'host', 'stores', 'observe', 'root'],
  },
];

export function layerOf(file: string): Layer | undefined {
  return layers.find((layer) => layer.paths.some((path) => (path.endsWith('/') ? file.startsWith(path) : file === path)));
}

export type ImportEdge = { from: string; to: string; line: number };
export type LayerProblem = { file: string; line: number; message: string };

/** Relative imports of a TypeScript source (static, type-only, re-exports and dynamic imports). */
export function importsOf(source: string): Array<{ specifier: string; line: number }> {
  const found: Array<{ specifier: string; line: number }> = [];
  // Imports in comments (a TSDoc example) are not imports; blanked out, lines kept for the numbers.
  const code = source.replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' ')).replace(/^[ \t]*\/\/.*$/gm, '');
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;
  for (const match of code.matchAll(pattern)) {
    const specifier = match[1];
    if (specifier === undefined) continue;
    const line = code.slice(0, match.index + match[0].length).split('\n').length;
    found.push({ specifier, line });
  }
  return found;
}

/** Every import that goes against the direction, and every file no layer claims. */
export function findLayerProblems(edges: ImportEdge[], files: string[]): LayerProblem[] {
  const problems: LayerProblem[] = [];
  for (const file of files) {
    if (!layerOf(file)) problems.push({ file, line: 1, message: `${file} belongs to no layer: add its folder to scripts/layers.ts` });
  }
  for (const edge of edges) {
    const from = layerOf(edge.from);
    const to = layerOf(edge.to);
    if (!from || !to) continue;
    if (!from.mayImport.includes(to.name)) {
      problems.push({
        file: edge.from,
        line: edge.line,
        message: `${edge.from}:${edge.line} (${from.name}) imports ${edge.to} (${to.name}): ${from.name} may import only ${from.mayImport.join(', ')}`,
      });
    }
  }
  return problems;
}
