import type { Usage } from '../usage.js';
import { ActorloopError } from '../../errors/actorloop-error.js';

/**
 * What went wrong, coarsely, so hosts can react without parsing messages.
 *
 * @example
 * ```ts
 * const code: ProviderErrorCode = 'rate_limit';
 * throw new ProviderError('quota used up for today', { code, retryable: false, status: 429 });
 * ```
 */
export type ProviderErrorCode =
  | 'rate_limit'
  | 'overloaded'
  | 'server'
  | 'timeout'
  | 'network'
  | 'incomplete_stream'
  | 'authentication'
  | 'permission'
  | 'not_found'
  | 'bad_request'
  /** The prompt is longer than the model's context window: retrying the same request cannot help, a shorter history can. */
  | 'context_length'
  | 'conflict'
  /** A part of the history the wire cannot carry (audio to Anthropic, a PDF by URL to Chat Completions): refused before anything is sent. */
  | 'unsupported_content'
  | 'aborted'
  | 'unknown';

export type ProviderErrorOptions = {
  code: ProviderErrorCode;
  retryable: boolean;
  status?: number;
  retryAfterMs?: number;
  cause?: unknown;
  /** Tokens the failed attempt reported before it failed (counted apart from the run's usage). */
  usage?: Usage;
  /** The model that answered the failed attempt, when the wire said (to price `usage`). */
  model?: string;
};

/**
 * A classified provider failure: every error a provider call raises becomes one of these, so the
 * machine decides between `retrying` and `error` from `retryable` alone.
 *
 * @example
 * ```ts
 * throw new ProviderError('upstream overloaded', { code: 'overloaded', retryable: true, status: 529 });
 * ```
 */
export class ProviderError extends ActorloopError {
  static override readonly errorName = 'ProviderError';
  readonly code: ProviderErrorCode;
  readonly retryable: boolean;
  readonly status?: number;
  readonly retryAfterMs?: number;
  /** Tokens the failed attempt reported before it failed, when the wire said. */
  readonly usage?: Usage;
  /** The model that answered the failed attempt, when the wire said. */
  readonly model?: string;

  constructor(message: string, options: ProviderErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code;
    this.retryable = options.retryable;
    if (options.status !== undefined) this.status = options.status;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    if (options.usage !== undefined) this.usage = options.usage;
    if (options.model !== undefined) this.model = options.model;
  }
}
