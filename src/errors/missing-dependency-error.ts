import { ActorloopError } from './actorloop-error.js';

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
export class MissingDependencyError extends ActorloopError {
  static override readonly errorName = 'MissingDependencyError';
  /** The npm package to install. */
  readonly packageName: string;

  constructor(packageName: string, feature: string, cause?: unknown) {
    super(`${feature} needs the optional package "${packageName}", which could not be loaded: install it (npm install ${packageName})`, {
      cause,
    });
    this.packageName = packageName;
  }
}
