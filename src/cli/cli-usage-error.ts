import { ActorloopError } from '../errors/actorloop-error.js';

/**
 * A command line the `actorloop` command cannot run: an unknown command or flag, a missing value,
 * a missing key. The command prints its one-line message, its command's usage line and where the
 * whole usage is (`actorloop --help`), and exits 1 (`eval`: 2, as its 1 means below the threshold).
 *
 * @example
 * ```ts
 * throw new CliUsageError('unknown provider "gemini" (expected openai, anthropic, compatible or offline)');
 * ```
 */
export class CliUsageError extends ActorloopError {
  static override readonly errorName = 'CliUsageError';
}
