import type { AnyStateMachine } from 'xstate';
import { type VerifyWorkflowOptions, verifyWorkflow } from './verify-workflow.js';
import { WorkflowProblemsError } from './workflow-problems-error.js';

/**
 * {@link verifyWorkflow} as an assertion: returns when the machine has no problem, and otherwise
 * throws one {@link WorkflowProblemsError} listing them all, one a line — a test of your workflow
 * in one call.
 *
 * @example
 * ```ts
 * import { it } from 'vitest';
 *
 * it('the review workflow always ends', () => {
 *   assertWorkflow(reviewWorkflow, { externalEvents: ['review.approved'] });
 * });
 * ```
 */
export function assertWorkflow(machine: AnyStateMachine, options?: VerifyWorkflowOptions): void {
  const problems = verifyWorkflow(machine, options);
  if (problems.length > 0) throw new WorkflowProblemsError(machine.id, problems);
}
