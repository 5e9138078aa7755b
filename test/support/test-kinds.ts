import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * What a test file reaches beyond its own process. A file that reaches nothing of the kind — it may
 * still serve itself on a loopback socket, as the wire server does — belongs to the quick suite
 * (`npm run test:quick`); every other file runs in the full suite only.
 */
export type OutsideReach = 'processes' | 'browser' | 'database';

/** The imports that start processes, drive a browser or talk to PostgreSQL. */
const markers: ReadonlyArray<readonly [RegExp, OutsideReach]> = [
  [/^node:(child_process|cluster)$/, 'processes'],
  [/^playwright-core$/, 'browser'],
  [/^pg$|\/support\/postgres\.js$/, 'database'],
];

/** What a file imports, statically or with `import()`, as TypeScript reads it (never a string that only looks like an import). */
function specifiers(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((file) => file.fileName);
}

/** A relative `.js` import resolved to the `.ts` file beside it, when there is one. */
function localFile(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = resolve(dirname(from), specifier);
  for (const candidate of [target.replace(/\.js$/, '.ts'), target, `${target}.ts`])
    if (existsSync(candidate) && /\.[mc]?[jt]s$/.test(candidate)) return candidate;
  return undefined;
}

/**
 * What `file` reaches, following its relative imports through the test helpers, scripts, examples
 * and benches — not into `src/`, whose modules only start a process or a browser when a test asks
 * them to, and a test that does names the helper that does it.
 */
export function outsideReach(file: string, root: string): OutsideReach[] {
  const source = join(root, 'src');
  const found = new Set<OutsideReach>();
  const seen = new Set<string>();
  const visit = (path: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    for (const specifier of specifiers(readFileSync(path, 'utf8'))) {
      for (const [pattern, reach] of markers) if (pattern.test(specifier)) found.add(reach);
      const local = localFile(path, specifier);
      if (local && !relative(source, local).match(/^[^.]/)) visit(local);
    }
  };
  visit(file);
  return [...found].sort();
}

/** Every `test/*.test.ts` of `root` that reaches nothing outside its process, as paths from `root`. */
export function quickTestFiles(root: string): string[] {
  const folder = join(root, 'test');
  return readdirSync(folder)
    .filter((name) => name.endsWith('.test.ts'))
    .filter((name) => outsideReach(join(folder, name), root).length === 0)
    .map((name) => `test/${name}`)
    .sort();
}
