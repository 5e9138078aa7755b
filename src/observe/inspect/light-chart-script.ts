/**
 * The pages' chart lighting, as client script: `lightChart(holder, paths, previous, cause)` marks
 * the active states of an inline chart SVG (`g.state[data-state]`), the arrow just taken from
 * `previous` to `paths` (`g.transition[data-source][data-target]`), or the note of the user event
 * that caused the change (`g.note[data-events]`), and brings the state just lit into view;
 * `fitChart(holder)` sizes a chart just inserted. Shared by the live viewer's page and the host
 * viewer's page, with the style of their chart holder (`#chart`, class `overview` or `full`).
 */
import { chartMetrics } from '../chart/layout-chart.js';

/** The smallest an arrow's label may be drawn, in CSS pixels: a chart that would shrink below it scrolls instead. */
export const legibleLabelPx = 11;

/** Room around a chart in its holder, so a label at the chart's edge never lies against the holder's edge. */
const chartMarginPx = 24;

/** The chart holder's look; each page adds how tall the holder may grow. */
export const chartHolderStyle = `
#chart { overflow: auto; }
#chart svg { display: block; margin: ${chartMarginPx}px; }
#chart.overview svg { width: calc(100% - ${2 * chartMarginPx}px); height: auto; }
`;

export const lightChartScript = `
const legibleChartScale = ${legibleLabelPx / chartMetrics.labelFontSize};

/** The overview fills its holder's width, but never below the scale its labels read at: past that the holder scrolls. */
function fitChart(holder) {
  const svg = holder.querySelector('svg');
  if (svg && svg.viewBox.baseVal) svg.style.minWidth = Math.ceil(svg.viewBox.baseVal.width * legibleChartScale) + 'px';
}

function lightChart(holder, paths, previous, cause) {
  const lit = [];
  for (const node of holder.querySelectorAll('g.state')) {
    const active = paths.includes(node.dataset.state);
    node.classList.toggle('active', active);
    if (active) lit.push(node);
  }
  // The innermost lit states: one for a conversation; one per running conversation and parallel region in a workflow.
  const inside = (outer, inner) => inner.startsWith(outer + '.') || inner.startsWith(outer + '/');
  const innermost = lit.filter((node) => !lit.some((other) => inside(node.dataset.state, other.dataset.state)));
  // The arrow just taken: from a state the run left to one it entered. A change caused by an event
  // the chart says once in a note (cancel) points at the note instead.
  const note = cause ? [...holder.querySelectorAll('g.note[data-events]')].find((node) => node.dataset.events.split(' ').includes(cause)) : undefined;
  for (const node of holder.querySelectorAll('g.note')) node.classList.toggle('taken', node === note);
  const arrows = [...holder.querySelectorAll('g.transition')];
  const left = (arrow) => previous.includes(arrow.dataset.source);
  const entered = (state) => paths.includes(state) && !previous.includes(state);
  let taken = note ? [] : arrows.filter((arrow) => left(arrow) && entered(arrow.dataset.target));
  // None: the run passed through a state it never stops in (preparing): both arrows are lit.
  if (!note && taken.length === 0) {
    taken = arrows.flatMap((first) =>
      left(first) ? arrows.filter((second) => second.dataset.source === first.dataset.target && entered(second.dataset.target)).flatMap((second) => [first, second]) : [],
    );
  }
  for (const arrow of arrows) arrow.classList.toggle('taken', taken.includes(arrow));
  // A chart larger than its holder: the states just lit come to the middle (all of them, as far as
  // they fit). Only when other states (or a chart just inserted) are lit, so a reader scrolling
  // around is not pulled back at every update.
  const svg = holder.querySelector('svg');
  const key = innermost.map((node) => node.dataset.state).join(' ');
  if (innermost.length > 0 && (holder.centred !== key || holder.centredIn !== svg)) {
    holder.centred = key;
    holder.centredIn = svg;
    const boxes = innermost.map((node) => node.getBoundingClientRect());
    const left = Math.min(...boxes.map((box) => box.left));
    const right = Math.max(...boxes.map((box) => box.right));
    const top = Math.min(...boxes.map((box) => box.top));
    const bottom = Math.max(...boxes.map((box) => box.bottom));
    const frame = holder.getBoundingClientRect();
    holder.scrollBy({ left: (left + right) / 2 - (frame.left + holder.clientWidth / 2), top: (top + bottom) / 2 - (frame.top + holder.clientHeight / 2) });
  }
}
`;
