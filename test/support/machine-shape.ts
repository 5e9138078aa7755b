/**
 * A machine's shape as a sorted list of lines, read off XState's resolved tree (`machine.root`):
 * every state (id, type, initial, history), every invoke (id, src), entry and exit, and every
 * transition (source id, event type, target ids, guard, actions, reenter). Two machines with the
 * same lines have the same states and transitions. It names implementations on its own, not with
 * `machineConfigOf`'s code: a function is `inline` (and `inline:<where>`, the config's name for
 * one, too), a built-in action its type, `and` / `or` / `not` by the combined name a config gives them.
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate';

type Transition = { target?: readonly AnyStateNode[]; guard?: unknown; actions: readonly unknown[]; reenter: boolean; eventType: string };

/** `inline:<where>` (a config's name for an inline function) and `xstate.assign:<where>` read as the function they stand for. */
function nameOfString(name: string): string {
  return name.replace(/\b(inline|xstate\.[A-Za-z.]+):[^,()]+/g, '$1');
}

/**
 * A higher-order guard by the one plain name an exported config gives it (DESIGN §18): its operands'
 * names joined (`isReadyAndNotHasAtLeast`, `aOrB`, `notA`), params left out, `inline` for a function.
 */
function combinedName(kind: string, operands: unknown): string {
  const names = (Array.isArray(operands) ? operands : [operands]).map((operand): string => {
    if (typeof operand === 'string') return operand;
    const nested = (operand as { guards?: unknown } | undefined)?.guards;
    if (typeof operand === 'function' && nested !== undefined) return combinedName(operand.name, nested);
    if (operand && typeof operand === 'object' && typeof (operand as { type?: unknown }).type === 'string')
      return (operand as { type: string }).type;
    return 'inline';
  });
  const upper = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);
  if (kind === 'not') return `not${upper(names[0] ?? 'inline')}`;
  return names.map((name, index) => (index === 0 ? name : `${kind === 'and' ? 'And' : 'Or'}${upper(name)}`)).join('');
}

function nameOf(value: unknown): string {
  if (typeof value === 'string') return nameOfString(value);
  if (typeof value === 'function') {
    const operands = (value as { guards?: unknown }).guards;
    if (operands !== undefined && ['and', 'or', 'not'].includes(value.name)) return combinedName(value.name, operands);
    const type = (value as { type?: unknown }).type;
    return 'resolve' in value && typeof type === 'string' ? type : 'inline';
  }
  if (value && typeof value === 'object' && typeof (value as { type?: unknown }).type === 'string') {
    const { type, params } = value as { type: string; params?: unknown };
    return params === undefined ? nameOfString(type) : `${nameOfString(type)}(${JSON.stringify(params)})`;
  }
  return String(value);
}

function transitionLine(source: AnyStateNode, transition: Transition, index: number): string {
  const targets = (transition.target ?? []).map((target) => target.id).join(',');
  const guard = transition.guard === undefined ? '' : ` [${nameOf(transition.guard)}]`;
  const actions = transition.actions.map(nameOf).join(', ');
  return `transition ${source.id} ${transition.eventType || 'always'} #${index} -> ${targets || '(none)'}${guard} (${actions})${transition.reenter ? ' reenter' : ''}`;
}

function collect(node: AnyStateNode, lines: string[]): void {
  const initial = node.type === 'compound' ? ` initial=${node.initial.target.map((target: AnyStateNode) => target.id).join(',')}` : '';
  const history = node.type === 'history' ? ` history=${String(node.history)}` : '';
  lines.push(`state ${node.id} ${node.type}${initial}${history}`);
  for (const invoke of node.invoke as Array<{ id: string; src: string }>) {
    const src = invoke.src.startsWith('xstate.invoke.') ? 'inline' : nameOfString(invoke.src);
    lines.push(`invoke ${node.id} id=${invoke.id} src=${src}`);
  }
  if (node.entry.length > 0) lines.push(`entry ${node.id} (${node.entry.map(nameOf).join(', ')})`);
  if (node.exit.length > 0) lines.push(`exit ${node.id} (${node.exit.map(nameOf).join(', ')})`);
  for (const transitions of node.transitions.values()) {
    (transitions as unknown as Transition[]).forEach((transition, index) => {
      lines.push(transitionLine(node, transition, index));
    });
  }
  ((node.always ?? []) as unknown as Transition[]).forEach((transition, index) => {
    lines.push(transitionLine(node, transition, index));
  });
  for (const child of Object.values(node.states as Record<string, AnyStateNode>)) collect(child, lines);
}

/** The machine's states and transitions as lines, sorted (the order of transitions for one event is kept in `#<index>`). */
export function machineShape(machine: AnyStateMachine): string[] {
  const lines: string[] = [];
  collect(machine.root, lines);
  return lines.sort();
}

/** What one machine has that the other has not: `[]` when their shapes are equal. */
export function shapeDifferences(expected: AnyStateMachine, actual: AnyStateMachine): string[] {
  const want = machineShape(expected);
  const got = machineShape(actual);
  const gotSet = new Set(got);
  const wantSet = new Set(want);
  return [
    ...want.filter((line) => !gotSet.has(line)).map((line) => `missing: ${line}`),
    ...got.filter((line) => !wantSet.has(line)).map((line) => `extra:   ${line}`),
  ];
}
