/**
 * Check 1 of `verifyWorkflow`: from every state, a final state of the machine can be reached.
 *
 * The walk is over configurations — the sets of atomic and final states a machine is in at once —
 * so parallel regions are followed together: a parallel state is done when all its regions are, a
 * compound state when it is in a final child, and only then does its `onDone` count. Every
 * transition counts (events, `after`, `always`, invoke `onDone` / `onError`, a state's own
 * `onDone`), whatever its guard: the walk proves there is a way, not that a guard opens it. A
 * history target stands for any state beside it. From each state, entered as the machine would
 * enter it (its ancestors' other regions at their initial states), the walk goes on until nothing
 * new is found; a state no reached configuration of which can end the machine is a problem.
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { type ChartTransition, childrenOf, isBelow, leavesOf, selfAndAncestors, stateName, transitionsOf } from './chart-nodes.js';
import type { WorkflowProblem } from './workflow-problem.js';

/** Beyond this many configurations the walk stops and says so (parallel regions multiply them). */
const maxConfigurations = 50_000;

type Configuration = { key: string; leaves: readonly AnyStateNode[]; active: ReadonlySet<AnyStateNode> };

/** Configurations, by key, with the keys each one can move to. */
type Walk = { configurations: Map<string, Configuration>; next: Map<string, Set<string>>; complete: boolean };

function configurationOf(leaves: Iterable<AnyStateNode>): Configuration {
  const unique = [...new Set(leaves)];
  const active = new Set(unique.flatMap(selfAndAncestors));
  return {
    key: unique
      .map((leaf) => leaf.id)
      .sort()
      .join('\u0000'),
    leaves: unique,
    active,
  };
}

/** The child a compound state enters: the one on the way to a marked target, else its initial state's. */
function childToEnter(node: AnyStateNode, marked: ReadonlySet<AnyStateNode>): AnyStateNode | undefined {
  const children = childrenOf(node);
  const onTheWay = children.find((child) => marked.has(child));
  if (onTheWay) return onTheWay;
  const initial = (node.initial?.target ?? []) as AnyStateNode[];
  return children.find((child) => initial.some((target) => target === child || isBelow(target, child)));
}

/** The leaves entered below `node` (not `node` itself): marked ones where given, initial ones elsewhere, every region of a parallel state. */
function enteredBelow(node: AnyStateNode, marked: ReadonlySet<AnyStateNode>): AnyStateNode[] {
  if (node.type === 'parallel') return childrenOf(node).flatMap((child) => enter(child, marked));
  if (node.type === 'compound') {
    const child = childToEnter(node, marked);
    return child ? enter(child, marked) : [];
  }
  return [];
}

function enter(node: AnyStateNode, marked: ReadonlySet<AnyStateNode>): AnyStateNode[] {
  return node.type === 'compound' || node.type === 'parallel' ? enteredBelow(node, marked) : [node];
}

/** A target list with each history state replaced by each state beside it (what it may restore). */
function targetChoices(targets: readonly AnyStateNode[]): AnyStateNode[][] {
  let choices: AnyStateNode[][] = [[]];
  for (const target of targets) {
    const options = target.type === 'history' && target.parent ? childrenOf(target.parent) : [target];
    choices = choices.flatMap((choice) => options.map((option) => [...choice, option]));
  }
  return choices;
}

/** The state a transition exits below and enters below (XState's transition domain). */
function domainOf(transition: ChartTransition, targets: readonly AnyStateNode[]): AnyStateNode {
  const { source } = transition;
  if (!transition.reenter && targets.every((target) => target === source || isBelow(target, source))) return source;
  for (let at = source.parent; at !== undefined; at = at.parent) {
    if (targets.every((target) => isBelow(target, at))) return at;
  }
  return source.machine.root;
}

/** Whether a state is done in a configuration: a final state; a compound one in a final child; a parallel one with every region done. */
function isDone(node: AnyStateNode, active: ReadonlySet<AnyStateNode>): boolean {
  if (node.type === 'final') return true;
  if (node.type === 'compound') return childrenOf(node).some((child) => active.has(child) && child.type === 'final');
  if (node.type === 'parallel') return childrenOf(node).every((child) => isDone(child, active));
  return false;
}

const doneStatePrefix = 'xstate.done.state.';

/** The transitions a configuration may take: every active state's, a state's own `onDone` only once it is done. */
function availableTransitions(machine: AnyStateMachine, configuration: Configuration): ChartTransition[] {
  const available: ChartTransition[] = [];
  for (const node of configuration.active) {
    for (const transition of transitionsOf(node)) {
      if (transition.eventType.startsWith(doneStatePrefix)) {
        const done = stateById(machine, transition.eventType.slice(doneStatePrefix.length));
        if (!done || !configuration.active.has(done) || !isDone(done, configuration.active)) continue;
      }
      available.push(transition);
    }
  }
  return available;
}

function stateById(machine: AnyStateMachine, id: string): AnyStateNode | undefined {
  try {
    return machine.getStateNodeById(id);
  } catch {
    return undefined;
  }
}

function successors(machine: AnyStateMachine, configuration: Configuration): Configuration[] {
  const out: Configuration[] = [];
  for (const transition of availableTransitions(machine, configuration)) {
    if (!transition.target || transition.target.length === 0) continue;
    for (const targets of targetChoices(transition.target)) {
      const domain = domainOf(transition, targets);
      const marked = new Set(targets.flatMap(selfAndAncestors));
      const kept = configuration.leaves.filter((leaf) => !isBelow(leaf, domain));
      out.push(configurationOf([...kept, ...enteredBelow(domain, marked)]));
    }
  }
  return out;
}

/** The configuration the machine is in right after entering `leaf` from the outside. */
function entryOf(machine: AnyStateMachine, leaf: AnyStateNode): Configuration {
  return configurationOf(enteredBelow(machine.root, new Set(selfAndAncestors(leaf))));
}

function walk(machine: AnyStateMachine, starts: readonly Configuration[]): Walk {
  const configurations = new Map<string, Configuration>();
  const next = new Map<string, Set<string>>();
  const queue: Configuration[] = [];
  for (const start of starts) {
    if (configurations.has(start.key)) continue;
    configurations.set(start.key, start);
    queue.push(start);
  }
  for (let index = 0; index < queue.length; index++) {
    const configuration = queue[index] as Configuration;
    const targets = new Set<string>();
    next.set(configuration.key, targets);
    // A machine that is done stops: nothing after it counts.
    if (isDone(machine.root, configuration.active)) continue;
    for (const successor of successors(machine, configuration)) {
      targets.add(successor.key);
      if (configurations.has(successor.key)) continue;
      if (configurations.size >= maxConfigurations) return { configurations, next, complete: false };
      configurations.set(successor.key, successor);
      queue.push(successor);
    }
  }
  return { configurations, next, complete: true };
}

/** The configurations from which a done machine can be reached (backwards from the done ones). */
function endingConfigurations(machine: AnyStateMachine, { configurations, next }: Walk): Set<string> {
  const previous = new Map<string, string[]>();
  for (const [from, targets] of next) {
    for (const to of targets) previous.set(to, [...(previous.get(to) ?? []), from]);
  }
  const ending = new Set<string>();
  const queue = [...configurations.values()].filter((configuration) => isDone(machine.root, configuration.active)).map(({ key }) => key);
  for (const key of queue) ending.add(key);
  for (let index = 0; index < queue.length; index++) {
    for (const from of previous.get(queue[index] as string) ?? []) {
      if (ending.has(from)) continue;
      ending.add(from);
      queue.push(from);
    }
  }
  return ending;
}

/** The states the machine can be in after `start`, `start`'s own left out. */
function statesReachedFrom(start: Configuration, { configurations, next }: Walk, leaf: AnyStateNode): string[] {
  const seen = new Set([start.key]);
  const queue = [start.key];
  const names = new Set<string>();
  for (let index = 0; index < queue.length; index++) {
    for (const key of next.get(queue[index] as string) ?? []) {
      if (seen.has(key)) continue;
      seen.add(key);
      queue.push(key);
      for (const reached of configurations.get(key)?.leaves ?? []) if (reached !== leaf) names.add(stateName(reached));
    }
  }
  return [...names];
}

function why(machine: AnyStateMachine, leaf: AnyStateNode, reached: readonly string[]): string {
  const parent = leaf.parent;
  if (leaf.type === 'final' && parent && parent !== machine.root) {
    const hasOnDone = transitionsOf(parent).some((transition) => transition.eventType === `${doneStatePrefix}${parent.id}`);
    if (!hasOnDone && reached.length === 0) return `it ends '${stateName(parent)}', which has no onDone to go on by`;
  }
  if (reached.length === 0) return 'no transition leads out of it';
  const shown = reached.slice(0, 6).map((name) => `'${name}'`);
  return `from it the machine only reaches ${shown.join(', ')}${reached.length > shown.length ? `, … (${reached.length} states)` : ''}, none of which ends it`;
}

/** The states from which no final state of the machine can be reached (`unreachable-final`). */
export function unreachableFinalProblems(machine: AnyStateMachine): WorkflowProblem[] {
  if (machine.root.type !== 'compound' && machine.root.type !== 'parallel') return [];
  const leaves = leavesOf(machine.root);
  const starts = new Map(leaves.map((leaf) => [leaf, entryOf(machine, leaf)]));
  const result = walk(machine, [configurationOf(enteredBelow(machine.root, new Set())), ...starts.values()]);
  if (!result.complete) {
    return [
      {
        state: stateName(machine.root),
        kind: 'not-verified',
        message: `the machine has more than ${maxConfigurations} configurations of states (parallel regions multiply them): whether every state can reach a final state was not verified`,
      },
    ];
  }
  const ending = endingConfigurations(machine, result);
  const canEnd = new Set<AnyStateNode>();
  for (const key of ending) for (const leaf of result.configurations.get(key)?.leaves ?? []) canEnd.add(leaf);
  return leaves
    .filter((leaf) => !canEnd.has(leaf))
    .map((leaf) => {
      const start = starts.get(leaf) as Configuration;
      const reached = statesReachedFrom(start, result, leaf);
      return {
        state: stateName(leaf),
        kind: 'unreachable-final' as const,
        message: `no final state of the machine can be reached from '${stateName(leaf)}': ${why(machine, leaf, reached)}`,
      };
    });
}
