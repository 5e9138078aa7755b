/**
 * Check 3 of `verifyWorkflow`: no state waits for an event that never comes. A state (atomic, not
 * final) waits forever when neither it nor any state around it has an `after`, an `always` or an
 * invoke — each of those moves it on its own — and every event that would move it on (a
 * transition of it or of a state around it, with a target) is one nothing in the machine sends
 * (sent-events.ts) and the caller does not name as external. A state no event moves on at all is
 * the reachability check's to report.
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { allNodes, invokesOf, selfAndAncestors, stateName, transitionsByEvent } from './chart-nodes.js';
import { sentEvents } from './sent-events.js';
import type { WorkflowProblem } from './workflow-problem.js';

/**
 * What a host sends a workflow on a person's behalf, taken as external unless the caller says
 * otherwise: a message (`host.send`, `POST …/messages`) and an approval or denial (the viewer, the
 * HTTP routes). `cancel` is not among them: a state only `cancel` leaves is the stuck state this
 * check is for.
 */
export const defaultExternalEvents: readonly string[] = ['user.message', 'tool.approve', 'tool.deny'];

/** XState's descriptor match (`*`, `review.*`), either way round, so an external `review.*` names `review.done`. */
function matches(eventType: string, descriptor: string): boolean {
  if (descriptor === eventType || descriptor === '*') return true;
  if (!descriptor.endsWith('.*')) return false;
  const prefix = descriptor.slice(0, -2);
  return eventType === prefix || eventType.startsWith(`${prefix}.`);
}

const overlaps = (a: string, b: string) => matches(a, b) || matches(b, a);

/**
 * The events that move a state on, its ancestors' included: those of transitions with a target
 * (one that only runs actions leaves the machine where it is); its own done is not one (it is not final).
 */
function awaitedEvents(node: AnyStateNode): string[] {
  const events = new Set<string>();
  for (const at of selfAndAncestors(node)) {
    for (const [descriptor, transitions] of transitionsByEvent(at)) {
      if (descriptor.startsWith('xstate.done.state.')) continue;
      if (transitions.some((transition) => (transition.target ?? []).some((target) => target !== node))) events.add(descriptor);
    }
  }
  return [...events];
}

/** Something moves the state on its own: a timer, an eventless transition, or an actor it (or a state around it) runs. */
function movesOnItsOwn(node: AnyStateNode): boolean {
  return selfAndAncestors(node).some((at) => at.after.length > 0 || (at.always ?? []).length > 0 || invokesOf(at).length > 0);
}

function list(events: readonly string[]): string {
  const quoted = events.map((event) => `'${event}'`);
  return quoted.length <= 1 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

/** The states that wait for events nothing sends (`waits-forever`); `externalEvents` are the caller's, the defaults added. */
export function waitingProblems(machine: AnyStateMachine, externalEvents: readonly string[]): WorkflowProblem[] {
  const known = [...sentEvents(machine), ...defaultExternalEvents, ...externalEvents];
  const problems: WorkflowProblem[] = [];
  for (const node of allNodes(machine)) {
    if (node.type !== 'atomic' || node === machine.root || movesOnItsOwn(node)) continue;
    const awaited = awaitedEvents(node);
    if (awaited.length === 0) continue;
    if (awaited.some((descriptor) => known.some((event) => overlaps(event, descriptor)))) continue;
    problems.push({
      state: stateName(node),
      kind: 'waits-forever',
      message: `'${stateName(node)}' waits for ${list(awaited)}, which nothing in the machine sends (raise, sendTo, a child machine's sendParent) and externalEvents does not name: it waits forever`,
    });
  }
  return problems;
}
