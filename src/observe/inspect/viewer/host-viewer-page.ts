/**
 * The host viewer's page: one HTML document with its style and script inline (a nonce allows
 * them), talking only to the viewer's own routes. Everything a conversation holds is set as text
 * (`textContent`), never as HTML; only the chart SVG the viewer drew itself is inserted as markup.
 */

import { chartStyle, invokedChartStyle } from '../../chart/render-svg.js';
import { chartHolderStyle, lightChartScript } from '../light-chart-script.js';
import { messagePartsScript, messagePartsStyle } from '../message-parts-script.js';

const escapeHtml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

const style = `
:root { color-scheme: light; --ink: #1e293b; --muted: #64748b; --line: #e2e8f0; --panel: #ffffff; --bg: #f1f5f9; --accent: #b45309; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif; color: var(--ink); background: var(--bg); }
header { display: flex; align-items: center; gap: 16px; padding: 10px 16px; background: #0f172a; color: #f8fafc; flex-wrap: wrap; }
header h1 { font-size: 16px; margin: 0; font-weight: 600; white-space: nowrap; }
header label { font-size: 12px; color: #cbd5e1; display: flex; gap: 6px; align-items: center; }
#picker { font: inherit; font-size: 13px; max-width: 420px; }
#following { font-size: 12px; padding: 1px 8px; border-radius: 999px; background: #334155; }
#following[data-pinned="false"] { background: #166534; }
#error { margin: 12px 12px 0; padding: 8px 12px; border-radius: 6px; background: #fee2e2; color: #991b1b; border: 1px solid #fecaca; }
#error:empty { display: none; }
main { display: grid; grid-template-columns: minmax(0, 1fr) minmax(360px, 460px); gap: 12px; padding: 12px; align-items: start; }
section { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; min-width: 0; }
h2 { font-size: 12px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); margin: 0 0 8px; display: flex; gap: 8px; align-items: center; }
#chart-panel { position: sticky; top: 12px; }
#side { display: flex; flex-direction: column; gap: 12px; min-width: 0; }
#chart-tabs button { font: inherit; font-size: 12px; border: 1px solid var(--line); background: #fff; border-radius: 4px; padding: 1px 8px; cursor: pointer; text-transform: none; letter-spacing: 0; }
#chart-tabs button[aria-pressed="true"] { background: var(--ink); color: #fff; }
${chartHolderStyle}
#chart { max-height: calc(100vh - 120px); }
#chart .missing-package { padding: 8px 12px; border: 1px solid #fde68a; border-radius: 6px; background: #fffbeb; }
#chart .missing-package p { margin: 0 0 8px; }
#chart .missing-package pre { margin: 0; padding: 6px 10px; background: #0f172a; color: #f8fafc; border-radius: 4px; font-family: ui-monospace, 'DejaVu Sans Mono', monospace; font-size: 13px; user-select: all; }
#status { display: flex; gap: 12px; flex-wrap: wrap; align-items: baseline; }
#status .value { font-size: 18px; font-weight: 700; }
#status .status { padding: 1px 8px; border-radius: 999px; background: #e2e8f0; font-size: 12px; }
#status .status[data-status="done"] { background: #dcfce7; }
#status .status[data-status="awaitingApproval"] { background: #fde68a; }
#status .status[data-status="halted"] { background: #fef3c7; }
#status .status[data-status="error"] { background: #fee2e2; }
#travel { display: grid; grid-template-columns: 1fr auto auto; gap: 8px; align-items: center; }
#slider { width: 100%; }
#step-label { grid-column: 1 / -1; font-size: 12px; color: var(--muted); }
button.control { font: inherit; font-size: 13px; border: 1px solid #94a3b8; background: #fff; border-radius: 6px; padding: 2px 10px; cursor: pointer; }
button.control:disabled { opacity: 0.45; cursor: default; }
button.control[aria-pressed="true"] { background: #166534; color: #fff; border-color: #166534; }
button.approve { border-color: #16a34a; }
button.deny, #cancel { border-color: #dc2626; }
#approvals { list-style: none; margin: 0 0 8px; padding: 0; }
#approvals li { display: flex; gap: 8px; align-items: center; padding: 4px 0; border-bottom: 1px solid #f1f5f9; flex-wrap: wrap; }
#approvals .call { font-family: ui-monospace, 'DejaVu Sans Mono', monospace; font-size: 12px; flex: 1; min-width: 0; overflow-wrap: anywhere; }
#usage { font-size: 13px; }
#text { white-space: pre-wrap; min-height: 1.5em; max-height: 140px; overflow: auto; font-size: 13px; }
#text:empty::before { content: 'nothing streaming'; color: var(--muted); }
#text[data-known="false"]:empty::before { content: 'not known: streamed before the run this page follows'; }
h2 .when { font-size: 11px; text-transform: none; letter-spacing: 0; font-weight: 600; padding: 0 7px; border-radius: 999px; background: #dcfce7; color: #166534; }
h2 .when[data-past] { background: #fde68a; color: #78350f; }
#agents, #agents ul { list-style: none; margin: 0; padding-left: 14px; font-size: 13px; }
#agents { padding-left: 0; }
#agents .agent-status { margin-left: 6px; font-size: 11px; color: var(--muted); }
${messagePartsStyle}
#messages { max-height: 380px; }
#output { margin: 8px 0 0; padding: 6px 10px; background: #f8fafc; border: 1px solid var(--line); border-radius: 6px; font-family: ui-monospace, 'DejaVu Sans Mono', monospace; font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 200px; overflow: auto; }
#output:empty { display: none; }
#conversations { list-style: none; margin: 0; padding: 0; }
#conversations > li { padding: 6px 0; border-bottom: 1px solid #f1f5f9; }
#conversations .head { display: flex; gap: 8px; align-items: baseline; flex-wrap: wrap; }
#conversations .path { font-weight: 700; font-family: ui-monospace, 'DejaVu Sans Mono', monospace; font-size: 13px; }
#conversations .state { font-size: 13px; }
#conversations .status { padding: 0 7px; border-radius: 999px; background: #e2e8f0; font-size: 12px; }
#conversations .status[data-status="awaitingApproval"] { background: #fde68a; }
#conversations .status[data-status="done"] { background: #dcfce7; }
#conversations .status[data-status="error"] { background: #fee2e2; }
#conversations .usage { font-size: 12px; color: var(--muted); }
#conversations .streamed { white-space: pre-wrap; font-size: 13px; margin: 4px 0 0; padding: 4px 8px; border-left: 3px solid #7dd3fc; background: #f0f9ff; max-height: 100px; overflow: auto; }
#conversations .streamed:empty { display: none; }
#conversations details { margin-top: 4px; font-size: 12px; }
#conversations details summary { cursor: pointer; color: var(--muted); }
#conversations ol.conversation-messages { list-style: none; margin: 4px 0 0; padding: 0; max-height: 240px; overflow: auto; }
#conversations ol.conversation-messages li { padding: 3px 0; border-bottom: 1px solid #f1f5f9; }
#conversations ol.conversation-messages .role { display: inline-block; min-width: 60px; font-size: 11px; font-weight: 700; text-transform: uppercase; color: var(--muted); }
#conversations ol.conversation-messages .part { white-space: pre-wrap; font-size: 12px; }
#log { list-style: none; margin: 0; padding: 0; max-height: 260px; overflow: auto; font-size: 12px; font-family: ui-monospace, 'DejaVu Sans Mono', monospace; }
#log li { padding: 2px 0; border-bottom: 1px solid #f1f5f9; overflow-wrap: anywhere; }
#log .type { font-weight: 700; margin-right: 6px; }
#log .path { color: var(--accent); margin-right: 6px; }
body[data-workflow="true"] .conversation-only { display: none; }
body[data-workflow="false"] .workflow-only { display: none; }
body[data-workflow="true"][data-messages="0"] #messages-panel { display: none; }
`;

/** The client: runs in the page, talks only to the viewer's routes under its base path. */
const script = `
'use strict';
const config = JSON.parse(document.getElementById('viewer-config').textContent);
const api = (path) => config.base + '/api/conversations' + path;
const view = {
  id: null, pinned: false, list: [], steps: [], step: null, current: null, shown: null,
  source: null, agents: [], text: '', texts: {}, items: [], kind: 'overview', chart: null, chartId: null, log: [], causes: {}, seen: null, refreshing: null, again: false,
};
const $ = (id) => document.getElementById(id);
const el = (tag, className, text) => { const node = document.createElement(tag); if (className) node.className = className; if (text !== undefined) node.textContent = text; return node; };
const enc = encodeURIComponent;

function showError(text) { $('error').textContent = text; }
function clearError() { $('error').textContent = ''; }

/** A route's JSON, or an Error carrying the problem's detail (and status). */
async function call(path, init) {
  const response = await fetch(path, init);
  const text = await response.text();
  let body;
  try { body = text === '' ? null : JSON.parse(text); } catch { body = null; }
  if (!response.ok) {
    const error = new Error(body && typeof body.detail === 'string' ? body.detail : response.status + ' ' + response.statusText);
    error.status = response.status;
    throw error;
  }
  return body;
}

function post(action, body) {
  return call(api('/' + enc(view.id) + '/' + action), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

function activePaths(value, prefix) {
  prefix = prefix || '';
  if (typeof value === 'string') return [prefix + value];
  if (typeof value !== 'object' || value === null) return [];
  const paths = [];
  for (const key of Object.keys(value)) paths.push(prefix + key, ...activePaths(value[key], prefix + key + '.'));
  return paths;
}
const stateLabel = (value) => activePaths(value).at(-1) || String(value);
/** A value in words, parallel regions side by side: researching (left: found, right: asking). */
function valueText(value) {
  if (typeof value !== 'object' || value === null) return String(value);
  const keys = Object.keys(value);
  const inner = (key) => typeof value[key] === 'object' && value[key] !== null ? valueText(value[key]) : String(value[key]);
  if (keys.length === 1) return keys[0] + ' › ' + inner(keys[0]);
  return keys.map((key) => key + ': ' + inner(key)).join(', ');
}
/** A workflow's value with its top state first: researching (left: found, right: asking). */
function workflowValueText(value) {
  if (typeof value !== 'object' || value === null) return String(value);
  const keys = Object.keys(value);
  if (keys.length !== 1) return valueText(value);
  const inner = value[keys[0]];
  return keys[0] + (typeof inner === 'object' && inner !== null && Object.keys(inner).length > 1 ? ' (' + valueText(inner) + ')' : ' › ' + valueText(inner));
}
const shownValue = (value) => config.workflow ? workflowValueText(value) : stateLabel(value);
const pathKey = (path) => path.join('/');

// ---------------------------------------------------------------------------------------------
// Which conversation: the newest, unless one is pinned.

async function pollList() {
  try {
    const list = await call(api('?limit=1000'));
    view.list = list.slice().sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : -1));
    renderPicker();
    const newest = view.list[0];
    if (!view.pinned && newest && newest.id !== view.id) await select(newest.id, false);
    else {
      // Another process may write the selected conversation: its stored update shows here.
      const mine = view.list.find((one) => one.id === view.id);
      if (mine && view.seen !== null && mine.updatedAt !== view.seen) refresh();
    }
  } catch (error) {
    showError('cannot list the conversations: ' + error.message);
  } finally {
    setTimeout(pollList, 1000);
  }
}

function renderPicker() {
  const picker = $('picker');
  const options = [el('option', null, 'newest (follow)')];
  options[0].value = '';
  for (const one of view.list) {
    const option = el('option', null, (one.label && one.label !== one.id ? one.label + ' (' + one.id + ')' : one.id) + ' · ' + one.status);
    option.value = one.id;
    options.push(option);
  }
  if (view.id && !view.list.some((one) => one.id === view.id)) {
    const option = el('option', null, view.id + ' · (not stored)');
    option.value = view.id;
    options.push(option);
  }
  picker.replaceChildren(...options);
  picker.value = view.pinned ? view.id : '';
  const following = $('following');
  following.dataset.pinned = String(view.pinned);
  following.textContent = view.pinned ? 'pinned' : 'following the newest';
}

async function select(id, pinned) {
  view.pinned = pinned;
  if (pinned) history.replaceState(null, '', '#' + enc(id));
  else if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  if (view.id === id) { renderPicker(); return; }
  view.id = id;
  view.step = null;
  view.steps = [];
  view.current = null;
  view.shown = null;
  view.seen = null;
  view.agents = [];
  view.text = '';
  view.texts = {};
  view.items = [];
  view.log = [];
  view.causes = {};
  renderLog();
  if (view.source) { view.source.close(); view.source = null; }
  renderPicker();
  clearError();
  // Nothing of the conversation shown before stays on the page under the new id: its status, or an
  // approve button that would act on it.
  render();
  document.body.dataset.conversation = id;
  const found = await refresh();
  if (found && view.id === id) connect(id);
}

function connect(id) {
  const source = new EventSource(api('/' + enc(id) + '/events'));
  view.source = source;
  source.onmessage = (message) => {
    if (view.id !== id) return;
    let item;
    try { item = JSON.parse(message.data); } catch { return; }
    keep(item);
    logged(item.event);
    streamed(item.event);
  };
}

/** What of a conversation's events changes what its view shows beyond the text: the page reads the view again. */
const quietTypes = ['text.delta', 'reasoning.delta', 'tool.call.delta', 'object.delta', 'usage', 'tool.progress'];

function streamed(event) {
  // A workflow's stream: its conversations' events come wrapped with their path.
  if (config.workflow && event.type === 'agent.event') {
    const key = pathKey(event.path);
    const inner = event.event;
    if (textTypes.includes(inner.type)) { view.texts[key] = nextText(view.texts[key] || '', inner); renderConversations(); }
    if (!quietTypes.includes(inner.type)) refresh();
    return;
  }
  switch (event.type) {
    case 'request.started': case 'request.retry': case 'text.delta': view.text = nextText(view.text, event); renderText(); break;
    case 'agent.started': case 'agent.finished': case 'agent.event': agentEvent([], event); renderAgents(); break;
    case 'state': case 'tool.approval.requested': refresh(); break;
    default: break;
  }
}

/** Reads the selected conversation again (its view and its steps); one read at a time, the last asked for wins. */
async function refresh() {
  if (view.refreshing) { view.again = true; return view.refreshing; }
  view.refreshing = (async () => {
    let found = true;
    do {
      view.again = false;
      found = await load();
    } while (view.again);
    return found;
  })();
  try { return await view.refreshing; } finally { view.refreshing = null; }
}

async function load() {
  const id = view.id;
  if (!id) return false;
  try {
    const [current, steps] = await Promise.all([call(api('/' + enc(id))), call(api('/' + enc(id) + '/history'))]);
    if (view.id !== id) return true;
    view.current = current;
    view.steps = steps;
    drawnAs(current);
    view.seen = current.updatedAt;
    if (view.step === null) view.shown = current;
    render();
    return true;
  } catch (error) {
    if (view.id !== id) return true;
    showError((error.status === 404 ? 'No such conversation: ' : 'Cannot read the conversation: ') + error.message);
    view.current = null;
    view.shown = null;
    view.steps = [];
    render();
    return false;
  }
}

/**
 * One viewer shows conversations and workflows, each drawn with its own machine: a view says which
 * chart (and whether it is a workflow's); a new one redraws the chart and switches the panels.
 */
function drawnAs(current) {
  if (typeof current.workflow === 'boolean' && current.workflow !== config.workflow) {
    config.workflow = current.workflow;
    document.body.dataset.workflow = String(current.workflow);
  }
  if (typeof current.chart === 'string' && current.chart !== view.chartId) {
    view.chartId = current.chart;
    view.chart = null;
    loadChart();
  }
}

// ---------------------------------------------------------------------------------------------
// The event log: what the followed run did, newest last (deltas left out: the text panel has them).

const unlogged = ['text.delta', 'reasoning.delta', 'tool.call.delta', 'object.delta'];
const maxLogged = 300;

function logLine(event) {
  switch (event.type) {
    case 'state': return valueText(event.value) + ' · ' + event.status;
    case 'request.started': return 'attempt ' + (event.attempt ?? 1);
    case 'request.retry': return 'attempt ' + event.attempt + ' in ' + event.delayMs + ' ms' + (event.error && event.error.message ? ' · ' + event.error.message : '');
    case 'tool.result': return event.name + ' (' + event.toolCallId + ')' + (event.isError ? ' · error' : '');
    case 'tool.started': case 'tool.approval.requested': return (event.name || '') + ' (' + event.toolCallId + ')';
    case 'agent.started': case 'agent.finished': return (event.agent || '') + ' (' + event.toolCallId + ')';
    case 'event.rejected': return event.eventType + ': ' + event.message;
    default: return '';
  }
}

function logged(event) {
  let path = [];
  let inner = event;
  while (inner.type === 'agent.event' && inner.event) { path = path.concat(inner.path); inner = inner.event; }
  if (unlogged.includes(inner.type)) return;
  view.log.push({ path: path.join('/'), type: inner.type, line: logLine(inner) });
  if (view.log.length > maxLogged) view.log.splice(0, view.log.length - maxLogged);
  renderLog();
}

function renderLog() {
  const list = $('log');
  const atEnd = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
  list.replaceChildren(...view.log.map((entry) => {
    const item = el('li');
    item.dataset.type = entry.type;
    if (entry.path) item.append(el('span', 'path', entry.path));
    item.append(el('span', 'type', entry.type), entry.line);
    return item;
  }));
  if (view.log.length === 0) list.append(el('li', 'empty', 'no events yet'));
  if (atEnd) list.scrollTop = list.scrollHeight;
}

// ---------------------------------------------------------------------------------------------
// The text streamed at a step.

/** The text of the response after one more event: '' at a request, and at a retry that drops what came. */
function nextText(text, event) {
  if (event.type === 'text.delta') return text + event.delta;
  if (event.type === 'request.started' || (event.type === 'request.retry' && event.discardPartial)) return '';
  return text;
}

const textTypes = ['request.started', 'request.retry', 'text.delta', 'request.finished', 'request.interrupted', 'state'];

/**
 * Keeps what a past step's text is made of. A stream id's first number is the stored step (revision)
 * whose write carries the event: what streamed while step n was the newest has revision n + 1.
 */
function keep(item) {
  const revision = Number(String(item.id).split('.')[0]);
  // A step a cancel made: the chart says cancel once, in a note, which is what lights then.
  if (item.event.type === 'state' && item.event.output && item.event.output.reason === 'cancelled') view.causes[revision] = 'cancel';
  // A workflow's: each conversation's text by its path; its own state changes bound every one's steps.
  if (config.workflow && item.event.type === 'agent.event') {
    if (textTypes.includes(item.event.event.type)) view.items.push({ revision, path: pathKey(item.event.path), event: item.event.event });
    return;
  }
  if (!textTypes.includes(item.event.type)) return;
  view.items.push({ revision, path: null, event: item.event });
}

/** The kept items of one conversation of a workflow (and the workflow's state changes), or of the conversation followed. */
const itemsOf = (key) => key === undefined ? view.items : view.items.filter((item) => item.path === key || item.path === null);

/** Where step seq ends in the kept items: at the state change that made the step after it. */
function stepEnd(items, seq) {
  const index = items.findIndex((item) => item.revision > seq + 1 || (item.revision === seq + 1 && item.event.type === 'state'));
  return index < 0 ? items.length : index;
}

/**
 * The text being streamed at step seq: what had come of the response when the run left that step,
 * or '' when no response was streaming then (none open as the step began, none started in it).
 * null: the step is older than the stream this page follows (it starts at the run's first event).
 */
function textAt(seq, key) {
  const items = itemsOf(key);
  if (view.items.length > 0 && view.items[0].revision > seq) return null;
  const start = stepEnd(items, seq - 1);
  const end = stepEnd(items, seq);
  let text = '';
  let open = false;
  let streaming = false;
  for (let index = 0; index < end; index++) {
    if (index === start) streaming = open;
    const event = items[index].event;
    text = nextText(text, event);
    if (event.type === 'request.started') open = true;
    else if (event.type === 'request.finished' || event.type === 'request.interrupted') open = false;
    if (index >= start && (event.type === 'request.started' || event.type === 'text.delta')) streaming = true;
  }
  if (start >= end) streaming = open;
  return streaming ? text : '';
}

/** Live: the text streaming now. At a past step: the text streaming then, and the headings say which step. */
function renderText() {
  const past = view.step !== null;
  const text = config.workflow ? '' : past ? textAt(view.step) : view.text;
  const box = $('text');
  box.textContent = text || '';
  box.dataset.known = String(text !== null);
  box.dataset.step = past ? String(view.step) : 'live';
  for (const when of document.querySelectorAll('h2 .when')) {
    when.textContent = past ? 'at step ' + view.step : 'now';
    when.toggleAttribute('data-past', past);
  }
}

// ---------------------------------------------------------------------------------------------
// Time travel.

async function showStep(index) {
  const step = view.steps[index];
  if (!step) return;
  const id = view.id;
  view.step = step.seq;
  renderTravel();
  renderText();
  try {
    const shown = await call(api('/' + enc(id) + '/steps/' + step.seq));
    if (view.id !== id || view.step !== step.seq) return;
    clearError();
    view.shown = shown;
    render();
  } catch (error) {
    showError('Cannot show step ' + step.seq + ': ' + error.message);
  }
}

function goLive() {
  view.step = null;
  view.shown = view.current;
  render();
  refresh();
}

// ---------------------------------------------------------------------------------------------
// Rendering.

function render() {
  renderStatus();
  renderConversations();
  renderText();
  renderTravel();
  renderControls();
  renderMessages();
  renderUsage();
  renderAgents();
  lightShown();
}

function renderStatus() {
  const shown = view.shown;
  const status = $('status');
  // The step of what is on screen: while a past step loads, the page still shows the one before.
  document.body.dataset.step = view.step === null ? 'live' : String(shown?.seq ?? view.step);
  if (!shown) {
    delete document.body.dataset.state;
    delete document.body.dataset.status;
    document.body.dataset.messages = '0';
    status.replaceChildren(el('span', 'empty', view.id ? 'nothing to show for ' + view.id : 'no conversation yet'));
    return;
  }
  document.body.dataset.state = shownValue(shown.value);
  document.body.dataset.status = shown.status;
  document.body.dataset.messages = String(shown.messages.length);
  const badge = el('span', 'status', shown.status);
  badge.dataset.status = shown.status;
  status.replaceChildren(el('span', 'value', shownValue(shown.value)), badge, el('span', 'empty', shown.id + (shown.seq === undefined ? '' : ' · step ' + shown.seq)));
  // A workflow that ended: what its machine gave.
  $('output').textContent = shown.output === undefined ? '' : 'output ' + JSON.stringify(shown.output, null, 2);
}

/** The conversations a workflow runs at the step shown: each with its state, its text streamed then, its messages. */
function renderConversations() {
  if (!config.workflow) return;
  const list = $('conversations');
  const conversations = (view.shown && view.shown.conversations) || [];
  document.body.dataset.conversations = conversations.map((one) => pathKey(one.path) + ':' + stateLabel(one.value)).join(' ');
  const open = new Set([...list.querySelectorAll('li[data-path] details[open]')].map((node) => node.closest('li').dataset.path));
  list.replaceChildren(...conversations.map((one) => {
    const key = pathKey(one.path);
    const item = el('li');
    item.dataset.path = key;
    const head = el('div', 'head');
    const badge = el('span', 'status', one.status);
    badge.dataset.status = one.status;
    head.append(el('span', 'path', key));
    // A status that says the state (awaitingApproval) is said once.
    if (valueText(one.value) !== one.status) head.append(el('span', 'state', valueText(one.value)));
    head.append(badge);
    const usage = one.usage ? el('span', 'usage', one.usage.totalTokens + ' tokens') : null;
    if (usage) head.append(usage);
    const text = view.step === null ? (view.texts[key] || '') : (textAt(view.step, key) || '');
    const details = el('details');
    details.open = open.has(key);
    details.append(el('summary', null, one.messages.length + (one.messages.length === 1 ? ' message' : ' messages')));
    const messages = el('ol', 'conversation-messages');
    messages.append(...one.messages.map((message) => {
      const line = el('li');
      line.append(el('span', 'role', message.role), ...partNodesOf(message));
      return line;
    }));
    details.append(messages);
    item.append(head, el('div', 'streamed', text), details);
    return item;
  }));
  if (conversations.length === 0) list.append(el('li', 'empty', view.shown ? 'no conversation running' + (view.step === null ? '' : ' at this step') : 'nothing to show'));
}

function stepIndex() {
  if (view.step === null) return view.steps.length - 1;
  return view.steps.findIndex((step) => step.seq === view.step);
}

function renderTravel() {
  const slider = $('slider');
  const count = view.steps.length;
  slider.min = '0';
  slider.max = String(Math.max(count - 1, 0));
  slider.disabled = count === 0;
  const index = stepIndex();
  slider.value = String(Math.max(index, 0));
  const live = $('live');
  live.setAttribute('aria-pressed', String(view.step === null));
  live.disabled = !view.id;
  $('fork').disabled = count === 0 || !view.current;
  const step = view.steps[index];
  $('step-label').textContent = count === 0
    ? 'no stored steps'
    : (view.step === null ? 'live · ' : 'step ') + (index + 1) + ' of ' + count + (step ? ' · seq ' + step.seq + ' · ' + shownValue(step.state) + ' · ' + step.status + ' · ' + new Date(step.at).toLocaleTimeString() : '');
}

function renderControls() {
  const current = view.current;
  const live = view.step === null;
  const waiting = Boolean(current && live && current.status === 'awaitingApproval');
  const list = $('approvals');
  const pending = current && live ? current.pendingApprovals : [];
  list.replaceChildren(...pending.map((approval) => {
    const item = el('li');
    item.dataset.toolCallId = approval.toolCallId;
    item.append(el('span', 'call', (approval.path && approval.path.length ? approval.path.join(' / ') + ' / ' : '') + approval.name + '(' + JSON.stringify(approval.args) + ')'));
    const approve = el('button', 'control approve', 'approve');
    approve.type = 'button';
    approve.disabled = !waiting;
    approve.addEventListener('click', () => act('approve', { toolCallId: approval.toolCallId }));
    const deny = el('button', 'control deny', 'deny');
    deny.type = 'button';
    deny.disabled = !waiting;
    deny.addEventListener('click', () => act('deny', { toolCallId: approval.toolCallId, reason: 'denied in the viewer' }));
    item.append(approve, deny);
    return item;
  }));
  if (pending.length === 0) list.append(el('li', 'empty', live ? 'no tool call waits for approval' : 'back to live to approve or deny'));
  $('cancel').disabled = !(current && live && (current.status === 'running' || current.status === 'awaitingApproval'));
}

async function act(action, body) {
  for (const button of document.querySelectorAll('#controls button')) button.disabled = true;
  try {
    const after = await post(action, body);
    clearError();
    if (view.id === after.id) { view.current = after; if (view.step === null) view.shown = after; render(); }
  } catch (error) {
    showError(action + ' failed: ' + error.message);
  }
  await refresh();
}

async function fork() {
  const index = stepIndex();
  const step = view.steps[index];
  if (!step) return;
  try {
    const created = await post('fork', { seq: step.seq });
    clearError();
    await select(created.id, true);
  } catch (error) {
    showError('fork failed: ' + error.message);
  }
}

function renderMessages() {
  const list = $('messages');
  const messages = view.shown ? view.shown.messages : [];
  list.replaceChildren(...messages.map((message) => {
    const item = el('li');
    item.dataset.role = message.role;
    item.append(el('span', 'role', message.role));
    item.append(...partNodesOf(message));
    return item;
  }));
  if (messages.length === 0) list.append(el('li', 'empty', 'no messages'));
  list.scrollTop = list.scrollHeight;
}

function renderUsage() {
  const usage = view.shown && view.shown.usage;
  $('usage').textContent = usage
    ? 'input ' + usage.inputTokens + ' · output ' + usage.outputTokens + ' · total ' + usage.totalTokens + ' tokens'
    : 'no usage recorded';
}

/** The agent calls of the followed run, from its stream: each child under the call that started it. */
function agentEvent(path, event) {
  if (event.type === 'agent.started') {
    const parent = nodeAt(path);
    if (parent) parent.children.push({ id: event.toolCallId, agent: event.agent, status: 'running', state: 'idle', children: [] });
  } else if (event.type === 'agent.finished') {
    const node = nodeAt([...path, event.toolCallId]);
    if (node) { node.status = event.output.status; node.state = event.output.status; }
  } else if (event.type === 'agent.event') {
    const inner = event.event;
    const below = [...path, ...event.path];
    if (inner.type === 'agent.started' || inner.type === 'agent.finished' || inner.type === 'agent.event') return agentEvent(below, inner);
    const node = nodeAt(below);
    const state = { 'request.started': 'requesting', 'request.retry': 'retrying', 'tool.approval.requested': 'awaitingApproval', 'tool.started': 'executingTools', 'agent.handoff': 'handingOff' }[inner.type];
    if (node && state) { node.state = state; node.status = state === 'awaitingApproval' ? 'awaitingApproval' : 'running'; }
  }
}

function nodeAt(path) {
  let node = { children: view.agents };
  for (const id of path) {
    node = node.children.find((child) => child.id === id);
    if (!node) return undefined;
  }
  return node;
}

function renderAgents() {
  const tree = $('agents');
  const branch = (nodes) => nodes.map((node) => {
    const item = el('li', 'agent', '↳ ' + node.agent + ' (' + node.id + ')');
    item.dataset.toolCallId = node.id;
    item.append(el('span', 'agent-status', node.status === node.state ? node.status : node.state + ' · ' + node.status));
    if (node.children.length) { const list = el('ul'); list.append(...branch(node.children)); item.append(list); }
    return item;
  });
  tree.replaceChildren(...branch(view.agents));
  if (view.agents.length === 0) tree.append(el('li', 'empty', 'no agent calls in this run'));
}

/**
 * What the chart area shows when the chart route answers a problem: its detail in words, never the
 * raw JSON; an optional package left out (\`package\`) gets the command that installs it.
 */
function chartProblem(status, text) {
  let problem = null;
  try { problem = JSON.parse(text); } catch { problem = null; }
  const detail = problem && typeof problem.detail === 'string' ? problem.detail : status + ' ' + text.slice(0, 200);
  if (!problem || typeof problem.package !== 'string') return [el('p', 'empty', 'The chart could not be drawn: ' + detail)];
  const box = el('div', 'missing-package');
  box.dataset.package = problem.package;
  const lead = el('p');
  lead.append(el('strong', '', 'No statechart.'), ' ' + detail.charAt(0).toUpperCase() + detail.slice(1) + '.');
  box.append(lead, el('pre', '', 'npm install ' + problem.package));
  return [box];
}

/** Counts chart requests: one answered after a newer was made is dropped, so the holder's class always names the chart in it. */
let chartRequests = 0;

async function loadChart() {
  const holder = $('chart');
  const kind = view.kind;
  const request = ++chartRequests;
  const current = () => request === chartRequests;
  if (view.chart !== kind) {
    try {
      const response = await fetch(config.base + '/chart/' + (view.chartId ? view.chartId + '/' : '') + kind + '.svg');
      const text = await response.text();
      if (!current()) return;
      holder.className = kind;
      if (!response.ok) {
        holder.replaceChildren(...chartProblem(response.status, text));
        return;
      }
      // The chart's own <style> is in this page already (the page's policy would refuse it).
      holder.innerHTML = text.replace(/<style>[\\s\\S]*?<\\/style>/, '');
      fitChart(holder);
      view.chart = kind;
    } catch (error) {
      if (!current()) return;
      holder.replaceChildren(el('p', 'empty', 'The chart could not be drawn: ' + error.message));
      return;
    }
  }
  lightShown();
}

/** Lights the shown state, and the arrow from the step before it. */
function lightShown() {
  if (!view.chart) return;
  const shown = view.shown;
  const index = stepIndex();
  const before = index > 0 ? view.steps[index - 1] : undefined;
  const paths = shown ? activePaths(shown.value) : [];
  lightChart($('chart'), [...paths, ...conversationPaths(paths, shown ? shown.conversations || [] : [])], before && shown ? activePaths(before.state) : [], shown ? view.causes[shown.seq] : undefined);
}

/**
 * Where a workflow's conversations are in its chart: the chart draws each inside the state that
 * runs it, as <state>/<invoke id>/<its state> (machineChart); one spawned with an id decided at run
 * time is in the box <state>/*<src> of a running state, when the chart has one such box there. A
 * conversation of a workflow inside the workflow (path [workflow, conversation]) is in that
 * workflow's box, in the box of the one state there that runs it, which is lit too.
 */
function conversationPaths(active, conversations) {
  const holder = $('chart');
  const has = (path) => holder.querySelector('g.state[data-state="' + CSS.escape(path) + '"]') !== null;
  const hosts = ['', ...active];
  const lit = [];
  for (const one of conversations) {
    let boxes = hosts.map((host) => (host === '' ? '' : host + '/') + one.path[0]).filter(has);
    if (boxes.length === 0 && one.path.length === 1) {
      const spawned = [...holder.querySelectorAll('g.state.invoked:not([data-invoke])')].map((node) => node.dataset.state)
        .filter((box) => hosts.includes(box.slice(0, Math.max(box.lastIndexOf('/'), 0))));
      boxes = spawned.length === 1 ? spawned : [];
    }
    lit.push(...boxes);
    for (const id of one.path.slice(1)) {
      // The inner workflow's state is not in the view: the state of its that runs this conversation says it.
      const inner = [...holder.querySelectorAll('g.state.invoked[data-invoke="' + CSS.escape(id) + '"]')].map((node) => node.dataset.state)
        .filter((path) => boxes.some((box) => path.startsWith(box + '/')));
      boxes = inner.length === 1 ? inner : [];
      for (const box of boxes) {
        // <outer box>/<state>/<id>: the state and its parents, under the outer box.
        const host = box.slice(0, box.lastIndexOf('/'));
        const base = host.slice(0, host.lastIndexOf('/') + 1);
        const keys = host.slice(base.length).split('.');
        lit.push(...keys.map((_, index) => base + keys.slice(0, index + 1).join('.')), box);
      }
    }
    for (const box of boxes) lit.push(...activePaths(one.value).map((path) => box + '/' + path));
  }
  return lit;
}

for (const button of document.querySelectorAll('#chart-tabs button')) {
  button.addEventListener('click', () => {
    view.kind = button.dataset.kind;
    for (const other of document.querySelectorAll('#chart-tabs button')) other.setAttribute('aria-pressed', String(other === button));
    loadChart();
  });
}
$('picker').addEventListener('change', () => {
  const id = $('picker').value;
  if (id === '') { view.pinned = false; renderPicker(); if (view.list[0]) select(view.list[0].id, false); }
  else select(id, true);
});
$('slider').addEventListener('input', () => {
  const index = Number($('slider').value);
  // The newest step is the live view: what streams from now on shows as it comes.
  if (index === view.steps.length - 1) { if (view.step !== null) goLive(); return; }
  showStep(index);
});
$('live').addEventListener('click', goLive);
$('fork').addEventListener('click', fork);
$('cancel').addEventListener('click', () => act('cancel', { reason: 'cancelled in the viewer' }));
window.addEventListener('hashchange', () => { const id = decodeURIComponent(location.hash.slice(1)); if (id) select(id, true); });

render();
renderLog();
// Nothing to draw before a conversation is picked when the viewer has no machine of its own yet.
if (config.chart) loadChart();
else $('chart').replaceChildren(el('p', 'empty', 'Nothing to draw yet: the chart shows once there is a conversation to follow.'));
const start = decodeURIComponent(location.hash.slice(1));
(start ? select(start, true) : Promise.resolve()).finally(pollList);
`;

/**
 * The viewer's page, with the nonce that lets its inline style and script run and the base path
 * its routes live under; `workflow` when the machine drawn first is a workflow (each conversation's
 * view then says which chart and kind it has); `chart: false` when there is no machine to draw
 * before a conversation is picked.
 *
 * @example
 * ```ts
 * const html = hostViewerPage({ title: 'support bot', nonce, basePath: '/viewer' });
 * const runs = hostViewerPage({ title: 'orders', nonce, basePath: '', workflow: true });
 * ```
 */
export function hostViewerPage(options: { title: string; nonce: string; basePath: string; workflow?: boolean; chart?: boolean }): string {
  const { title, nonce, basePath, workflow = false, chart = true } = options;
  // JSON in a script element: `<` escaped so no text closes it.
  const config = JSON.stringify({ base: basePath, workflow, chart }).replaceAll('<', '\\u003c');
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
<body data-step="live" data-workflow="${workflow}">
<header><h1>${escapeHtml(title)}</h1><label>${workflow ? 'workflow run' : 'conversation'} <select id="picker" aria-label="${workflow ? 'Workflow run' : 'Conversation'}"><option value="">newest (follow)</option></select></label><span id="following" data-pinned="false">following the newest</span></header>
<div id="error" role="alert"></div>
<main>
<section id="chart-panel"><h2>Statechart <span id="chart-tabs"><button type="button" data-kind="overview" aria-pressed="true">overview</button> <button type="button" data-kind="full" aria-pressed="false">full chart</button></span></h2><div id="chart"><p class="empty">Drawing the chart…</p></div></section>
<div id="side">
<section><h2>State <span class="when" id="status-when">now</span></h2><div id="status"></div><pre id="output"></pre></section>
<section><h2>Time travel</h2><div id="travel"><input id="slider" type="range" min="0" max="0" value="0" aria-label="Step"><button type="button" id="live" class="control" aria-pressed="true">live</button><button type="button" id="fork" class="control">fork from this step</button><div id="step-label"></div></div></section>
<section id="controls"><h2>Approvals</h2><ol id="approvals"></ol><button type="button" id="cancel" class="control">cancel run</button></section>
<section class="workflow-only"><h2>Conversations <span class="when" id="conversations-when">now</span></h2><ol id="conversations"></ol></section>
<section><h2>Usage</h2><div id="usage"></div></section>
<section class="conversation-only"><h2>Response being streamed <span class="when" id="text-when">now</span></h2><div id="text"></div></section>
<section class="conversation-only"><h2>Agent tree</h2><ul id="agents"></ul></section>
<section id="messages-panel"><h2>Messages</h2><ol id="messages"></ol></section>
<section id="log-panel"><h2>Events</h2><ol id="log"></ol></section>
</div>
</main>
<script type="application/json" id="viewer-config">${config}</script>
<script nonce="${nonce}">${lightChartScript}
${messagePartsScript}
${script}</script>
</body>
</html>
`;
}
