/**
 * The live viewer's page: one HTML document with its style and script inline (a nonce allows
 * them), loading nothing but the viewer's own endpoints — the charts, and the Server-Sent Events
 * of the selected run. Everything a run produced is set as text (`textContent`), never as HTML.
 */

import { chartStyle, invokedChartStyle } from '../chart/render-svg.js';
import { chartHolderStyle, lightChartScript } from './light-chart-script.js';
import { messagePartsScript, messagePartsStyle } from './message-parts-script.js';

const escapeHtml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

const style = `
:root { color-scheme: light; --ink: #1e293b; --muted: #64748b; --line: #e2e8f0; --panel: #ffffff; --bg: #f1f5f9; --accent: #b45309; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif; color: var(--ink); background: var(--bg); }
header { display: flex; align-items: center; gap: 16px; padding: 10px 16px; background: #0f172a; color: #f8fafc; }
header h1 { font-size: 16px; margin: 0; font-weight: 600; white-space: nowrap; }
#runs { display: flex; gap: 6px; flex-wrap: wrap; }
#runs button { border: 1px solid #334155; background: #1e293b; color: #e2e8f0; border-radius: 999px; padding: 3px 10px; font: inherit; font-size: 12px; cursor: pointer; }
#runs button[aria-pressed="true"] { background: #fde68a; color: #0f172a; border-color: #fde68a; }
#runs .badge { margin-left: 6px; opacity: 0.75; }
#runs button.agent { border-style: dashed; font-size: 11px; }
main { display: grid; grid-template-columns: minmax(0, 1fr) minmax(340px, 440px); gap: 12px; padding: 12px; align-items: start; }
section { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; min-width: 0; }
h2 { font-size: 12px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); margin: 0 0 8px; display: flex; gap: 8px; align-items: center; }
#chart-panel { position: sticky; top: 12px; }
#side { display: flex; flex-direction: column; gap: 12px; min-width: 0; }
#chart-tabs button { font: inherit; font-size: 12px; border: 1px solid var(--line); background: #fff; border-radius: 4px; padding: 1px 8px; cursor: pointer; text-transform: none; letter-spacing: 0; }
#chart-tabs button[aria-pressed="true"] { background: var(--ink); color: #fff; }
${chartHolderStyle}
#chart { max-height: calc(100vh - 124px); }
#status { display: flex; gap: 16px; flex-wrap: wrap; align-items: baseline; }
#status .value { font-size: 18px; font-weight: 700; }
#status .status { padding: 1px 8px; border-radius: 999px; background: #e2e8f0; font-size: 12px; }
#status .status[data-status="done"] { background: #dcfce7; }
#status .status[data-status="awaitingApproval"] { background: #fde68a; }
#status .status[data-status="halted"] { background: #fef3c7; }
#status .status[data-status="error"], #status .status[data-status="stopped"] { background: #fee2e2; }
#text { white-space: pre-wrap; min-height: 1.5em; max-height: 160px; overflow: auto; font-size: 13px; }
#text:empty::before { content: 'nothing streaming'; color: var(--muted); }
#log { list-style: none; margin: 0; padding: 0; max-height: 300px; overflow: auto; font-size: 12px; font-family: ui-monospace, 'DejaVu Sans Mono', monospace; }
#log li { display: grid; grid-template-columns: 56px 110px 1fr; gap: 8px; padding: 2px 0; border-bottom: 1px solid #f1f5f9; }
#log .time { color: var(--muted); text-align: right; }
#log .kind { font-weight: 600; }
#log li.error .text { color: #b91c1c; }
#log li[data-kind="state"] .text { color: var(--accent); font-weight: 600; }
${messagePartsStyle}
#messages { max-height: 340px; }
`;

/** The client: runs in the page, talks only to the viewer. */
const script = `
'use strict';
const view = { runId: decodeURIComponent(location.hash.slice(1)) || null, runs: [], kind: 'overview', chart: null, detail: null, source: null };
const $ = (id) => document.getElementById(id);
const el = (tag, className, text) => { const node = document.createElement(tag); if (className) node.className = className; if (text !== undefined) node.textContent = text; return node; };

function connect() {
  if (view.source) view.source.close();
  const query = view.runId ? '?run=' + encodeURIComponent(view.runId) : '';
  const source = new EventSource('events' + query);
  view.source = source;
  const on = (name, handler) => source.addEventListener(name, (message) => handler(JSON.parse(message.data)));
  on('runs', (runs) => {
    view.runs = runs;
    renderRuns();
    if (!view.runId && runs.length > 0) select((runs.filter((run) => !run.parent).at(-1) ?? runs[runs.length - 1]).id);
  });
  on('run', (detail) => {
    view.detail = detail;
    renderAll();
  });
  on('state', (change) => {
    if (!view.detail || change.run.id !== view.detail.id) return;
    Object.assign(view.detail, change.run, { activePaths: change.activePaths, previousPaths: change.previousPaths, cause: change.cause });
    renderStatus();
    highlight(change.activePaths, change.previousPaths, change.cause);
  });
  on('log', (entry) => {
    if (!view.detail) return;
    view.detail.log.push(entry);
    appendLog(entry);
  });
  on('text', (text) => { if (view.detail) { view.detail.text = text; $('text').textContent = text; } });
  on('messages', (messages) => { if (view.detail) { view.detail.messages = messages; renderMessages(); } });
}

function select(id) {
  if (view.runId === id && view.source) return;
  view.runId = id;
  history.replaceState(null, '', '#' + encodeURIComponent(id));
  view.detail = null;
  renderRuns();
  connect();
}

/** Whether a run ended (a host conversation may still start its next run). */
function ended(status) {
  return status === 'done' || status === 'halted' || status === 'error' || status === 'stopped';
}

/** The runs in tree order: each agent call's child right after the run that started it, with its depth. */
function treeOrder(runs) {
  const byParent = new Map();
  const ids = new Set(runs.map((run) => run.id));
  for (const run of runs) {
    const parent = run.parent && ids.has(run.parent) ? run.parent : null;
    if (!byParent.has(parent)) byParent.set(parent, []);
    byParent.get(parent).push(run);
  }
  const ordered = [];
  const visit = (parent, depth) => {
    for (const run of byParent.get(parent) || []) {
      ordered.push({ run, depth });
      visit(run.id, depth + 1);
    }
  };
  visit(null, 0);
  return ordered;
}

function renderRuns() {
  const list = $('runs');
  list.replaceChildren(...treeOrder(view.runs).map(({ run, depth }) => {
    const button = el('button', depth > 0 ? 'agent' : null, (depth > 0 ? '↳ '.repeat(depth) : '') + run.label);
    button.type = 'button';
    button.dataset.run = run.id;
    if (run.parent) button.dataset.parent = run.parent;
    button.dataset.depth = String(depth);
    button.setAttribute('aria-pressed', String(run.id === view.runId));
    button.append(el('span', 'badge', ended(run.status) ? run.status : run.state));
    button.addEventListener('click', () => select(run.id));
    return button;
  }));
  if (view.runs.length === 0) list.append(el('span', 'empty', 'no run yet: viewer.watch(actor)'));
}

function renderAll() {
  renderStatus();
  loadChart();
  $('text').textContent = view.detail.text;
  $('log').replaceChildren();
  for (const entry of view.detail.log) appendLog(entry);
  renderMessages();
}

function renderStatus() {
  const detail = view.detail;
  document.body.dataset.run = detail.id;
  document.body.dataset.state = detail.state;
  document.body.dataset.status = detail.status;
  const status = $('status');
  const badge = el('span', 'status', detail.status);
  badge.dataset.status = detail.status;
  status.replaceChildren(el('span', 'value', detail.state), badge, el('span', 'empty', detail.label));
  const button = document.querySelector('#runs button[data-run="' + CSS.escape(detail.id) + '"] .badge');
  if (button) button.textContent = ended(detail.status) ? detail.status : detail.state;
}

async function loadChart() {
  const holder = $('chart');
  holder.className = view.kind;
  const detail = view.detail;
  if (!detail.chart) { holder.replaceChildren(el('p', 'empty', 'No chart: the machine of this run is not known.')); return; }
  const key = detail.chart + '/' + view.kind;
  if (view.chart !== key) {
    const response = await fetch('charts/' + encodeURIComponent(detail.chart) + '/' + view.kind + '.svg');
    if (!response.ok) { holder.replaceChildren(el('p', 'empty', 'The chart could not be drawn: ' + await response.text())); return; }
    // The chart's own <style> is in this page already (the page's policy would refuse it).
    holder.innerHTML = (await response.text()).replace(/<style>[\\s\\S]*?<\\/style>/, '');
    fitChart(holder);
    view.chart = key;
  }
  highlight(view.detail.activePaths, view.detail.previousPaths, view.detail.cause);
}

function highlight(paths, previous, cause) {
  lightChart($('chart'), paths, previous, cause);
}

function appendLog(entry) {
  const log = $('log');
  const started = view.detail.startedAt;
  const item = el('li', entry.isError ? 'error' : '');
  item.dataset.kind = entry.kind;
  item.append(el('span', 'time', ((entry.at - started) / 1000).toFixed(2) + 's'), el('span', 'kind', entry.kind), el('span', 'text', entry.text));
  const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
  log.append(item);
  if (atBottom) log.scrollTop = log.scrollHeight;
}

function renderMessages() {
  const list = $('messages');
  const messages = view.detail.messages;
  list.replaceChildren(...messages.map((message) => {
    const item = el('li');
    item.dataset.role = message.role;
    item.append(el('span', 'role', message.role));
    item.append(...partNodesOf(message));
    return item;
  }));
  if (messages.length === 0) list.append(el('li', 'empty', 'no messages yet'));
  list.scrollTop = list.scrollHeight;
}

for (const button of document.querySelectorAll('#chart-tabs button')) {
  button.addEventListener('click', () => {
    view.kind = button.dataset.kind;
    for (const other of document.querySelectorAll('#chart-tabs button')) other.setAttribute('aria-pressed', String(other === button));
    if (view.detail) loadChart();
  });
}
renderRuns();
connect();
`;

/** The page, with the nonce that lets its inline style and script run. */
export function viewerPage(options: { title: string; nonce: string }): string {
  const { title, nonce } = options;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<style nonce="${nonce}">${style}
${chartStyle}
${invokedChartStyle}</style>
</head>
<body>
<header><h1>${escapeHtml(title)}</h1><nav id="runs" aria-label="Runs"></nav></header>
<main>
<section id="chart-panel"><h2>Statechart <span id="chart-tabs"><button type="button" data-kind="overview" aria-pressed="true">overview</button> <button type="button" data-kind="full" aria-pressed="false">full chart</button></span></h2><div id="chart"><p class="empty">Waiting for a run…</p></div></section>
<div id="side">
<section><h2>Now</h2><div id="status"><span class="empty">no run selected</span></div></section>
<section><h2>Response being streamed</h2><div id="text"></div></section>
<section><h2>Event log</h2><ol id="log"></ol></section>
<section><h2>Messages</h2><ol id="messages"></ol></section>
</div>
</main>
<script nonce="${nonce}">${lightChartScript}
${messagePartsScript}
${script}</script>
</body>
</html>
`;
}
