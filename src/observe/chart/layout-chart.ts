import { importOptional } from '../import-optional.js';
import { type Chart, type ChartState, chartStates, type InvokedChart } from './chart.js';
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

/** A state placed on the canvas (absolute coordinates); `invoked` marks the box of a conversation a workflow runs there. */
export type PlacedState = Box & {
  path: string;
  label: string;
  final: boolean;
  compound: boolean;
  depth: number;
  invoked?: InvokedChart;
};
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

/** Room the box of an invoked conversation takes above and around its chart (whose own padding is inside it). */
const boxHeader = chartMetrics.compoundHeader - 8;

function elkNodes(states: ChartState[], parent: string, boxes: ReadonlyMap<string, PlacedChart>): ElkNode[] {
  const { stateFontSize, statePaddingX, stateHeight, compoundHeader, compoundPadding, initialSize } = chartMetrics;
  const nodes: ElkNode[] = [];
  if (states.some((state) => state.initial)) nodes.push({ id: initialId(parent), width: initialSize, height: initialSize });
  for (const state of states) {
    const box = boxes.get(state.path);
    if (box) {
      // Laid out already: a block of its own size here.
      const title = Math.ceil(textWidth(state.label, stateFontSize, true) + 2 * statePaddingX);
      nodes.push({ id: state.path, width: Math.max(box.width, title), height: box.height + boxHeader });
    } else if (state.children.length > 0) {
      nodes.push({
        id: state.path,
        layoutOptions: {
          'elk.padding': `[top=${compoundHeader},left=${compoundPadding},bottom=${compoundPadding},right=${compoundPadding}]`,
          'elk.nodeSize.minimum': `(${Math.ceil(textWidth(state.label, stateFontSize, true) + 2 * statePaddingX)}, ${stateHeight})`,
          'elk.nodeSize.constraints': 'MINIMUM_SIZE',
        },
        children: elkNodes(state.children, state.path, boxes),
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

/** Moves a placed chart's elements by `dx`, `dy`, its states `depth` levels down. */
function shifted(chart: PlacedChart, dx: number, dy: number, depth: number): Pick<PlacedChart, 'states' | 'transitions' | 'initials'> {
  const point = (at: Point) => ({ x: at.x + dx, y: at.y + dy });
  return {
    states: chart.states.map((state) => ({ ...state, x: state.x + dx, y: state.y + dy, depth: state.depth + depth })),
    transitions: chart.transitions.map((transition) => ({
      ...transition,
      points: transition.points.map(point),
      ...(transition.label ? { label: { ...transition.label, x: transition.label.x + dx, y: transition.label.y + dy } } : {}),
    })),
    initials: chart.initials.map((initial) => ({ ...initial, center: point(initial.center), points: initial.points.map(point) })),
  };
}

/** How a conversation's chart inside a workflow is laid out: its flow from the initial state down, as its own overview reads. */
const boxOptions: Record<string, string> = { 'elk.layered.cycleBreaking.strategy': 'MODEL_ORDER' };

/**
 * Places a chart with ELK's layered layout (elkjs, an optional peer dependency): states in
 * layers from the initial state down, compound states around their children, orthogonal arrows,
 * labels placed by the layout so they never overlap a state or each other. The notes go below.
 * The box of a conversation a workflow runs (`invoked`) is laid out on its own first and placed as
 * one block, so it looks the same wherever it is and its arrows stay inside it.
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
  // The outermost boxes; one inside another is laid out with it.
  const boxes = new Map<string, PlacedChart>();
  const inBox = (path: string) => [...boxes.keys()].some((box) => path.startsWith(`${box}/`));
  for (const state of chartStates(chart)) {
    if (!state.invoked || inBox(state.path)) continue;
    const inside = (path: string) => path.startsWith(`${state.path}/`);
    const transitions = chart.transitions.filter((transition) => inside(transition.source) && inside(transition.target));
    boxes.set(state.path, await layoutChart({ id: state.path, states: state.children, transitions, notes: [] }, boxOptions));
  }
  const drawn = chart.transitions.map((transition, index) => ({ transition, index })).filter(({ transition }) => !inBox(transition.source));
  const edges: ElkEdge[] = drawn.map(({ transition, index }) => ({
    id: `t${index}`,
    sources: [transition.source],
    targets: [transition.target],
    ...(transition.lines.length > 0 ? { labels: [labelBox(transition.lines)] } : {}),
  }));
  const initialEdges: ElkEdge[] = chartStates({ states: [{ path: '', label: '', final: false, initial: false, children: chart.states }] })
    .filter((state) => state.initial && !inBox(state.path))
    .map((state) => ({ id: `i:${state.path}`, sources: [initialId(parents.get(state.path) ?? '')], targets: [state.path] }));
  const graph: ElkNode = {
    id: '(machine)',
    layoutOptions: { ...rootOptions, ...overrides },
    children: elkNodes(chart.states, '', boxes),
    edges: [...edges, ...initialEdges],
  };
  const laid = await elk.layout(graph);

  const states: PlacedState[] = [];
  const inner: Array<Pick<PlacedChart, 'states' | 'transitions' | 'initials'>> = [];
  const byPath = new Map(chartStates(chart).map((state) => [state.path, state]));
  const visit = (nodes: ElkNode[], depth: number) => {
    for (const node of nodes) {
      const box = boxes.get(node.id);
      if (box) {
        const x = (node.x ?? 0) + ((node.width ?? 0) - box.width) / 2;
        inner.push(shifted(box, x, (node.y ?? 0) + boxHeader, depth + 1));
      }
      if (!node.id.endsWith('#initial')) {
        const state = byPath.get(node.id);
        if (state) {
          states.push({
            path: state.path,
            label: state.label,
            final: state.final,
            compound: state.children.length > 0,
            depth,
            ...(state.invoked ? { invoked: state.invoked } : {}),
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
  const transitions: PlacedTransition[] = drawn.map(({ transition, index }) => {
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

  for (const part of inner) {
    states.push(...part.states);
    transitions.push(...part.transitions);
    initials.push(...part.initials);
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
