import { ActorloopError } from '../errors/actorloop-error.js';
import type { TrajectoryCall, TrajectoryStep } from './trajectory-types.js';

/**
 * Thrown by `expectTrajectory` when a run's tool calls do not match the steps expected. The
 * message is a readable diff — the expected steps beside the calls made, each line marked `✓`
 * (matches), `✗` (differs, with the first differing path, e.g. `args.city: expected "Paris", got
 * "Lyon"`), `−` (missing) or `+` (extra) — and `difference` is its first line's finding.
 *
 * @example
 * ```ts
 * try {
 *   expectTrajectory(output, [{ tool: 'weather', args: { city: 'Paris' } }]);
 * } catch (error) {
 *   if (TrajectoryMismatchError.isInstance(error)) console.error(error.difference, error.calls.length);
 * }
 * ```
 */
export class TrajectoryMismatchError extends ActorloopError {
  static override readonly errorName = 'TrajectoryMismatchError';
  /** The steps that were expected. */
  readonly steps: readonly TrajectoryStep[];
  /** The tool calls the run made, in order. */
  readonly calls: readonly TrajectoryCall[];
  /** The first difference, e.g. `step 2 (book): args.city: expected "Paris", got "Lyon"`. */
  readonly difference: string;

  constructor(message: string, details: { steps: readonly TrajectoryStep[]; calls: readonly TrajectoryCall[]; difference: string }) {
    super(message);
    this.steps = details.steps;
    this.calls = details.calls;
    this.difference = details.difference;
  }
}
