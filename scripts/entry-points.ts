/**
 * The package's entry points, read from package.json "exports" — the one place a subpath is
 * declared. vitest.config.ts builds its `actorloop/…` aliases from it, the docs check resolves
 * README imports with it, and test/subpaths.test.ts proves that what cannot be computed
 * (tsconfig.json "paths", test/packaging/every-entry-point.ts) lists the same entry points.
 */

/** One entry point: the specifier a user imports and the source file behind it. */
export type EntryPoint = {
  /** `actorloop` or `actorloop/<subpath>`. */
  specifier: string;
  /** The source file, relative to the package root: `src/observe/rx/index.ts`. */
  source: string;
};

/**
 * The entry points an "exports" map declares, each mapped from its built file to its source
 * (`./dist/X.js` → `src/X.ts`, as tsconfig.build.json compiles `src` to `dist`). Entries that are
 * not code (`./package.json`) are left out.
 *
 * @example
 * ```ts
 * entryPoints({ '.': { import: './dist/index.js' }, './rx': { import: './dist/observe/rx/index.js' } });
 * // [{ specifier: 'actorloop', source: 'src/index.ts' }, { specifier: 'actorloop/rx', source: 'src/observe/rx/index.ts' }]
 * ```
 */
export function entryPoints(exports: Record<string, unknown>, name = 'actorloop'): EntryPoint[] {
  const found: EntryPoint[] = [];
  for (const [subpath, target] of Object.entries(exports)) {
    const built = typeof target === 'string' ? target : (target as { import?: unknown } | null)?.import;
    if (typeof built !== 'string' || !built.startsWith('./dist/') || !built.endsWith('.js')) continue;
    found.push({
      specifier: subpath === '.' ? name : `${name}/${subpath.replace(/^\.\//, '')}`,
      source: `src/${built.slice('./dist/'.length, -'.js'.length)}.ts`,
    });
  }
  return found;
}
