import type { EvalItemResult, EvalReport } from '../testing/eval/evaluate.js';
import { formatScore, formatUsd, itemErrorText } from './eval-table.js';

/**
 * What `actorloop eval` writes to `results.json` (and prints with `--json`): the report, and what
 * it was a report of — the module, the dataset file (`null` for the module's own array), the
 * threshold and whether the mean reached it, when it started, on which Node.
 */
export type EvalResults = EvalReport & {
  module: string;
  dataset: string | null;
  threshold: number;
  passed: boolean;
  startedAt: string;
  node: string;
};

/** Text for HTML (and the SVG in it): every character that could open markup or end an attribute, escaped. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

const cut = (text: string, length: number) => {
  const characters = Array.from(text);
  return characters.length <= length ? text : `${characters.slice(0, length - 1).join('')}…`;
};

/** A tick's value with the decimals its step needs (`0.00005`, never `0.0000500` or `5e-5`). */
function tickText(value: number, step: number): string {
  let decimals = 0;
  while (decimals < 12 && Math.abs(Number(step.toFixed(decimals)) - step) > step * 1e-6) decimals++;
  return value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/** Round ticks from 0 to at least `max`: 0, 2, 4, 6, 8 — or 0, 250, 500, 750. */
function ticksTo(max: number): number[] {
  const top = max > 0 ? max : 1;
  let step = 10 ** Math.floor(Math.log10(top / 4));
  for (const factor of [1, 2, 2.5, 5, 10]) {
    if (step * factor * 4 >= top) {
      step *= factor;
      break;
    }
  }
  const ticks: number[] = [];
  for (let tick = 0; tick < top + step / 2; tick += step) ticks.push(Number(tick.toPrecision(12)));
  if ((ticks.at(-1) ?? 0) < top) ticks.push(Number((ticks.length * step).toPrecision(12)));
  return ticks;
}

type Bar = { label: string; value: number; shown: string; tone: 'good' | 'fair' | 'poor' | 'plain' | 'error' };

/**
 * A horizontal bar chart as inline SVG: a row per bar (its label cut to fit, the whole of it in a
 * tooltip), grid lines at round ticks, the ticks' values and the axis' title below.
 */
function barChart(kind: string, title: string, axis: string, bars: Bar[], options: { max?: number; unit?: string }) {
  const width = 900;
  const labelWidth = 200;
  const valueWidth = 90;
  const plot = width - labelWidth - valueWidth;
  const row = 22;
  const top = 8;
  const height = top + Math.max(bars.length, 1) * row + 46;
  const ticks = options.max === undefined ? ticksTo(Math.max(0, ...bars.map((bar) => bar.value))) : ticksTo(options.max);
  const max = ticks.at(-1) ?? 1;
  const step = ticks[1] ?? max;
  const x = (value: number) => labelWidth + (plot * Math.max(0, value)) / max;
  const axisY = top + Math.max(bars.length, 1) * row + 4;
  const parts = [
    `<svg class="chart chart-${kind}" role="img" aria-label="${escapeHtml(title)}" viewBox="0 0 ${width} ${height}" width="100%" preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">`,
    `<title>${escapeHtml(title)}</title>`,
    ...ticks.map(
      (tick) =>
        `<line class="grid" x1="${x(tick)}" x2="${x(tick)}" y1="${top - 4}" y2="${axisY}"/>` +
        `<text class="tick" x="${x(tick)}" y="${axisY + 16}" text-anchor="middle">${escapeHtml(`${options.unit ?? ''}${tickText(tick, step)}`)}</text>`,
    ),
    `<line class="axis" x1="${labelWidth}" x2="${labelWidth + plot}" y1="${axisY}" y2="${axisY}"/>`,
    `<text class="axis-title" x="${labelWidth + plot / 2}" y="${axisY + 36}" text-anchor="middle">${escapeHtml(axis)}</text>`,
  ];
  bars.forEach((bar, index) => {
    const y = top + index * row;
    const barWidth = Math.max(bar.value > 0 ? 1 : 0, x(bar.value) - labelWidth);
    parts.push(
      `<g class="row"><title>${escapeHtml(`${bar.label}: ${bar.shown}`)}</title>` +
        `<text class="label" x="${labelWidth - 8}" y="${y + 15}" text-anchor="end">${escapeHtml(cut(bar.label, 28))}</text>` +
        `<rect class="bar ${bar.tone}" x="${labelWidth}" y="${y + 3}" width="${barWidth.toFixed(1)}" height="${row - 6}" rx="2"/>` +
        `<text class="value" x="${labelWidth + barWidth + 6}" y="${y + 15}">${escapeHtml(bar.shown)}</text></g>`,
    );
  });
  if (bars.length === 0) parts.push(`<text class="label" x="${labelWidth + 8}" y="${top + 15}">no items</text>`);
  parts.push('</svg>');
  return parts.join('\n');
}

const toneOfScore = (score: number): Bar['tone'] => (score >= 0.8 ? 'good' : score >= 0.5 ? 'fair' : 'poor');
const sortedDown = (bars: Bar[]) => [...bars].sort((a, b) => b.value - a.value);

/** A duration for people: `850 ms`, `12.3 s`, `4 min 5 s`. */
function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

function itemRow(item: EvalItemResult, scorerNames: string[]): string {
  const error = itemErrorText(item);
  const scores = scorerNames.map((name) => {
    const score = item.scores[name];
    const reason = item.reasons[name];
    const tone = score === undefined ? 'none' : toneOfScore(score);
    return `<td class="num score ${tone}"${reason === undefined ? '' : ` title="${escapeHtml(reason)}"`}>${formatScore(score)}</td>`;
  });
  const reasons = Object.entries(item.reasons).map(([name, reason]) => `<li><b>${escapeHtml(name)}</b>: ${escapeHtml(reason)}</li>`);
  const details = [
    error === '' ? '' : `<p class="error">${escapeHtml(error)}</p>`,
    reasons.length === 0 ? '' : `<ul class="reasons">${reasons.join('')}</ul>`,
    item.text === undefined || item.text === '' ? '' : `<details><summary>answer</summary><pre>${escapeHtml(item.text)}</pre></details>`,
  ].join('');
  return [
    `<tr${item.error === undefined ? '' : ' class="failed"'}>`,
    `<td class="id">${escapeHtml(item.id)}</td>`,
    ...scores,
    `<td class="num score ${toneOfScore(item.mean)}">${formatScore(item.mean)}</td>`,
    `<td>${escapeHtml(item.status ?? '-')}</td>`,
    `<td class="num">${item.usage ? item.usage.totalTokens.toLocaleString('en-US') : '-'}</td>`,
    `<td class="num">${formatUsd(item.costUsd)}</td>`,
    `<td class="num">${Math.round(item.durationMs).toLocaleString('en-US')}</td>`,
    `<td class="detail">${details}</td>`,
    '</tr>',
  ].join('');
}

const styles = `
:root { color-scheme: light; --good: #1a7f37; --fair: #9a6700; --poor: #cf222e; --plain: #0969da; --muted: #59636e; --line: #d1d9e0; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; background: #f6f8fa; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 16px; margin: 0 0 10px; }
.meta { color: var(--muted); margin: 0 0 20px; overflow-wrap: anywhere; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 16px 18px; margin: 0 0 16px; }
.summary { display: flex; flex-wrap: wrap; align-items: center; gap: 16px 32px; }
.overall { display: flex; align-items: baseline; gap: 12px; }
.overall .mean { font-size: 44px; font-weight: 700; line-height: 1; }
.mean.pass { color: var(--good); } .mean.fail { color: var(--poor); }
.verdict { display: inline-block; padding: 3px 10px; border-radius: 999px; color: #fff; font-weight: 600; letter-spacing: .04em; }
.verdict.pass { background: var(--good); }
.verdict.fail { background: var(--poor); }
.stats { display: flex; flex-wrap: wrap; gap: 8px 24px; margin: 0; }
.stats div { min-width: 90px; }
.stats dt { color: var(--muted); font-size: 12px; }
.stats dd { margin: 0; font-weight: 600; font-variant-numeric: tabular-nums; }
.note { color: var(--poor); margin: 8px 0 0; flex-basis: 100%; }
svg.chart { display: block; max-width: 900px; height: auto; font-size: 12px; }
svg .grid { stroke: #eaeef2; }
svg .axis { stroke: #8c959f; }
svg .tick, svg .axis-title { fill: var(--muted); }
svg .axis-title { font-weight: 600; }
svg .label, svg .value { fill: #1f2328; }
svg .bar.good { fill: var(--good); } svg .bar.fair { fill: #d4a72c; } svg .bar.poor, svg .bar.error { fill: var(--poor); }
svg .bar.plain { fill: var(--plain); }
table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 6px; border-bottom: 1px solid #eaeef2; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
th { font-size: 12px; color: var(--muted); font-weight: 600; }
th.id { width: 18%; } th.detail { width: 40%; }
.num { text-align: right; }
td.num { white-space: nowrap; }
td.score.good { color: var(--good); } td.score.fair { color: var(--fair); } td.score.poor { color: var(--poor); font-weight: 600; }
td.score.none { color: var(--muted); }
tr.failed td.id { border-left: 3px solid var(--poor); }
.error { color: var(--poor); margin: 0 0 4px; }
.reasons { margin: 0 0 4px; padding-left: 16px; color: var(--muted); }
details summary { cursor: pointer; color: var(--plain); }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0 0; font: 12px/1.4 ui-monospace, monospace; background: #f6f8fa; padding: 6px; border-radius: 4px; }
`;

/**
 * `report.html`: one self-contained page — inline CSS and SVG, no script, no request — with the
 * overall mean and whether it reached the threshold, a bar chart of each scorer's mean, one of each
 * item's cost (its tokens when the machine has no prices) and one of each item's duration, both
 * sorted, and the table of items with their errors, the scorers' reasons and the answers. Every
 * text from the eval (ids, answers, errors, names) is escaped; a Content-Security-Policy allows no
 * script at all.
 *
 * @example
 * ```ts
 * writeFileSync(join(out, 'report.html'), evalReportHtml(results));
 * ```
 */
export function evalReportHtml(results: EvalResults): string {
  const scorerNames = Object.keys(results.scorers);
  const { items } = results;
  const errors = items.filter((item) => item.error !== undefined).length;
  const priced = items.some((item) => item.costUsd !== undefined);
  const verdict = results.passed ? 'pass' : 'fail';
  const comparison = results.passed ? '≥' : '<';
  const scorerChart = barChart(
    'scorers',
    'Mean score per scorer',
    'mean score (0 to 1)',
    scorerNames.map((name) => {
      const { mean, scored } = results.scorers[name] as { mean: number; scored: number };
      return { label: name, value: mean, shown: `${mean.toFixed(2)} (${scored} scored)`, tone: toneOfScore(mean) };
    }),
    { max: 1 },
  );
  const costChart = priced
    ? barChart(
        'cost',
        'Cost per item',
        'cost per item (USD)',
        sortedDown(
          items.map((item) => ({
            label: item.id,
            value: item.costUsd ?? 0,
            shown: formatUsd(item.costUsd),
            tone: item.error === undefined ? 'plain' : 'error',
          })),
        ),
        { unit: '$' },
      )
    : barChart(
        'cost',
        'Tokens per item',
        'tokens per item (input + output; the machine has no prices, so no cost)',
        sortedDown(
          items.map((item) => ({
            label: item.id,
            value: item.usage?.totalTokens ?? 0,
            shown: item.usage ? item.usage.totalTokens.toLocaleString('en-US') : '-',
            tone: item.error === undefined ? 'plain' : 'error',
          })),
        ),
        {},
      );
  const latencyChart = barChart(
    'latency',
    'Latency per item',
    'latency per item (ms)',
    sortedDown(
      items.map((item) => ({
        label: item.id,
        value: item.durationMs,
        shown: `${Math.round(item.durationMs).toLocaleString('en-US')} ms`,
        tone: item.error === undefined ? 'plain' : 'error',
      })),
    ),
    {},
  );
  const stats: Array<[string, string]> = [
    ['items', String(items.length)],
    ['errors', String(errors)],
    ['tokens', results.usage.totalTokens.toLocaleString('en-US')],
    ['cost', formatUsd(results.costUsd)],
    ['duration', duration(results.durationMs)],
    ['threshold', String(results.threshold)],
  ];
  const stopped =
    results.stopped === undefined
      ? ''
      : `<p class="note">Stopped early (${results.stopped === 'budget' ? 'the budget was spent' : 'interrupted'}): the items not run count 0.</p>`;
  const meta = [
    results.dataset === null ? "the module's dataset" : `dataset ${results.dataset}`,
    `started ${results.startedAt}`,
    `Node ${results.node}`,
    `${scorerNames.length} scorer${scorerNames.length === 1 ? '' : 's'}`,
  ];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>Eval ${escapeHtml(results.module)}: ${results.mean.toFixed(2)} (${verdict})</title>
<style>${styles}</style>
</head>
<body>
<main>
<h1>Eval of ${escapeHtml(results.module)}</h1>
<p class="meta">${meta.map(escapeHtml).join(' · ')}</p>
<section class="summary">
<div class="overall"><span class="mean ${verdict}">${results.mean.toFixed(2)}</span><span>mean ${comparison} threshold ${escapeHtml(String(results.threshold))} <span class="verdict ${verdict}">${verdict.toUpperCase()}</span></span></div>
<dl class="stats">${stats.map(([name, value]) => `<div><dt>${name}</dt><dd>${escapeHtml(value)}</dd></div>`).join('')}</dl>
${stopped}
</section>
<section><h2>Scores per scorer</h2>
${scorerChart}
</section>
<section><h2>${priced ? 'Cost' : 'Tokens'} per item</h2>
${costChart}
</section>
<section><h2>Latency per item</h2>
${latencyChart}
</section>
<section><h2>Items</h2>
<table>
<thead><tr><th class="id">id</th>${scorerNames.map((name) => `<th class="num">${escapeHtml(name)}</th>`).join('')}<th class="num">mean</th><th>status</th><th class="num">tokens</th><th class="num">cost</th><th class="num">ms</th><th class="detail">error, reasons, answer</th></tr></thead>
<tbody>
${items.map((item) => itemRow(item, scorerNames)).join('\n')}
</tbody>
</table>
</section>
</main>
</body>
</html>
`;
}
