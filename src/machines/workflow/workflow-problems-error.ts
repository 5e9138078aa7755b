import { ActorloopError } from '../../errors/actorloop-error.js';
import type { WorkflowProblem } from './workflow-problem.js';

/**
 * Thrown by `assertWorkflow` when `verifyWorkflow` finds problems: the message lists every one
 * (`<state> (<kind>): <what is wrong>`), one a line, and `problems` holds them as `verifyWorkflow`
 * returned them.
 *
 * @example
 * ```ts
 * try {
 *   assertWorkflow(workflow);
 * } catch (error) {
 *   if (WorkflowProblemsError.isInstance(error)) for (const problem of error.problems) console.warn(problem.state, problem.kind);
 * }
 * ```
 */
export class WorkflowProblemsError extends ActorloopError {
  static override readonly errorName = 'WorkflowProblemsError';
  /** The machine's id. */
  readonly machineId: string;
  readonly problems: readonly WorkflowProblem[];

  constructor(machineId: string, problems: readonly WorkflowProblem[]) {
    const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
    const lines = problems.map(({ state, kind, message }) => `- ${state} (${kind}): ${message}`);
    super(`workflow ${JSON.stringify(machineId)} has ${count}:\n${lines.join('\n')}`);
    this.machineId = machineId;
    this.problems = problems;
  }
}
