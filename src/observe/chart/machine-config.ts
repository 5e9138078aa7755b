/**
 * A running machine turned back into the plain config `createMachine()` takes and the Stately
 * editor imports: `visualizations/conversation.machine.json`. XState keeps the resolved form
 * (`machine.root`: state nodes, transitions with state nodes as targets, guards and actions as
 * the values given); this walks it and writes every implementation by name, every target as a
 * string XState resolves back to the same state node, and leaves out what only code can say
 * (`context`, `input` and `output` factories).
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate';
import type { Json, JsonObject } from './machine-definition.js';

/** A guard in a config: a name, or a name with params. A higher-order guard gets one combined name (`aAndNotB`). */
export type GuardConfigJson = string | { type: string; params?: Json };

/** An action in a config: a name, or a name with params. */
export type ActionConfigJson = string | { type: string; params?: Json };

/** One transition of a config. `target` is a sibling's key, a path from the parent (`executingTools.running`) or an id (`#conversation.halted`). */
export type TransitionConfigJson = {
  target?: string | string[];
  guard?: GuardConfigJson;
  actions?: ActionConfigJson | ActionConfigJson[];
  reenter?: true;
  description?: string;
  meta?: JsonObject;
};

/** One transition, or several tried in order. */
export type TransitionsConfigJson = TransitionConfigJson | TransitionConfigJson[];

/** An invoked actor: its logic by name (`src`), its completion and failure as transitions. */
export type InvokeConfigJson = {
  id?: string;
  src: string;
  systemId?: string;
  input?: Json;
  onDone?: TransitionsConfigJson;
  onError?: TransitionsConfigJson;
  onSnapshot?: TransitionsConfigJson;
};

/** One state of a config (the machine itself is one too, with its `id`). */
export type StateConfigJson = {
  id?: string;
  type?: 'parallel' | 'final' | 'history';
  history?: 'shallow' | 'deep';
  /** A history state's default target. */
  target?: string | string[];
  description?: string;
  tags?: string[];
  meta?: JsonObject;
  initial?: string | { target: string; actions?: ActionConfigJson[] };
  entry?: ActionConfigJson | ActionConfigJson[];
  exit?: ActionConfigJson | ActionConfigJson[];
  invoke?: InvokeConfigJson | InvokeConfigJson[];
  on?: Record<string, TransitionsConfigJson>;
  after?: Record<string, TransitionsConfigJson>;
  always?: TransitionsConfigJson;
  onDone?: TransitionsConfigJson;
  output?: Json;
  states?: Record<string, StateConfigJson>;
};

/** A whole machine's config as {@link machineConfigOf} writes it. */
export type MachineConfigJson = StateConfigJson & { id: string; version?: string };

/** What XState's resolved transitions hold that a config needs (`TransitionDefinition`, loosely). */
type ResolvedTransition = {
  target?: readonly AnyStateNode[] | undefined;
  guard?: unknown;
  actions: readonly unknown[];
  reenter: boolean;
  description?: string;
  meta?: unknown;
  eventType: string;
  delay?: number | string;
};

type ResolvedInvoke = {
  id: string;
  src: string;
  systemId?: string;
  input?: unknown;
  onDone?: unknown;
  onError?: unknown;
  onSnapshot?: unknown;
};

/** A higher-order guard as `and` / `or` / `not` build it: a function carrying its operands. */
type HigherOrderGuard = { name: string; guards: unknown };

/**
 * A value as JSON: functions (which a config cannot hold) become `"[function]"`, `undefined`
 * is dropped. Keys keep their order: it is the order the machine gave them.
 */
function jsonOf(value: unknown): Json | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'function') return '[function]';
  if (Array.isArray(value)) return value.map((item) => jsonOf(item) ?? null);
  if (typeof value === 'object') {
    const out: JsonObject = {};
    for (const [key, inner] of Object.entries(value)) {
      const converted = jsonOf(inner);
      if (converted !== undefined) out[key] = converted;
    }
    return out;
  }
  return String(value);
}

/** A parameterized reference (`{ type, params }`) with its params made JSON. */
function reference(value: { type: string; params?: unknown }): { type: string; params?: Json } {
  const params = jsonOf(value.params);
  return params === undefined ? { type: value.type } : { type: value.type, params };
}

function isHigherOrder(guard: unknown): guard is HigherOrderGuard & ((...args: never[]) => unknown) {
  return typeof guard === 'function' && ['and', 'or', 'not'].includes(guard.name) && 'guards' in guard;
}

/** `hasAtLeast` → `HasAtLeast`: the second and later words of a combined guard's name. */
const capitalized = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/**
 * A guard inside `and` / `or` / `not`, by its plain name: a named guard's type (its params left
 * out), `inline` for an inline function, a higher-order guard's combined name.
 */
function operandName(guard: unknown): string {
  if (typeof guard === 'string') return guard;
  if (isHigherOrder(guard)) return combinedName(guard);
  if (guard && typeof guard === 'object' && typeof (guard as { type?: unknown }).type === 'string') return (guard as { type: string }).type;
  return 'inline';
}

/**
 * A higher-order guard under one plain name a Stately user can implement: `and(['isReady',
 * not('hasAtLeast')])` → `isReadyAndNotHasAtLeast`, `or(['a', 'b'])` → `aOrB`, `not('a')` → `notA`.
 */
function combinedName(guard: HigherOrderGuard): string {
  const operands = (Array.isArray(guard.guards) ? guard.guards : [guard.guards]).map((operand) => operandName(operand));
  if (guard.name === 'not') return `not${capitalized(operands[0] ?? 'inline')}`;
  const joiner = guard.name === 'and' ? 'And' : 'Or';
  return operands.map((operand, index) => (index === 0 ? operand : `${joiner}${capitalized(operand)}`)).join('');
}

/**
 * A guard by name: a named guard as given (with its params), a higher-order guard by one combined
 * name (`isReadyAndNotHasAtLeast`: XState has no JSON form for `and` / `or` / `not`, and a name is
 * what an imported config can implement), `inline:<where>` for an inline function.
 */
function guardConfig(guard: unknown, at: string): GuardConfigJson {
  if (typeof guard === 'string') return guard;
  if (guard && typeof guard === 'object' && typeof (guard as { type?: unknown }).type === 'string') {
    return reference(guard as { type: string; params?: unknown });
  }
  if (isHigherOrder(guard)) return combinedName(guard);
  return `inline:${at}`;
}

/**
 * An action by name: a named action as given (with its params), a built-in (`assign`, `raise`,
 * `sendTo`, ...) as `<its type>:<where>` (`xstate.assign:conversation.idle/entry/0`), any other
 * inline function as `inline:<where>`. The place makes each name unique, and the same machine
 * always gives the same names.
 */
function actionConfig(action: unknown, at: string): ActionConfigJson {
  if (typeof action === 'string') return action;
  if (typeof action === 'function') {
    const type = (action as { type?: unknown }).type;
    return 'resolve' in action && typeof type === 'string' ? `${type}:${at}` : `inline:${at}`;
  }
  if (action && typeof action === 'object' && typeof (action as { type?: unknown }).type === 'string') {
    return reference(action as { type: string; params?: unknown });
  }
  return `inline:${at}`;
}

function actionsConfig(actions: readonly unknown[], at: string): ActionConfigJson[] {
  return actions.map((action, index) => actionConfig(action, `${at}/${index}`));
}

/** One item alone, several as an array: how a hand-written config says it. */
function oneOrMany<T>(items: T[]): T | T[] {
  return items.length === 1 ? (items[0] as T) : items;
}

/** A key XState would read as a path or an id cannot be written as one: such targets go by id. */
const plainKey = (key: string) => !key.includes('.') && !key.startsWith('#');

/**
 * A target as XState resolves it from `source`: the path from the source's parent when the target
 * lies under it (a sibling's key, `executingTools.running`), else the target's id (`#conversation.halted`).
 */
function targetOf(source: AnyStateNode, target: AnyStateNode): string {
  const parent = source.parent;
  if (parent) {
    const within = target.path.slice(0, parent.path.length).join('\u0000') === parent.path.join('\u0000');
    const rest = target.path.slice(parent.path.length);
    if (within && rest.length > 0 && rest.every(plainKey)) return rest.join('.');
  }
  return `#${target.id}`;
}

function transitionConfig(source: AnyStateNode, transition: ResolvedTransition, at: string): TransitionConfigJson {
  const out: TransitionConfigJson = {};
  if (transition.target && transition.target.length > 0) {
    out.target = oneOrMany(transition.target.map((target) => targetOf(source, target)));
  }
  if (transition.guard !== undefined) out.guard = guardConfig(transition.guard, `${at}/guard`);
  if (transition.actions.length > 0) out.actions = oneOrMany(actionsConfig(transition.actions, `${at}/actions`));
  if (transition.reenter) out.reenter = true;
  if (transition.description !== undefined) out.description = transition.description;
  const meta = jsonOf(transition.meta);
  if (meta && typeof meta === 'object' && !Array.isArray(meta)) out.meta = meta;
  return out;
}

function transitionsConfig(source: AnyStateNode, transitions: readonly ResolvedTransition[], at: string): TransitionsConfigJson {
  return oneOrMany(transitions.map((transition, index) => transitionConfig(source, transition, `${at}/${index}`)));
}

/** `entry` / `exit` as written: XState's own list also holds the timers of `after`, which the config says there. */
function ownActions(node: AnyStateNode, key: 'entry' | 'exit'): ActionConfigJson | ActionConfigJson[] | undefined {
  const written: unknown = node.config[key];
  if (written === undefined) return undefined;
  const list = Array.isArray(written) ? written : [written];
  return list.length === 0 ? undefined : oneOrMany(actionsConfig(list, `${node.id}/${key}`));
}

/** The default id XState gives an invoke without one (`createInvokeId`). */
const defaultInvokeId = (node: AnyStateNode, index: number) => `${index}.${node.id}`;

function stateConfig(node: AnyStateNode): StateConfigJson {
  const out: StateConfigJson = {};
  const defaultId = [node.machine.id, ...node.path].join('.');
  if (!node.parent) out.id = node.machine.id;
  else if (node.id !== defaultId) out.id = node.id;
  if (node.type === 'parallel' || node.type === 'final' || node.type === 'history') out.type = node.type;
  if (node.type === 'history') {
    out.history = node.history === 'deep' ? 'deep' : 'shallow';
    const target: unknown = node.config.target;
    if (typeof target === 'string' || (Array.isArray(target) && target.every((item) => typeof item === 'string'))) {
      out.target = target as string | string[];
    }
  }
  if (node.description !== undefined) out.description = node.description;
  if (node.tags.length > 0) out.tags = [...node.tags];
  const meta = jsonOf(node.meta);
  if (meta && typeof meta === 'object' && !Array.isArray(meta)) out.meta = meta;

  if (node.type === 'compound' || (node.type === 'parallel' && node.config.initial !== undefined)) {
    const initial = node.initial;
    const first = initial.target[0];
    if (first) {
      out.initial =
        initial.actions.length > 0
          ? { target: first.key, actions: actionsConfig(initial.actions, `${node.id}/initial/actions`) }
          : first.key;
    }
  }

  const entry = ownActions(node, 'entry');
  if (entry !== undefined) out.entry = entry;
  const exit = ownActions(node, 'exit');
  if (exit !== undefined) out.exit = exit;

  // Events whose transitions the config says elsewhere: an invoke's done / error / snapshot, a timer, the state's own done.
  const elsewhere = new Set<string>();
  const transitionsOf = (eventType: string) => (node.transitions.get(eventType) ?? []) as unknown as ResolvedTransition[];

  const invokes = (node.invoke as unknown as ResolvedInvoke[]).map((invoke, index) => {
    // Inline logic gets XState's generated name (`xstate.invoke.<index>.<state id>`), which means nothing outside this machine.
    const src = invoke.src.startsWith('xstate.invoke.') ? `inline:${node.id}/invoke/${index}` : invoke.src;
    const out: InvokeConfigJson = invoke.id === defaultInvokeId(node, index) ? { src } : { id: invoke.id, src };
    if (typeof invoke.systemId === 'string') out.systemId = invoke.systemId;
    if (invoke.input !== undefined && typeof invoke.input !== 'function') {
      const input = jsonOf(invoke.input);
      if (input !== undefined) out.input = input;
    }
    for (const [key, prefix] of [
      ['onDone', 'xstate.done.actor.'],
      ['onError', 'xstate.error.actor.'],
      ['onSnapshot', 'xstate.snapshot.'],
    ] as const) {
      if (invoke[key] === undefined) continue;
      const eventType = `${prefix}${invoke.id}`;
      elsewhere.add(eventType);
      out[key] = transitionsConfig(node, transitionsOf(eventType), `${node.id}/invoke/${index}/${key}`);
    }
    return out;
  });
  if (invokes.length > 0) out.invoke = oneOrMany(invokes);

  const after = node.after as unknown as ResolvedTransition[];
  for (const transition of after) elsewhere.add(transition.eventType);
  const doneEvent = `xstate.done.state.${node.id}`;
  if (node.config.onDone !== undefined) elsewhere.add(doneEvent);

  const on: Record<string, TransitionsConfigJson> = {};
  for (const [eventType, transitions] of node.transitions) {
    if (elsewhere.has(eventType)) continue;
    on[eventType] = transitionsConfig(node, transitions as unknown as ResolvedTransition[], `${node.id}/on/${eventType}`);
  }
  if (Object.keys(on).length > 0) out.on = on;

  if (after.length > 0) {
    // One entry per delay, in the order the machine declared them; a numeric delay keeps its number as the key.
    const byDelay = new Map<string, ResolvedTransition[]>();
    for (const transition of after) {
      const delay = String(transition.delay);
      byDelay.set(delay, [...(byDelay.get(delay) ?? []), transition]);
    }
    out.after = Object.fromEntries(
      [...byDelay].map(([delay, transitions]) => [delay, transitionsConfig(node, transitions, `${node.id}/after/${delay}`)]),
    );
  }

  const always = (node.always ?? []) as unknown as ResolvedTransition[];
  if (always.length > 0) out.always = transitionsConfig(node, always, `${node.id}/always`);
  if (node.config.onDone !== undefined) out.onDone = transitionsConfig(node, transitionsOf(doneEvent), `${node.id}/onDone`);

  if (node.type === 'final' && node.output !== undefined && typeof node.output !== 'function') {
    const output = jsonOf(node.output);
    if (output !== undefined) out.output = output;
  }

  const children = Object.entries(node.states as Record<string, AnyStateNode>);
  if (children.length > 0) out.states = Object.fromEntries(children.map(([key, child]) => [key, stateConfig(child)]));
  return out;
}

/**
 * A machine as a plain JSON config that `createMachine()` accepts and the Stately editor imports:
 * states (nested, `type`, `initial`), `on` / `always` / `after` transitions, `invoke` (with
 * `onDone` / `onError`), `entry` / `exit`, `description` / `meta` / `tags` — guards, actions,
 * actors and delays by the names the machine gives them. Targets are a sibling's key or a path
 * from the parent when they can be, else an id (`#conversation.halted`). What only code can say
 * is left out: `context` and `output` (functions of the input), invoke `input` factories.
 * A higher-order guard gets one combined name (`and(['a', not('b')])` → `aAndNotB`); inline functions
 * are named by where they are (`inline:conversation.idle/on/user.message/0/guard`). The same machine
 * always gives the same JSON: keys in a fixed order, states and events in the machine's order.
 *
 * @example
 * ```ts
 * import { createMachine } from 'xstate';
 *
 * const config = machineConfigOf(createConversationMachine({ provider }));
 * writeFileSync('conversation.machine.json', JSON.stringify(config, null, 2));
 * const again = createMachine(config); // the same states and transitions, implementations by name
 * ```
 */
export function machineConfigOf(machine: AnyStateMachine): MachineConfigJson {
  const config = stateConfig(machine.root);
  const version: unknown = machine.version;
  return { id: machine.id, ...(typeof version === 'string' ? { version } : {}), ...config };
}
