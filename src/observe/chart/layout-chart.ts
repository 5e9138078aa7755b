import { importOptional } from '../import-optional.js';
import { type Chart, type ChartState, chartStates } from './chart.js';
import { textWidth } from './text-width.js';

/** Sizes the drawing uses; the layout reserves exactly this room. */
export const chartMetrics = {
  stateFontSize: 14,
  labelFontSize: 12,
  lineHeight: 15,
  statePaddingX: 16,
  stateHeight: 38,
  /** Room above a compound state's children for its name. */
  compoundHeader: 30,
  compoundPadding: 14,
  initialSize: 12,
  labelPaddingX: 4,
  labelPaddingY: 2,
  noteFontSize: 12,
  notePadding: 10,
  noteGap: 24,
} as const;

type Point = { x: number; y: number };
type Box = { x: number; y: number; width: number; height: number };

/** A state placed on the canvas (absolute coordinates). */
export type PlacedState = Box & { path: string; label: string; final: boolean; compound: boolean; depth: number };
/** An arrow placed on the canvas: its route and its label box (one text line per transition). */
export type PlacedTransition = {
  source: string;
  target: string;
  points: Point[];
  label?: Box & { lines: string[] };
};
/** The dot that marks an initial state, and the arrow from it. */
export type PlacedInitial = { state: string; center: Point; points: Point[] };
/** A chart with every element placed, ready for {@link renderChartSvg}. */
export type PlacedChart = {
  id: string;
  width: number;
  height: number;
  states: PlacedState[];
  transitions: PlacedTransition[];
  initials: PlacedInitial[];
  notes?: Box & { lines: string[]; events: string[] };
};

// The part of elkjs's graph format used here (elkjs's own types stay out of the public ones).
type ElkLabel = { text?: string; width?: number; height?: number; x?: number; y?: number };
type ElkNode = {
  id: string;
  width?: number;
  height?: number;
  x?: number;
  y?: number;
  layoutOptions?: Record<string, string>;
  children?: ElkNode[];
  edges?: ElkEdge[];
  labels?: ElkLabel[];
};
type ElkSection = { startPoint: Point; endPoint: Point; bendPoints?: Point[] };
type ElkEdge = { id: string; sources: string[]; targets: string[]; labels?: ElkLabel[]; sections?: ElkSection[] };
type ElkLike = { layout(graph: ElkNode): Promise<ElkNode> };

let elkPromise: Promise<ElkLike> | undefined;

/** elkjs, loaded on first use (an optional peer dependency); a failure is not cached. */
export function loadElk(): Promise<ElkLike> {
  if (!elkPromise) {
    const pending = importOptional(
      'elkjs',
      'Drawing a statechart (actorloop/inspect, npm run visualize)',
      () => import('elkjs/lib/elk.bundled.js'),
    ).then((module) => new (module as unknown as { default: new () => ElkLike }).default());
    elkPromise = pending;
    pending.catch(() => {
      if (elkPromise === pending) elkPromise = undefined;
    });
  }
  return elkPromise;
}

const rootOptions: Record<string, string> = {
  'elk.algorithm': 'layered',
  'elk.direction': 'DOWN',
  'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
  'elk.json.edgeCoords': 'ROOT',
  'elk.json.shapeCoords': 'ROOT',
  'elk.edgeRouting': 'ORTHOGONAL',
  'elk.edgeLabels.placement': 'CENTER',
  // Labels of long arrows spread over the layers they cross instead of piling into one (narrower).
  'elk.layered.edgeLabels.centerLabelPlacementStrategy': 'SPACE_EFFICIENT_LAYER',
  'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
  // Brandes–Köpf keeps long arrows straight: the conversation overview draws without a crossing.
  'elk.layered.nodePlacement.strategy': 'BRANDES_KOEPF',
  'elk.layered.spacing.nodeNodeBetweenLayers': '36',
  'elk.layered.spacing.edgeNodeBetweenLayers': '12',
  'elk.layered.spacing.edgeEdgeBetweenLayers': '8',
  'elk.spacing.nodeNode': '24',
  'elk.spacing.edgeNode': '12',
  'elk.spacing.edgeEdge': '8',
  'elk.spacing.edgeLabel': '4',
  'elk.spacing.nodeSelfLoop': '16',
  'elk.padding': '[top=16,left=16,bottom=16,right=16]',
};

const initialId = (parent: string) => `${parent || '(machine)'}#initial`;

function labelBox(lines: string[]): ElkLabel {
  const { labelFontSize, lineHeight, labelPaddingX, labelPaddingY } = chartMetrics;
  const width = Math.max(...lines.map((line) => textWidth(line, labelFontSize))) + 2 * labelPaddingX;
  return { text: lines.join('\n'), width: Math.ceil(width), height: lines.length * lineHeight + 2 * labelPaddingY };
}

function elkNodes(states: ChartState[], parent: string): ElkNode[] {
  const { stateFontSize, statePaddingX, stateHeight, compoundHeader, compoundPadding, initialSize } = chartMetrics;
  const nodes: ElkNode[] = [];
  if (states.some((state) => state.initial)) nodes.push({ id: initialId(parent), width: initialSize, height: initialSize });
  for (const state of states) {
    if (state.children.length > 0) {
      nodes.push({
        id: state.path,
        layoutOptions: {
          'elk.padding': `[top=${compoundHeader},left=${compoundPadding},bottom=${compoundPadding},right=${compoundPadding}]`,
          'elk.nodeSize.minimum': `(${Math.ceil(textWidth(state.label, stateFontSize, true) + 2 * statePaddingX)}, ${stateHeight})`,
          'elk.nodeSize.constraints': 'MINIMUM_SIZE',
        },
        children: elkNodes(state.children, state.path),
      });
    } else {
      nodes.push({
        id: state.path,
        // Where a run can end reads best at the bottom, side by side.
        ...(state.final ? { layoutOptions: { 'elk.layered.layering.layerConstraint': 'LAST' } } : {}),
        width: Math.ceil(textWidth(state.label, stateFontSize, true) + 2 * statePaddingX),
        height: stateHeight,
      });
    }
  }
  return nodes;
}

function route(section: ElkSection | undefined): Point[] {
  if (!section) return [];
  return [section.startPoint, ...(section.bendPoints ?? []), section.endPoint];
}

/**
 * Places a chart with ELK's layered layout (elkjs, an optional peer dependency): states in
 * layers from the initial state down, compound states around their children, orthogonal arrows,
 * labels placed by the layout so they never overlap a state or each other. The notes go below.
 * Deterministic: the same chart gives the same coordinates everywhere (text is measured from a
 * table, not a font on this machine).
 *
 * @example
 * ```ts
 * const placed = await layoutChart(overviewChart(machineDefinitionJson(machine)));
 * const svg = renderChartSvg(placed);
 * ```
 */
export async function layoutChart(chart: Chart, overrides: Record<string, string> = {}): Promise<PlacedChart> {
  const elk = await loadElk();
  const parents = new Map<string, string>();
  for (const state of chartStates(chart)) for (const child of state.children) parents.set(child.path, state.path);
  const edges: ElkEdge[] = chart.transitions.map((transition, index) => ({
    id: `t${index}`,
    sources: [transition.source],
    targets: [transition.target],
    ...(transition.lines.length > 0 ? { labels: [labelBox(transition.lines)] } : {}),
  }));
  const initialEdges: ElkEdge[] = chartStates({ states: [{ path: '', label: '', final: false, initial: false, children: chart.states }] })
    .filter((state) => state.initial)
    .map((state) => ({ id: `i:${state.path}`, sources: [initialId(parents.get(state.path) ?? '')], targets: [state.path] }));
  const graph: ElkNode = {
    id: '(machine)',
    layoutOptions: { ...rootOptions, ...overrides },
    children: elkNodes(chart.states, ''),
    edges: [...edges, ...initialEdges],
  };
  const laid = await elk.layout(graph);

  const states: PlacedState[] = [];
  const visit = (nodes: ElkNode[], depth: number) => {
    for (const node of nodes) {
      if (!node.id.endsWith('#initial')) {
        const state = chartStates(chart).find((candidate) => candidate.path === node.id);
        if (state) {
          states.push({
            path: state.path,
            label: state.label,
            final: state.final,
            compound: state.children.length > 0,
            depth,
            x: node.x ?? 0,
            y: node.y ?? 0,
            width: node.width ?? 0,
            height: node.height ?? 0,
          });
        }
      }
      visit(node.children ?? [], depth + 1);
    }
  };
  visit(laid.children ?? [], 0);

  const allEdges = laid.edges ?? [];
  const transitions: PlacedTransition[] = chart.transitions.map((transition, index) => {
    const edge = allEdges.find((candidate) => candidate.id === `t${index}`);
    const label = edge?.labels?.[0];
    return {
      source: transition.source,
      target: transition.target,
      points: route(edge?.sections?.[0]),
      ...(label && transition.lines.length > 0
        ? { label: { x: label.x ?? 0, y: label.y ?? 0, width: label.width ?? 0, height: label.height ?? 0, lines: transition.lines } }
        : {}),
    };
  });
  const initials: PlacedInitial[] = [];
  const findNode = (nodes: ElkNode[], id: string): ElkNode | undefined => {
    for (const node of nodes) {
      if (node.id === id) return node;
      const inner = findNode(node.children ?? [], id);
      if (inner) return inner;
    }
    return undefined;
  };
  for (const edge of allEdges.filter((candidate) => candidate.id.startsWith('i:'))) {
    const dot = findNode(laid.children ?? [], edge.sources[0] ?? '');
    if (!dot) continue;
    const half = chartMetrics.initialSize / 2;
    initials.push({
      state: edge.targets[0] ?? '',
      center: { x: (dot.x ?? 0) + half, y: (dot.y ?? 0) + half },
      points: route(edge.sections?.[0]),
    });
  }

  let width = laid.width ?? 0;
  let height = laid.height ?? 0;
  let notes: PlacedChart['notes'];
  if (chart.notes.length > 0) {
    const { noteFontSize, lineHeight, notePadding, noteGap } = chartMetrics;
    const lines = chart.notes.map((note) => note.text);
    const noteWidth = Math.ceil(Math.max(...lines.map((line) => textWidth(line, noteFontSize))) + 2 * notePadding);
    const noteHeight = lines.length * lineHeight + 2 * notePadding;
    notes = { x: 16, y: height, width: noteWidth, height: noteHeight, lines, events: chart.notes.flatMap((note) => note.events ?? []) };
    width = Math.max(width, noteWidth + 32);
    height += noteHeight + noteGap;
  }
  return { id: chart.id, width, height, states, transitions, initials, ...(notes ? { notes } : {}) };
}
