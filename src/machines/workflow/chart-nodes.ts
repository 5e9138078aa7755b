/**
 * What the workflow checks read off a machine: XState's resolved state nodes (`machine.root`,
 * `stateNode.states`, `.transitions`, `.always`, `.invoke`, `.entry`, …), in loose types of their
 * own (XState's carry the machine's type parameters, which an arbitrary machine does not fill).
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate';

/** One transition as XState resolves it: targets are state nodes, guards and actions as given. */
export type ChartTransition = {
  eventType: string;
  source: AnyStateNode;
  target?: readonly AnyStateNode[] | undefined;
  reenter: boolean;
  guard?: unknown;
  actions: readonly unknown[];
};

/** One invoke of a state node: `src` is a name of `implementations.actors` or XState's name for inline logic. */
export type ChartInvoke = { id: string; src: string; onDone?: unknown; onError?: unknown };

/** A state's name in problems: its path from the root (`review.waiting`); the root is `(machine)`. */
export function stateName(node: AnyStateNode): string {
  return node.path.length === 0 ? '(machine)' : node.path.join('.');
}

/** The state nodes below `node` that are states (history pseudo-states left out), in the machine's order. */
export function childrenOf(node: AnyStateNode): AnyStateNode[] {
  return Object.values(node.states as Record<string, AnyStateNode>).filter((child) => child.type !== 'history');
}

/** Every state node of the machine, the root first, in document order (history pseudo-states left out). */
export function allNodes(machine: AnyStateMachine): AnyStateNode[] {
  const nodes: AnyStateNode[] = [];
  const visit = (node: AnyStateNode) => {
    nodes.push(node);
    for (const child of childrenOf(node)) visit(child);
  };
  visit(machine.root);
  return nodes;
}

/** The atomic and final states at or below `node`: where a configuration that holds `node` can be. */
export function leavesOf(node: AnyStateNode): AnyStateNode[] {
  const children = childrenOf(node);
  return children.length === 0 ? [node] : children.flatMap(leavesOf);
}

/** `node` and its ancestors, the node first, the root last. */
export function selfAndAncestors(node: AnyStateNode): AnyStateNode[] {
  const chain: AnyStateNode[] = [];
  for (let at: AnyStateNode | undefined = node; at !== undefined; at = at.parent) chain.push(at);
  return chain;
}

/** True when `node` lies strictly below `ancestor`. */
export function isBelow(node: AnyStateNode, ancestor: AnyStateNode): boolean {
  for (let at = node.parent; at !== undefined; at = at.parent) if (at === ancestor) return true;
  return false;
}

/** Every transition of a node: on events, delays, actors' done and error, its own done, and eventless ones. */
export function transitionsOf(node: AnyStateNode): ChartTransition[] {
  const byEvent = [...(node.transitions.values() as Iterable<readonly ChartTransition[]>)].flat();
  return [...byEvent, ...((node.always ?? []) as unknown as ChartTransition[])];
}

/** The transitions of a node by event descriptor (eventless ones not included). */
export function transitionsByEvent(node: AnyStateNode): ReadonlyMap<string, readonly ChartTransition[]> {
  return node.transitions as unknown as ReadonlyMap<string, readonly ChartTransition[]>;
}

export function invokesOf(node: AnyStateNode): ChartInvoke[] {
  return node.invoke as unknown as ChartInvoke[];
}

/**
 * The logic an invoke runs: a name is looked up in the machine's `implementations.actors`; inline
 * logic is read from the state's config, where XState keeps it (its name, `xstate.invoke.<i>.<id>`,
 * is registered nowhere else).
 */
export function logicOfInvoke(machine: AnyStateMachine, node: AnyStateNode, index: number): unknown {
  const invoke = invokesOf(node)[index];
  if (invoke === undefined) return undefined;
  if (!invoke.src.startsWith('xstate.invoke.')) return logicOfSource(machine, invoke.src);
  const written: unknown = node.config.invoke;
  const configs = Array.isArray(written) ? written : [written];
  return (configs[index] as { src?: unknown } | undefined)?.src;
}

/** A `src` as given to `spawnChild`: a name of `implementations.actors`, or the logic itself. */
export function logicOfSource(machine: AnyStateMachine, src: unknown): unknown {
  if (typeof src !== 'string') return src;
  return (machine.implementations.actors as Record<string, unknown>)[src];
}

/** True for XState machine logic (what `createMachine` and `setup().createMachine` return). */
export function isStateMachine(logic: unknown): logic is AnyStateMachine {
  return (
    typeof logic === 'object' &&
    logic !== null &&
    typeof (logic as { root?: unknown }).root === 'object' &&
    typeof (logic as { getStateNodeById?: unknown }).getStateNodeById === 'function' &&
    typeof (logic as { resolveState?: unknown }).resolveState === 'function'
  );
}

/**
 * An action as it runs: a named action (`'notify'`, `{ type: 'notify', params }`) is looked up in
 * the machine's `implementations.actions`, which may hold a built-in (`raise(...)`); a built-in or
 * an inline function is itself. A name the machine does not implement is `undefined`.
 */
export function resolveAction(machine: AnyStateMachine, action: unknown): unknown {
  const actions = machine.implementations.actions as Record<string, unknown>;
  if (typeof action === 'string') return actions[action];
  if (typeof action === 'object' && action !== null && typeof (action as { type?: unknown }).type === 'string') {
    return actions[(action as { type: string }).type];
  }
  return action;
}

/** Where an action sits: the states a machine is in once it has run (for a spawn, where its child's events arrive). */
export type PlacedAction = { action: unknown; lands: AnyStateNode[] };

/**
 * Every action of the machine, resolved (`resolveAction`), with the states the machine is in once it
 * has run: a state's entry lands in that state; a transition's actions in its targets (or its
 * source when it has none); an initial transition's in the initial state; an exit in the parent.
 */
export function placedActions(machine: AnyStateMachine): PlacedAction[] {
  const placed: PlacedAction[] = [];
  const add = (actions: readonly unknown[], lands: AnyStateNode[]) => {
    for (const action of actions) placed.push({ action: resolveAction(machine, action), lands });
  };
  for (const node of allNodes(machine)) {
    add(writtenActions(node, 'entry'), [node]);
    add(writtenActions(node, 'exit'), node.parent ? [node.parent] : []);
    if (node.type === 'compound') add(node.initial.actions as readonly unknown[], [...(node.initial.target as AnyStateNode[])]);
    for (const transition of transitionsOf(node)) {
      add(transition.actions, transition.target && transition.target.length > 0 ? [...transition.target] : [node]);
    }
  }
  return placed;
}

/** `entry` / `exit` as written: XState's own lists also hold the timers of `after` (raised delayed events). */
function writtenActions(node: AnyStateNode, key: 'entry' | 'exit'): unknown[] {
  const written: unknown = node.config[key];
  if (written === undefined) return [];
  return Array.isArray(written) ? written : [written];
}

/** A built-in action of XState (`raise`, `sendTo`, `spawnChild`, …) by its type, with the fields it keeps. */
export function builtInOf(action: unknown, type: string): Record<string, unknown> | undefined {
  if (typeof action !== 'function') return undefined;
  return (action as unknown as { type?: unknown }).type === type ? (action as unknown as Record<string, unknown>) : undefined;
}
