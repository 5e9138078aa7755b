import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { isConversationMachine } from '../../machines/names/conversation-mark.js';
import {
  allNodes,
  builtInOf,
  invokesOf,
  isStateMachine,
  logicOfInvoke,
  logicOfSource,
  placedActions,
} from '../../machines/workflow/chart-nodes.js';
import type { Chart, ChartState, InvokedChart } from './chart.js';
import { fullChart } from './full-chart.js';
import { machineDefinitionJson } from './machine-definition.js';
import { overviewChart } from './overview-chart.js';

/** The two pictures of a machine: the readable overview, or every state and transition. */
export type ChartKind = 'overview' | 'full';

/** Where a workflow runs a conversation, or a workflow of its own: the state that invokes it (or that a spawn lands in). */
type ConversationPlace = { node: AnyStateNode; invoked: InvokedChart; logic: AnyStateMachine };

/** A conversation, or (`withWorkflows`) another machine of the user's: a workflow inside the workflow (`withBudget` runs yours so). */
const drawnInside = (logic: unknown, withWorkflows: boolean): logic is AnyStateMachine =>
  isConversationMachine(logic) || (withWorkflows && isStateMachine(logic));

/** The separator between a workflow's state path and a conversation drawn in it (state paths use dots). */
const separator = '/';

/**
 * Every conversation (and, `withWorkflows`, every other machine) a machine invokes (by invoke id) or
 * spawns with `spawnChild` (by its id, if fixed), where it runs.
 */
function conversationPlaces(machine: AnyStateMachine, withWorkflows: boolean): ConversationPlace[] {
  const places: ConversationPlace[] = [];
  for (const node of allNodes(machine)) {
    invokesOf(node).forEach((invoke, index) => {
      const logic = logicOfInvoke(machine, node, index);
      // Inline logic has XState's generated name, which means nothing to a reader: the invoke id says it.
      const src = invoke.src.startsWith('xstate.invoke.') ? invoke.id : invoke.src;
      if (drawnInside(logic, withWorkflows)) places.push({ node, invoked: { id: invoke.id, src }, logic });
    });
  }
  for (const { action, lands } of placedActions(machine)) {
    const spawn = builtInOf(action, 'xstate.spawnChild');
    const logic = spawn ? logicOfSource(machine, spawn.src) : undefined;
    if (!spawn || !drawnInside(logic, withWorkflows)) continue;
    const id = typeof spawn.id === 'string' ? spawn.id : undefined;
    const src = typeof spawn.src === 'string' ? spawn.src : (id ?? 'conversation');
    for (const node of lands) places.push({ node, invoked: { id, src }, logic });
  }
  return places;
}

const outlines = new WeakMap<AnyStateMachine, Chart>();

/** Arrows into a final state from this many states or more are left out of an outline: the end most states can reach (halted, error). */
const crowdedEnd = 4;

/**
 * A conversation as drawn inside a workflow: its overview's states and the arrows between them,
 * without their words and without the arrows into the ends most states can reach — enough to see
 * where it is and how it goes on (a labelled overview is some 1,900 px wide, and a workflow may run
 * several side by side; its own chart says why).
 */
function outlineOf(logic: AnyStateMachine): Chart {
  let outline = outlines.get(logic);
  if (!outline) {
    const overview = overviewChart(machineDefinitionJson(logic));
    const finals = new Set(overview.states.filter((state) => state.final).map((state) => state.path));
    const into = new Map<string, number>();
    for (const { target } of overview.transitions) into.set(target, (into.get(target) ?? 0) + 1);
    const crowded = (target: string) => finals.has(target) && (into.get(target) ?? 0) >= crowdedEnd;
    const transitions = overview.transitions
      .filter(({ target }) => !crowded(target))
      .map(({ source, target }) => ({ source, target, lines: [] }));
    outline = { ...overview, transitions, notes: [] };
    outlines.set(logic, outline);
  }
  return outline;
}

function prefixed(states: ChartState[], prefix: string): ChartState[] {
  return states.map((state) => ({ ...state, path: `${prefix}${state.path}`, children: prefixed(state.children, prefix) }));
}

/** How deep workflows inside workflows are drawn: yours inside `withBudget`'s, no further (a picture, not a tree). */
const maxNesting = 1;

/**
 * The chart of any machine, as the viewers draw it: a conversation machine's overview (in the
 * conversation's words) or full chart; for any other machine (a workflow), its own overview (its
 * guards and events by their names) or full chart with each conversation it invokes or spawns drawn
 * inside the state that runs it — a box named after the invoke id (and the logic's name, when it
 * differs) holding the conversation's states and arrows. The box's path is `<state>/<invoke id>`
 * and a state in it `<state>/<invoke id>/<conversation state>`, where `<state>` is the top-level
 * state in the overview and the invoking state itself in the full chart; a conversation spawned
 * with an id decided at run time is boxed under `<state>/*<src>`. So a page lights a workflow
 * conversation at `path` in `value` by joining each of the workflow's active states, the path and
 * each of the conversation's active states. A workflow it invokes (yours inside `withBudget`'s) is
 * boxed the same way with its own overview inside, its conversations boxed in it in turn.
 *
 * @example
 * ```ts
 * const chart = machineChart(orderWorkflow, 'overview');
 * const svg = renderChartSvg(await layoutChart(chart));
 * // <g class="state invoked compound" data-state="paying/payer" data-invoke="payer"> … data-state="paying/payer/awaitingApproval"
 * ```
 */
export function machineChart(machine: AnyStateMachine, kind: ChartKind): Chart {
  return chartOf(machine, kind, 0);
}

function chartOf(machine: AnyStateMachine, kind: ChartKind, nesting: number): Chart {
  const definition = machineDefinitionJson(machine);
  if (isConversationMachine(machine)) return kind === 'overview' ? overviewChart(definition) : fullChart(definition);
  const chart = kind === 'overview' ? overviewChart(definition, { words: 'plain' }) : fullChart(definition);
  const byPath = new Map<string, ChartState>();
  const index = (states: ChartState[]) => {
    for (const state of states) {
      byPath.set(state.path, state);
      index(state.children);
    }
  };
  index(chart.states);
  const boxes = new Set<string>();
  for (const { node, invoked, logic } of conversationPlaces(machine, nesting < maxNesting)) {
    const at = kind === 'overview' ? node.path.slice(0, 1) : node.path;
    const host = at.join('.');
    const parent = host === '' ? undefined : byPath.get(host);
    if (host !== '' && !parent) continue;
    const box = `${host === '' ? '' : `${host}${separator}`}${invoked.id ?? `*${invoked.src}`}`;
    // One box per place: in the overview, a state's substates that run the same conversation share it.
    if (boxes.has(box)) continue;
    boxes.add(box);
    // A workflow inside keeps its arrows' words: they are its own, and few.
    const inside = isConversationMachine(logic) ? outlineOf(logic) : chartOf(logic, 'overview', nesting + 1);
    const label =
      invoked.id === undefined ? `${invoked.src} (spawned)` : invoked.id === invoked.src ? invoked.id : `${invoked.id} (${invoked.src})`;
    const state: ChartState = {
      path: box,
      label,
      final: false,
      initial: false,
      children: prefixed(inside.states, `${box}${separator}`),
      invoked,
    };
    if (parent) parent.children.push(state);
    else chart.states.push(state);
    chart.transitions.push(
      ...inside.transitions.map((transition) => ({
        source: `${box}${separator}${transition.source}`,
        target: `${box}${separator}${transition.target}`,
        lines: transition.lines,
      })),
    );
  }
  return chart;
}
