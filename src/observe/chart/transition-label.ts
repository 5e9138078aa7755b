import type { StateDefinition, TransitionDefinition } from './machine-definition.js';

/** Dotted path of a state id under the machine: `#conversation.requesting.waiting` → `requesting.waiting`, the root → `''`. */
export function statePath(stateId: string, rootId: string): string {
  const path = stateId.replace(/^#/, '');
  return path === rootId ? '' : path.slice(rootId.length + 1);
}

/** A state's dotted path by its id (`#order-failed` → `failed`), the root's `''`. */
export type PathOf = (stateId: string) => string;

/**
 * The paths of a definition's states by id, read off the tree: a state given an id of its own
 * (`id: 'order-failed'`) has an id that says nothing of where it is. An id not in the tree falls
 * back to {@link statePath}.
 *
 * @example
 * ```ts
 * const pathOf = pathsOf(asStateDefinition(machineDefinitionJson(orderWorkflow)));
 * pathOf('#order-failed'); // 'failed'
 * pathOf('order.researching.left.asking'); // 'researching.left.asking'
 * ```
 */
export function pathsOf(root: StateDefinition): PathOf {
  const paths = new Map<string, string>([[root.id.replace(/^#/, ''), '']]);
  const visit = (state: StateDefinition, prefix: string) => {
    for (const child of Object.values(state.states)) {
      const path = prefix === '' ? child.key : `${prefix}.${child.key}`;
      paths.set(child.id.replace(/^#/, ''), path);
      visit(child, path);
    }
  };
  visit(root, '');
  return (stateId) => paths.get(stateId.replace(/^#/, '')) ?? statePath(stateId, root.id);
}

/** Generated invoke ids (`0.conversation.requesting`) mapped to the invoked source's name. */
export function invokeSourcesOf(root: StateDefinition): Map<string, string> {
  const sources = new Map<string, string>();
  const visit = (state: StateDefinition) => {
    for (const invoke of state.invoke) if (/^\d+\./.test(invoke.id)) sources.set(invoke.id, invoke.src);
    for (const child of Object.values(state.states)) visit(child);
  };
  visit(root);
  return sources;
}

/**
 * `xstate.after.retryDelay.conversation.retrying` → `after retryDelay`, `xstate.done.actor.providerCall` →
 * `done: providerCall`, `xstate.done.state.order.researching` → `done: researching`, `''` → `always`.
 */
export function prettyEvent(eventType: string | null, invokeSources: Map<string, string>, pathOf?: PathOf): string {
  if (eventType === null || eventType === '') return 'always';
  const after = /^xstate\.after\.([^.]+)\./.exec(eventType);
  if (after) return `after ${after[1]}`;
  const actor = /^xstate\.(done|error)\.actor\.(.+)$/.exec(eventType);
  if (actor) {
    const [, kind, id = ''] = actor;
    return `${kind}: ${invokeSources.get(id) ?? id}`;
  }
  const doneState = /^xstate\.done\.state\.(.+)$/.exec(eventType);
  if (doneState) return `done: ${pathOf ? pathOf(doneState[1] ?? '') : doneState[1]}`;
  return eventType;
}

/** A transition with its readable event, and whether it is the unguarded fallback after guarded ones on that event. */
export type LabelledTransition = TransitionDefinition & { event: string; isElse: boolean; label: string };

/** Labels of one state's transitions: `event [guard]`; an unguarded fallback after guarded ones reads `event [else]`. */
export function labelTransitions(
  transitions: TransitionDefinition[],
  invokeSources: Map<string, string>,
  pathOf?: PathOf,
): LabelledTransition[] {
  const guardedSoFar = new Set<string>();
  return transitions.map((transition) => {
    const key = transition.eventType ?? '';
    const event = prettyEvent(transition.eventType, invokeSources, pathOf);
    const isElse = transition.guard === undefined && guardedSoFar.has(key);
    if (transition.guard !== undefined) guardedSoFar.add(key);
    const guard = transition.guard !== undefined ? ` [${transition.guard}]` : isElse ? ' [else]' : '';
    return { ...transition, event, isElse, label: `${event}${guard}` };
  });
}

/** A state's own transitions and its eventless ones, labelled. */
export function stateTransitions(state: StateDefinition, invokeSources: Map<string, string>, pathOf?: PathOf): LabelledTransition[] {
  return labelTransitions([...state.transitions, ...(state.always ?? [])], invokeSources, pathOf);
}
