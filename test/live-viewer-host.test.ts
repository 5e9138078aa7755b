/**
 * The live viewer showing the conversations of durable hosts (docs/observe.md "The viewer"):
 * `viewer.watchHost(host, { prefix })` lists every conversation of the host under its id (the
 * prefix before it), read through the host — its view, stored steps, the view at a step, its
 * stream — and approve, deny, cancel and fork go to the host; `watch(hostFeed(host, id))` follows
 * one conversation as a read-only run. Over HTTP and in headless Chromium (screenshots in
 * `test-results/live-viewer-host/`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type ConversationHost,
  type ConversationStep,
  type ConversationStore,
  type ConversationView,
  createConversationHost,
  createConversationMachine,
  defineTool,
  handlerProvider,
  InvalidOptionsError,
  memoryStore,
} from '../src/index.js';
import { hostFeed, type LiveViewer, startLiveViewer } from '../src/observe/inspect/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { launchChromium, resultsDir } from './support/chromium.js';
import { countingHost } from './support/counting-host.js';
import { plannedModel, type PlanStep } from './support/planned-model.js';
import { deferred } from './support/run-conversation.js';
import type { ScriptedTurn } from './support/scripted-model.js';

const shots = resultsDir('live-viewer-host');
const work = mkdtempSync(join(tmpdir(), 'actorloop-viewer-host-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const viewers: LiveViewer[] = [];
const hosts: ConversationHost[] = [];
afterEach(async () => {
  for (const viewer of viewers.splice(0)) await viewer.close();
  for (const host of hosts.splice(0)) await host.close();
});

/** One tool round (`guarded`, which needs approval, when the conversation's first message says "approve"; else `add`), then an answer. */
const plan = (step: PlanStep): ScriptedTurn =>
  step.round === 0
    ? {
        toolCalls: [
          { id: `call-${step.turn}`, name: step.conversation.includes('approve') ? 'guarded' : 'add', args: { a: step.turn, b: 1 } },
        ],
      }
    : { text: `answer ${step.turn}` };

function setup(store: ConversationStore = memoryStore(), toolGate?: Promise<void>) {
  const ran: string[] = [];
  const execute = async ({ a, b }: { a: number; b: number }, { toolCallId }: { toolCallId: string }) => {
    await toolGate;
    ran.push(toolCallId);
    return a + b;
  };
  const parameters = z.object({ a: z.number(), b: z.number() });
  const tools = [
    defineTool({ name: 'add', parameters, execute }),
    defineTool({ name: 'guarded', parameters, needsApproval: true, execute }),
  ];
  const machine = createConversationMachine({ provider: handlerProvider(plannedModel(plan).handler), tools });
  const host = createConversationHost({ machine, store, hostId: 'viewer-test' });
  hosts.push(host);
  return { host, machine, ran };
}

async function viewer(options: Parameters<typeof startLiveViewer>[0] = {}) {
  const started = await startLiveViewer(options);
  viewers.push(started);
  return started;
}

type Answer = { status: number; type: string; text: string; json: <T = Record<string, unknown>>() => T };
type Shown = ConversationView & { chart?: string; workflow?: boolean };

async function call(live: LiveViewer, path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(`${live.url}${path}`, init);
  const text = await response.text();
  return { status: response.status, type: response.headers.get('content-type') ?? '', text, json: <T>() => JSON.parse(text) as T };
}
const route = (id: string, rest = '') => `api/conversations/${encodeURIComponent(id)}${rest}`;
const post = (live: LiveViewer, id: string, action: string, body: unknown) =>
  call(live, route(id, `/${action}`), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const viewOf = async (live: LiveViewer, id: string) => (await call(live, route(id))).json<Shown>();
const historyOf = async (live: LiveViewer, id: string) => (await call(live, route(id, '/history'))).json<ConversationStep[]>();
const listOf = async (live: LiveViewer, query = '') =>
  (await call(live, `api/conversations${query}`)).json<Array<{ id: string; label?: string; status: string }>>();
const idsOf = async (live: LiveViewer, query = '') => (await listOf(live, query)).map((one) => one.id);

/** Polls until `check` holds (a host's run moves on after `send` answers). */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() - start > timeoutMs) throw new Error(`not reached in ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function converse(host: ConversationHost, id: string, content = id) {
  await host.send(id, { type: 'user.message', content });
  return host.result(id);
}

/** Starts a conversation (its first message its id, so one named "approve…" asks for approval) and waits until it does. */
async function waiting(host: ConversationHost, id: string) {
  await host.send(id, { type: 'user.message', content: id });
  return eventually(
    () => host.get(id),
    (view) => view?.status === 'awaitingApproval',
  );
}

describe('viewer.watchHost over HTTP', () => {
  it("lists a host's conversations under their ids, read through the host: stored ones, later ones, the next run in place", async () => {
    const { host, machine } = setup(sqliteStore({ path: join(work, 'listing.db') }));
    await converse(host, 'first');
    await converse(host, 'second');
    // maxRuns is for runs watched in this process: a host's conversations are all listed.
    const live = await viewer({ maxRuns: 1 });
    await live.watchHost(host);
    const listed = await listOf(live);
    expect(listed.map(({ id, status }) => ({ id, status }))).toEqual([
      { id: 'first', status: 'done' },
      { id: 'second', status: 'done' },
    ]);
    expect(listed[0]).not.toHaveProperty('label');

    // The view, the steps and the view at a step are the host's, the view naming the host machine's chart.
    const view = await viewOf(live, 'first');
    expect(view).toEqual({ ...(await host.get('first')), chart: expect.stringMatching(/^chart\d+$/), workflow: false });
    expect(view.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    const steps = await historyOf(live, 'first');
    expect(steps).toEqual(await host.history('first'));
    const first = steps[0] as ConversationStep;
    expect((await call(live, route('first', `/steps/${first.seq}`))).json()).toEqual({
      ...(await host.get('first', { seq: first.seq })),
      chart: view.chart,
      workflow: false,
    });
    expect((await call(live, route('first', '/steps/999'))).json()).toMatchObject({ status: 404, field: 'seq' });
    // Its chart is the host's machine, drawn by default too.
    const svg = (await call(live, `chart/${view.chart}/overview.svg`)).text;
    expect(svg).toContain('data-state="awaitingApproval"');
    expect((await call(live, 'chart/overview.svg')).text).toBe(svg);
    expect(machine).toBe(host.machine);

    // One started later is listed as soon as it is stored.
    await converse(host, 'later');
    expect(await idsOf(live)).toEqual(['first', 'later', 'second']);
    expect(await viewOf(live, 'later')).toMatchObject({ id: 'later', status: 'done', value: 'done' });

    // The next run of a listed conversation shows in the same place, its steps after the first run's.
    await converse(host, 'first', 'again');
    const again = await viewOf(live, 'first');
    expect(again.messages).toHaveLength(8);
    expect((await historyOf(live, 'first')).length).toBeGreaterThan(steps.length);
    expect(await idsOf(live)).toEqual(['first', 'later', 'second']);
  });

  it("streams a host conversation's events with the host's ids; Last-Event-ID continues after one", async () => {
    const { host } = setup();
    const live = await viewer();
    await live.watchHost(host);
    await converse(host, 'streamed');
    const read = async (headers: Record<string, string>, enough: (items: Array<{ id: string; event: { type: string } }>) => boolean) => {
      const response = await fetch(`${live.url}${route('streamed', '/events')}`, { headers });
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let text = '';
      const items = () =>
        [...text.matchAll(/^id: (.+)\ndata: (.+)\n\n/gm)].map(([, id, data]) => {
          const item = JSON.parse(data as string) as { id: string; event: { type: string; status?: string } };
          expect(item.id).toBe(id);
          return item;
        });
      while (!enough(items())) text += decoder.decode((await reader.read()).value, { stream: true });
      await reader.cancel();
      return items();
    };
    const all = await read({}, (items) => items.some((item) => item.event.type === 'state' && JSON.stringify(item).includes('"done"')));
    expect(all.every((item) => /^\d+\.\d+\.[a-z0-9]+$/.test(item.id))).toBe(true);
    expect(all.map((item) => item.event.type)).toEqual(expect.arrayContaining(['request.started', 'tool.started', 'tool.result', 'state']));
    const rest = await read({ 'last-event-id': (all[2] as { id: string }).id }, (items) => items.length >= all.length - 3);
    expect(rest).toEqual(all.slice(3));
  });

  it('approve, deny, cancel and fork go through the host; what the host refuses is a 409, nothing applied', async () => {
    const { host, ran } = setup();
    const live = await viewer();
    await live.watchHost(host);
    for (const id of ['approve-1', 'approve-deny', 'approve-cancel', 'approve-fork']) await waiting(host, id);

    const before = await host.history('approve-1');
    const refused = await post(live, 'approve-1', 'approve', { toolCallId: 'call-9' });
    expect(refused.status).toBe(409);
    expect(refused.type).toBe('application/problem+json');
    expect(refused.json()).toMatchObject({ type: 'urn:actorloop:problem:conflict', detail: expect.stringContaining('call-9') });
    expect(await host.history('approve-1')).toEqual(before);
    expect(await post(live, 'approve-1', 'approve', { toolCallId: 'call-1' })).toMatchObject({ status: 200 });
    expect(await host.result('approve-1')).toMatchObject({ status: 'done', text: 'answer 1' });
    expect(ran).toEqual(['call-1']);

    expect((await post(live, 'approve-deny', 'deny', { toolCallId: 'call-1', reason: 'not this one' })).status).toBe(200);
    expect(await host.result('approve-deny')).toMatchObject({ status: 'done' });
    expect(JSON.stringify((await host.get('approve-deny'))?.messages)).toContain('not this one');

    expect((await post(live, 'approve-cancel', 'cancel', { reason: 'enough' })).status).toBe(200);
    expect(await host.result('approve-cancel')).toMatchObject({ status: 'halted' });
    expect(ran).toEqual(['call-1']);

    // Fork the waiting step: a new conversation of the host, waiting as that step did; the original untouched.
    const steps = await historyOf(live, 'approve-fork');
    const at = steps.at(-1) as ConversationStep;
    const forked = await post(live, 'approve-fork', 'fork', { seq: at.seq, newId: 'approve-fork-2' });
    expect(forked.status).toBe(201);
    expect(forked.json<Shown>()).toMatchObject({ id: 'approve-fork-2', status: 'awaitingApproval' });
    expect((await host.get('approve-fork-2'))?.status).toBe('awaitingApproval');
    expect(await idsOf(live)).toContain('approve-fork-2');
    expect((await post(live, 'approve-fork-2', 'approve', { toolCallId: 'call-1' })).status).toBe(200);
    expect(await host.result('approve-fork-2')).toMatchObject({ status: 'done' });
    expect((await host.get('approve-fork'))?.status).toBe('awaitingApproval');
    expect(await host.history('approve-fork')).toEqual(steps);
    expect((await post(live, 'approve-fork', 'fork', { seq: at.seq, newId: 'approve-1' })).json()).toMatchObject({
      status: 409,
      field: 'newId',
    });
    expect((await post(live, 'approve-fork', 'fork', { seq: 999, newId: 'approve-fork-3' })).json()).toMatchObject({
      status: 404,
      field: 'seq',
    });
    expect((await post(live, 'nope', 'approve', { toolCallId: 'call-1' })).status).toBe(404);
    expect(await host.get('nope')).toBeUndefined();
  });

  it('shows two hosts side by side, each under its prefix; every route reaches the right host', async () => {
    const eu = setup();
    const us = setup();
    const live = await viewer();
    await live.watchHost(eu.host, { prefix: 'eu/' });
    await live.watchHost(us.host, { prefix: 'us/' });
    // The same id in both hosts.
    await waiting(eu.host, 'approve-x');
    await waiting(us.host, 'approve-x');
    expect(await idsOf(live)).toEqual(['eu/approve-x', 'us/approve-x']);
    expect(await idsOf(live, '?after=eu%2Fapprove-x')).toEqual(['us/approve-x']);
    expect(await idsOf(live, '?limit=1')).toEqual(['eu/approve-x']);
    expect(await viewOf(live, 'us/approve-x')).toMatchObject({ id: 'us/approve-x', status: 'awaitingApproval' });
    expect((await call(live, route('approve-x'))).status).toBe(404);

    // Approving one leaves the other waiting.
    expect((await post(live, 'us/approve-x', 'approve', { toolCallId: 'call-1' })).status).toBe(200);
    expect(await us.host.result('approve-x')).toMatchObject({ status: 'done' });
    expect((await eu.host.get('approve-x'))?.status).toBe('awaitingApproval');
    expect(eu.ran).toEqual([]);
    const usSteps = await historyOf(live, 'us/approve-x');
    expect(usSteps).toEqual(await us.host.history('approve-x'));

    // A fork stays in its host, under its prefix.
    const at = (await historyOf(live, 'eu/approve-x')).at(-1) as ConversationStep;
    expect((await post(live, 'eu/approve-x', 'fork', { seq: at.seq, newId: 'eu/copy' })).status).toBe(201);
    expect((await eu.host.get('copy'))?.status).toBe('awaitingApproval');
    expect(await us.host.get('copy')).toBeUndefined();
    expect(await idsOf(live)).toEqual(['eu/approve-x', 'eu/copy', 'us/approve-x']);
    expect((await post(live, 'eu/approve-x', 'fork', { seq: at.seq, newId: 'copy-2' })).json()).toMatchObject({
      status: 400,
      field: 'newId',
      detail: 'newId: expected an id starting with "eu/" (its host\'s prefix)',
    });

    // The same host and prefix twice is a mistake; the same host under another prefix is not.
    await expect(live.watchHost(eu.host, { prefix: 'eu/' })).rejects.toThrow(InvalidOptionsError);
    await live.watchHost(eu.host, { prefix: 'mirror/' });
    expect(await idsOf(live)).toEqual(['eu/approve-x', 'eu/copy', 'mirror/approve-x', 'mirror/copy', 'us/approve-x']);
  });

  it('the function watchHost resolves with takes the host off the page; close() lets go of every feed', async () => {
    const { host } = setup();
    await converse(host, 'seen');
    const live = await viewer();
    const stop = await live.watchHost(host);
    expect(await idsOf(live)).toEqual(['seen']);
    stop();
    expect(await idsOf(live)).toEqual([]);
    expect((await call(live, route('seen'))).status).toBe(404);
    expect((await post(live, 'seen', 'cancel', {})).status).toBe(404);
    stop(); // again: nothing more to do
    // Watched again, it is back.
    await live.watchHost(host);
    expect(await idsOf(live)).toEqual(['seen']);

    // watch(hostFeed(...)) subscribes to its conversation; its stop function and close() take that off.
    const { host: counted, subscriptions, allSubscriptions } = countingHost(host);
    const unwatch = live.watch(hostFeed(counted, 'seen'), { id: 'feed-1' });
    live.watch(hostFeed(counted, 'seen'), { id: 'feed-2' });
    expect(subscriptions()).toBe(2);
    unwatch();
    expect(subscriptions()).toBe(1);
    await live.close();
    expect(subscriptions()).toBe(0);
    expect(allSubscriptions()).toBe(0);
  });

  it('watch(hostFeed(host, id)) names the run after the conversation and draws the host’s machine; it is read-only', async () => {
    const { host } = setup();
    await converse(host, 'c-42');
    const live = await viewer();
    await live.watchHost(host, { prefix: 'host/' });
    live.watch(hostFeed(host, 'c-42'));
    expect((await listOf(live)).find((one) => one.id === 'c-42')).toMatchObject({ id: 'c-42', label: 'c-42' });
    const view = await eventually(
      () => viewOf(live, 'c-42'),
      (shown) => shown.status === 'done',
    );
    expect(view).toMatchObject({ id: 'c-42', value: 'done', workflow: false });
    expect(view.messages).toHaveLength(4);
    // The host's machine: the same chart as the host's own conversation shown beside it.
    expect(view.chart).toBe((await viewOf(live, 'host/c-42')).chart);
    // Its next run shows as it moves.
    await converse(host, 'c-42', 'once more');
    await eventually(
      () => viewOf(live, 'c-42'),
      (shown) => shown.messages.length === 8 && shown.status === 'done',
    );
    // Read-only: approve and cancel go to the host itself (here under host/c-42).
    expect((await post(live, 'c-42', 'cancel', {})).json()).toMatchObject({
      status: 409,
      detail: expect.stringContaining('a feed is read-only'),
    });
    expect(() => live.watch(hostFeed(host, 'c-42'))).toThrow(/"c-42" is taken/);
  });

  it('names wrong arguments', async () => {
    const { host } = setup();
    const live = await viewer();
    const refusals: Array<[unknown, unknown, string, string]> = [
      [
        {},
        {},
        'watchHost(host)',
        'Invalid option watchHost(host): expected a ConversationHost from createConversationHost(...), got an object',
      ],
      [
        host,
        null,
        'watchHost(host, options)',
        'Invalid option watchHost(host, options): expected an object { prefix?, machine? }, got null',
      ],
      [host, { prefix: 3 }, 'watchHost(host, options).prefix', 'Invalid option watchHost(host, options).prefix: expected a string, got 3'],
      [
        host,
        { machine: {} },
        'watchHost(host, options).machine',
        'Invalid option watchHost(host, options).machine: expected a state machine, got an object',
      ],
    ];
    for (const [watched, options, option, message] of refusals) {
      const error = await live.watchHost(watched as never, options as never).catch((caught: unknown) => caught);
      expect(InvalidOptionsError.isInstance(error), String(error)).toBe(true);
      expect(error).toMatchObject({ option, message });
    }
    expect(await idsOf(live)).toEqual([]);
    // `stored` (the old live viewer's) is accepted and means nothing now: every conversation is listed.
    await converse(host, 'a');
    await converse(host, 'b');
    await live.watchHost(host, { stored: 1 } as never);
    expect(await idsOf(live)).toEqual(['a', 'b']);
    await live.close();
    await expect(live.watchHost(host, { prefix: 'x/' })).rejects.toThrow(/a viewer that is still open/);
  });
});

describe('viewer.watchHost in headless Chromium', () => {
  let browser: { context: BrowserContext; close: () => Promise<void> };
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  const lit = (page: Page) => page.$$eval('#chart g.state.active', (nodes) => nodes.map((node) => node.getAttribute('data-state')));
  const options = (page: Page) => page.$$eval('#picker option', (nodes) => nodes.map((node) => node.textContent));

  it('follows the newest conversation of a host under its prefix, approves it from the page; finished ones stay listed', async () => {
    const tool = deferred();
    const { host } = setup(sqliteStore({ path: join(work, 'chromium.db') }), tool.promise);
    const live = await viewer();
    await live.watchHost(host, { prefix: 'eu/' });
    const page = await browser.context.newPage();
    page.setDefaultTimeout(10_000);
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(live.url);
    await page.locator('#status', { hasText: 'no conversation yet' }).waitFor();

    // Started after the page opened: the page follows it, waiting for approval.
    await host.send('c-approve', { type: 'user.message', content: 'please approve' });
    await page.waitForSelector('body[data-conversation="eu/c-approve"][data-status="awaitingApproval"]');
    await page.waitForSelector('#chart g.state.active[data-state="awaitingApproval"]');
    expect(await lit(page)).toEqual(['awaitingApproval']);
    await page.locator('#messages li[data-role="user"]', { hasText: 'please approve' }).waitFor();
    expect(await page.textContent('#approvals li .call')).toBe('guarded({"a":1,"b":1})');
    expect(await page.textContent('#following')).toBe('following the newest');
    await page.screenshot({ path: join(shots, '1-awaiting-approval.png') });

    // Approved on the page: through the host, the tool runs.
    await page.click('#approvals button.approve');
    await page.waitForSelector('body[data-status="running"] #chart g.state.active[data-state="executingTools"]');
    expect((await host.get('c-approve'))?.value).toEqual({ executingTools: 'running' });
    await page.screenshot({ path: join(shots, '2-executing-tools.png') });
    tool.resolve();
    await page.waitForSelector('body[data-status="done"] #chart g.state.active[data-state="done"]');
    await page.locator('#log li[data-type="tool.result"]', { hasText: 'guarded (call-1)' }).waitFor();
    expect(await host.result('c-approve')).toMatchObject({ status: 'done', text: 'answer 1' });

    // A second conversation comes later: followed in turn; the first stays in the list with its outcome.
    await converse(host, 'c-second');
    await page.waitForSelector('body[data-conversation="eu/c-second"][data-status="done"]');
    for (let tries = 0; !(await options(page)).includes('eu/c-approve · done'); tries++) {
      if (tries > 200) throw new Error(`the list never showed eu/c-approve done: ${await options(page)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(await options(page)).toEqual(['newest (follow)', 'eu/c-second · done', 'eu/c-approve · done']);
    await page.screenshot({ path: join(shots, '3-two-conversations.png') });

    // Picked from the list: pinned, its address names it.
    await page.selectOption('#picker', 'eu/c-approve');
    await page.waitForSelector('body[data-conversation="eu/c-approve"][data-status="done"]');
    expect(await page.textContent('#following')).toBe('pinned');
    expect(new URL(page.url()).hash).toBe('#eu%2Fc-approve');
    expect(await page.textContent('#error')).toBe('');
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);
});
