import type { Chart, ChartState, ChartTransition } from './chart.js';
import { asStateDefinition, type JsonObject, type StateDefinition } from './machine-definition.js';
import { invokeSourcesOf, pathsOf, stateTransitions } from './transition-label.js';

/** Adds a label line to the arrow from `source` to `target`, creating the arrow on first use. */
export function addArrow(transitions: ChartTransition[], source: string, target: string, line: string): void {
  const existing = transitions.find((transition) => transition.source === source && transition.target === target);
  if (!existing) transitions.push({ source, target, lines: line === '' ? [] : [line] });
  else if (line !== '' && !existing.lines.includes(line)) existing.lines.push(line);
}

/** The states of a definition as chart states (every level), initial ones marked. */
export function chartStatesOf(root: StateDefinition, depth = Number.POSITIVE_INFINITY): ChartState[] {
  const pathOf = pathsOf(root);
  const build = (parent: StateDefinition, level: number): ChartState[] => {
    const initial = parent.initial?.target[0]?.replace(/^#/, '');
    return Object.values(parent.states).map((state) => ({
      path: pathOf(state.id),
      label: state.key,
      final: state.type === 'final',
      initial: initial !== undefined && initial === state.id.replace(/^#/, ''),
      children: level < depth ? build(state, level + 1) : [],
    }));
  };
  return build(root, 1);
}

/**
 * Every transition of a machine definition: each arrow labelled `event [guard]` (one line per
 * transition it stands for), a transition without a target drawn as a loop on its state.
 * Transitions declared on the machine root apply in every state: with a target they are drawn from
 * each top-level state that is not final, without one they are listed in a note.
 *
 * @example
 * ```ts
 * const chart = fullChart(machineDefinitionJson(machine));
 * const svg = renderChartSvg(await layoutChart(chart));
 * ```
 */
export function fullChart(definition: JsonObject): Chart {
  const root = asStateDefinition(definition);
  const invokeSources = invokeSourcesOf(root);
  const pathOf = pathsOf(root);
  const transitions: ChartTransition[] = [];
  const visit = (state: StateDefinition) => {
    for (const child of Object.values(state.states)) {
      const path = pathOf(child.id);
      for (const transition of stateTransitions(child, invokeSources, pathOf)) {
        const targets = transition.target && transition.target.length > 0 ? transition.target : [child.id];
        for (const target of targets) addArrow(transitions, path, pathOf(target), transition.label);
      }
      visit(child);
    }
  };
  visit(root);
  const topLevel = Object.values(root.states).filter((state) => state.type !== 'final');
  const answeredOnly: string[] = [];
  for (const transition of stateTransitions(root, invokeSources, pathOf)) {
    if (!transition.target || transition.target.length === 0) {
      answeredOnly.push(transition.label);
      continue;
    }
    for (const state of topLevel) {
      for (const target of transition.target) addArrow(transitions, pathOf(state.id), pathOf(target), transition.label);
    }
  }
  const notes = answeredOnly.length > 0 ? [{ text: `In every state, without a state change: ${answeredOnly.join(', ')}` }] : [];
  return { id: root.id, states: chartStatesOf(root), transitions, notes };
}
