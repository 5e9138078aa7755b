/**
 * The live viewer showing every conversation of a durable host: docs/observe.md "The live viewer".
 * Stored ones at once, those started later as they start, finished ones kept in the list; over
 * HTTP and in headless Chromium.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type ConversationHost,
  type ConversationStore,
  createConversationHost,
  createConversationMachine,
  defineTool,
  handlerProvider,
  InvalidOptionsError,
  memoryStore,
} from '../src/index.js';
import { hostFeed, type LiveViewer, type RunDetail, type RunSummary, startLiveViewer } from '../src/observe/inspect/index.js';
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

/** One `add` round (it needs approval when the conversation's first message says so), then an answer. */
const plan = (step: PlanStep): ScriptedTurn =>
  step.round === 0
    ? {
        toolCalls: [
          { id: `call-${step.turn}`, name: step.conversation.includes('approve') ? 'guarded' : 'add', args: { a: step.turn, b: 1 } },
        ],
      }
    : { text: `answer ${step.turn}` };

function setup(store: ConversationStore = memoryStore(), toolGate?: Promise<void>) {
  const execute = async ({ a, b }: { a: number; b: number }) => {
    await toolGate;
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
  return { host, machine };
}

async function viewer(options: Parameters<typeof startLiveViewer>[0] = {}) {
  const started = await startLiveViewer(options);
  viewers.push(started);
  return started;
}

const runsOf = async (live: LiveViewer) => (await (await fetch(`${live.url}api/runs`)).json()) as RunSummary[];
const detailOf = async (live: LiveViewer, id: string) =>
  (await (await fetch(`${live.url}api/runs/${encodeURIComponent(id)}`)).json()) as RunDetail;

/** Polls the viewer's run list until `check` holds (the viewer learns of changes as they happen, not at once). */
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

describe('viewer.watchHost over HTTP', () => {
  it('lists stored conversations at once, adds those started later, keeps finished ones, and shows next runs in place', async () => {
    const { host } = setup(sqliteStore({ path: join(work, 'listing.db') }));
    await converse(host, 'first');
    await converse(host, 'second');
    const live = await viewer();
    await live.watchHost(host);
    expect((await runsOf(live)).map(({ id, status, state, chart }) => ({ id, status, state, chart }))).toEqual([
      { id: 'first', status: 'done', state: 'done', chart: 'chart1' },
      { id: 'second', status: 'done', state: 'done', chart: 'chart1' },
    ]);
    expect((await detailOf(live, 'first')).messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);

    await converse(host, 'later');
    const runs = await eventually(
      () => runsOf(live),
      (list) => list.some((run) => run.id === 'later' && run.status === 'done'),
    );
    expect(runs.map((run) => run.id)).toEqual(['first', 'second', 'later']);
    const later = await detailOf(live, 'later');
    expect(later).toMatchObject({ label: 'later', state: 'done', status: 'done', text: 'answer 1' });
    const log = later.log.map((entry) => entry.text);
    for (const line of ['request: round 0, attempt 1', 'add({"a":1,"b":1})', 'add → 2', '→ executingTools.running', '→ done (done)']) {
      expect(log).toContain(line);
    }

    // The next run of a listed conversation shows in the same place.
    await converse(host, 'first', 'again');
    const again = await eventually(
      () => detailOf(live, 'first'),
      (detail) => detail.messages.length === 8 && detail.status === 'done',
    );
    expect(again.log.map((entry) => entry.text)).toEqual(expect.arrayContaining(['→ requesting.waiting', 'add → 3', '→ done (done)']));
    expect((await runsOf(live)).map((run) => run.id)).toEqual(['first', 'second', 'later']);
  });

  it('a conversation waiting for approval shows as such, and moves on when another caller approves it', async () => {
    const { host } = setup();
    const live = await viewer();
    await live.watchHost(host, { stored: 0 });
    await host.send('c-approve', { type: 'user.message', content: 'please approve' });
    await eventually(
      () => detailOf(live, 'c-approve'),
      (detail) => detail.status === 'awaitingApproval',
    );
    expect((await detailOf(live, 'c-approve')).log.map((entry) => entry.text)).toContain('guarded({"a":1,"b":1}) waits for approval');
    await host.send('c-approve', { type: 'tool.approve', toolCallId: 'call-1' });
    const done = await eventually(
      () => detailOf(live, 'c-approve'),
      (detail) => detail.status === 'done',
    );
    expect(done.log.map((entry) => entry.text)).toContain('guarded → 2');
  });

  it('stored: the most recently updated ones; 0: only what moves from now on', async () => {
    const { host } = setup();
    for (const id of ['a', 'b', 'c']) await converse(host, id);
    await converse(host, 'a', 'a again'); // now the most recent
    const recent = await viewer();
    await recent.watchHost(host, { stored: 2 });
    expect((await runsOf(recent)).map((run) => run.id)).toEqual(['c', 'a']);
    const fresh = await viewer();
    await fresh.watchHost(host, { stored: 0, prefix: 'host-1/' });
    expect(await runsOf(fresh)).toEqual([]);
    await converse(host, 'b', 'b again');
    await eventually(
      () => runsOf(fresh),
      (runs) => runs.length === 1 && runs[0]?.id === 'host-1/b' && runs[0]?.label === 'b' && runs[0].status === 'done',
    );
  });

  it('beyond maxRuns the oldest finished conversations go; one that moves again comes back', async () => {
    const { host } = setup();
    const live = await viewer({ maxRuns: 2 });
    await live.watchHost(host);
    for (const id of ['one', 'two', 'three']) await converse(host, id);
    await eventually(
      () => runsOf(live),
      (runs) => runs.map((run) => run.id).join() === 'two,three',
    );
    await converse(host, 'one', 'back');
    const runs = await eventually(
      () => runsOf(live),
      (list) => list.map((run) => run.id).join() === 'three,one' && list[1]?.status === 'done',
    );
    expect(runs).toHaveLength(2);
    expect((await detailOf(live, 'one')).messages).toHaveLength(8);
  });

  it('stopping lets go of the host (nothing new is listed, no host subscription is left); close() does too', async () => {
    const { host } = setup();
    const { host: counted, subscriptions, allSubscriptions } = countingHost(host);
    const live = await viewer();
    const stop = await live.watchHost(counted);
    await converse(host, 'seen');
    await eventually(
      () => runsOf(live),
      (runs) => runs.some((run) => run.id === 'seen' && run.status === 'done'),
    );
    expect(allSubscriptions()).toBe(1);
    stop();
    expect(allSubscriptions()).toBe(0);
    await converse(host, 'unseen');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await runsOf(live)).map((run) => run.id)).toEqual(['seen']);
    // watch(hostFeed(...)) subscribes per conversation; close() takes everything off.
    live.watch(hostFeed(counted, 'unseen'));
    await live.watchHost(counted);
    expect(subscriptions()).toBe(1);
    expect(allSubscriptions()).toBe(1);
    await live.close();
    expect(subscriptions()).toBe(0);
    expect(allSubscriptions()).toBe(0);
  });

  it('watch(hostFeed(host, id)) names the run after the conversation and draws the host’s machine', async () => {
    const { host } = setup();
    await converse(host, 'c-42');
    const live = await viewer();
    live.watch(hostFeed(host, 'c-42'));
    const detail = await eventually(
      () => detailOf(live, 'c-42'),
      (run) => run.status === 'done',
    );
    expect(detail).toMatchObject({ id: 'c-42', label: 'c-42', chart: 'chart1', state: 'done' });
    expect(detail.messages).toHaveLength(4);
  });

  it('names wrong arguments', async () => {
    const { host } = setup();
    const live = await viewer();
    await expect(live.watchHost({} as ConversationHost)).rejects.toThrow(InvalidOptionsError);
    await expect(live.watchHost({} as ConversationHost)).rejects.toThrow(/watchHost\(host\): expected a conversation host/);
    await expect(live.watchHost(host, { stored: -1 })).rejects.toThrow(/watchHost\(host, options\)\.stored: expected an integer ≥ 0/);
    await expect(live.watchHost(host, { prefix: 3 as never })).rejects.toThrow(/prefix: expected a string/);
    await expect(live.watchHost(host, { stored: 1.5 })).rejects.toMatchObject({ option: 'watchHost(host, options).stored' });
    await expect(live.watchHost(host, { machine: {} as never })).rejects.toMatchObject({
      option: 'watchHost(host, options).machine',
      message: 'Invalid option watchHost(host, options).machine: expected a state machine, got an object',
    });
    await expect(live.watchHost(host, null as never)).rejects.toMatchObject({
      option: 'watchHost(host, options)',
      message: 'Invalid option watchHost(host, options): expected an object, got null',
    });
    await live.close();
    await expect(live.watchHost(host)).rejects.toThrow(/a viewer that is still open/);
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

  it('a conversation started later appears in the list and its state lights up as it moves; finished ones stay listed', async () => {
    const tool = deferred();
    const { host } = setup(sqliteStore({ path: join(work, 'chromium.db') }), tool.promise);
    const live = await viewer();
    await live.watchHost(host);
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(live.url);
    await page.waitForSelector('#runs .empty');

    await host.send('c-approve', { type: 'user.message', content: 'please approve' });
    await page.waitForSelector('#runs button[data-run="c-approve"]');
    await page.click('#runs button[data-run="c-approve"]');
    await page.waitForSelector('#chart g.state.active[data-state="awaitingApproval"]');
    await page.waitForSelector('body[data-status="awaitingApproval"]');
    expect(await lit(page)).toEqual(['awaitingApproval']);
    await page.locator('#messages li[data-role="user"]', { hasText: 'please approve' }).waitFor();
    await page.screenshot({ path: join(shots, '1-awaiting-approval.png') });

    await host.send('c-approve', { type: 'tool.approve', toolCallId: 'call-1' });
    await page.waitForSelector('#chart g.state.active[data-state="executingTools"]');
    await page.screenshot({ path: join(shots, '2-executing-tools.png') });
    tool.resolve();
    await page.waitForSelector('body[data-status="done"]');
    expect(await lit(page)).toEqual(['done']);
    await page.locator('#text', { hasText: 'answer 1' }).waitFor();

    // A second conversation comes later; the first stays in the list with its outcome.
    await converse(host, 'c-second');
    await page.waitForSelector('#runs button[data-run="c-second"]');
    await page.locator('#runs button[data-run="c-second"] .badge', { hasText: 'done' }).waitFor();
    expect(await page.$$eval('#runs button', (nodes) => nodes.map((node) => node.textContent))).toEqual(['c-approvedone', 'c-seconddone']);
    await page.screenshot({ path: join(shots, '3-two-conversations.png') });
    expect(problems).toEqual([]);
    await page.close();
  });
});
