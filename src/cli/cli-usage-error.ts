const marker = Symbol.for('actorloop.error.CliUsageError');

/**
 * A command line the `actorloop` command cannot run: an unknown command or flag, a missing value,
 * a missing key. The command prints its one-line message and the usage, and exits 1.
 *
 * @example
 * ```ts
 * throw new CliUsageError('unknown provider "gemini" (expected openai, anthropic, compatible or offline)');
 * ```
 */
export class CliUsageError extends Error {
  override readonly name = 'CliUsageError';
  readonly [marker] = true;

  /** True for a CliUsageError, also one from another copy of this package. */
  static isInstance(error: unknown): error is CliUsageError {
    return typeof error === 'object' && error !== null && marker in error;
  }
}
