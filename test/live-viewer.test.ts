/**
 * `startLiveViewer` (actorloop/inspect, docs/observe.md "The viewer"): the one viewer —
 * `createViewerHandler` served by `serveViewer` — over a real socket, showing what this process
 * runs: conversation and workflow actors (recorded step by step: list, view, history, the view at a
 * step, the stream as Server-Sent Events; approve, deny, cancel and fork over HTTP) and feeds
 * (read-only); its guard, its options, the example as a process, the page without elkjs; and the
 * page in headless Chromium (screenshots in `test-results/live-viewer/`).
 */
import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AnyActorRef, createActor, toPromise, waitFor } from 'xstate';
import { z } from 'zod';
import {
  agentTool,
  type ConversationStep,
  type ConversationView,
  createConversationMachine,
  defineTool,
  handlerProvider,
  InvalidOptionsError,
  toolContent,
} from '../src/index.js';
import { type ConversationFeed, type LiveViewer, startLiveViewer } from '../src/observe/inspect/index.js';
import { legibleLabelPx } from '../src/observe/inspect/light-chart-script.js';
import { approvalMachine, transferCallId } from './support/approval-scenario.js';
import { builtTree, supportScript } from './support/built-tree.js';
import { launchChromium, resultsDir } from './support/chromium.js';
import { orderWorkflow } from './support/hosted-workflow.js';
import { deferred } from './support/run-conversation.js';
import { listenerCounts, partialThenFail } from './support/scripted-actor.js';
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
const actors: AnyActorRef[] = [];
async function viewer(options: Parameters<typeof startLiveViewer>[0] = {}) {
  const started = await startLiveViewer(options);
  viewers.push(started);
  return started;
}
/** An actor stopped after the test (the viewer never stops what it watches). */
function kept<T extends AnyActorRef>(actor: T): T {
  actors.push(actor);
  return actor;
}
afterEach(async () => {
  for (const started of viewers.splice(0)) await started.close();
  for (const actor of actors.splice(0)) actor.stop();
});

type Answer = { status: number; type: string; text: string; json: <T = Record<string, unknown>>() => T };

async function call(live: LiveViewer, path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(`${live.url}${path}`, init);
  const text = await response.text();
  return { status: response.status, type: response.headers.get('content-type') ?? '', text, json: <T>() => JSON.parse(text) as T };
}
const post = (live: LiveViewer, path: string, body: unknown) =>
  call(live, path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
type Shown = ConversationView & { chart?: string; workflow?: boolean };
const viewOf = async (live: LiveViewer, id: string) => (await call(live, `api/conversations/${encodeURIComponent(id)}`)).json<Shown>();
const historyOf = async (live: LiveViewer, id: string) =>
  (await call(live, `api/conversations/${encodeURIComponent(id)}/history`)).json<ConversationStep[]>();
const listOf = async (live: LiveViewer) =>
  (await call(live, 'api/conversations')).json<Array<{ id: string; label?: string; status: string; owner: string }>>();

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  for (let tries = 0; tries < 500; tries++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never: ${what}`);
}

type Item = { id: string; event: { type: string; status?: string; value?: unknown } & Record<string, unknown> };

/** Reads a conversation's Server-Sent Events until `enough` holds of the items so far; each item's `id:` line checked against its data. */
async function readEvents(live: LiveViewer, id: string, enough: (items: Item[]) => boolean, headers: Record<string, string> = {}) {
  const response = await fetch(`${live.url}api/conversations/${encodeURIComponent(id)}/events`, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  const items = () =>
    [...text.matchAll(/^id: (.+)\ndata: (.+)\n\n/gm)].map(([, line, data]) => {
      const item = JSON.parse(data as string) as Item;
      expect(item.id).toBe(line);
      return item;
    });
  while (!enough(items())) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return { text, items: items() };
}

/** A request with a chosen Host header (fetch does not let one set it). */
function raw(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method, headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, type: String(response.headers['content-type']), body }));
    });
    request.on('error', reject);
    request.end();
  });
}

/** `add` (needs approval when `approval`), a model that calls it once and then answers, and a count of its runs. */
function adding({ approval = false, gate }: { approval?: boolean; gate?: Promise<void> } = {}) {
  const ran: number[] = [];
  const add = defineTool({
    name: 'add',
    description: 'Add two numbers',
    parameters: z.object({ a: z.number(), b: z.number() }),
    needsApproval: approval,
    execute: async ({ a, b }) => {
      await gate;
      ran.push(a + b);
      return a + b;
    },
  });
  const model = scriptedModel([{ toolCalls: [{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }] }, { text: 'The sum is 5.' }]);
  const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools: [add] });
  return { machine, ran, actor: () => kept(createActor(machine, { input: { messages: [] } })) };
}

describe('startLiveViewer: the server', () => {
  it('listens on 127.0.0.1 by default and answers only requests addressed to a loopback name', async () => {
    const live = await viewer();
    expect(live.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(live.url).toBe(`http://127.0.0.1:${live.port}/`);
    expect((await raw(live.url)).status).toBe(200);
    expect((await raw(live.url, { host: `localhost:${live.port}` })).status).toBe(200);
    expect((await raw(live.url, { host: `[::1]:${live.port}` })).status).toBe(200);
    // DNS rebinding: a page of another name that resolves here is refused, on every route.
    for (const path of ['', 'api/conversations', 'chart/overview.svg']) {
      const rebound = await raw(`${live.url}${path}`, { host: `evil.example:${live.port}` });
      expect(rebound.status).toBe(403);
      expect(rebound.type).toBe('application/problem+json');
      expect(JSON.parse(rebound.body)).toMatchObject({ type: 'urn:actorloop:problem:forbidden', status: 403 });
    }
    const posted = await raw(live.url, {}, 'POST');
    expect(posted.status).toBe(405);
    expect(JSON.parse(posted.body)).toMatchObject({ status: 405, field: 'method', detail: 'POST: expected GET' });
    // The old live viewer's routes are gone: one set of routes for every source.
    for (const path of ['nothing-here', 'api/runs', 'events?run=r1', 'charts/chart1/overview.svg']) {
      const missing = await raw(`${live.url}${path}`);
      expect(missing.status, path).toBe(404);
      expect(JSON.parse(missing.body)).toMatchObject({ type: 'urn:actorloop:problem:not-found', field: 'path' });
    }
  });

  it('listening on every interface (0.0.0.0) it answers whatever name it is reached by', async () => {
    const live = await viewer({ host: '0.0.0.0' });
    expect(live.url).toBe(`http://127.0.0.1:${live.port}/`);
    expect((await raw(live.url, { host: `viewer.internal:${live.port}` })).status).toBe(200);
  });

  it('the page allows nothing from elsewhere, and carries its title', async () => {
    const live = await viewer({ title: 'support <bot>' });
    const response = await fetch(live.url);
    expect(response.headers.get('content-security-policy')).toMatch(
      /^default-src 'none'; script-src 'nonce-[^']+'; style-src 'nonce-[^']+' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:;/,
    );
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await response.text();
    expect(html).toContain('<title>support &lt;bot&gt;</title>');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+stylesheet|https?:\/\/(?!www\.w3\.org)/);
    expect(await (await fetch((await viewer()).url)).text()).toContain('<title>actorloop live</title>');
  });

  it('frees its port on close, ending open streams; the runs it watched go on', async () => {
    const live = await startLiveViewer();
    const gate = deferred();
    const { actor } = adding({ gate: gate.promise });
    const run = actor();
    live.watch(run, { id: 'open' });
    const stream = await fetch(`${live.url}api/conversations/open/events`);
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('retry: 1000');
    await live.close();
    // The stream ends as a stream ends (not a dropped connection): the page's EventSource would retry.
    let ended = false;
    while (!ended) ended = (await reader.read()).done;
    expect(() => live.watch(run)).toThrow(/a viewer that is still open \(it was closed\)/);
    await expect(live.watchHost({} as never)).rejects.toThrow(/a viewer that is still open/);
    await live.close(); // again: nothing more to do
    // Watching never started or stopped the actor: it runs to its end after the viewer is gone.
    run.start();
    run.send({ type: 'user.message', content: 'add 2 and 3' });
    gate.resolve();
    expect(await toPromise(run)).toMatchObject({ status: 'done', text: 'The sum is 5.' });
    const again = await viewer({ port: live.port });
    expect(again.port).toBe(live.port);
  });
});

describe('startLiveViewer: a watched conversation actor', () => {
  it('is listed with its label; its view names its chart; each step is kept and shown as it was', async () => {
    const live = await viewer();
    const { actor } = adding();
    const run = actor();
    live.watch(run, { id: 'sum', label: 'what is 2+3' });
    expect(await listOf(live)).toEqual([expect.objectContaining({ id: 'sum', label: 'what is 2+3', status: 'idle', owner: 'viewer' })]);
    run.start();
    run.send({ type: 'user.message', content: 'What is 2+3?' });
    await toPromise(run);
    expect(await listOf(live)).toEqual([expect.objectContaining({ id: 'sum', label: 'what is 2+3', status: 'done' })]);

    const view = await viewOf(live, 'sum');
    expect(view).toMatchObject({ id: 'sum', status: 'done', value: 'done', chart: expect.stringMatching(/^chart\d+$/), workflow: false });
    expect(view.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(view.usage.totalTokens).toBeGreaterThan(0);

    // A step each time what a store would keep changed: idle, running through its rounds, done.
    const steps = await historyOf(live, 'sum');
    expect(steps.map(({ state, status }) => [JSON.stringify(state), status])).toEqual([
      ['"idle"', 'idle'],
      ['{"requesting":"waiting"}', 'running'],
      ['{"executingTools":"running"}', 'running'],
      ['{"requesting":"waiting"}', 'running'],
      ['"done"', 'done'],
    ]);
    expect(steps.map(({ seq }) => seq)).toEqual([1, 2, 3, 4, 5]);
    expect(view.seq).toBe(5);
    // The view at each step: its state, status and the history then.
    const counts: number[] = [];
    for (const step of steps) {
      const then = (await call(live, `api/conversations/sum/steps/${step.seq}`)).json<Shown>();
      expect(then).toMatchObject({ id: 'sum', seq: step.seq, value: step.state, status: step.status, chart: view.chart });
      counts.push(then.messages.length);
    }
    expect(counts).toEqual([0, 1, 2, 3, 4]);
    expect((await call(live, 'api/conversations/sum/history?afterSeq=3&limit=1')).json()).toEqual([steps[3]]);

    const unknownStep = await call(live, 'api/conversations/sum/steps/99');
    expect(unknownStep.status).toBe(404);
    expect(unknownStep.type).toBe('application/problem+json');
    expect(unknownStep.json()).toMatchObject({ field: 'seq', detail: expect.stringContaining('99') });
    for (const path of ['nope', 'nope/history', 'nope/steps/1', 'nope/events']) {
      const missing = await call(live, `api/conversations/${path}`);
      expect(missing.status, path).toBe(404);
      expect(missing.json()).toMatchObject({ field: 'id', detail: 'id: expected a conversation that exists, got "nope"' });
    }
  });

  it('streams its state changes and emitted events as Server-Sent Events with ids; Last-Event-ID continues after one', async () => {
    const live = await viewer();
    const { actor } = adding();
    const run = actor();
    live.watch(run, { id: 'streamed' });
    const finished = (items: Item[]) => items.some((item) => item.event.type === 'state' && item.event.status === 'done');
    const reading = readEvents(live, 'streamed', finished);
    run.start();
    run.send({ type: 'user.message', content: 'What is 2+3?' });
    const { text, items } = await reading;
    expect(text).toMatch(
      /^retry: 1000\n\nid: 1\.1\.w[a-z0-9]+\ndata: \{"id":"1\.1\.w[a-z0-9]+","event":\{"type":"state","value":"idle","status":"idle"\}\}/,
    );
    // Ids like a host's: <revision>.<n>.<tag>, n counting up.
    expect(items.every((item) => /^\d+\.\d+\.w[a-z0-9]+$/.test(item.id))).toBe(true);
    const serials = items.map((item) => Number(item.id.split('.')[1]));
    expect(serials).toEqual(serials.map((_, index) => index + 1));
    const types = items.map((item) => item.event.type);
    for (const type of ['request.started', 'text.delta', 'tool.started', 'tool.result', 'request.finished', 'usage'])
      expect(types, type).toContain(type);
    expect(items.filter((item) => item.event.type === 'state').map((item) => item.event.status)).toEqual([
      'idle',
      'running',
      'running',
      'running',
      'done',
    ]);
    // A state change carries the revision of the step it made.
    const steps = await historyOf(live, 'streamed');
    expect(items.filter((item) => item.event.type === 'state').map((item) => Number(item.id.split('.')[0]))).toEqual(
      steps.map((step) => step.seq),
    );

    // A page that reconnects with the last id it had gets what came after it, nothing twice.
    const middle = items[5] as Item;
    const after = await readEvents(live, 'streamed', (got) => got.length >= items.length - 6, { 'last-event-id': middle.id });
    expect(after.items).toEqual(items.slice(6));
    // An id of another run (or none) replays the run from its start.
    const other = await readEvents(live, 'streamed', (got) => got.length >= items.length, { 'last-event-id': '1.1.zzz' });
    expect(other.items).toEqual(items);
  });

  it("draws its machine at its chart's id, and as the default chart", async () => {
    const live = await viewer();
    const { actor } = adding();
    live.watch(actor(), { id: 'drawn' });
    const { chart } = await viewOf(live, 'drawn');
    const overview = await call(live, `chart/${chart}/overview.svg`);
    expect(overview.status).toBe(200);
    expect(overview.type).toMatch(/^image\/svg\+xml/);
    expect(overview.text).toContain('data-state="executingTools"');
    expect(overview.text).toContain('data-state="awaitingApproval"');
    expect((await call(live, `chart/${chart}/full.svg`)).text).toContain('data-state="executingTools.running"');
    // No machine of the viewer's own: the first watched run's is drawn by default.
    expect((await call(live, 'chart/overview.svg')).text).toBe(overview.text);
    expect((await call(live, 'chart/chart999/overview.svg')).status).toBe(404);
  });

  it('watching never stops a run, and unwatching lets go of the actor (it stays listed as it was)', async () => {
    const live = await viewer();
    const gate = deferred();
    const model = scriptedModel([gatedTurn(gate.promise, { text: 'late' })]);
    const run = kept(createActor(createConversationMachine({ provider: handlerProvider(model.handler) }), { input: { messages: [] } }));
    const before = listenerCounts(run);
    const unwatch = live.watch(run, { id: 'let-go' });
    expect(listenerCounts(run).observers).toBeGreaterThan(before.observers);
    run.start();
    run.send({ type: 'user.message', content: 'hi' });
    await waitFor(run, (snapshot) => snapshot.matches('requesting'));
    unwatch();
    expect(listenerCounts(run)).toEqual(before);
    gate.resolve();
    expect(await toPromise(run)).toMatchObject({ status: 'done', text: 'late' });
    expect(await viewOf(live, 'let-go')).toMatchObject({ status: 'running', value: { requesting: 'waiting' } });
  });
});

describe('startLiveViewer: acting on a watched actor over HTTP', () => {
  it('approve: the run goes on to its end, the tool ran once; a call nobody waits for is refused (409), nothing applied', async () => {
    const live = await viewer();
    const { actor, ran } = adding({ approval: true });
    const run = actor();
    live.watch(run, { id: 'approve' });
    run.start();
    run.send({ type: 'user.message', content: 'add 2 and 3' });
    const waiting = await until(
      () => viewOf(live, 'approve'),
      (view) => view.status === 'awaitingApproval',
      'approve waits',
    );
    expect(waiting.pendingApprovals).toEqual([{ toolCallId: 'c1', name: 'add', args: { a: 2, b: 3 } }]);
    const stepsBefore = await historyOf(live, 'approve');

    const refused = await post(live, 'api/conversations/approve/approve', { toolCallId: 'nope' });
    expect(refused.status).toBe(409);
    expect(refused.type).toBe('application/problem+json');
    expect(refused.json()).toMatchObject({ type: 'urn:actorloop:problem:conflict', detail: expect.stringContaining('"nope"') });
    expect(await historyOf(live, 'approve')).toEqual(stepsBefore);
    expect(run.getSnapshot().value).toBe('awaitingApproval');
    // A body that is not one is a 400 naming the field; an unknown conversation a 404.
    expect((await post(live, 'api/conversations/approve/approve', {})).json()).toMatchObject({ status: 400, field: 'toolCallId' });
    expect((await post(live, 'api/conversations/nope/approve', { toolCallId: 'c1' })).status).toBe(404);

    const approved = await post(live, 'api/conversations/approve/approve', { toolCallId: 'c1' });
    expect(approved.status).toBe(200);
    expect(approved.json<Shown>()).toMatchObject({ id: 'approve', pendingApprovals: [] });
    expect(await toPromise(run)).toMatchObject({ status: 'done', text: 'The sum is 5.' });
    expect(ran).toEqual([5]);
    // Its run has ended: nothing more to approve or cancel.
    expect((await post(live, 'api/conversations/approve/cancel', {})).json()).toMatchObject({
      status: 409,
      detail: expect.stringContaining('its run has ended'),
    });
  });

  it('deny: the call gets the denial, the tool never runs; cancel: a waiting run ends halted', async () => {
    const live = await viewer();
    const denied = adding({ approval: true });
    const cancelled = adding({ approval: true });
    const denying = denied.actor();
    const cancelling = cancelled.actor();
    live.watch(denying, { id: 'deny' });
    live.watch(cancelling, { id: 'cancel' });
    for (const run of [denying, cancelling]) {
      run.start();
      run.send({ type: 'user.message', content: 'add 2 and 3' });
      await waitFor(run, (snapshot) => snapshot.matches('awaitingApproval'));
    }
    const deny = await post(live, 'api/conversations/deny/deny', { toolCallId: 'c1', reason: 'not today' });
    expect(deny.status).toBe(200);
    expect(await toPromise(denying)).toMatchObject({ status: 'done' });
    expect(JSON.stringify((await viewOf(live, 'deny')).messages)).toContain('not today');
    expect(denied.ran).toEqual([]);

    expect((await post(live, 'api/conversations/cancel/cancel', { reason: 'changed my mind' })).status).toBe(200);
    expect(await toPromise(cancelling)).toMatchObject({ status: 'halted' });
    expect(await viewOf(live, 'cancel')).toMatchObject({ status: 'halted', value: 'halted' });
    expect(cancelled.ran).toEqual([]);
    expect((await post(live, 'api/conversations/cancel/cancel', { why: 'x' })).json()).toMatchObject({ status: 400, field: 'why' });
  });

  it('fork: a new run from a step, listed under its id, that runs on; the original untouched; taken ids and unknown steps refused', async () => {
    const live = await viewer();
    const executions: string[] = [];
    const machine = approvalMachine(executions);
    const run = kept(createActor(machine, { input: { messages: [] } }));
    live.watch(run, { id: 'pay', label: 'pay rent' });
    run.start();
    run.send({ type: 'user.message', content: 'pay' });
    await waitFor(run, (snapshot) => snapshot.matches('awaitingApproval'));
    await post(live, 'api/conversations/pay/approve', { toolCallId: transferCallId('pay') });
    await toPromise(run);
    const steps = await historyOf(live, 'pay');
    const waiting = steps.find((step) => step.status === 'awaitingApproval') as ConversationStep;

    const forked = await post(live, 'api/conversations/pay/fork', { seq: waiting.seq, newId: 'pay-again' });
    expect(forked.status).toBe(201);
    expect(forked.json<Shown>()).toMatchObject({ id: 'pay-again', status: 'awaitingApproval', value: 'awaitingApproval' });
    expect(await listOf(live)).toEqual([
      expect.objectContaining({ id: 'pay', label: 'pay rent', status: 'done' }),
      expect.objectContaining({ id: 'pay-again', label: `pay rent · fork of step ${waiting.seq}`, status: 'awaitingApproval' }),
    ]);
    expect((await viewOf(live, 'pay-again')).messages).toEqual(
      (await call(live, `api/conversations/pay/steps/${waiting.seq}`)).json<Shown>().messages,
    );
    // The fork runs on (the viewer started it): approved from the page's route, it reaches its end.
    expect((await post(live, 'api/conversations/pay-again/approve', { toolCallId: transferCallId('pay') })).status).toBe(200);
    const done = await until(
      () => viewOf(live, 'pay-again'),
      (view) => view.status === 'done',
      'the fork done',
    );
    expect(done.messages.at(-1)).toMatchObject({ role: 'assistant' });
    expect(executions).toEqual([transferCallId('pay'), transferCallId('pay')]);
    // The original as it was.
    expect(await historyOf(live, 'pay')).toEqual(steps);
    expect((await viewOf(live, 'pay')).status).toBe('done');

    // A made-up id when none is given; taken ids and unknown steps refused.
    const unnamed = await post(live, 'api/conversations/pay/fork', { seq: waiting.seq });
    expect(unnamed.status).toBe(201);
    expect(unnamed.json<Shown>().id).toMatch(new RegExp(`^pay-fork-${waiting.seq}-[0-9a-f]{8}$`));
    for (const taken of ['pay', 'pay-again']) {
      const refused = await post(live, 'api/conversations/pay/fork', { seq: waiting.seq, newId: taken });
      expect(refused.status, taken).toBe(409);
      expect(refused.json()).toMatchObject({ field: 'newId' });
    }
    const unknown = await post(live, 'api/conversations/pay/fork', { seq: 99, newId: 'pay-99' });
    expect(unknown.status).toBe(404);
    expect(unknown.json()).toMatchObject({ field: 'seq' });
    expect((await post(live, 'api/conversations/pay/fork', { seq: -1 })).json()).toMatchObject({ status: 400, field: 'seq' });
    expect((await listOf(live)).map((one) => one.id)).not.toContain('pay-99');
  });
});

describe('startLiveViewer: a watched workflow actor', () => {
  it('shows the workflow and its conversations, relays an approval to the one that waits, and draws the workflow', async () => {
    const live = await viewer();
    const { machine } = orderWorkflow();
    const run = kept(createActor(machine, { input: { item: 'lamp' } }));
    live.watch(run, { id: 'order', label: 'lamp order' });
    run.start();
    const waiting = await until(
      () => viewOf(live, 'order'),
      (view) => view.status === 'awaitingApproval',
      'the payer waits',
    );
    expect(waiting).toMatchObject({ value: 'paying', workflow: true, chart: expect.stringMatching(/^chart\d+$/) });
    expect(waiting.conversations).toEqual([
      expect.objectContaining({ path: ['payer'], status: 'awaitingApproval', value: 'awaitingApproval' }),
    ]);
    expect(waiting.pendingApprovals).toEqual([{ toolCallId: 'charge-1', name: 'charge', args: { cents: 8900 }, path: ['payer'] }]);
    // Its steps: researching with both conversations, then paying.
    const steps = await historyOf(live, 'order');
    const researching = steps.findLast(
      (step) => JSON.stringify(step.state) === '{"researching":{"left":"asking","right":"asking"}}',
    ) as ConversationStep;
    const then = (await call(live, `api/conversations/order/steps/${researching.seq}`)).json<Shown>();
    expect(then.conversations?.map((one) => one.path.join('/'))).toEqual(['left', 'right']);

    // The chart route draws the workflow, each conversation inside the state that runs it.
    const svg = (await call(live, `chart/${waiting.chart}/overview.svg`)).text;
    for (const state of ['researching', 'paying', 'confirming', 'confirmed', 'paying/payer/awaitingApproval'])
      expect(svg).toContain(`data-state="${state}"`);
    expect(svg).toContain('data-invoke="payer" data-src="payer"');

    // Nobody waits for that call: refused, nothing applied.
    expect((await post(live, 'api/conversations/order/approve', { toolCallId: 'charge-9' })).json()).toMatchObject({
      status: 409,
      detail: expect.stringContaining('no call "charge-9" waits for approval in the workflow'),
    });
    // The root's approve goes down to the payer; the workflow moves on to its own event.
    expect((await post(live, 'api/conversations/order/approve', { toolCallId: 'charge-1' })).status).toBe(200);
    await until(
      () => viewOf(live, 'order'),
      (view) => (view.value as unknown) === 'confirming',
      'confirming',
    );
    // No conversation runs to cancel, and the workflow takes no cancel itself.
    expect((await post(live, 'api/conversations/order/cancel', {})).json()).toMatchObject({
      status: 409,
      detail: expect.stringContaining('no conversation is running in it to cancel'),
    });
    run.send({ type: 'order.confirm' });
    await toPromise(run);
    expect(await viewOf(live, 'order')).toMatchObject({
      status: 'done',
      value: 'confirmed',
      output: { status: 'done', payment: 'paid 89.00' },
      conversations: [],
    });
  });

  it('cancel stops each conversation running in a workflow', async () => {
    const live = await viewer();
    const { machine } = orderWorkflow();
    const run = kept(createActor(machine, { input: { item: 'desk' } }));
    live.watch(run, { id: 'order' });
    run.start();
    await until(
      () => viewOf(live, 'order'),
      (view) => view.status === 'awaitingApproval',
      'the payer waits',
    );
    expect((await post(live, 'api/conversations/order/cancel', { reason: 'no desk' })).status).toBe(200);
    expect(await toPromise(run)).toMatchObject({ status: 'error' });
    expect(await viewOf(live, 'order')).toMatchObject({ value: 'failed', conversations: [] });
  });
});

describe('startLiveViewer: a feed', () => {
  it("follows a host-shaped feed with the viewer's machine; it is read-only", async () => {
    const model = scriptedModel([{ text: 'from the feed' }]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler) });
    const live = await viewer({ machine });
    const run = kept(createActor(machine, { input: { messages: [] } }));
    // What `host.subscribe(id, listener)` delivers: emitted events and { type: 'state', value, status, messages }.
    const feed: ConversationFeed = {
      subscribe(listener) {
        const events = run.on('*', listener);
        const states = run.subscribe((snapshot) =>
          listener({
            type: 'state',
            value: snapshot.value,
            status: snapshot.status === 'done' ? snapshot.output.status : 'running',
            messages: snapshot.context.messages,
          }),
        );
        return () => {
          events.unsubscribe();
          states.unsubscribe();
        };
      },
    };
    live.watch(feed, { id: 'c-42', label: 'from elsewhere' });
    expect(await listOf(live)).toEqual([expect.objectContaining({ id: 'c-42', label: 'from elsewhere', status: 'idle' })]);
    const reading = readEvents(live, 'c-42', (items) => items.some((item) => item.event.status === 'done'));
    run.start();
    run.send({ type: 'user.message', content: 'hi' });
    await toPromise(run);
    const { items } = await reading;
    expect(items.map((item) => item.event.type)).toEqual(expect.arrayContaining(['request.started', 'text.delta', 'usage', 'state']));
    const view = await viewOf(live, 'c-42');
    expect(view).toMatchObject({ id: 'c-42', status: 'done', value: 'done', workflow: false });
    expect(view.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    // Drawn with the viewer's machine.
    expect((await call(live, `chart/${view.chart}/overview.svg`)).text).toBe((await call(live, 'chart/overview.svg')).text);
    const steps = await historyOf(live, 'c-42');
    expect(steps.at(-1)).toMatchObject({ state: 'done', status: 'done' });

    // Read-only: nothing to send to, nothing to fork from.
    for (const [action, body] of [
      ['approve', { toolCallId: 'c1' }],
      ['cancel', {}],
    ] as const) {
      const refused = await post(live, `api/conversations/c-42/${action}`, body);
      expect(refused.status, action).toBe(409);
      expect(refused.json()).toMatchObject({ detail: expect.stringContaining('a feed is read-only') });
    }
    const fork = await post(live, 'api/conversations/c-42/fork', { seq: (steps[0] as ConversationStep).seq, newId: 'c-43' });
    expect(fork.status).toBe(409);
    expect(fork.json()).toMatchObject({ detail: expect.stringContaining('only a watched actor can be forked') });
  });
});

describe('startLiveViewer: options', () => {
  it('keeps at most maxRuns runs, dropping the oldest finished ones (never one still running)', async () => {
    const live = await viewer({ maxRuns: 2 });
    const machine = createConversationMachine({
      provider: handlerProvider(scriptedModel([{ text: 'a' }, { text: 'b' }, { text: 'c' }]).handler),
    });
    const waiting = kept(createActor(machine, { input: { messages: [] } }));
    live.watch(waiting, { id: 'zz-waiting' });
    for (const id of ['one', 'two', 'three']) {
      const run = kept(createActor(machine, { input: { messages: [] } }));
      live.watch(run, { id });
      run.start();
      run.send({ type: 'user.message', content: id });
      await toPromise(run);
    }
    // 'zz-waiting' never ended: kept past the limit; of the finished ones the oldest went first.
    expect((await listOf(live)).map((run) => run.id)).toEqual(['three', 'zz-waiting']);
    expect((await call(live, 'api/conversations/one')).status).toBe(404);
  });

  it('names wrong options with their path, and a run id that is taken', async () => {
    const starts: Array<[unknown, string, string]> = [
      [null, 'options', 'Invalid option options: expected an object, got null'],
      [{ port: -1 }, 'options.port', 'Invalid option options.port: expected an integer from 0 (a free port) to 65535, got -1'],
      [{ port: 70_000 }, 'options.port', 'Invalid option options.port: expected an integer from 0 (a free port) to 65535, got 70000'],
      [{ host: '' }, 'options.host', 'Invalid option options.host: expected a host name or IP address, got ""'],
      [{ title: 3 }, 'options.title', 'Invalid option options.title: expected a string, got 3'],
      [
        { machine: 5 },
        'options.machine',
        'Invalid option options.machine: expected a state machine (createConversationMachine(...)), got 5',
      ],
      [
        { machine: {} },
        'options.machine',
        'Invalid option options.machine: expected a state machine (createConversationMachine(...)), got an object',
      ],
      [{ maxLogEntries: 0.5 }, 'options.maxLogEntries', 'Invalid option options.maxLogEntries: expected an integer ≥ 1, got 0.5'],
      [{ maxRuns: 0 }, 'options.maxRuns', 'Invalid option options.maxRuns: expected an integer ≥ 1, got 0'],
      [{ maxSteps: 'all' }, 'options.maxSteps', 'Invalid option options.maxSteps: expected an integer ≥ 1, got "all"'],
    ];
    for (const [options, option, message] of starts) {
      const error = await startLiveViewer(options as never).catch((caught: unknown) => caught);
      expect(InvalidOptionsError.isInstance(error), String(error)).toBe(true);
      expect(error).toMatchObject({ option, message });
    }
    const live = await viewer();
    const { actor } = adding();
    const run = actor();
    live.watch(run, { id: 'same' });
    const taken = (() => {
      try {
        live.watch(run, { id: 'same' });
      } catch (error) {
        return error;
      }
    })();
    expect(InvalidOptionsError.isInstance(taken)).toBe(true);
    expect(taken).toMatchObject({ option: 'watch(source, options).id', message: expect.stringContaining('"same" is taken') });
    const watches: Array<[unknown, unknown, string, string]> = [
      [
        5,
        {},
        'watch(source)',
        'Invalid option watch(source): expected a conversation or workflow actor, or a feed { subscribe(listener) }, got 5',
      ],
      [
        run,
        'c-1',
        'watch(source, options)',
        'Invalid option watch(source, options): expected an object { id?, label?, machine? }, got "c-1"',
      ],
      [run, { id: '' }, 'watch(source, options).id', 'Invalid option watch(source, options).id: expected a non-empty string, got ""'],
      [run, { label: 7 }, 'watch(source, options).label', 'Invalid option watch(source, options).label: expected a string, got 7'],
      [
        run,
        { machine: 'm' },
        'watch(source, options).machine',
        'Invalid option watch(source, options).machine: expected a state machine, got "m"',
      ],
    ];
    for (const [source, options, option, message] of watches) {
      expect(() => live.watch(source as never, options as never)).toThrow(expect.objectContaining({ option, message }));
    }
    expect((await listOf(live)).map((one) => one.id)).toEqual(['same']);
  });
});

describe('startLiveViewer: as a process', () => {
  it('examples/live-viewer.ts runs a conversation with a retry and an approval as a process, watched', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/live-viewer.ts', '--once'], {
      cwd: join(import.meta.dirname, '..'),
      timeout: 60_000,
    });
    expect(stdout).toMatch(/^live viewer: http:\/\/127\.0\.0\.1:\d+\/$/m);
    expect(stdout).toContain('[output] status=done text=3 × 7 = 21.');
    expect(stdout).toContain('[viewer] c-0:done');
  }, 60_000);

  it('starts without elkjs (an optional peer): the chart route says which package to install (501), the rest works', async () => {
    // A process in which elkjs cannot be loaded, as in a fresh install without it.
    const tree = pathToFileURL(`${builtTree()}/`).href;
    const script = `
      const { startLiveViewer } = await import(${JSON.stringify(`${tree}src/observe/inspect/index.js`)});
      const { createConversationMachine, handlerProvider } = await import(${JSON.stringify(`${tree}src/index.js`)});
      const machine = createConversationMachine({ provider: handlerProvider(async function* () {}) });
      const live = await startLiveViewer({ machine });
      const answer = async (path) => {
        const response = await fetch(live.url + path);
        return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
      };
      const answers = { page: await answer(''), chart: await answer('chart/full.svg'), list: await answer('api/conversations') };
      await live.close();
      console.log(JSON.stringify(answers));`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [`--import=${pathToFileURL(supportScript('without-elkjs.ts')).href}`, '--input-type=module', '-e', script],
      { timeout: 30_000 },
    );
    const answers = JSON.parse(stdout) as Record<'page' | 'chart' | 'list', { status: number; type: string; body: string }>;
    expect(answers.page.status).toBe(200);
    expect(answers.list).toMatchObject({ status: 200, body: '[]' });
    expect(answers.chart).toMatchObject({ status: 501, type: 'application/problem+json' });
    expect(JSON.parse(answers.chart.body)).toEqual({
      type: 'urn:actorloop:problem:missing-dependency',
      title: 'Optional package not installed',
      status: 501,
      detail:
        'the statechart is laid out by the optional package elkjs, which is not installed: install it beside actorloop (npm install elkjs), then reload the page; conversations, steps, approvals and forks work without it',
      package: 'elkjs',
    });
  }, 60_000);
});

/** The states lit up in the chart on the page. */
const litStates = (page: Page) => page.$$eval('#chart g.state.active', (nodes) => nodes.map((node) => node.getAttribute('data-state')));
/** A `data-` attribute of the page's body (the page keeps what it shows there). */
const body = (page: Page, name: string) => page.$eval('body', (node, key) => node.getAttribute(`data-${key}`), name);
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
/** Waits until the element's text is `expected` (the run list is read again each second). */
async function untilText(page: Page, selector: string, expected: string): Promise<void> {
  for (let tries = 0; (await page.textContent(selector).catch(() => null)) !== expected; tries++) {
    if (tries > 200) throw new Error(`${selector} never read ${JSON.stringify(expected)}: ${await page.textContent(selector)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
/** The Events log: each entry's type, its agent path (if any) and its whole text. */
const logEntries = (page: Page) =>
  page.$$eval('#log li[data-type]', (nodes) =>
    nodes.map((node) => ({
      type: node.getAttribute('data-type'),
      path: node.querySelector('.path')?.textContent ?? '',
      text: node.textContent ?? '',
    })),
  );

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
    // A wait that fails says which, well within the test's time.
    page.setDefaultTimeout(10_000);
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      // The browser logs each 4xx answer it fetched; the page shows those itself.
      if ((message.type() === 'error' || message.type() === 'warning') && !message.text().startsWith('Failed to load resource'))
        problems.push(message.text());
    });
    await page.goto(url);
    return { page, requests, problems };
  }

  it('picks up a run watched after it opened and follows it from requesting through executingTools to done', async () => {
    const live = await viewer();
    const answer = deferred();
    const tool = deferred<void>();
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
    const actor = kept(createActor(machine, { input: { messages: [] } }));
    const { page, requests, problems } = await openPage(live.url);
    await page.locator('#status', { hasText: 'no conversation yet' }).waitFor();
    await page.screenshot({ path: join(shots, '0-empty.png') });

    // Watched after the page opened: it follows the newest run by itself.
    live.watch(actor, { id: 'sum', label: 'what is 2+3' });
    await page.waitForSelector('body[data-conversation="sum"][data-status="idle"]');
    await page.waitForSelector('#chart g.state.active[data-state="idle"]');
    expect(await litStates(page)).toEqual(['idle']);
    await untilText(page, '#picker option[value="sum"]', 'what is 2+3 (sum) · idle');

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
    await page.locator('#log li[data-type="tool.started"]', { hasText: 'add (c1)' }).waitFor();
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

    tool.resolve();
    await page.waitForSelector('body[data-status="done"]');
    await page.waitForSelector('#chart g.state.active[data-state="done"]');
    expect(await litStates(page)).toEqual(['done']);
    await page.locator('#messages li').nth(3).waitFor();
    expect(await page.$$eval('#messages li', (nodes) => nodes.map((node) => node.getAttribute('data-role')))).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(await page.textContent('#messages li[data-role="tool"]')).toContain('→ add: 5');
    await page.locator('#text', { hasText: /^The sum is 5\.$/ }).waitFor();
    // The Events log: what the run did, in order, deltas left out.
    await page.locator('#log li[data-type="state"]', { hasText: 'done · done' }).waitFor();
    const log = await logEntries(page);
    const types = log.map((entry) => entry.type);
    for (const type of ['request.started', 'tool.started', 'tool.result', 'state']) expect(types, type).toContain(type);
    expect(types).not.toContain('text.delta');
    expect(types.indexOf('tool.started')).toBeLessThan(types.indexOf('tool.result'));
    expect(log.find((entry) => entry.type === 'tool.result')?.text).toBe('tool.resultadd (c1)');
    expect(log.filter((entry) => entry.type === 'state').map((entry) => entry.text)).toEqual([
      'stateidle · idle',
      'staterequesting › waiting · running',
      'stateexecutingTools › running · running',
      'staterequesting › waiting · running',
      'statedone · done',
    ]);
    await untilText(page, '#picker option[value="sum"]', 'what is 2+3 (sum) · done');
    await page.screenshot({ path: join(shots, '4-done.png') });

    expect(await toPromise(actor)).toMatchObject({ status: 'done', text: 'The sum is 5.' });
    // Nothing came from anywhere but the viewer.
    expect(requests.filter((url) => !url.startsWith(live.url) && !url.startsWith('data:'))).toEqual([]);
    expect(await page.textContent('#error')).toBe('');
    expect(problems).toEqual([]);
    await page.close();
  }, 40_000);

  it("shows an agent tree: each child nested under the call that started it, the children's events logged with their path", async () => {
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
    const actor = kept(createActor(root, { input: { messages: [] } }));
    live.watch(actor, { id: 'tree', label: 'writer' });
    const { page, problems } = await openPage(`${live.url}#tree`);
    await page.waitForSelector('body[data-conversation="tree"][data-status="idle"]');
    actor.start();
    actor.send({ type: 'user.message', content: 'start' });
    // The child and the grandchild appear nested under the calls that started them; the grandchild waits for its model.
    await page.waitForSelector('#agents li.agent[data-tool-call-id="p1"] > ul > li.agent[data-tool-call-id="c1"]');
    await page.locator('#agents li[data-tool-call-id="c1"] .agent-status', { hasText: 'requesting · running' }).waitFor();
    const tree = () =>
      page.$$eval('#agents li.agent', (nodes) =>
        nodes.map((node) => [
          node.getAttribute('data-tool-call-id'),
          node.parentElement?.closest('li.agent')?.getAttribute('data-tool-call-id') ?? null,
          node.querySelector('.agent-status')?.textContent,
        ]),
      );
    expect(await tree()).toEqual([
      ['p1', null, 'executingTools · running'],
      ['c1', 'p1', 'requesting · running'],
    ]);
    expect(await page.textContent('#agents li[data-tool-call-id="p1"]')).toMatch(/^↳ middle \(p1\)/);
    expect(await litStates(page)).toEqual(['executingTools']);
    await page.screenshot({ path: join(shots, '7-agent-tree-grandchild.png') });

    releaseLeaf.resolve();
    await page.locator('#agents li[data-tool-call-id="c1"] > .agent-status', { hasText: /^done$/ }).waitFor();
    releaseMiddle.resolve();
    await page.waitForSelector('body[data-status="done"]');
    await page.locator('#agents li[data-tool-call-id="p1"] > .agent-status', { hasText: /^done$/ }).waitFor();
    // The children's events, logged with the path of agent calls down to them.
    const log = await logEntries(page);
    expect(log).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'agent.started', path: '', text: 'agent.startedmiddle (p1)' }),
        expect.objectContaining({ type: 'agent.started', path: 'p1', text: 'p1agent.startedleaf (c1)' }),
        expect.objectContaining({ type: 'request.started', path: 'p1/c1' }),
        expect.objectContaining({ type: 'agent.finished', path: 'p1' }),
      ]),
    );
    await page.screenshot({ path: join(shots, '8-agent-tree-done.png') });
    expect(await toPromise(actor)).toMatchObject({ status: 'done', text: 'root answer' });
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);

  it('lists several runs by label; a retry shows in the log, an approval and a cancel are clicked on the page', async () => {
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
    const approving = kept(
      createActor(
        createConversationMachine({
          provider: handlerProvider(first.handler),
          tools: [add],
          retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5, jitter: false },
        }),
        { input: { messages: [] } },
      ),
    );
    const hang = scriptedModel([gatedTurn(new Promise(() => undefined), { text: 'never' })]);
    const cancelled = kept(
      createActor(createConversationMachine({ provider: handlerProvider(hang.handler) }), { input: { messages: [] } }),
    );
    live.watch(approving, { id: 'approval', label: 'needs approval' });
    live.watch(cancelled, { id: 'cancel', label: 'to be cancelled' });
    const { page, problems } = await openPage(`${live.url}#approval`);
    expect(await page.textContent('#following')).toBe('pinned');

    approving.start();
    approving.send({ type: 'user.message', content: 'add 1 and 1' });
    await page.waitForSelector('body[data-status="awaitingApproval"] #chart g.state.active[data-state="awaitingApproval"]');
    await page.locator('#log li[data-type="tool.approval.requested"]', { hasText: 'add (c1)' }).waitFor();
    expect(await page.textContent('#approvals li .call')).toBe('add({"a":1,"b":1})');
    await page.screenshot({ path: join(shots, '5-awaiting-approval.png') });
    await page.click('#approvals button.approve');
    await page.waitForSelector('body[data-status="done"]');
    expect(await toPromise(approving)).toMatchObject({ status: 'done', text: '2.' });
    expect(await page.textContent('#messages li[data-role="tool"]')).toContain('→ add: 2');
    const retry = (await logEntries(page)).find((entry) => entry.type === 'request.retry');
    expect(retry?.text).toBe('request.retryattempt 2 in 1 ms · http 503');
    expect(await page.textContent('#error')).toBe('');
    await page.screenshot({ path: join(shots, '6-approved-after-retry.png') });

    cancelled.start();
    cancelled.send({ type: 'user.message', content: 'wait forever' });
    await page.selectOption('#picker', 'cancel');
    await page.waitForSelector('body[data-conversation="cancel"] #chart g.state.active[data-state="requesting"]');
    expect(await page.isEnabled('#cancel')).toBe(true);
    await page.click('#cancel');
    await page.waitForSelector('body[data-status="halted"] #chart g.state.active[data-state="halted"]');
    // The chart says cancel once, in a note: that note is what lights, not an arrow into halted.
    await page.waitForSelector('#chart g.note.taken[data-events~="cancel"]');
    expect(await page.$$('#chart g.transition.taken')).toHaveLength(0);
    expect(await toPromise(cancelled)).toMatchObject({ status: 'halted' });
    expect(await page.isDisabled('#cancel')).toBe(true);
    // The newest first, each by its label.
    await untilText(page, '#picker option[value="cancel"]', 'to be cancelled (cancel) · halted');
    expect(await page.$$eval('#picker option', (nodes) => nodes.map((node) => node.textContent))).toEqual([
      'newest (follow)',
      'to be cancelled (cancel) · halted',
      'needs approval (approval) · done',
    ]);
    await page.screenshot({ path: join(shots, '9-cancelled.png') });
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);

  it('travels back over the steps of a watched actor, goes live again, and forks a past step into a run of its own', async () => {
    const live = await viewer();
    const executions: string[] = [];
    const run = kept(createActor(approvalMachine(executions), { input: { messages: [] } }));
    live.watch(run, { id: 'travel', label: 'time travel' });
    run.start();
    run.send({ type: 'user.message', content: 'travel' });
    await waitFor(run, (snapshot) => snapshot.matches('awaitingApproval'));
    run.send({ type: 'tool.approve', toolCallId: transferCallId('travel') });
    await toPromise(run);
    const steps = await historyOf(live, 'travel');
    const { page, problems } = await openPage(`${live.url}#travel`);
    await page.waitForSelector('body[data-status="done"] #chart g.state.active[data-state="done"]');
    expect(await page.getAttribute('#slider', 'max')).toBe(String(steps.length - 1));

    await page.fill('#slider', '0');
    await page.waitForSelector(`body[data-step="${steps[0]?.seq}"][data-status="idle"]`);
    await page.waitForSelector('#chart g.state.active[data-state="idle"]');
    expect(await litStates(page)).toEqual(['idle']);
    expect(await body(page, 'messages')).toBe('0');
    expect(await page.getAttribute('#live', 'aria-pressed')).toBe('false');
    const waitingIndex = steps.findIndex((step) => step.status === 'awaitingApproval');
    await page.fill('#slider', String(waitingIndex));
    await page.waitForSelector('body[data-status="awaitingApproval"] #chart g.state.active[data-state="awaitingApproval"]');
    expect(await body(page, 'messages')).toBe('2');
    // A past step is for looking: approving and cancelling are done live.
    expect(await page.locator('#approvals button.approve').count()).toBe(0);
    expect(await page.isDisabled('#cancel')).toBe(true);
    expect(await page.textContent('#step-label')).toMatch(new RegExp(`^step ${waitingIndex + 1} of ${steps.length} · seq `));
    await page.screenshot({ path: join(shots, '10-past-step.png') });

    await page.click('#live');
    await page.waitForSelector('body[data-step="live"][data-status="done"]');

    // Fork from the waiting step: the fork is selected (pinned), waits as that step did, and is approved on the page.
    await page.fill('#slider', String(waitingIndex));
    await page.waitForSelector('body[data-status="awaitingApproval"]');
    await page.click('#fork');
    await page.waitForSelector('body[data-conversation^="travel-fork-"][data-status="awaitingApproval"]');
    expect(await page.textContent('#following')).toBe('pinned');
    const forkId = (await body(page, 'conversation')) as string;
    await page.click('#approvals button.approve');
    await page.waitForSelector(`body[data-conversation="${forkId}"][data-status="done"]`);
    expect(executions).toEqual([transferCallId('travel'), transferCallId('travel')]);
    expect(await historyOf(live, 'travel')).toEqual(steps);
    await untilText(page, `#picker option[value="${forkId}"]`, `time travel · fork of step ${steps[waitingIndex]?.seq} (${forkId}) · done`);
    await page.screenshot({ path: join(shots, '11-fork-done.png') });
    expect(await page.textContent('#error')).toBe('');
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);

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
    const actor = kept(
      createActor(createConversationMachine({ provider: handlerProvider(model.handler), tools: [screenshot] }), {
        input: { messages: [] },
      }),
    );
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
            src: string;
            closest(selector: string): { dataset: { role?: string } } | null;
          }>
        ).map((image) => [image.closest('li')?.dataset.role, image.alt, image.naturalWidth, image.src.split(':')[0]]),
      ),
    ).toEqual([
      ['user', label, 1, 'data'],
      ['tool', label, 1, 'data'],
    ]);
    expect(await page.textContent('#messages li[data-role="user"]')).toContain(label);
    expect(await page.textContent('#messages li[data-role="tool"]')).toContain(`→ screenshot: Now:\n${label}`);
    expect(await page.textContent('#messages')).not.toContain(png.slice(0, 20));
    await page.screenshot({ path: join(shots, '12-images.png') });
    expect(requests.filter((url) => !url.startsWith(live.url) && !url.startsWith('data:'))).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);
});
