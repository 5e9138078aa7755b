import { chartMetrics, type PlacedChart } from './layout-chart.js';
import { chartFontFamily } from './text-width.js';

/**
 * The look of a chart (`.statechart` is the SVG's class): embedded in each SVG, and in the live
 * viewer's page, whose content security policy ignores styles inside inserted SVGs.
 */
export const chartStyle = [
  `.statechart text { font-family: ${chartFontFamily}; fill: #1e293b; }`,
  `.statechart .state-name { font-size: ${chartMetrics.stateFontSize}px; font-weight: bold; }`,
  `.statechart .transition-label, .statechart .note-text { font-size: ${chartMetrics.labelFontSize}px; fill: #334155; }`,
  '.statechart .state rect { fill: #f8fafc; stroke: #475569; stroke-width: 1.5; }',
  '.statechart .state.compound > rect { fill: #eef2f7; }',
  '.statechart .state.final rect.inner { fill: none; }',
  '.statechart .state.active > rect { fill: #fde68a; stroke: #b45309; stroke-width: 3; }',
  '.statechart .state.compound.active > rect { fill: #fef3c7; }',
  '.statechart .transition path, .statechart .initial path { fill: none; stroke: #64748b; stroke-width: 1.4; }',
  '.statechart .transition.taken path { stroke: #b45309; stroke-width: 2.6; }',
  '.statechart .transition rect { fill: #ffffff; fill-opacity: 0.9; }',
  '.statechart .initial circle { fill: #1e293b; }',
  '.statechart .note rect { fill: #fffbeb; stroke: #a8a29e; stroke-dasharray: 4 3; }',
  '.statechart .note.taken rect { stroke: #b45309; stroke-width: 2.6; stroke-dasharray: none; }',
].join('\n');

/**
 * The look of the box of a conversation a workflow runs (a box of its own, not a state of the
 * workflow): embedded in the SVGs that have one, so a conversation's own SVG stays as it was, and in
 * both viewer pages.
 */
export const invokedChartStyle = [
  '.statechart .state.invoked > rect { fill: #f0f9ff; stroke: #0369a1; stroke-dasharray: 6 3; }',
  '.statechart .state.invoked > text { fill: #075985; }',
  '.statechart .state.invoked.active > rect { fill: #e0f2fe; stroke: #0369a1; stroke-width: 2.4; }',
].join('\n');

/** Options of {@link renderChartSvg}. */
export type ChartSvgOptions = {
  /** Prefixes the ids inside the SVG, so several charts can share one page. Default: the chart id. */
  idPrefix?: string;
  /** An accessible title. Default: `<chart id> statechart`. */
  title?: string;
};

const escapeXml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&apos;');

/** Coordinates rounded to a tenth of a pixel: enough for the eye, stable in the committed files. */
const n = (value: number) => String(Math.round(value * 10) / 10);

type Point = { x: number; y: number };

/** An orthogonal route with its corners rounded. */
function roundedPath(points: Point[], radius = 6): string {
  const [first, ...rest] = points;
  if (!first) return '';
  let d = `M${n(first.x)},${n(first.y)}`;
  for (let index = 0; index < rest.length; index++) {
    const corner = rest[index] as Point;
    const next = rest[index + 1];
    const previous = (index === 0 ? first : rest[index - 1]) as Point;
    if (!next) {
      d += ` L${n(corner.x)},${n(corner.y)}`;
      break;
    }
    const before = Math.hypot(corner.x - previous.x, corner.y - previous.y);
    const after = Math.hypot(next.x - corner.x, next.y - corner.y);
    const r = Math.min(radius, before / 2, after / 2);
    const start = {
      x: corner.x - ((corner.x - previous.x) / (before || 1)) * r,
      y: corner.y - ((corner.y - previous.y) / (before || 1)) * r,
    };
    const end = { x: corner.x + ((next.x - corner.x) / (after || 1)) * r, y: corner.y + ((next.y - corner.y) / (after || 1)) * r };
    d += ` L${n(start.x)},${n(start.y)} Q${n(corner.x)},${n(corner.y)} ${n(end.x)},${n(end.y)}`;
  }
  return d;
}

function textLines(lines: string[], x: number, y: number, className: string, anchor: 'start' | 'middle'): string {
  const { lineHeight } = chartMetrics;
  const spans = lines.map((line, index) => `<tspan x="${n(x)}" y="${n(y + index * lineHeight)}">${escapeXml(line)}</tspan>`).join('');
  return `<text class="${className}" text-anchor="${anchor}">${spans}</text>`;
}

/**
 * Draws a placed chart as a standalone SVG: states as rounded boxes (final states with a double
 * border, compound states around their children), the initial state marked by a dot, arrows with
 * their labels, notes in a dashed box. Each state is a `<g class="state" data-state="<path>">`
 * and each arrow a `<g class="transition" data-source data-target>`, so a page can light up the
 * current state by adding the `active` class.
 *
 * @example
 * ```ts
 * writeFileSync('conversation.svg', renderChartSvg(await layoutChart(fullChart(definition))));
 * ```
 */
export function renderChartSvg(chart: PlacedChart, options: ChartSvgOptions = {}): string {
  const prefix = (options.idPrefix ?? chart.id).replace(/[^A-Za-z0-9_-]/g, '-');
  const title = options.title ?? `${chart.id} statechart`;
  const { stateFontSize, labelFontSize, lineHeight, compoundHeader, labelPaddingY, notePadding } = chartMetrics;
  const arrow = `${prefix}-arrow`;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="statechart" viewBox="0 0 ${n(chart.width)} ${n(chart.height)}" width="${n(chart.width)}" height="${n(chart.height)}" role="img" aria-labelledby="${prefix}-title">`,
    `<title id="${prefix}-title">${escapeXml(title)}</title>`,
    `<style>${chartStyle}${chart.states.some((state) => state.invoked) ? `\n${invokedChartStyle}` : ''}</style>`,
    `<defs><marker id="${arrow}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#64748b"/></marker></defs>`,
    '<rect width="100%" height="100%" fill="#ffffff"/>',
  );
  // Outer states first, so children and arrows are drawn over them.
  const states = [...chart.states].sort((a, b) => a.depth - b.depth);
  for (const state of states) {
    const classes = ['state', state.final ? 'final' : '', state.compound ? 'compound' : '', state.invoked ? 'invoked' : '']
      .filter(Boolean)
      .join(' ');
    const invoked = state.invoked
      ? `${state.invoked.id === undefined ? '' : ` data-invoke="${escapeXml(state.invoked.id)}"`} data-src="${escapeXml(state.invoked.src)}"`
      : '';
    out.push(`<g class="${classes}" data-state="${escapeXml(state.path)}"${invoked}>`);
    out.push(`<rect x="${n(state.x)}" y="${n(state.y)}" width="${n(state.width)}" height="${n(state.height)}" rx="8"/>`);
    if (state.final) {
      out.push(
        `<rect class="inner" x="${n(state.x + 4)}" y="${n(state.y + 4)}" width="${n(state.width - 8)}" height="${n(state.height - 8)}" rx="5"/>`,
      );
    }
    if (state.compound) {
      out.push(textLines([state.label], state.x + 12, state.y + compoundHeader / 2 + stateFontSize / 2 - 1, 'state-name', 'start'));
    } else {
      out.push(
        textLines([state.label], state.x + state.width / 2, state.y + state.height / 2 + stateFontSize * 0.36, 'state-name', 'middle'),
      );
    }
    out.push('</g>');
  }
  for (const initial of chart.initials) {
    out.push(`<g class="initial" data-state="${escapeXml(initial.state)}">`);
    out.push(`<circle cx="${n(initial.center.x)}" cy="${n(initial.center.y)}" r="${n(chartMetrics.initialSize / 2)}"/>`);
    if (initial.points.length > 1) out.push(`<path d="${roundedPath(initial.points)}" marker-end="url(#${arrow})"/>`);
    out.push('</g>');
  }
  for (const transition of chart.transitions) {
    out.push(`<g class="transition" data-source="${escapeXml(transition.source)}" data-target="${escapeXml(transition.target)}">`);
    if (transition.points.length > 1) out.push(`<path d="${roundedPath(transition.points)}" marker-end="url(#${arrow})"/>`);
    const label = transition.label;
    if (label) {
      out.push(`<rect x="${n(label.x)}" y="${n(label.y)}" width="${n(label.width)}" height="${n(label.height)}" rx="3"/>`);
      const firstBaseline = label.y + labelPaddingY + lineHeight / 2 + labelFontSize * 0.36;
      out.push(textLines(label.lines, label.x + label.width / 2, firstBaseline, 'transition-label', 'middle'));
    }
    out.push('</g>');
  }
  const notes = chart.notes;
  if (notes) {
    out.push(`<g class="note"${notes.events.length > 0 ? ` data-events="${escapeXml(notes.events.join(' '))}"` : ''}>`);
    out.push(`<rect x="${n(notes.x)}" y="${n(notes.y)}" width="${n(notes.width)}" height="${n(notes.height)}" rx="4"/>`);
    const firstBaseline = notes.y + notePadding + lineHeight / 2 + labelFontSize * 0.36;
    out.push(textLines(notes.lines, notes.x + notePadding, firstBaseline, 'note-text', 'start'));
    out.push('</g>');
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
