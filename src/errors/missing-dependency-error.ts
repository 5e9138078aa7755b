const marker = Symbol.for('actorloop.error.MissingDependencyError');

/**
 * Thrown when a feature needs an optional peer dependency that is not installed (`rxjs` for
 * `actorloop/rx`, `elkjs` for the live viewer's charts, `@statelyai/inspect` for the Stately
 * inspector). `packageName` is what to install; `cause` is the import failure.
 *
 * @example
 * ```ts
 * try {
 *   await startLiveViewer();
 * } catch (error) {
 *   if (MissingDependencyError.isInstance(error)) console.error(`npm install ${error.packageName}`);
 * }
 * ```
 */
export class MissingDependencyError extends Error {
  override readonly name = 'MissingDependencyError';
  /** The npm package to install. */
  readonly packageName: string;
  readonly [marker] = true;

  constructor(packageName: string, feature: string, cause?: unknown) {
    super(`${feature} needs the optional package "${packageName}", which could not be loaded: install it (npm install ${packageName})`, {
      cause,
    });
    this.packageName = packageName;
  }

  /** True for a MissingDependencyError, also one from another copy of this package. */
  static isInstance(error: unknown): error is MissingDependencyError {
    return typeof error === 'object' && error !== null && marker in error;
  }
}
