import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { barChartPng } from '../examples/chat-ui/chart-png.js';
import { toNodeListener } from '../src/http/index.js';
import {
  type ConversationHost,
  type ConversationStep,
  createConversationHost,
  createConversationMachine,
  defineTool,
  handlerProvider,
  mediaLabel,
  memoryStore,
  toolContent,
} from '../src/index.js';
import { legibleLabelPx } from '../src/observe/inspect/light-chart-script.js';
import { createViewerHandler } from '../src/observe/inspect/index.js';
import { supportScript } from './support/built-tree.js';
import { launchChromium } from './support/chromium.js';
import { startView } from './support/cli-process.js';
import { deferred } from './support/run-conversation.js';
import { gatedAnswer, gatedText, scriptedModel } from './support/scripted-model.js';
import { viewerHost } from './support/viewer-host.js';

const shots = join(import.meta.dirname, '..', 'test-artifacts', 'viewer');
mkdirSync(shots, { recursive: true });

let browser: { context: BrowserContext; close: () => Promise<void> };
let host: ConversationHost;
let server: Server;
let url: string;

beforeAll(async () => {
  ({ host } = viewerHost());
  server = createServer(toNodeListener(createViewerHandler(host, { title: 'viewer under test' })));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  browser = await launchChromium({ width: 1400, height: 1000 });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await host?.close();
});

async function waiting(id: string): Promise<void> {
  await host.send(id, { type: 'user.message', content: id });
  for (let tries = 0; (await host.get(id))?.status !== 'awaitingApproval'; tries++) {
    if (tries > 500) throw new Error(`${id} never waited for approval`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

type Opened = { page: Page; problems: string[] };

/** A page at `address`; `viewport` for one other than the browser's 1400×1000. */
async function open(address: string, viewport?: { width: number; height: number }): Promise<Opened> {
  const page = await browser.context.newPage();
  if (viewport) await page.setViewportSize(viewport);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    // The browser logs each 4xx answer it fetched; the page shows those itself.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console: ${message.text()}`);
  });
  await page.goto(address);
  await page.waitForSelector('#chart svg');
  return { page, problems };
}

/** A `data-` attribute of the page's body (the page keeps what it shows there). */
const body = (page: Page, name: string) => page.$eval('body', (node, key) => node.getAttribute(`data-${key}`), name);

async function until(page: Page, what: string, check: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; !(await check()); tries++) {
    if (tries > 400) {
      await page.screenshot({ path: join(shots, `failed-${what.replace(/\W+/g, '-')}.png`) });
      throw new Error(`the page never showed: ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(shots, `${name}.png`) });

/** What the page functions below read of the DOM, as plain shapes: the suite's types leave the DOM library out. */
type Box = { left: number; top: number; right: number; bottom: number; width: number; height: number };
type Drawn = { getBoundingClientRect(): Box };
type Rect = { x: number; y: number; width: number; height: number };
type Svg = Drawn & { viewBox: { baseVal: Rect } };
type Styles = { getComputedStyle(node: unknown, pseudo?: string): { fontSize: string; content: string } };

/** The transition labels of the chart shown, as drawn: the smallest font size and line height on the screen. */
const labelSizes = (page: Page) =>
  page.$eval('#chart svg', (svg) => {
    const chart = svg as unknown as Svg;
    const scale = chart.getBoundingClientRect().width / chart.viewBox.baseVal.width;
    const labels = [...svg.querySelectorAll('text.transition-label')];
    const styles = globalThis as unknown as Styles;
    const fonts = labels.map((label) => Number.parseFloat(styles.getComputedStyle(label).fontSize) * scale);
    const lines = labels.flatMap((label) => [...label.querySelectorAll('tspan')].map((line) => line.getBoundingClientRect().height));
    return { count: labels.length, smallestFont: Math.min(...fonts), smallestLine: Math.min(...lines) };
  });

/** Where the innermost lit state is: its middle's offset from the middle of what the holder shows. */
const litPlace = (page: Page) =>
  page.$eval('#chart', (holder) => {
    const lit = [...holder.querySelectorAll('g.state.active')].at(-1) as unknown as Drawn;
    const box = lit.getBoundingClientRect();
    const frame = holder.getBoundingClientRect();
    const shown = { left: frame.left, top: frame.top, right: frame.left + holder.clientWidth, bottom: frame.top + holder.clientHeight };
    return {
      inView: box.left >= shown.left && box.right <= shown.right && box.top >= shown.top && box.bottom <= shown.bottom,
      offset: { x: (box.left + box.right - shown.left - shown.right) / 2, y: (box.top + box.bottom - shown.top - shown.bottom) / 2 },
    };
  });
const litInView = async (page: Page) => (await litPlace(page)).inView;

/** The texts of the chart whose box reaches past its viewBox. */
const textOutsideChart = (page: Page) =>
  page.$eval('#chart svg', (svg) => {
    const view = (svg as unknown as Svg).viewBox.baseVal;
    return [...svg.querySelectorAll('text')]
      .map((text) => ({ text: text.textContent, box: (text as unknown as { getBBox(): Rect }).getBBox() }))
      .filter(
        ({ box }) =>
          box.x < view.x || box.y < view.y || box.x + box.width > view.x + view.width || box.y + box.height > view.y + view.height,
      )
      .map(({ text }) => text);
  });

/** Whether the chart keeps a margin of at least 16 px from each edge of its holder, scrolled to that edge. */
const chartMargins = (page: Page) =>
  page.$eval('#chart', (holder) => {
    const gap = () => {
      const chart = (holder.querySelector('svg') as unknown as Drawn).getBoundingClientRect();
      const frame = holder.getBoundingClientRect();
      return {
        left: chart.left - frame.left,
        top: chart.top - frame.top,
        right: frame.left + holder.clientWidth - chart.right,
        bottom: frame.top + holder.clientHeight - chart.bottom,
      };
    };
    holder.scrollTo(0, 0);
    const start = gap();
    holder.scrollTo(holder.scrollWidth, holder.scrollHeight);
    const end = gap();
    return { left: start.left >= 16, top: start.top >= 16, right: end.right >= 16, bottom: end.bottom >= 16 };
  });
const lit = (page: Page) => page.$$eval('#chart g.state.active', (nodes) => nodes.map((node) => node.getAttribute('data-state')));

describe('the viewer page', () => {
  it('follows the newest, approves, travels in time, goes live, forks, denies, cancels, and survives an unknown id', async () => {
    await waiting('p-old');
    await waiting('p-deny');
    await waiting('p-cancel');
    const { page, problems } = await open(url);
    await until(page, 'the newest conversation', async () => (await body(page, 'conversation')) === 'p-cancel');
    expect(await page.textContent('#following')).toBe('following the newest');
    await shot(page, 'follow-newest');

    // A newer conversation: the page switches to it by itself.
    await waiting('p-approve');
    await until(page, 'the page following p-approve', async () => (await body(page, 'conversation')) === 'p-approve');
    await until(page, 'p-approve waiting', async () => (await body(page, 'status')) === 'awaitingApproval');
    expect(await page.isEnabled('#approvals button.approve')).toBe(true);
    expect(await page.isEnabled('#cancel')).toBe(true);
    expect(await lit(page)).toContain('awaitingApproval');
    await shot(page, 'awaiting-approval');

    // Approve: the run goes on to its end.
    await page.click('#approvals button.approve');
    await until(page, 'p-approve done', async () => (await body(page, 'status')) === 'done');
    expect(await page.isDisabled('#cancel')).toBe(true);
    expect(await lit(page)).toContain('done');
    const messagesDone = Number(await body(page, 'messages'));
    expect(messagesDone).toBe(4);
    await shot(page, 'approve');

    // Time travel: the first step, then the one that waited for approval.
    const steps = (await host.history('p-approve')) as ConversationStep[];
    await page.fill('#slider', '0');
    await until(page, 'the first step', async () => (await body(page, 'step')) === String(steps[0]?.seq));
    expect(Number(await body(page, 'messages'))).toBeLessThan(messagesDone);
    expect(await lit(page)).not.toContain('done');
    expect(await page.getAttribute('#live', 'aria-pressed')).toBe('false');
    // A past step is for looking: approving is done live.
    expect(await page.locator('#approvals button.approve').count()).toBe(0);
    expect(await page.isDisabled('#cancel')).toBe(true);
    await shot(page, 'slider-first-step');
    const waitingIndex = steps.findIndex((step) => step.status === 'awaitingApproval');
    expect(waitingIndex).toBeGreaterThan(0);
    await page.fill('#slider', String(waitingIndex));
    await until(page, 'the waiting step', async () => (await body(page, 'status')) === 'awaitingApproval');
    expect(await lit(page)).toContain('awaitingApproval');
    expect(Number(await body(page, 'messages'))).toBe(2);
    await shot(page, 'slider-waiting-step');

    // Live again.
    await page.click('#live');
    await until(page, 'live', async () => (await body(page, 'step')) === 'live' && (await body(page, 'status')) === 'done');
    await shot(page, 'live');

    // Fork from the waiting step: the fork is selected (and pinned), waiting as that step was.
    await page.fill('#slider', String(waitingIndex));
    await until(page, 'the waiting step again', async () => (await body(page, 'status')) === 'awaitingApproval');
    await page.click('#fork');
    await until(page, 'the fork selected', async () => (await body(page, 'conversation'))?.startsWith('p-approve-fork-') === true);
    await until(page, 'the fork waiting', async () => (await body(page, 'status')) === 'awaitingApproval');
    expect(await page.textContent('#following')).toBe('pinned');
    const forkId = (await body(page, 'conversation')) as string;
    expect((await host.get(forkId))?.status).toBe('awaitingApproval');
    expect((await host.get('p-approve'))?.status).toBe('done');
    await shot(page, 'fork');

    // Deny, on another conversation picked from the list.
    await page.selectOption('#picker', 'p-deny');
    await until(
      page,
      'p-deny waiting',
      async () => (await body(page, 'conversation')) === 'p-deny' && (await body(page, 'status')) === 'awaitingApproval',
    );
    await page.click('#approvals button.deny');
    await until(page, 'p-deny done', async () => (await body(page, 'status')) === 'done');
    expect(await page.textContent('#messages')).toContain('denied in the viewer');
    await shot(page, 'deny');

    // Cancel, on a third.
    await page.selectOption('#picker', 'p-cancel');
    await until(
      page,
      'p-cancel waiting',
      async () => (await body(page, 'conversation')) === 'p-cancel' && (await body(page, 'status')) === 'awaitingApproval',
    );
    await page.click('#cancel');
    await until(page, 'p-cancel halted', async () => (await body(page, 'status')) === 'halted');
    await shot(page, 'cancel');

    // Back to following the newest.
    await page.selectOption('#picker', '');
    await until(page, 'following again', async () => (await page.textContent('#following')) === 'following the newest');
    await shot(page, 'picker-follow');
    expect(await page.textContent('#error')).toBe('');
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it('draws the overview no smaller than its labels read at a 1400 px wide window: the chart scrolls instead', async () => {
    await waiting('p-labels');
    const { page, problems } = await open(`${url}#p-labels`, { width: 1400, height: 900 });
    await until(page, 'p-labels waiting', async () => (await body(page, 'status')) === 'awaitingApproval');
    await page.waitForSelector('#chart.overview g.state.active');
    const sizes = await labelSizes(page);
    expect(sizes.count).toBeGreaterThan(10);
    // Each label as drawn: its font size times the chart's scale, and its line's height on the screen.
    expect(sizes.smallestFont).toBeGreaterThanOrEqual(legibleLabelPx);
    expect(sizes.smallestLine).toBeGreaterThanOrEqual(legibleLabelPx);
    // Larger than the holder at that size: it scrolls, the lit state in view.
    expect(await litInView(page)).toBe(true);
    await shot(page, 'overview-labels-1400');
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it('opens the full chart with the lit state in the middle, a margin around the chart, no label past its edge', async () => {
    await waiting('p-full');
    const { page, problems } = await open(`${url}#p-full`, { width: 1400, height: 900 });
    await until(page, 'p-full waiting', async () => (await body(page, 'status')) === 'awaitingApproval');
    await page.click('#chart-tabs button[data-kind="full"]');
    await page.waitForSelector('#chart.full g.state.active[data-state="awaitingApproval"]');
    const { offset } = await litPlace(page);
    expect(Math.abs(offset.x)).toBeLessThan(2);
    expect(Math.abs(offset.y)).toBeLessThan(2);
    expect(await textOutsideChart(page)).toEqual([]);
    await shot(page, 'full-chart-centred');
    expect(await chartMargins(page)).toEqual({ left: true, top: true, right: true, bottom: true });

    // A state at the chart's edge (halted, at its bottom) is brought as near the middle as the chart goes, in view.
    await page.click('#cancel');
    await until(page, 'p-full halted', async () => (await body(page, 'status')) === 'halted');
    await page.waitForSelector('#chart.full g.state.active[data-state="halted"]');
    expect(await litInView(page)).toBe(true);
    await shot(page, 'full-chart-edge-state');
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it('shows an unknown id in the address as an inline error, and goes on working', async () => {
    const { page, problems } = await open(`${url}#nope`);
    await until(page, 'the error', async () => ((await page.textContent('#error')) ?? '').includes('"nope"'));
    expect(await page.textContent('#error')).toMatch(/No such conversation/);
    expect(await body(page, 'conversation')).toBe('nope');
    await shot(page, 'unknown-id');
    await page.selectOption('#picker', 'p-old');
    await until(
      page,
      'p-old shown',
      async () => (await body(page, 'conversation')) === 'p-old' && (await body(page, 'status')) === 'awaitingApproval',
    );
    expect(await page.textContent('#error')).toBe('');
    await shot(page, 'after-unknown-id');
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});

describe('the viewer page with images and files', () => {
  // Two PNGs of different sizes, so each thumbnail is known by its width.
  const photo = Buffer.from(barChartPng([2, 7, 1, 8])).toString('base64'); // 86×80
  const screenshot = Buffer.from(barChartPng([5, 3])).toString('base64'); // 46×80
  const pdf = Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64');
  let mediaHost: ConversationHost;
  let mediaServer: Server;
  let mediaUrl: string;

  beforeAll(async () => {
    const model = scriptedModel([{ toolCalls: [{ id: 'call_shot', name: 'screenshot', args: {} }] }, { text: 'The bars moved.' }]);
    const machine = createConversationMachine({
      provider: handlerProvider(model.handler),
      tools: [
        defineTool({
          name: 'screenshot',
          description: 'The page as it looks now',
          parameters: z.object({}),
          execute: async () =>
            toolContent([
              { type: 'text', text: 'The page now:' },
              { type: 'image', data: screenshot, mediaType: 'image/png' },
            ]),
        }),
      ],
    });
    mediaHost = createConversationHost({ machine, store: memoryStore() });
    mediaServer = createServer(toNodeListener(createViewerHandler(mediaHost, { title: 'media under test' })));
    await new Promise<void>((resolve) => mediaServer.listen(0, '127.0.0.1', resolve));
    mediaUrl = `http://127.0.0.1:${(mediaServer.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    mediaServer?.closeAllConnections();
    await new Promise((resolve) => mediaServer?.close(resolve));
    await mediaHost?.close();
  });

  it("shows a stored conversation's inline images as thumbnails with their labels, a by-URL image as a link, a PDF as its label", async () => {
    const user = [
      { type: 'text', text: 'What changed?' },
      { type: 'image', data: photo, mediaType: 'image/png' },
      { type: 'image', data: 'https://example.com/after.png' },
      { type: 'file', data: pdf, mediaType: 'application/pdf', filename: 'q3.pdf' },
    ] as const;
    await mediaHost.send('m-media', { type: 'user.message', content: [...user] });
    for (let tries = 0; (await mediaHost.get('m-media'))?.status !== 'done'; tries++) {
      if (tries > 500) throw new Error('m-media never finished');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Every address the page asks for, from its first request.
    const requested: string[] = [];
    const listen = (page: Page) => page.on('request', (request) => requested.push(request.url()));
    browser.context.on('page', listen);
    const { page, problems } = await open(`${mediaUrl}#m-media`).finally(() => browser.context.off('page', listen));
    await until(page, 'the conversation done', async () => (await body(page, 'status')) === 'done');

    const [photoLabel, , pdfLabel] = [mediaLabel(user[1]), mediaLabel(user[2]), mediaLabel(user[3])];
    const shotLabel = mediaLabel({ type: 'image', data: screenshot, mediaType: 'image/png' });
    expect(photoLabel).toMatch(/^\[image image\/png, \d+ B\]$/);
    const thumbnails = (role: string) =>
      page.$$eval(`#messages li[data-role=${role}] img.thumb`, (images) =>
        (images as unknown as Array<{ alt: string; naturalWidth: number; src: string }>).map((image) => ({
          alt: image.alt,
          width: image.naturalWidth,
          scheme: image.src.split(':')[0],
        })),
      );
    await until(page, 'the thumbnails decoded', () =>
      page.$$eval('#messages img', (images) => (images as unknown as Array<{ complete: boolean }>).every((image) => image.complete)),
    );
    // The user's image, decoded by the browser, its label beside it; the tool result's under its text.
    expect(await thumbnails('user')).toEqual([{ alt: photoLabel, width: 86, scheme: 'data' }]);
    expect(await thumbnails('tool')).toEqual([{ alt: shotLabel, width: 46, scheme: 'data' }]);
    const userText = await page.textContent('#messages li[data-role=user]');
    expect(userText).toContain('What changed?');
    expect(userText).toContain(photoLabel);
    expect(userText).toContain(pdfLabel);
    expect(await page.textContent('#messages li[data-role=tool]')).toContain(`→ screenshot: The page now:\n${shotLabel}`);
    // A by-URL image is a link named by its label; the page never fetches it.
    expect(
      await page.$$eval('#messages li[data-role=user] a', (links) => links.map((link) => [link.textContent, link.getAttribute('href')])),
    ).toEqual([['[image]', 'https://example.com/after.png']]);
    // No part's bytes as text.
    expect(await page.textContent('#messages')).not.toContain(photo.slice(0, 40));
    await shot(page, 'media-thumbnails');

    // Whatever a part holds, only base64 of a raster image type becomes a data: URL, and only an https: URL a link.
    const hostile = await page.evaluate(() => {
      type Rendered = { innerHTML: string; querySelectorAll(selector: string): { length: number } };
      const render = (globalThis as unknown as { partNodesOf: (message: unknown) => Rendered[] }).partNodesOf;
      const nodes = render({
        role: 'user',
        content: [
          { type: 'image', data: 'PHN2Zz48L3N2Zz4=', mediaType: 'image/svg+xml' },
          { type: 'image', data: '"><img src=x onerror=alert(1)>', mediaType: 'image/png' },
          { type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png" onerror="alert(1)' },
          { type: 'image', data: 'javascript:alert(1)' },
          { type: 'file', data: 'AAAA', mediaType: 'audio/wav' },
        ],
      });
      return nodes.map((node) => ({
        html: node.innerHTML,
        images: node.querySelectorAll('img').length,
        links: node.querySelectorAll('a').length,
      }));
    });
    expect(hostile.map(({ images, links }) => images + links)).toEqual([0, 0, 0, 0, 0]);
    expect(hostile.map(({ html }) => html)).toEqual([
      '<span class="media-label">[image image/svg+xml, 11 B]</span>',
      '<span class="media-label">[image image/png]</span>',
      '<span class="media-label">[image image/png" onerror="alert(1), 8 B]</span>',
      '<span class="media-label">[image]</span>',
      '<span class="media-label">[file audio/wav, 3 B]</span>',
    ]);
    expect(requested.filter((address) => !address.startsWith(mediaUrl) && !address.startsWith('data:'))).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});

describe('the viewer page at a past step of a streamed answer', () => {
  const gate = deferred();
  const reached = deferred();
  let streamHost: ConversationHost;
  let streamServer: Server;
  let streamUrl: string;

  beforeAll(async () => {
    // The first answer's text is done (then its tool runs); the second streams, held halfway by the gate.
    const model = scriptedModel([
      { text: 'Let me look that up.', toolCalls: [{ id: 'call_look', name: 'lookup', args: {} }] },
      gatedAnswer(gate.promise, reached.resolve),
    ]);
    const machine = createConversationMachine({
      provider: handlerProvider(model.handler),
      tools: [defineTool({ name: 'lookup', description: 'Looks it up', parameters: z.object({}), execute: async () => 'found' })],
    });
    streamHost = createConversationHost({ machine, store: memoryStore() });
    streamServer = createServer(toNodeListener(createViewerHandler(streamHost, { title: 'streaming under test' })));
    await new Promise<void>((resolve) => streamServer.listen(0, '127.0.0.1', resolve));
    streamUrl = `http://127.0.0.1:${(streamServer.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    gate.resolve();
    streamServer?.closeAllConnections();
    await new Promise((resolve) => streamServer?.close(resolve));
    await streamHost?.close();
  });

  const shownText = async (page: Page) => ({
    text: await page.textContent('#text'),
    heading: await page.textContent('#text-when'),
    state: await page.textContent('#status-when'),
  });

  it('shows the text streamed at the step the slider is on, under a heading naming it; the newest step is live again', async () => {
    await streamHost.send('s-stream', { type: 'user.message', content: 'Look it up' });
    await reached.promise;
    const halfway = gatedText.slice(0, 20);
    const { page, problems } = await open(`${streamUrl}#s-stream`);
    await until(page, 'the second answer streaming', async () => (await page.textContent('#text')) === halfway);
    expect(await shownText(page)).toEqual({ text: halfway, heading: 'now', state: 'now' });
    const steps = (await streamHost.history('s-stream')) as ConversationStep[];
    expect(steps.map((step) => JSON.stringify(step.state))).toEqual([
      '{"requesting":"waiting"}',
      '{"executingTools":"running"}',
      '{"requesting":"waiting"}',
    ]);
    const [first, tools] = steps as [ConversationStep, ConversationStep];
    await until(page, 'all three steps', async () => (await page.getAttribute('#slider', 'max')) === '2');

    // Back to the first request: its answer's text, while the second one goes on streaming.
    await page.fill('#slider', '0');
    await until(page, 'the first step', async () => (await body(page, 'step')) === String(first.seq));
    expect(await shownText(page)).toEqual({ text: 'Let me look that up.', heading: `at step ${first.seq}`, state: `at step ${first.seq}` });
    await shot(page, 'streamed-at-past-step');

    // The tools' step: no answer was streaming.
    await page.fill('#slider', '1');
    await until(page, 'the tools step', async () => (await body(page, 'step')) === String(tools.seq));
    expect(await shownText(page)).toEqual({ text: '', heading: `at step ${tools.seq}`, state: `at step ${tools.seq}` });
    const placeholder = await page.$eval('#text', (node) => (globalThis as unknown as Styles).getComputedStyle(node, '::before').content);
    expect(placeholder).toBe('"nothing streaming"');

    // The newest step is live: the text streaming now, and what streams from then on.
    await page.fill('#slider', '2');
    await until(page, 'live', async () => (await body(page, 'step')) === 'live');
    expect(await shownText(page)).toEqual({ text: halfway, heading: 'now', state: 'now' });
    expect(await page.getAttribute('#live', 'aria-pressed')).toBe('true');
    gate.resolve();
    await until(page, 'the second answer whole', async () => (await page.textContent('#text')) === gatedText);
    await until(page, 'done', async () => (await body(page, 'status')) === 'done');
    await shot(page, 'streamed-live');

    // The second request, now a past step, shows its whole answer.
    await page.fill('#slider', '2');
    await until(page, 'the second request', async () => (await body(page, 'step')) === String(steps[2]?.seq));
    expect(await shownText(page)).toEqual({ text: gatedText, heading: `at step ${steps[2]?.seq}`, state: `at step ${steps[2]?.seq}` });
    expect(await page.textContent('#error')).toBe('');
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});

describe('the viewer page without elkjs', () => {
  it('says in the chart area what to install and why, as `actorloop view` says once at start; the rest works', async () => {
    // `actorloop view` as a fresh install runs it: elkjs, an optional peer, cannot be loaded in that process.
    const hideElk = { NODE_OPTIONS: `--import=${pathToFileURL(supportScript('without-elkjs.ts')).href}` };
    const { url: address, child, done } = await startView([], hideElk);
    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    try {
      await page.goto(address);
      await page.waitForSelector('#chart .missing-package');
      const said = (await page.textContent('#chart')) ?? '';
      expect(said).toContain('No statechart.');
      expect(said).toContain('optional package elkjs, which is not installed');
      expect(said).toContain('reload the page');
      expect(await page.textContent('#chart .missing-package pre')).toBe('npm install elkjs');
      // Said in words, not as the problem's JSON.
      expect(said).not.toContain('{');
      expect(said).not.toContain('urn:actorloop');
      // The rest of the page works: the (empty) list of conversations is read, and no error is shown.
      await until(page, 'the list read', async () => (await page.textContent('#status')) === 'no conversation yet');
      expect(await (await fetch(`${address}api/conversations`)).json()).toEqual([]);
      expect(await page.textContent('#error')).toBe('');
      await shot(page, 'without-elkjs');
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      child.kill('SIGTERM');
    }
    const { code, stderr } = await done;
    expect(code).toBe(0);
    const hint = stderr.split('\n').filter((line) => line.includes('npm install elkjs'));
    expect(hint).toEqual([
      'actorloop: the statechart is laid out by the optional package elkjs, which is not installed: install it beside actorloop (npm install elkjs), then reload the page; conversations, steps, approvals and forks work without it',
    ]);
  }, 60_000);
});
