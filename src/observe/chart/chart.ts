/**
 * A statechart ready to be laid out and drawn: states (nested), transitions with labels, notes.
 * Built from a machine definition by {@link fullChart} or {@link overviewChart}; drawn by
 * `layoutChart` + `renderChartSvg` (the viewer and `npm run visualize`) or as Mermaid (the README).
 */
export type Chart = {
  /** The machine id (`conversation`). */
  id: string;
  /** The top-level states, in definition order. */
  states: ChartState[];
  transitions: ChartTransition[];
  /** Things that hold in many states at once, said once (e.g. `cancel` from every state). */
  notes: ChartNote[];
};

/**
 * A note; `state` is the state it is about, when there is one (a picture may put it there);
 * `events` are the events whose transitions it stands for (so a viewer can point at it).
 */
export type ChartNote = { text: string; state?: string; events?: string[] };

/**
 * One state. `path` is its dotted path under the machine (`requesting.waiting`), unique in the
 * chart; a conversation drawn inside a workflow's state has its states under
 * `<that state>/<invoke id>/` (`paying/payer/awaitingApproval`).
 */
export type ChartState = {
  path: string;
  /** The state's key (`waiting`). */
  label: string;
  final: boolean;
  /** Marks the initial state of its parent (or of the machine). */
  initial: boolean;
  children: ChartState[];
  /** Not a state: the box of a conversation the machine invokes or spawns there, its chart inside. */
  invoked?: InvokedChart;
};

/**
 * A conversation drawn inside a workflow's state: the id it runs under (`undefined` for one spawned
 * with an id decided at run time) and the name of its logic.
 */
export type InvokedChart = { id: string | undefined; src: string };

/** One arrow; several transitions between the same two states share an arrow, one label line each. */
export type ChartTransition = {
  source: string;
  target: string;
  /** One line per transition the arrow stands for. */
  lines: string[];
};

/** Every state of a chart, children after their parent. */
export function chartStates(chart: Pick<Chart, 'states'>): ChartState[] {
  const out: ChartState[] = [];
  const visit = (state: ChartState) => {
    out.push(state);
    for (const child of state.children) visit(child);
  };
  for (const state of chart.states) visit(state);
  return out;
}
