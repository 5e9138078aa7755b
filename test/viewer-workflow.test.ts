/**
 * The viewer over a host of a workflow (DESIGN §18: "the viewer draws the workflow's chart with each
 * running conversation's chart nested and lit"): the sample order workflow (two research
 * conversations at once, then a payer whose `charge` needs approval, then `order.confirm`) on a
 * memory store, `createViewerHandler` on a real socket, the page driven in headless Chromium. The
 * chart is the workflow's own, each conversation it invokes drawn inside the state that runs it and
 * lit at that conversation's state; the page lists the runs, their conversations (state, streamed
 * text, messages), approvals with their path, output, cancel, time travel and fork. Screenshots go
 * to `$TMPDIR/actorloop-viewer-workflow/`. The chart code's own checks for machines other than a
 * conversation come first (no browser).
 */
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { type AnyStateMachine, assign, createMachine, setup, spawnChild } from 'xstate';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toNodeListener } from '../src/http/index.js';
import {
  type ConversationHost,
  type ConversationStep,
  conversationInput,
  createConversationHost,
  createConversationMachine,
  defineTool,
  handlerProvider,
  memoryStore,
  withBudget,
} from '../src/index.js';
import { chartStates } from '../src/observe/chart/chart.js';
import { fullChart } from '../src/observe/chart/full-chart.js';
import { machineChart } from '../src/observe/chart/machine-chart.js';
import { machineConfigOf } from '../src/observe/chart/machine-config.js';
import { machineDefinitionJson } from '../src/observe/chart/machine-definition.js';
import { overviewChart } from '../src/observe/chart/overview-chart.js';
import { createViewerHandler } from '../src/observe/inspect/index.js';
import { legibleLabelPx } from '../src/observe/inspect/light-chart-script.js';
import { launchChromium } from './support/chromium.js';
import { orderWorkflow } from './support/hosted-workflow.js';
import { shapeDifferences } from './support/machine-shape.js';
import { scriptedModel } from './support/scripted-model.js';

const shots = join(tmpdir(), 'actorloop-viewer-workflow');
mkdirSync(shots, { recursive: true });

const provider = handlerProvider(scriptedModel([]).handler);

/** A workflow that spawns one conversation under an id made at run time; its `charge` waits for approval. */
function spawningWorkflow() {
  const charge = defineTool({
    name: 'charge',
    description: 'Charges the card.',
    parameters: z.object({}),
    needsApproval: true,
    execute: () => 'charged',
  });
  const model = scriptedModel([{ toolCalls: [{ id: 'charge-9', name: 'charge', args: {} }] }, { text: 'charged it' }]);
  const summarizer = createConversationMachine({ provider: handlerProvider(model.handler), tools: [charge] });
  return setup({ actors: { summarizer } }).createMachine({
    id: 'map',
    context: { next: 0 },
    initial: 'mapping',
    states: {
      mapping: {
        entry: [
          spawnChild('summarizer', { id: ({ context }) => `summary-${context.next}`, input: conversationInput('sum') }),
          assign({ next: ({ context }) => context.next + 1 }),
        ],
        on: { finish: 'finished' },
      },
      finished: { type: 'final' },
    },
  });
}

describe('the chart of a machine other than a conversation', () => {
  it("draws the workflow's states with each conversation it invokes inside the state that runs it", () => {
    const { machine } = orderWorkflow();
    const overview = machineChart(machine, 'overview');
    expect(overview.states.map((state) => state.path)).toEqual(['researching', 'paying', 'confirming', 'confirmed', 'failed']);
    const paths = chartStates(overview).map((state) => state.path);
    // In the overview, inside the top-level state; in the full chart, inside the invoking state itself.
    expect(paths).toEqual(
      expect.arrayContaining(['researching/left', 'researching/right', 'paying/payer', 'paying/payer/awaitingApproval']),
    );
    expect(chartStates(overview).find((state) => state.path === 'researching/left')).toMatchObject({
      label: 'left (researcher)',
      invoked: { id: 'left', src: 'researcher' },
    });
    // The workflow's arrows in its own words: a fallback says what did not hold; a parallel state's done by its path.
    expect(overview.transitions.filter((transition) => !transition.source.includes('/'))).toEqual([
      { source: 'researching', target: 'paying', lines: ['done: researching'] },
      {
        source: 'researching',
        target: 'failed',
        lines: ['done: left, not finished', 'error: left', 'done: right, not finished', 'error: right'],
      },
      { source: 'paying', target: 'confirming', lines: ['done: payer, finished'] },
      { source: 'paying', target: 'failed', lines: ['done: payer, not finished', 'error: payer'] },
      { source: 'confirming', target: 'confirmed', lines: ['order.confirm'] },
    ]);
    const full = chartStates(machineChart(machine, 'full')).map((state) => state.path);
    expect(full).toEqual(expect.arrayContaining(['researching.left.asking/left/requesting', 'paying/payer/idle', 'failed']));
  });

  it('a conversation machine draws as it always did', () => {
    const conversation = createConversationMachine({ provider });
    const definition = machineDefinitionJson(conversation);
    expect(machineChart(conversation, 'overview')).toEqual(overviewChart(definition));
    expect(machineChart(conversation, 'full')).toEqual(fullChart(definition));
  });

  it("reads states by where they are, not by their ids; one running state keeps its arrows; the conversation's words stay its own", () => {
    const machine = setup({}).createMachine({
      id: 'flow',
      initial: 'preparing',
      states: {
        preparing: { always: 'waiting' },
        waiting: { on: { go: 'over', drop: '#flow-lost' } },
        over: { type: 'final' },
        lost: { id: 'flow-lost', type: 'final' },
      },
    });
    const chart = machineChart(machine, 'overview');
    expect(chart.states.map((state) => state.path)).toEqual(['preparing', 'waiting', 'over', 'lost']);
    expect(chart.transitions).toEqual([
      // A `preparing` of yours is not the conversation's (`request`).
      { source: 'preparing', target: 'waiting', lines: ['always'] },
      { source: 'waiting', target: 'over', lines: ['go'] },
      { source: 'waiting', target: 'lost', lines: ['drop'] },
    ]);
    expect(chart.notes).toEqual([]);
    expect(chartStates(machineChart(machine, 'full')).map((state) => state.path)).toContain('lost');
  });

  it('a conversation spawned with an id decided at run time is boxed under the state it lands in', () => {
    const boxes = chartStates(machineChart(spawningWorkflow(), 'overview')).filter((state) => state.invoked);
    expect(boxes.map(({ path, label, invoked }) => ({ path, label, invoked }))).toEqual([
      { path: 'mapping/*summarizer', label: 'summarizer (spawned)', invoked: { id: undefined, src: 'summarizer' } },
    ]);
  });

  it("a workflow inside the workflow (yours inside withBudget's) is boxed with its own chart, its conversations inside it", () => {
    const budgeted = withBudget(orderWorkflow().machine, { maxTotalTokens: 100_000 });
    const chart = machineChart(budgeted, 'overview');
    expect(
      chartStates(chart)
        .filter((state) => state.invoked)
        .map((state) => state.path),
    ).toEqual([
      'running/workflow',
      'running/workflow/researching/left',
      'running/workflow/researching/right',
      'running/workflow/paying/payer',
    ]);
    // Its arrows keep their words; a conversation's, inside, have none.
    expect(chart.transitions).toContainEqual({
      source: 'running/workflow/confirming',
      target: 'running/workflow/confirmed',
      lines: ['order.confirm'],
    });
    expect(chart.transitions.filter((transition) => transition.source.startsWith('running/workflow/paying/payer/'))).not.toEqual([]);
    expect(
      chart.transitions.filter(
        (transition) => transition.source.startsWith('running/workflow/paying/payer/') && transition.lines.length > 0,
      ),
    ).toEqual([]);
  });

  it("machineConfigOf writes the workflow's config: plain createMachine() makes a machine of the same shape", () => {
    const { machine } = orderWorkflow();
    const config = machineConfigOf(machine);
    expect(config.states?.paying?.invoke).toMatchObject({ id: 'payer', src: 'payer', onDone: [{ guard: 'finished' }, {}] });
    const again = createMachine(JSON.parse(JSON.stringify(config)) as never) as unknown as AnyStateMachine;
    expect(shapeDifferences(machine, again)).toEqual([]);
  });
});

describe('the viewer page over a workflow host', () => {
  let browser: { context: BrowserContext; close: () => Promise<void> };
  let host: ConversationHost<ReturnType<typeof orderWorkflow>['machine']>;
  let server: Server;
  let url: string;

  beforeAll(async () => {
    const { machine } = orderWorkflow();
    host = createConversationHost({ machine, store: memoryStore() });
    server = createServer(toNodeListener(createViewerHandler(host, { title: 'order workflow' })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    browser = await launchChromium({ width: 1400, height: 1000 });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await host?.close();
  });

  const body = (page: Page, name: string): Promise<string | null> =>
    page.$eval('body', (node, key) => node.getAttribute(`data-${key}`), name);
  const lit = (page: Page) => page.$$eval('#chart g.state.active', (nodes) => nodes.map((node) => node.getAttribute('data-state')));
  const shot = (page: Page, name: string) => page.screenshot({ path: join(shots, `${name}.png`) });

  async function until(page: Page, what: string, check: () => Promise<boolean>): Promise<void> {
    for (let tries = 0; !(await check()); tries++) {
      if (tries > 400) {
        await shot(page, `failed-${what.replace(/\W+/g, '-')}`);
        throw new Error(`the page never showed: ${what}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  async function settled(id: string, status: string): Promise<void> {
    for (let tries = 0; (await host.get(id))?.status !== status; tries++) {
      if (tries > 500) throw new Error(`${id} never became ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  type Svg = { getBoundingClientRect(): { width: number }; viewBox: { baseVal: { width: number } } };
  type Styles = { getComputedStyle(node: unknown): { fontSize: string } };
  type Document = { querySelector(selector: string): (Svg & { querySelectorAll(selector: string): Iterable<unknown> }) | null };

  /**
   * Every text of the chart as drawn on the screen: the smallest font size, in CSS pixels. Measured
   * once the chart is laid out (a chart just inserted has no size until the page's next layout).
   */
  const smallestChartText = async (page: Page): Promise<number> => {
    const measured = await page.waitForFunction(() => {
      const svg = (globalThis as unknown as { document: Document }).document.querySelector('#chart svg');
      if (!svg || svg.viewBox.baseVal.width === 0 || svg.getBoundingClientRect().width === 0) return false;
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      const styles = globalThis as unknown as Styles;
      const sizes = [...svg.querySelectorAll('text')].map((text) => Number.parseFloat(styles.getComputedStyle(text).fontSize) * scale);
      return sizes.length > 0 && sizes.every(Number.isFinite) ? Math.min(...sizes) : false;
    });
    return (await measured.jsonValue()) as number;
  };

  it('draws the workflow lit with its conversations inside, approves, travels back, forks, cancels', async () => {
    // The chart routes: the workflow's states, each conversation inside the state that runs it.
    const svg = await (await fetch(`${url}chart/overview.svg`)).text();
    for (const state of ['researching', 'paying', 'confirming', 'confirmed', 'failed', 'paying/payer/awaitingApproval'])
      expect(svg).toContain(`data-state="${state}"`);
    expect(svg).toContain('data-invoke="payer" data-src="payer"');
    expect(await (await fetch(`${url}chart/full.svg`)).text()).toContain('data-state="researching.left.asking/left/requesting"');

    const page = await browser.context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    await page.goto(url);
    await page.waitForSelector('#chart svg');
    expect(await body(page, 'workflow')).toBe('true');
    expect(await page.textContent('header label')).toContain('workflow run');

    // A run started after the page opened: followed, the payer's approval waiting with its path.
    await host.start('o-1', { input: { item: 'lamp' } });
    await until(
      page,
      'o-1 waiting',
      async () => (await body(page, 'conversation')) === 'o-1' && (await body(page, 'status')) === 'awaitingApproval',
    );
    await until(page, 'the payer lit', async () => (await lit(page)).includes('paying/payer/awaitingApproval'));
    expect(await lit(page)).toEqual(['paying', 'paying/payer', 'paying/payer/awaitingApproval']);
    expect(await body(page, 'conversations')).toBe('payer:awaitingApproval');
    expect(await page.textContent('#approvals li .call')).toBe('payer / charge({"cents":8900})');
    expect(await smallestChartText(page)).toBeGreaterThanOrEqual(legibleLabelPx);
    // The lit conversation state in the middle of the chart's holder.
    expect(
      await page.$eval('#chart', (holder) => {
        const box = (
          holder.querySelector('g.state.active[data-state="paying/payer/awaitingApproval"]') as unknown as Svg
        ).getBoundingClientRect() as unknown as { top: number; bottom: number };
        const frame = holder.getBoundingClientRect();
        return box.top >= frame.top && box.bottom <= frame.top + holder.clientHeight;
      }),
    ).toBe(true);
    await shot(page, 'waiting-for-approval');

    // Approve: relayed down to the payer; the workflow goes on to `confirming`, its own event.
    await page.click('#approvals button.approve');
    await until(page, 'confirming', async () => (await body(page, 'state')) === 'confirming');
    expect(await body(page, 'status')).toBe('running');
    expect(await lit(page)).toEqual(['confirming']);
    expect(await page.textContent('#conversations')).toBe('no conversation running');
    await shot(page, 'approved-confirming');

    // Back in time: researching, both conversations lit inside it, each at its own state.
    const steps = (await host.history('o-1')) as ConversationStep[];
    const researching = steps.findIndex((step) => typeof step.state === 'object');
    const answering = steps.findIndex((step) => JSON.stringify(step.state).includes('"left":"found"'));
    expect(researching).toBeGreaterThanOrEqual(0);
    await page.fill('#slider', String(researching));
    await until(page, 'the first step', async () => (await body(page, 'step')) === String(steps[researching]?.seq));
    const then = await host.get('o-1', { seq: steps[researching]?.seq as number });
    // Each conversation at its top state, as the page lists them (`left:requesting.waiting` read as `left:requesting`).
    const expected = (then?.conversations ?? []).map(
      ({ path, value }) => `${path.join('/')}:${typeof value === 'string' ? value : Object.keys(value as object)[0]}`,
    );
    expect(expected.map((one) => one.split(':')[0])).toEqual(['left', 'right']);
    expect(await body(page, 'state')).toBe('researching (left: asking, right: asking)');
    expect(((await body(page, 'conversations')) ?? '').split(' ').map((one) => one.replace(/\..*$/, ''))).toEqual(expected);
    const litThen = await lit(page);
    expect(litThen).toEqual(expect.arrayContaining(['researching', 'researching/left', 'researching/right']));
    expect(litThen.filter((path) => path?.startsWith('researching/left/'))).toHaveLength(1);
    expect(litThen.filter((path) => path?.startsWith('researching/right/'))).toHaveLength(1);
    expect(await page.locator('#approvals button.approve').count()).toBe(0);
    expect(await page.isDisabled('#cancel')).toBe(true);
    await shot(page, 'step-researching');

    // The step at which `left` streamed its answer: its text, from the stream's agent.event items.
    await page.fill('#slider', String(answering - 1));
    await until(page, 'the answering step', async () => (await body(page, 'step')) === String(steps[answering - 1]?.seq));
    await until(
      page,
      "left's streamed text",
      async () => (await page.textContent('#conversations li[data-path="left"] .streamed')) === 'left found',
    );
    await page.click('#conversations li[data-path="left"] summary');
    expect(await page.textContent('#conversations li[data-path="left"] details')).toContain('left: find lamp');
    await shot(page, 'step-left-answering');

    // Fork from the step that waited for approval: the fork is selected and waits as that step did.
    const waiting = steps.findIndex((step) => step.status === 'awaitingApproval');
    await page.fill('#slider', String(waiting));
    await until(page, 'the waiting step', async () => (await body(page, 'status')) === 'awaitingApproval');
    expect(await lit(page)).toEqual(['paying', 'paying/payer', 'paying/payer/awaitingApproval']);
    await page.click('#fork');
    await until(page, 'the fork selected', async () => (await body(page, 'conversation'))?.startsWith('o-1-fork-') === true);
    await until(page, 'the fork waiting', async () => (await body(page, 'status')) === 'awaitingApproval');
    expect((await host.get('o-1'))?.value).toBe('confirming');

    // Cancel: every conversation stopped, the run ends halted with its output shown.
    await page.click('#cancel');
    await until(page, 'the fork halted', async () => (await body(page, 'status')) === 'halted');
    expect(await page.textContent('#output')).toContain('"reason": "cancelled"');
    await shot(page, 'fork-cancelled');

    // Back to o-1 from the list of runs; live again, it confirms and ends done with its output.
    await page.selectOption('#picker', 'o-1');
    await until(
      page,
      'o-1 again',
      async () => (await body(page, 'conversation')) === 'o-1' && (await body(page, 'state')) === 'confirming',
    );
    await host.send('o-1', { type: 'order.confirm' });
    await until(page, 'o-1 done', async () => (await body(page, 'status')) === 'done');
    expect(await lit(page)).toEqual(['confirmed']);
    expect(await page.textContent('#output')).toContain('"payment": "paid 89.00"');
    await shot(page, 'done-with-output');
    expect(await page.textContent('#error')).toBe('');
    expect(problems).toEqual([]);
    await page.close();
  }, 40_000);

  it('the full chart nests each conversation in the state that invokes it, lit there', async () => {
    await host.start('o-2', { input: { item: 'desk' } });
    await settled('o-2', 'awaitingApproval');
    const page = await browser.context.newPage();
    await page.goto(`${url}#o-2`);
    await page.waitForSelector('#chart svg');
    await page.click('#chart-tabs button[data-kind="full"]');
    await page.waitForSelector('#chart.full g.state.active[data-state="paying/payer/awaitingApproval"]');
    expect(await smallestChartText(page)).toBeGreaterThanOrEqual(legibleLabelPx);
    await page.fill('#slider', '0');
    await page.waitForSelector('#chart.full g.state.active[data-state^="researching.left.asking/left/"]');
    expect(await lit(page)).toEqual(
      expect.arrayContaining(['researching', 'researching.left', 'researching.left.asking', 'researching.left.asking/left']),
    );
    await shot(page, 'full-chart-first-step');
    await page.close();
  }, 30_000);

  it("lights a conversation of your workflow inside withBudget's in its box, in the box of your workflow", async () => {
    const budgetHost = createConversationHost({
      machine: withBudget(orderWorkflow().machine, { maxTotalTokens: 100_000 }),
      store: memoryStore(),
    });
    const budgetServer = createServer(toNodeListener(createViewerHandler(budgetHost, { title: 'budgeted workflow' })));
    await new Promise<void>((resolve) => budgetServer.listen(0, '127.0.0.1', resolve));
    const page = await browser.context.newPage();
    try {
      await budgetHost.start('b-1', { input: { item: 'lamp' } });
      await page.goto(`http://127.0.0.1:${(budgetServer.address() as AddressInfo).port}/#b-1`);
      await page.waitForSelector('#chart g.state.active[data-state="running/workflow/paying/payer/awaitingApproval"]');
      expect(await lit(page)).toEqual([
        'running',
        'running/workflow',
        'running/workflow/paying',
        'running/workflow/paying/payer',
        'running/workflow/paying/payer/awaitingApproval',
      ]);
      expect(await page.textContent('#approvals li .call')).toBe('workflow / payer / charge({"cents":8900})');
      expect(await smallestChartText(page)).toBeGreaterThanOrEqual(legibleLabelPx);
      await shot(page, 'budgeted-waiting');
      await page.click('#approvals button.approve');
      // Your workflow goes on to `confirming`; the view says only the wrapper's state (`running`), no conversation runs now.
      await until(page, 'the payer done', async () => (await body(page, 'conversations')) === '');
      expect(await lit(page)).toEqual(['running']);
      expect(await page.textContent('#approvals')).toContain('no tool call waits for approval');
    } finally {
      await page.close();
      budgetServer.closeAllConnections();
      await new Promise((resolve) => budgetServer.close(resolve));
      await budgetHost.close();
    }
  }, 30_000);

  it('lights a conversation spawned under an id made at run time in the box of its spawn; its approval works', async () => {
    const mapHost = createConversationHost({ machine: spawningWorkflow(), store: memoryStore() });
    const mapServer = createServer(toNodeListener(createViewerHandler(mapHost, { title: 'map workflow' })));
    await new Promise<void>((resolve) => mapServer.listen(0, '127.0.0.1', resolve));
    const page = await browser.context.newPage();
    try {
      await mapHost.start('m-1', { input: {} });
      await page.goto(`http://127.0.0.1:${(mapServer.address() as AddressInfo).port}/#m-1`);
      await page.waitForSelector('#chart g.state.active[data-state="mapping/*summarizer/awaitingApproval"]');
      expect(await lit(page)).toEqual(['mapping', 'mapping/*summarizer', 'mapping/*summarizer/awaitingApproval']);
      expect(await page.textContent('#approvals li .call')).toBe('summary-0 / charge({})');
      await shot(page, 'spawned-waiting');
      await page.click('#approvals button.approve');
      await until(page, 'the spawned conversation done', async () => (await body(page, 'conversations')) === '');
      expect(await lit(page)).toEqual(['mapping']);
    } finally {
      await page.close();
      mapServer.closeAllConnections();
      await new Promise((resolve) => mapServer.close(resolve));
      await mapHost.close();
    }
  }, 30_000);
});
