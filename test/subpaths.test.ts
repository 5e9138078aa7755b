/**
 * A subpath is declared once, in package.json "exports". What is built from it (vitest.config.ts's
 * aliases) and what cannot be (tsconfig.json "paths", the consumer program that imports every
 * entry point) must name the same entry points with the same source files.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import tsconfig from '../tsconfig.json' with { type: 'json' };
import vitestConfig from '../vitest.config.js';
import { entryPoints } from '../scripts/entry-points.js';

const root = join(import.meta.dirname, '..');
const declared = entryPoints(pkg.exports);
const bySpecifier = (entries: Array<{ specifier: string; source: string }>) =>
  Object.fromEntries(entries.map(({ specifier, source }) => [specifier, source]).sort(([a], [b]) => String(a).localeCompare(String(b))));

describe('subpaths, declared in package.json "exports"', () => {
  it('each points at a source file that exists, types next to the code', () => {
    expect(declared.map(({ specifier }) => specifier)).toContain('actorloop');
    for (const { specifier, source } of declared) expect(existsSync(join(root, source)), `${specifier} → ${source}`).toBe(true);
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') continue;
      expect(target.types, subpath).toBe(target.import.replace(/\.js$/, '.d.ts'));
    }
  });

  it('tsconfig.json "paths" maps the same specifiers to the same sources', () => {
    const paths = Object.entries(tsconfig.compilerOptions.paths).map(([specifier, [source]]) => ({
      specifier,
      source: String(source).replace(/^\.\//, ''),
    }));
    expect(bySpecifier(paths)).toEqual(bySpecifier(declared));
  });

  it('vitest.config.ts aliases each specifier, and only it, to its source', () => {
    const aliases = vitestConfig.resolve?.alias;
    if (!Array.isArray(aliases)) throw new Error('vitest.config.ts: resolve.alias should be an array');
    const resolved = declared.map(({ specifier }) => {
      const matching = aliases.filter(({ find }) => (typeof find === 'string' ? find === specifier : find.test(specifier)));
      expect(matching, specifier).toHaveLength(1);
      return { specifier, source: join(matching[0]!.replacement).slice(root.length + 1) };
    });
    expect(bySpecifier(resolved)).toEqual(bySpecifier(declared));
    // An alias must not catch a longer specifier (`actorloop/restate` is not `actorloop/restate/client`).
    expect(aliases).toHaveLength(declared.length);
    for (const { find } of aliases) expect(typeof find === 'string' || find.test('actorloop/nothing')).toBe(false);
  });

  it('test/packaging/every-entry-point.ts imports each entry point once, and uses a name of each subpath', () => {
    const source = readFileSync(join(root, 'test/packaging/every-entry-point.ts'), 'utf8');
    const imported = [...source.matchAll(/^import \* as (\w+) from '(actorloop[^']*)';$/gm)].map(([, name, specifier]) => ({
      name: name!,
      specifier: specifier!,
    }));
    expect(imported.map(({ specifier }) => specifier).sort()).toEqual(declared.map(({ specifier }) => specifier).sort());
    // One line, or one name a line once the list is longer than a line (biome's format).
    const listed = /const entryPoints = \{([^}]*)\};/
      .exec(source)?.[1]
      ?.split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
    expect(listed?.sort()).toEqual(imported.map(({ name }) => name).sort());
    // The program prints how many names it used; the packaging test expects one per subpath (the root and sqlite build the host).
    const used = /const used: .*? = \[([^\]]*)\];/s.exec(source)?.[1];
    const usedModules = [...(used ?? '').matchAll(/^\s*(\w+)\./gm)].map(([, name]) => name);
    expect(usedModules.sort()).toEqual(
      imported
        .map(({ name }) => name)
        .filter((name) => name !== 'root' && name !== 'sqlite')
        .sort(),
    );
  });
});
