import type { AnyStateMachine } from 'xstate';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { option } from '../../util/option-schema.js';
import { allNodes, isStateMachine, stateName } from './chart-nodes.js';
import { conversationOutcomeProblems } from './conversation-outcomes.js';
import { unreachableFinalProblems } from './final-reachability.js';
import { waitingProblems } from './waiting-states.js';
import type { WorkflowProblem } from './workflow-problem.js';

/**
 * Options of {@link verifyWorkflow} and `assertWorkflow`.
 *
 * @example
 * ```ts
 * const options: VerifyWorkflowOptions = { externalEvents: ['review.approved', 'review.rejected'], input: { topic: 'otters' } };
 * ```
 */
export type VerifyWorkflowOptions = {
  /**
   * Events that come from outside the machine — a person, a webhook, your code calling
   * `actor.send` — so a state waiting for them does not wait forever. Descriptors as XState takes
   * them (`review.*`). `user.message`, `tool.approve` and `tool.deny` (what a host sends on a
   * person's behalf) always count; `cancel` does not unless named here.
   */
  externalEvents?: readonly string[];
  /** The machine's input, for the context its guards are evaluated with (as `createActor(machine, { input })` gives it). */
  input?: unknown;
};

const optionsSchema = option.object(
  {
    externalEvents: option.withDefault(option.array(option.string({ nonEmpty: true, expected: 'an event type' })), []),
    input: option.unchecked(),
  },
  { expected: 'an object { externalEvents?, input? }' },
);

/**
 * The project's own proofs, for your XState v5 machine that invokes or spawns conversations
 * (`createConversationMachine`): every problem found, `[]` when there is none.
 *
 * - **`unreachable-final`** — a final state of the machine can be reached from every state
 *   (transitions on events, `after`, `always`, invoke `onDone` / `onError`, a compound state's
 *   `onDone` once it is in a final child, a parallel state's once every region is).
 * - **`unhandled-outcome`**, **`unhandled-error`** — every conversation invoked (or spawned with
 *   `spawnChild`) has its outcomes `done`, `halted` (every reason) and `error` taken by a
 *   transition, and an actor error by `onError`: the guards are evaluated by XState on synthetic
 *   `xstate.done.actor.<id>` events, with the context the machine starts with (`input`).
 * - **`waits-forever`** — no state without `after`, `always` or an invoke waits only for events
 *   nothing in the machine sends (`raise`, `sendTo`, a child machine's `sendParent`) and
 *   `externalEvents` does not name.
 *
 * The checks read the machine's config: what code does (an action's body, an event made by a
 * function, a callback actor) they cannot see (docs/workflows.md, "Proving your workflow").
 *
 * @example
 * ```ts
 * import { createMachine } from 'xstate';
 *
 * const writer = createConversationMachine({ provider });
 * const workflow = createMachine({
 *   initial: 'writing',
 *   states: {
 *     writing: {
 *       invoke: { id: 'writer', src: writer, input: { messages: [] }, onDone: 'done', onError: 'failed' },
 *     },
 *     done: { type: 'final' },
 *     failed: { type: 'final' },
 *   },
 * });
 * verifyWorkflow(workflow); // []
 * ```
 */
export function verifyWorkflow(machine: AnyStateMachine, options: VerifyWorkflowOptions = {}): WorkflowProblem[] {
  if (!isStateMachine(machine))
    throw new InvalidOptionsError('machine', 'an XState v5 machine (createMachine, setup(...).createMachine)', machine);
  const { externalEvents, input } = optionsSchema.resolve(options ?? {}, '');
  const problems = [
    ...unreachableFinalProblems(machine),
    ...conversationOutcomeProblems(machine, input),
    ...waitingProblems(machine, externalEvents),
  ];
  // In the machine's order of states, each state's problems in the order of the checks.
  const order = new Map(allNodes(machine).map((node, index) => [stateName(node), index]));
  return problems
    .map((problem, index) => ({ problem, index }))
    .sort((a, b) => (order.get(a.problem.state) ?? 0) - (order.get(b.problem.state) ?? 0) || a.index - b.index)
    .map(({ problem }) => problem);
}
