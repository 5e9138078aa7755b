import type { StateDefinition, TransitionDefinition } from './machine-definition.js';

/** Dotted path of a state id under the machine: `#conversation.requesting.waiting` → `requesting.waiting`, the root → `''`. */
export function statePath(stateId: string, rootId: string): string {
  const path = stateId.replace(/^#/, '');
  return path === rootId ? '' : path.slice(rootId.length + 1);
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

/** `xstate.after.retryDelay.conversation.retrying` → `after retryDelay`, `xstate.done.actor.providerCall` → `done: providerCall`, `''` → `always`. */
export function prettyEvent(eventType: string | null, invokeSources: Map<string, string>): string {
  if (eventType === null || eventType === '') return 'always';
  const after = /^xstate\.after\.([^.]+)\./.exec(eventType);
  if (after) return `after ${after[1]}`;
  const actor = /^xstate\.(done|error)\.actor\.(.+)$/.exec(eventType);
  if (actor) {
    const [, kind, id = ''] = actor;
    return `${kind}: ${invokeSources.get(id) ?? id}`;
  }
  const doneState = /^xstate\.done\.state\.(.+)$/.exec(eventType);
  if (doneState) return `done: ${doneState[1]}`;
  return eventType;
}

/** A transition with its readable event, and whether it is the unguarded fallback after guarded ones on that event. */
export type LabelledTransition = TransitionDefinition & { event: string; isElse: boolean; label: string };

/** Labels of one state's transitions: `event [guard]`; an unguarded fallback after guarded ones reads `event [else]`. */
export function labelTransitions(transitions: TransitionDefinition[], invokeSources: Map<string, string>): LabelledTransition[] {
  const guardedSoFar = new Set<string>();
  return transitions.map((transition) => {
    const key = transition.eventType ?? '';
    const event = prettyEvent(transition.eventType, invokeSources);
    const isElse = transition.guard === undefined && guardedSoFar.has(key);
    if (transition.guard !== undefined) guardedSoFar.add(key);
    const guard = transition.guard !== undefined ? ` [${transition.guard}]` : isElse ? ' [else]' : '';
    return { ...transition, event, isElse, label: `${event}${guard}` };
  });
}

/** A state's own transitions and its eventless ones, labelled. */
export function stateTransitions(state: StateDefinition, invokeSources: Map<string, string>): LabelledTransition[] {
  return labelTransitions([...state.transitions, ...(state.always ?? [])], invokeSources);
}
