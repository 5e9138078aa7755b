/**
 * Generates the files of `visualizations/` from the machine definitions in `src/machines`: each
 * machine's definition as deterministic JSON, and a Mermaid `stateDiagram-v2` rendered from that
 * JSON. `scripts/visualize.ts` writes them; `test/visualizations.test.ts` regenerates them in
 * memory and fails when a committed file is stale.
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { createConversationMachine } from '../src/machines/conversation.js';
import type { Provider } from '../src/providers/provider.js';
import { defineTool } from '../src/tools/define-tool.js';

/** The directory (relative to the repository root) the files belong in. */
export const visualizationsDir = 'visualizations';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** A provider that is never called: the machines are only built, never run. */
const stubProvider: Provider = {
  name: 'stub',
  // biome-ignore lint/correctness/useYield: a provider that must never be called
  async *stream() {
    throw new Error('the visualization stub provider is never called');
  },
};

const stubTool = defineTool({
  name: 'stub',
  description: 'A stub tool; the visualization only needs the machine shape.',
  parameters: { type: 'object', properties: {} },
  execute: () => 'ok',
});

/** The machines to draw, built as a user would build them (one stub tool, a stub provider). */
export function visualizedMachines(): Record<string, AnyStateMachine> {
  return {
    conversation: createConversationMachine({ provider: stubProvider, tools: [stubTool] }),
  };
}

// ---------------------------------------------------------------------------------------------
// Definition → deterministic JSON

type GuardLike = { type?: unknown; guards?: unknown; name?: unknown };

/** A readable name for a guard: a named guard, `and(a, b)` / `or(a, b)` / `not(a)`, or `inline`. */
function describeGuard(guard: unknown): string {
  if (typeof guard === 'string') return guard;
  if (guard && typeof guard === 'object' && typeof (guard as GuardLike).type === 'string') return (guard as { type: string }).type;
  if (typeof guard === 'function') {
    const fn = guard as GuardLike & ((...args: never[]) => unknown);
    if (Array.isArray(fn.guards) && (fn.name === 'and' || fn.name === 'or')) {
      return `${fn.name}(${fn.guards.map(describeGuard).join(', ')})`;
    }
    if (fn.guards !== undefined && fn.name === 'not') {
      const inner = Array.isArray(fn.guards) ? fn.guards.map(describeGuard).join(', ') : describeGuard(fn.guards);
      return `not(${inner})`;
    }
    return 'inline';
  }
  return String(guard);
}

/** A readable name for an action: its name, a built-in's type (`xstate.assign`), or `inline`. */
function describeFunction(fn: { type?: unknown }): string {
  return typeof fn.type === 'string' ? fn.type : 'inline';
}

/**
 * Turns a definition into plain JSON: `toJSON()` applied once (state nodes become ids),
 * guards and actions named, other functions (input, output) marked `[function]`, `undefined`
 * dropped, object keys sorted so the output does not depend on insertion order.
 */
function toPlainJson(value: unknown, key: string | undefined, seen: Set<object>): Json | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value === 'boolean' || typeof value === 'number' || typeof value === 'string') return value;
  if (typeof value === 'function') {
    if (key === 'guard') return describeGuard(value);
    if (key === 'output' || key === 'input') return '[function]';
    return describeFunction(value as { type?: unknown });
  }
  if (typeof value !== 'object') return String(value);
  if (seen.has(value)) throw new Error(`visualize: circular value at "${key ?? ''}"`);
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    const converted: unknown = (toJSON as () => unknown).call(value);
    if (converted !== value) {
      const withoutToJSON =
        converted && typeof converted === 'object' && !Array.isArray(converted)
          ? Object.fromEntries(Object.entries(converted).filter(([name]) => name !== 'toJSON'))
          : converted;
      return toPlainJson(withoutToJSON, key, seen);
    }
  }
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      return value.map((item) => toPlainJson(item, key === 'guard' ? 'guard' : undefined, seen) ?? null);
    }
    const out: JsonObject = {};
    for (const name of Object.keys(value).sort()) {
      if (name === 'toJSON') continue;
      const converted = toPlainJson((value as Record<string, unknown>)[name], name, seen);
      if (converted !== undefined) out[name] = converted;
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/**
 * `stateNode.definition` leaves out eventless (`always`) transitions; they are added under
 * `always`, in the same shape as the other transitions.
 */
function definitionOf(node: AnyStateNode): JsonObject {
  const definition = toPlainJson(node.definition, undefined, new Set()) as JsonObject;
  const always = (node.always ?? []) as unknown[];
  if (always.length > 0) definition.always = toPlainJson(always, 'always', new Set()) as Json[];
  const states: JsonObject = {};
  for (const [key, child] of Object.entries(node.states as Record<string, AnyStateNode>)) states[key] = definitionOf(child);
  definition.states = states;
  return definition;
}

/** The machine's definition as plain, deterministic JSON (keys sorted, no functions). */
export function machineDefinitionJson(machine: AnyStateMachine): JsonObject {
  return definitionOf(machine.root);
}

// ---------------------------------------------------------------------------------------------
// Definition JSON → Mermaid stateDiagram-v2

type TransitionJson = {
  eventType: string | null;
  target?: string[];
  guard?: string;
  source: string;
};

type StateJson = {
  id: string;
  key: string;
  type: string;
  initial?: { target: string[] };
  states: Record<string, StateJson>;
  transitions: TransitionJson[];
  always?: TransitionJson[];
  invoke: Array<{ id: string; src: string }>;
};

/** Mermaid ids: a state's path joined with `_` (ids are unique, names can repeat in nesting). */
function mermaidId(stateId: string, rootId: string): string {
  const path = stateId.replace(/^#/, '');
  if (path === rootId) return '[*]';
  return path.slice(rootId.length + 1).replace(/[^A-Za-z0-9]+/g, '_');
}

/** `xstate.after.retryDelay.conversation.retrying` → `after retryDelay`, and so on. */
function prettyEvent(eventType: string | null, invokeSources: Map<string, string>): string {
  if (eventType === null || eventType === '') return 'always';
  const after = /^xstate\.after\.([^.]+)\./.exec(eventType);
  if (after) return `after ${after[1]}`;
  const actor = /^xstate\.(done|error)\.actor\.(.+)$/.exec(eventType);
  if (actor) {
    const [, kind, id = ''] = actor;
    // Generated invoke ids (`0.conversation.requesting`) read better as the invoked source's name.
    return `${kind}: ${invokeSources.get(id) ?? id}`;
  }
  const doneState = /^xstate\.done\.state\.(.+)$/.exec(eventType);
  if (doneState) return `done: ${doneState[1]}`;
  return eventType;
}

function collectInvokeSources(state: StateJson, into: Map<string, string>): void {
  for (const invoke of state.invoke) if (/^\d+\./.test(invoke.id)) into.set(invoke.id, invoke.src);
  for (const child of Object.values(state.states)) collectInvokeSources(child, into);
}

/** Labels of a state's transitions: event, then the guard; an unguarded fallback after guarded ones reads `[else]`. */
function labelled(transitions: TransitionJson[], invokeSources: Map<string, string>): Array<TransitionJson & { label: string }> {
  const guardedSoFar = new Map<string, boolean>();
  return transitions.map((transition) => {
    const key = transition.eventType ?? '';
    const event = prettyEvent(transition.eventType, invokeSources);
    let guard = '';
    if (transition.guard !== undefined) guard = ` [${transition.guard}]`;
    else if (guardedSoFar.get(key)) guard = ' [else]';
    if (transition.guard !== undefined) guardedSoFar.set(key, true);
    return { ...transition, label: `${event}${guard}` };
  });
}

/**
 * Renders a machine definition (as produced by {@link machineDefinitionJson}) as a Mermaid
 * `stateDiagram-v2`: compound states nest, `[*]` marks initial and final states, every transition
 * is labelled with its event and guard. Transitions declared on the machine root apply in every
 * state; they are drawn from each top-level state that is not final. Root transitions without a
 * target (events only answered, e.g. rejected) are listed in a note.
 */
export function renderMermaid(definition: JsonObject): string {
  const root = definition as unknown as StateJson;
  const rootId = root.id;
  const invokeSources = new Map<string, string>();
  collectInvokeSources(root, invokeSources);
  const lines: string[] = ['stateDiagram-v2'];
  const edges: string[] = [];
  const id = (stateId: string) => mermaidId(stateId, rootId);

  const renderState = (state: StateJson, indent: string): void => {
    const children = Object.values(state.states);
    const initial = state.initial?.target[0];
    for (const child of children) {
      const childId = id(child.id);
      if (Object.keys(child.states).length > 0) {
        // Composite states open by id; a label, when the id differs from the name, is declared first.
        if (childId !== child.key) lines.push(`${indent}state "${child.key}" as ${childId}`);
        lines.push(`${indent}state ${childId} {`);
        renderState(child, `${indent}  `);
        lines.push(`${indent}}`);
      } else if (childId !== child.key) {
        lines.push(`${indent}state "${child.key}" as ${childId}`);
      }
    }
    if (initial !== undefined) lines.push(`${indent}[*] --> ${id(initial)}`);
    for (const child of children) {
      if (child.type === 'final') lines.push(`${indent}${id(child.id)} --> [*]`);
    }
    for (const child of children) {
      const transitions = labelled([...child.transitions, ...(child.always ?? [])], invokeSources);
      for (const transition of transitions) {
        const targets = transition.target && transition.target.length > 0 ? transition.target : [child.id];
        for (const target of targets) edges.push(`${id(child.id)} --> ${id(target)} : ${transition.label}`);
      }
    }
  };

  renderState(root, '  ');

  const rootTransitions = labelled([...root.transitions, ...(root.always ?? [])], invokeSources);
  const topLevel = Object.values(root.states).filter((state) => state.type !== 'final');
  const answeredOnly: string[] = [];
  for (const transition of rootTransitions) {
    if (!transition.target || transition.target.length === 0) {
      answeredOnly.push(transition.label);
      continue;
    }
    for (const state of topLevel) {
      for (const target of transition.target) edges.push(`${id(state.id)} --> ${id(target)} : ${transition.label}`);
    }
  }
  lines.push(...edges.map((edge) => `  ${edge}`));
  const first = root.initial?.target[0];
  if (answeredOnly.length > 0 && first !== undefined) {
    lines.push(`  note right of ${id(first)}`);
    lines.push(`    In every state (no state change):`);
    for (const label of answeredOnly) lines.push(`    ${label}`);
    lines.push('  end note');
  }
  return `${lines.join('\n')}\n`;
}

/** Every file of `visualizations/` that is generated, by file name, with its content. */
export function renderVisualizations(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const [name, machine] of Object.entries(visualizedMachines())) {
    const definition = machineDefinitionJson(machine);
    files[`${name}.machine.json`] = `${JSON.stringify(definition, null, 2)}\n`;
    files[`${name}.mmd`] = renderMermaid(definition);
  }
  return files;
}

const readmeStart = '<!-- generated by npm run visualize: conversation.mmd -->';
const readmeEnd = '<!-- end of generated diagram -->';

/**
 * The README with its machine diagram replaced by the generated `conversation.mmd`, so the
 * diagram a newcomer reads is the machine, not a drawing of it. Throws when the markers are gone.
 */
export function readmeWithDiagram(readme: string, diagram: string): string {
  const start = readme.indexOf(readmeStart);
  const end = readme.indexOf(readmeEnd);
  if (start < 0 || end < start) throw new Error(`README.md lacks the diagram markers ${readmeStart} … ${readmeEnd}`);
  return `${readme.slice(0, start + readmeStart.length)}\n\`\`\`mermaid\n${diagram.trimEnd()}\n\`\`\`\n${readme.slice(end)}`;
}
