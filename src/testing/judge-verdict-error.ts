import { ActorloopError } from '../errors/actorloop-error.js';

/**
 * A judge model gave no usable verdict (its answer was not the verdict object after the repairs it
 * was allowed, or its run failed). The item it judged gets an error, never a passing score.
 *
 * @example
 * ```ts
 * const failed = report.items.filter((item) => item.error?.startsWith('JudgeVerdictError'));
 * ```
 */
export class JudgeVerdictError extends ActorloopError {
  static override readonly errorName = 'JudgeVerdictError';
  /** The judge's name (the scorer's). */
  readonly judge: string;

  constructor(judge: string, message: string, options?: { cause?: unknown }) {
    super(`judge ${JSON.stringify(judge)}: ${message}`, options);
    this.judge = judge;
  }
}
