import { MissingDependencyError } from '../errors/missing-dependency-error.js';

/**
 * Imports an optional peer dependency on first use; when it is missing, a `MissingDependencyError`
 * says what to install and for which feature. `load` is the `import()` call itself, so bundlers and
 * TypeScript still see a literal specifier.
 */
export async function importOptional<TModule>(packageName: string, feature: string, load: () => Promise<TModule>): Promise<TModule> {
  try {
    return await load();
  } catch (error) {
    throw new MissingDependencyError(packageName, feature, error);
  }
}
