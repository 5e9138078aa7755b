import { ActorloopError } from '../errors/actorloop-error.js';
import { type ProblemDetails, type ProblemTypeName, problemDetails } from './problem.js';

/**
 * A request `actorloop/http` refuses: thrown while a request is read and checked, answered as the
 * problem it carries (`application/problem+json`). `headers` go with the answer (`allow` on a 405).
 *
 * @example
 * ```ts
 * throw new HttpProblemError('invalid-field', 'toolCallId: expected a non-empty string, got 7', { field: 'toolCallId' });
 * ```
 */
export class HttpProblemError extends ActorloopError {
  static override readonly errorName = 'HttpProblemError';
  readonly problem: ProblemDetails;
  readonly headers: Record<string, string>;

  constructor(name: ProblemTypeName, detail: string, options: { field?: string; headers?: Record<string, string> } = {}) {
    super(detail);
    this.problem = problemDetails(name, detail, options.field);
    this.headers = options.headers ?? {};
  }
}
