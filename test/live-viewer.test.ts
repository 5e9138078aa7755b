import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { promisify } from 'node:util';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createActor, toPromise, waitFor } from 'xstate';
import { z } from 'zod';
import {
  agentTool,
  type ConversationActor,
  createConversationMachine,
  defineTool,
  handlerProvider,
  InvalidOptionsError,
  toolContent,
} from '../src/index.js';
import { MissingDependencyError } from '../src/errors/missing-dependency-error.js';
import { importOptional } from '../src/observe/import-optional.js';
import { type ConversationFeed, type LiveViewer, type RunDetail, startLiveViewer } from '../src/observe/inspect/index.js';
import { legibleLabelPx } from '../src/observe/inspect/light-chart-script.js';
import { launchChromium, resultsDir } from './support/chromium.js';
import { deferred } from './support/run-conversation.js';
import { partialThenFail } from './support/scripted-actor.js';
import { type ScriptedTurn, scriptedModel, turnChunks } from './support/scripted-model.js';

const shots = resultsDir('live-viewer');

/** A turn that waits for `gate` before the model answers. */
function gatedTurn(gate: Promise<void>, turn: Exclude<ScriptedTurn, { error: unknown } | ((...args: never[]) => unknown)>): ScriptedTurn {
  return async function* () {
    await gate;
    yield* turnChunks(turn);
  };
}

const viewers: LiveViewer[] = [];
async function viewer(options: Parameters<typeof startLiveViewer>[0] = {}) {
  const started = await startLiveViewer(options);
  viewers.push(started);
  return started;
}
afterEach(async () => {
  for (const started of viewers.splice(0)) await started.close();
});

/** The states lit up in the chart on the page. */
const litStates = (page: Page) => page.$$eval('#chart g.state.active', (nodes) => nodes.map((node) => node.getAttribute('data-state')));
/** What the page functions below read of the DOM, as plain shapes: the suite's types leave the DOM library out. */
type Drawn = { getBoundingClientRect(): { left: number; top: number; right: number; bottom: number; width: number } };
type Styles = { getComputedStyle(node: unknown): { fontSize: string } };
/** The smallest transition label of the chart as drawn: its font size times the chart's scale. */
const smallestLabelPx = (page: Page) =>
  page.$eval('#chart svg', (svg) => {
    const chart = svg as unknown as Drawn & { viewBox: { baseVal: { width: number } } };
    const scale = chart.getBoundingClientRect().width / chart.viewBox.baseVal.width;
    const labels = [...svg.querySelectorAll('text.transition-label')];
    const styles = globalThis as unknown as Styles;
    return Math.min(...labels.map((label) => Number.parseFloat(styles.getComputedStyle(label).fontSize) * scale));
  });
/** Whether the innermost lit state lies within what the chart's holder shows. */
const litInView = (page: Page) =>
  page.$eval('#chart', (holder) => {
    const box = ([...holder.querySelectorAll('g.state.active')].at(-1) as unknown as Drawn).getBoundingClientRect();
    const frame = holder.getBoundingClientRect();
    return (
      box.left >= frame.left &&
      box.top >= frame.top &&
      box.right <= frame.left + holder.clientWidth &&
      box.bottom <= frame.top + holder.clientHeight
    );
  });
const logTexts = (page: Page) => page.$$eval('#log li .text', (nodes) => nodes.map((node) => node.textContent ?? ''));

describe('the live viewer in headless Chromium', () => {
  let browser: { context: BrowserContext; close: () => Promise<void> };
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  /** A page that records what it asks for and what goes wrong in it. */
  async function openPage(url: string) {
    const page = await browser.context.newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
    });
    await page.goto(url);
    return { page, requests, problems };
  }

  it('follows a scripted run from requesting through executingTools to done, lighting up each state', async () => {
    const live = await viewer();
    const answer = deferred();
    const tool = deferred<number>();
    const add = defineTool({
      name: 'add',
      description: 'Add two numbers',
      parameters: z.object({ a: z.number(), b: z.number() }),
      execute: async ({ a, b }) => {
        await tool.promise;
        return a + b;
      },
    });
    const model = scriptedModel([
      gatedTurn(answer.promise, { toolCalls: [{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }], text: 'Let me add that.' }),
      { text: 'The sum is 5.' },
    ]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools: [add] });
    const actor = createActor(machine, { input: { messages: [] } });
    live.watch(actor, { id: 'sum', label: 'what is 2+3' });
    const { page, requests, problems } = await openPage(live.url);

    await page.waitForSelector('body[data-state="idle"]');
    await page.waitForSelector('#chart g.state.active[data-state="idle"]');
    expect(await litStates(page)).toEqual(['idle']);

    actor.start();
    actor.send({ type: 'user.message', content: 'What is 2+3?' });
    await page.waitForSelector('#chart g.state.active[data-state="requesting"]');
    expect(await litStates(page)).toEqual(['requesting']);
    expect(
      await page.$$eval('#chart g.transition.taken', (nodes) =>
        nodes.map((node) => `${node.getAttribute('data-source')}→${node.getAttribute('data-target')}`),
      ),
    ).toEqual(['idle→preparing', 'preparing→requesting']);
    await page.locator('#messages li[data-role="user"]', { hasText: 'What is 2+3?' }).waitFor();
    await page.screenshot({ path: join(shots, '1-requesting.png') });

    answer.resolve();
    await page.waitForSelector('#chart g.state.active[data-state="executingTools"]');
    expect(await litStates(page)).toEqual(['executingTools']);
    await page.locator('#text', { hasText: /^Let me add that\.$/ }).waitFor();
    expect(await logTexts(page)).toEqual(expect.arrayContaining(['add({"a":2,"b":3})', '→ executingTools.running']));
    // At a 1400 px wide window the overview keeps its labels legible: it scrolls, the lit state in view.
    expect(await smallestLabelPx(page)).toBeGreaterThanOrEqual(legibleLabelPx);
    expect(await litInView(page)).toBe(true);
    await page.screenshot({ path: join(shots, '2-executing-tools.png') });

    // The full chart lights up the nested state as well.
    await page.click('#chart-tabs button[data-kind="full"]');
    await page.waitForSelector('#chart.full g.state.active[data-state="executingTools.running"]');
    expect(await litStates(page)).toEqual(['executingTools', 'executingTools.running']);
    expect(await litInView(page)).toBe(true);
    await page.screenshot({ path: join(shots, '3-executing-tools-full-chart.png') });
    await page.click('#chart-tabs button[data-kind="overview"]');
    await page.waitForSelector('#chart.overview g.state.active[data-state="executingTools"]');

    tool.resolve(5);
    await page.waitForSelector('#chart g.state.active[data-state="done"]');
    await page.waitForSelector('body[data-status="done"]');
    expect(await litStates(page)).toEqual(['done']);
    await page.locator('#messages li').nth(3).waitFor();
    expect(await page.$$eval('#messages li', (nodes) => nodes.map((node) => node.getAttribute('data-role')))).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(await page.textContent('#messages li[data-role="tool"]')).toContain('→ add: 5');
    expect(await page.textContent('#text')).toBe('The sum is 5.');
    const log = await logTexts(page);
    for (const line of ['user: What is 2+3?', 'request: round 0, attempt 1', 'add → 5', 'request: round 1, attempt 1', '→ done (done)']) {
      expect(log).toContain(line);
    }
    await page.screenshot({ path: join(shots, '4-done.png') });

    expect(await toPromise(actor)).toMatchObject({ status: 'done', text: 'The sum is 5.' });
    // Nothing came from anywhere but the viewer.
    expect(requests.filter((url) => !url.startsWith(live.url) && !url.startsWith('data:'))).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows an agent tree: each child nested under the call that started it, its chart lit as it runs', async () => {
    const live = await viewer();
    const releaseLeaf = deferred<void>();
    const releaseMiddle = deferred<void>();
    const leaf = createConversationMachine({
      provider: handlerProvider(scriptedModel([gatedTurn(releaseLeaf.promise, { text: 'leaf answer' })]).handler),
    });
    const middle = createConversationMachine({
      provider: handlerProvider(
        scriptedModel([
          { toolCalls: [{ id: 'c1', name: 'leaf', args: { prompt: 'deeper' } }] },
          gatedTurn(releaseMiddle.promise, { text: 'middle answer' }),
        ]).handler,
      ),
      tools: [agentTool(leaf, { name: 'leaf' })],
    });
    const root = createConversationMachine({
      provider: handlerProvider(
        scriptedModel([{ toolCalls: [{ id: 'p1', name: 'middle', args: { prompt: 'go' } }] }, { text: 'root answer' }]).handler,
      ),
      tools: [agentTool(middle, { name: 'middle' })],
    });
    const actor = createActor(root, { input: { messages: [] } });
    live.watch(actor, { id: 'tree', label: 'writer' });
    const { page, problems } = await openPage(`${live.url}#tree`);
    actor.start();
    actor.send({ type: 'user.message', content: 'start' });
    // The child and the grandchild appear nested under the calls that started them.
    await page.waitForSelector('#runs button[data-run="tree/p1/c1"]');
    expect(
      await page.$$eval('#runs button', (nodes) =>
        nodes.map((node) => [node.getAttribute('data-run'), node.getAttribute('data-parent'), node.getAttribute('data-depth')]),
      ),
    ).toEqual([
      ['tree', null, '0'],
      ['tree/p1', 'tree', '1'],
      ['tree/p1/c1', 'tree/p1', '2'],
    ]);
    // The grandchild waits for its model: its chart shows it requesting while the root runs its tools.
    await page.click('#runs button[data-run="tree/p1/c1"]');
    await page.waitForSelector('body[data-run="tree/p1/c1"] #chart g.state.active[data-state="requesting"]');
    await page.screenshot({ path: join(shots, '7-agent-tree-grandchild.png') });
    releaseLeaf.resolve();
    await page.waitForSelector('body[data-run="tree/p1/c1"][data-status="done"] #chart g.state.active[data-state="done"]');
    // The child is now requesting its answer, lit on its own chart.
    await page.click('#runs button[data-run="tree/p1"]');
    await page.waitForSelector('body[data-run="tree/p1"] #chart g.state.active[data-state="requesting"]');
    expect(await logTexts(page)).toEqual(expect.arrayContaining([expect.stringContaining('leaf')]));
    releaseMiddle.resolve();
    await page.waitForSelector('body[data-run="tree/p1"][data-status="done"]');
    await page.click('#runs button[data-run="tree"]');
    await page.waitForSelector('body[data-run="tree"][data-status="done"]');
    expect(await toPromise(actor)).toMatchObject({ status: 'done', text: 'root answer' });
    expect(problems).toEqual([]);
  });

  it('lists several runs; a retry, an approval and a cancel show in their logs', async () => {
    const live = await viewer();
    const add = defineTool({
      name: 'add',
      description: 'Add two numbers',
      parameters: z.object({ a: z.number(), b: z.number() }),
      needsApproval: true,
      execute: async ({ a, b }) => a + b,
    });
    const first = scriptedModel([
      partialThenFail('Hmm, ', 503),
      { toolCalls: [{ id: 'c1', name: 'add', args: { a: 1, b: 1 } }] },
      { text: '2.' },
    ]);
    const machine = createConversationMachine({
      provider: handlerProvider(first.handler),
      tools: [add],
      retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5, jitter: false },
    });
    const approving = createActor(machine, { input: { messages: [] } });
    const hang = scriptedModel([gatedTurn(new Promise(() => undefined), { text: 'never' })]);
    const cancelled: ConversationActor = createActor(createConversationMachine({ provider: handlerProvider(hang.handler) }), {
      input: { messages: [] },
    });
    live.watch(approving, { id: 'approval', label: 'needs approval' });
    live.watch(cancelled, { id: 'cancel', label: 'to be cancelled' });
    const { page, problems } = await openPage(`${live.url}#approval`);

    approving.start();
    approving.send({ type: 'user.message', content: 'add 1 and 1' });
    await page.waitForSelector('#chart g.state.active[data-state="awaitingApproval"]');
    await page.locator('#log li .text', { hasText: 'waits for approval' }).waitFor();
    approving.send({ type: 'tool.approve', toolCallId: 'c1' });
    await page.waitForSelector('body[data-status="done"]');
    const log = await logTexts(page);
    expect(log).toContain('retry: attempt 2 in 1 ms after http 503 (partial output discarded)');
    expect(log).toContain('add({"a":1,"b":1}) waits for approval');
    expect(log).toContain('approved add');
    expect(log).toContain('add → 2');
    expect(await page.$$eval('#log li.error .text', (nodes) => nodes.map((node) => node.textContent))).toContain(
      'retry: attempt 2 in 1 ms after http 503 (partial output discarded)',
    );
    await page.screenshot({ path: join(shots, '5-approval-and-retry.png') });

    cancelled.start();
    cancelled.send({ type: 'user.message', content: 'wait forever' });
    await page.click('#runs button[data-run="cancel"]');
    await page.waitForSelector('body[data-run="cancel"] #chart g.state.active[data-state="requesting"]');
    cancelled.send({ type: 'cancel', reason: 'changed my mind' });
    await page.waitForSelector('#chart g.state.active[data-state="halted"]');
    await page.waitForSelector('body[data-status="halted"]');
    expect(await logTexts(page)).toContain('cancel: changed my mind');
    // cancel is not an arrow of the overview but its note: the note is marked, no arrow.
    await page.waitForSelector('#chart g.note.taken[data-events~="cancel"]');
    expect(await page.$$('#chart g.transition.taken')).toHaveLength(0);
    expect(await page.$$eval('#runs button', (nodes) => nodes.map((node) => node.textContent))).toEqual([
      'needs approvaldone',
      'to be cancelledhalted',
    ]);
    await page.screenshot({ path: join(shots, '6-cancelled.png') });
    expect(problems).toEqual([]);
    await page.close();
  });

  it("shows a run's images as thumbnails beside their labels: the user's and a tool result's", async () => {
    const live = await viewer();
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const screenshot = defineTool({
      name: 'screenshot',
      parameters: z.object({}),
      execute: async () =>
        toolContent([
          { type: 'text', text: 'Now:' },
          { type: 'image', data: png, mediaType: 'image/png' },
        ]),
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'c1', name: 'screenshot', args: {} }] }, { text: 'The same pixel.' }]);
    const actor = createActor(createConversationMachine({ provider: handlerProvider(model.handler), tools: [screenshot] }), {
      input: { messages: [] },
    });
    live.watch(actor, { id: 'media' });
    const { page, requests, problems } = await openPage(`${live.url}#media`);
    actor.start();
    actor.send({
      type: 'user.message',
      content: [
        { type: 'text', text: 'Look' },
        { type: 'image', data: png, mediaType: 'image/png' },
      ],
    });
    await page.waitForSelector('body[data-status="done"]');
    await page.locator('#messages li[data-role="tool"] img.thumb').waitFor();
    await page.waitForFunction('[...document.images].every((image) => image.complete)');
    const label = '[image image/png, 70 B]';
    expect(
      await page.$$eval('#messages img.thumb', (images) =>
        (
          images as unknown as Array<{
            alt: string;
            naturalWidth: number;
            closest(selector: string): { dataset: { role?: string } } | null;
          }>
        ).map((image) => [image.closest('li')?.dataset.role, image.alt, image.naturalWidth]),
      ),
    ).toEqual([
      ['user', label, 1],
      ['tool', label, 1],
    ]);
    expect(await page.textContent('#messages li[data-role="user"]')).toContain(label);
    expect(await page.textContent('#messages li[data-role="tool"]')).toContain(`→ screenshot: Now:\n${label}`);
    expect(requests.filter((url) => !url.startsWith(live.url) && !url.startsWith('data:'))).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});

/** A GET with a chosen Host header (fetch does not let one set it). */
function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method, headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

describe('the live viewer server', () => {
  it('listens on 127.0.0.1 by default and answers only requests addressed to a loopback name', async () => {
    const live = await viewer();
    expect(live.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect((await get(live.url)).status).toBe(200);
    expect((await get(live.url, { host: `localhost:${live.port}` })).status).toBe(200);
    const rebound = await get(live.url, { host: `evil.example:${live.port}` });
    expect(rebound.status).toBe(403);
    expect((await get(`${live.url}api/runs`, { host: 'evil.example' })).status).toBe(403);
    expect((await get(live.url, {}, 'POST')).status).toBe(405);
    expect((await get(`${live.url}nothing-here`)).status).toBe(404);
  });

  it('the page allows nothing from elsewhere', async () => {
    const live = await viewer();
    const response = await fetch(live.url);
    expect(response.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'nonce-[^']+'; .*connect-src 'self'/);
  });

  it('serves each run as JSON and its updates as Server-Sent Events', async () => {
    const live = await viewer();
    const model = scriptedModel([{ text: 'streamed answer' }]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler) });
    const actor = createActor(machine, { input: { messages: [] } });
    live.watch(actor, { id: 'r1' });
    const stream = await fetch(`${live.url}events?run=r1`);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = stream.body!.getReader();
    let received = '';
    const decoder = new TextDecoder();
    actor.start();
    actor.send({ type: 'user.message', content: 'hi' });
    await toPromise(actor);
    while (!received.includes('"status":"done"')) received += decoder.decode((await reader.read()).value);
    await reader.cancel();
    expect(received).toMatch(/^retry: 1000\n\nevent: runs\ndata: \[/);
    expect(received).toContain('event: run\ndata: {"id":"r1"');
    expect(received).toContain('event: state\ndata: {"type":"state","run":{"id":"r1"');
    expect(received).toContain('event: log\ndata: {"seq":');
    const runs = (await (await fetch(`${live.url}api/runs`)).json()) as Array<{ id: string; status: string; chart: string }>;
    expect(runs).toEqual([expect.objectContaining({ id: 'r1', status: 'done', state: 'done', chart: 'chart1' })]);
    const detail = (await (await fetch(`${live.url}api/runs/r1`)).json()) as RunDetail;
    expect(detail.text).toBe('streamed answer');
    expect(detail.messages).toHaveLength(2);
    expect((await fetch(`${live.url}api/runs/nope`)).status).toBe(404);
    const svg = await fetch(`${live.url}charts/chart1/overview.svg`);
    expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await svg.text()).toContain('data-state="executingTools"');
  });

  it('shows a host-shaped feed: state updates light up the machine it is given', async () => {
    const model = scriptedModel([{ text: 'from the feed' }]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler) });
    const live = await viewer({ machine });
    const actor = createActor(machine, { input: { messages: [] } });
    // What `host.subscribe(id, listener)` delivers: emitted events and { type: 'state', value, status }.
    const feed: ConversationFeed = {
      subscribe(listener) {
        const events = actor.on('*', listener);
        const states = actor.subscribe((snapshot) =>
          listener({ type: 'state', value: snapshot.value, status: snapshot.status === 'done' ? snapshot.output.status : 'running' }),
        );
        return () => {
          events.unsubscribe();
          states.unsubscribe();
        };
      },
    };
    live.watch(feed, { id: 'c-42' });
    actor.start();
    actor.send({ type: 'user.message', content: 'hi' });
    await toPromise(actor);
    const detail = (await (await fetch(`${live.url}api/runs/c-42`)).json()) as RunDetail;
    expect(detail).toMatchObject({ chart: 'chart1', state: 'done', status: 'done', text: 'from the feed' });
    expect(detail.log.map((entry) => entry.kind)).toEqual(expect.arrayContaining(['request', 'usage', 'state']));
  });

  it('a page opened for a run before it is watched gets it once it is', async () => {
    const live = await viewer();
    const stream = await fetch(`${live.url}events?run=later`);
    const reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    let received = decoder.decode((await reader.read()).value);
    const actor = createActor(createConversationMachine({ provider: handlerProvider(scriptedModel([]).handler) }), { input: {} });
    live.watch(actor, { id: 'later' });
    while (!received.includes('event: run\n')) received += decoder.decode((await reader.read()).value);
    await reader.cancel();
    expect(received).toContain('event: run\ndata: {"id":"later"');
  });

  it('watching never stops a run, and unwatching lets go of the actor', async () => {
    const live = await viewer();
    const gate = deferred();
    const model = scriptedModel([gatedTurn(gate.promise, { text: 'late' })]);
    const actor = createActor(createConversationMachine({ provider: handlerProvider(model.handler) }), { input: { messages: [] } }).start();
    const internals = actor as unknown as { observers: Set<unknown>; eventListeners: Map<string, Set<unknown>> };
    const unwatch = live.watch(actor);
    actor.send({ type: 'user.message', content: 'hi' });
    await waitFor(actor, (snapshot) => snapshot.matches('requesting'));
    unwatch();
    expect(internals.observers.size).toBe(0);
    expect([...internals.eventListeners.values()].reduce((total, listeners) => total + listeners.size, 0)).toBe(0);
    gate.resolve();
    expect(await toPromise(actor)).toMatchObject({ status: 'done', text: 'late' });
    const [run] = (await (await fetch(`${live.url}api/runs`)).json()) as Array<{ state: string }>;
    expect(run?.state).toBe('requesting.waiting');
  });

  it('keeps at most maxRuns runs, dropping the oldest finished ones', async () => {
    const live = await viewer({ maxRuns: 2 });
    const machine = createConversationMachine({
      provider: handlerProvider(scriptedModel([{ text: 'a' }, { text: 'b' }, { text: 'c' }]).handler),
    });
    for (const id of ['one', 'two', 'three']) {
      const actor = createActor(machine, { input: { messages: [] } });
      live.watch(actor, { id });
      actor.start();
      actor.send({ type: 'user.message', content: id });
      await toPromise(actor);
    }
    const runs = (await (await fetch(`${live.url}api/runs`)).json()) as Array<{ id: string }>;
    expect(runs.map((run) => run.id)).toEqual(['two', 'three']);
  });

  it('names wrong options, and a run id that is taken', async () => {
    await expect(startLiveViewer({ port: 70_000 })).rejects.toThrow(InvalidOptionsError);
    await expect(startLiveViewer({ port: 70_000 })).rejects.toThrow(/port: expected an integer from 0 \(a free port\) to 65535, got 70000/);
    await expect(startLiveViewer({ maxRuns: 0 })).rejects.toThrow(/maxRuns/);
    const live = await viewer();
    const actor = createActor(createConversationMachine({ provider: handlerProvider(scriptedModel([]).handler) }), { input: {} });
    live.watch(actor, { id: 'same' });
    expect(() => live.watch(actor, { id: 'same' })).toThrow(/"same" is taken/);
    expect(() => live.watch({} as ConversationActor)).toThrow(/watch\(source\): expected a conversation actor or a feed/);
  });

  it('names each wrong option with its path, what it expected and what it got', async () => {
    const starts: Array<[unknown, string, string]> = [
      [null, 'options', 'Invalid option options: expected an object, got null'],
      [{ host: '' }, 'host', 'Invalid option host: expected a host name or IP address, got ""'],
      [{ title: 3 }, 'title', 'Invalid option title: expected a string, got 3'],
      [{ machine: {} }, 'machine', 'Invalid option machine: expected a state machine (createConversationMachine(...)), got an object'],
      [{ maxLogEntries: 0.5 }, 'maxLogEntries', 'Invalid option maxLogEntries: expected an integer ≥ 1, got 0.5'],
      [{ maxRuns: 0 }, 'maxRuns', 'Invalid option maxRuns: expected an integer ≥ 1, got 0'],
    ];
    for (const [options, option, message] of starts) {
      const error = await startLiveViewer(options as never).catch((caught: unknown) => caught);
      expect(InvalidOptionsError.isInstance(error), String(error)).toBe(true);
      expect(error).toMatchObject({ option, message });
    }
    const live = await viewer();
    const actor = createActor(createConversationMachine({ provider: handlerProvider(scriptedModel([]).handler) }), { input: {} });
    const watches: Array<[unknown, string, string]> = [
      ['c-1', 'watch(source, options)', 'Invalid option watch(source, options): expected an object, got "c-1"'],
      [{ id: '' }, 'watch(source, options).id', 'Invalid option watch(source, options).id: expected a non-empty string, got ""'],
      [{ label: 7 }, 'watch(source, options).label', 'Invalid option watch(source, options).label: expected a string, got 7'],
      [
        { machine: 'm' },
        'watch(source, options).machine',
        'Invalid option watch(source, options).machine: expected a state machine, got "m"',
      ],
    ];
    for (const [options, option, message] of watches) {
      expect(() => live.watch(actor, options as never)).toThrow(expect.objectContaining({ option, message }));
    }
  });

  it('frees its port on close, ending open streams', async () => {
    const live = await startLiveViewer();
    const stream = await fetch(`${live.url}events`);
    const reader = stream.body!.getReader();
    await live.close();
    let done = false;
    while (!done) done = (await reader.read()).done;
    const again = await viewer({ port: live.port });
    expect(again.port).toBe(live.port);
  });

  it('examples/live-viewer.ts runs a conversation with a retry and an approval as a process, watched', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/live-viewer.ts', '--once'], {
      cwd: join(import.meta.dirname, '..'),
      timeout: 60_000,
    });
    expect(stdout).toMatch(/^live viewer: http:\/\/127\.0\.0\.1:\d+\/$/m);
    expect(stdout).toContain('[output] status=done text=3 × 7 = 21.');
    expect(stdout).toContain('[viewer] c-0:done');
  }, 60_000);

  it('says which package is missing when an optional one cannot be loaded', async () => {
    const failure = importOptional('not-installed-package', 'A feature', () => import('not-installed-package' as string));
    await expect(failure).rejects.toSatisfy(MissingDependencyError.isInstance);
    await expect(failure).rejects.toThrow(
      'A feature needs the optional package "not-installed-package", which could not be loaded: install it (npm install not-installed-package)',
    );
  });
});
