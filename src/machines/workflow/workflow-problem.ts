/**
 * What `verifyWorkflow` finds wrong with a state of a workflow:
 *
 * - `unreachable-final` — no final state of the machine can be reached from the state;
 * - `unhandled-outcome` — a conversation invoked (or spawned) there can end `done`, `halted` or
 *   `error` and no transition takes that outcome (no `onDone`, or guards that leave it out);
 * - `unhandled-error` — no transition takes an actor error of such a conversation (no `onError`);
 * - `waits-forever` — the state has no `after`, no `always` and no invoke, and leaves only on
 *   events nothing in the machine sends and `externalEvents` does not name;
 * - `not-verified` — the machine is too large for a check to finish (it names which).
 *
 * @example
 * ```ts
 * const problem: WorkflowProblem = { state: 'review.waiting', kind: 'waits-forever', message: "..." };
 * ```
 */
export type WorkflowProblemKind = 'unreachable-final' | 'unhandled-outcome' | 'unhandled-error' | 'waits-forever' | 'not-verified';

/**
 * One problem `verifyWorkflow` found: the state's path from the root (`review.waiting`;
 * `(machine)` for the machine itself), what kind of problem, and a sentence saying what is wrong.
 *
 * @example
 * ```ts
 * for (const { state, kind, message } of verifyWorkflow(machine)) console.warn(`${state} (${kind}): ${message}`);
 * ```
 */
export type WorkflowProblem = { state: string; kind: WorkflowProblemKind; message: string };
