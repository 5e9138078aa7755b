/**
 * The viewer's page in headless Chromium over a real host (`createViewerHandler` on a real socket):
 * it follows the newest conversation, approves, travels back through the stored steps (chart lit
 * and messages at that step), returns to live, forks from a step and switches to the fork, denies
 * and cancels on other conversations, and shows an unknown id as an inline error while the page
 * goes on working. A screenshot per control is kept in test-artifacts/viewer/.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toNodeListener } from '../src/http/index.js';
import type { ConversationHost, ConversationStep } from '../src/index.js';
import { createViewerHandler } from '../src/observe/inspect/index.js';
import { launchChromium } from './support/chromium.js';
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

async function open(address: string): Promise<Opened> {
  const page = await browser.context.newPage();
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
