import type { AnyStateMachine, AnyStateNode } from 'xstate';

/** Plain JSON, as a machine definition turns into (no functions, no cycles). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A JSON object. */
export type JsonObject = { [key: string]: Json };

/** One transition of a {@link StateDefinition}: what XState reports, functions named. */
export type TransitionDefinition = {
  /** The event type; `''` for an eventless (`always`) transition. */
  eventType: string | null;
  /** Target state ids (`#conversation.retrying`); none for a transition that only runs actions. */
  target?: string[];
  /** The guard's name (`canRetryFailure`, `and(a, b)`, `inline`). */
  guard?: string;
  actions?: Json[];
  reenter?: boolean;
  source: string;
};

/** One state of a machine definition as {@link machineDefinitionJson} writes it. */
export type StateDefinition = {
  id: string;
  key: string;
  type: string;
  initial?: { target: string[] };
  states: Record<string, StateDefinition>;
  transitions: TransitionDefinition[];
  always?: TransitionDefinition[];
  invoke: Array<{ id: string; src: string }>;
};

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
  if (seen.has(value)) throw new Error(`machine definition: circular value at "${key ?? ''}"`);
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

/**
 * A machine's definition as plain, deterministic JSON (keys sorted, guards and actions by name, no
 * functions): what the charts are drawn from. `visualizations/*.machine.json` holds the config instead (`machineConfigOf`).
 *
 * @example
 * ```ts
 * const definition = machineDefinitionJson(createConversationMachine({ provider }));
 * console.log(Object.keys(definition.states)); // ['idle', 'requesting', ...]
 * ```
 */
export function machineDefinitionJson(machine: AnyStateMachine): JsonObject {
  return definitionOf(machine.root);
}

/** The definition JSON read as states and transitions. */
export function asStateDefinition(definition: JsonObject): StateDefinition {
  return definition as unknown as StateDefinition;
}
