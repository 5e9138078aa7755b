/**
 * A workflow on Restate (DESIGN §18: "the Restate object runs it with journaled steps"), against a
 * real `restate-server` (loopback, free ports, fresh data directory): the host's order workflow —
 * two research conversations at once, a payer whose `charge` needs approval, then `order.confirm` —
 * started, approved (the approval relayed down with its path), confirmed and awaited through the
 * client; cancelled; refused what it does not take. Then a worker process killed while a nested
 * conversation's tool runs, and again right after one finished: every tool ran at most once, no
 * finished conversation ran again, the workflow completes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as restate from '@restatedev/restate-sdk';
import { createActor, setup } from 'xstate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConversationNotFoundError,
  conversationInput,
  createConversationMachine,
  EventRejectedError,
  handlerProvider,
  InvalidOptionsError,
} from '../src/index.js';
import { type RestateConversationClient, restateConversationClient } from '../src/scale/restate/client.js';
import { type RestateConversationEvent, restateConversations } from '../src/scale/restate/index.js';
import { journaledWorkflow } from '../src/scale/restate/journaled-workflow.js';
import { restateOrderWorkflow, restateTimedWorkflow } from './support/restate-workflow.js';
import type { RestateWorkflowWorkerMessage } from './support/restate-workflow-worker.js';
import { freePort, type RestateServer, startRestateServer } from './support/restate-server.js';

const work = mkdtempSync(join(tmpdir(), 'actorloop-restate-workflow-'));
const order = restateOrderWorkflow();
type OrderMachine = typeof order.machine;
const timed = restateTimedWorkflow();

let server: RestateServer;
let worker: http2.Http2Server;
let client: RestateConversationClient<OrderMachine>;
let timedClient: RestateConversationClient<typeof timed.machine>;
const events: RestateConversationEvent[] = [];
const sdkLog: string[] = [];
/** Worker processes still to be stopped, whatever a test did. */
const processes = new Set<ChildProcess>();

beforeAll(async () => {
  server = await startRestateServer();
  const orders = restateConversations({ machine: order.machine, name: 'order', onEvent: (event) => events.push(event) });
  const timers = restateConversations({ machine: timed.machine, name: 'timed', onEvent: (event) => events.push(event) });
  // The SDK's log (every terminal error the tests provoke) is kept, not printed.
  worker = http2.createServer(
    restate.createEndpointHandler({ services: [orders, timers], logger: (_meta, message) => sdkLog.push(String(message)) }),
  );
  await new Promise<void>((resolve) => worker.listen(0, '127.0.0.1', resolve));
  await server.register(`http://127.0.0.1:${(worker.address() as AddressInfo).port}`);
  client = restateConversationClient<OrderMachine>({ url: server.ingressUrl, name: 'order' });
  timedClient = restateConversationClient<typeof timed.machine>({ url: server.ingressUrl, name: 'timed' });
}, 90_000);

afterAll(async () => {
  for (const child of processes) child.kill('SIGKILL');
  await server?.stop();
  await new Promise<void>((resolve) => (worker ? worker.close(() => resolve()) : resolve()));
  rmSync(work, { recursive: true, force: true });
}, 30_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `read` until `done` holds of it (or throws after `timeoutMs`, with the last value read). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await sleep(25);
  }
}

describe('a workflow on Restate', () => {
  it('starts, surfaces the nested approval with its path, relays it, takes its own event, ends done; onEvent tells it with paths', async () => {
    const started = await client.start('o-1', { input: { item: 'lamp' } });
    expect(started).toMatchObject({ id: 'o-1', status: 'running', value: { researching: { left: 'asking', right: 'asking' } } });
    expect(started.conversations?.map(({ path }) => path)).toEqual([['left'], ['right']]);
    // A second start during the run is refused.
    await expect(client.start('o-1', { input: { item: 'desk' } })).rejects.toSatisfy(
      (error: unknown) => EventRejectedError.isInstance(error) && /a run is in progress/.test(error.message),
    );

    const waiting = await until(
      () => client.get('o-1'),
      (view) => view?.status === 'awaitingApproval',
    );
    expect(waiting).toMatchObject({
      value: 'paying',
      pendingApprovals: [{ toolCallId: 'charge-1', name: 'charge', args: { cents: 8900 }, path: ['payer'] }],
    });
    expect(waiting?.conversations).toMatchObject([{ path: ['payer'], status: 'awaitingApproval' }]);
    // The workflow's own events are its chart's: one it does not take now is refused, nothing stored.
    await expect(client.send('o-1', { type: 'order.confirm' })).rejects.toSatisfy(
      (error: unknown) => EventRejectedError.isInstance(error) && error.message.includes('does not take order.confirm'),
    );
    await expect(client.send('o-1', { type: 'tool.approve', toolCallId: 'nope' })).rejects.toSatisfy(
      (error: unknown) => EventRejectedError.isInstance(error) && error.message.includes('no call "nope" waits for approval'),
    );
    expect(order.probe.charges).toBe(0);

    const output = client.result('o-1');
    await client.send('o-1', { type: 'tool.approve', toolCallId: 'charge-1' });
    const confirming = await until(
      () => client.get('o-1'),
      (view) => (view?.value as unknown) === 'confirming',
    );
    expect(confirming).toMatchObject({ status: 'running', pendingApprovals: [], conversations: [] });
    const done = await client.send('o-1', { type: 'order.confirm' });
    expect(done).toMatchObject({ status: 'done', value: 'confirmed' });
    const expected = { status: 'done', findings: ['left found', 'right found'], payment: 'paid 89.00' };
    expect(await output).toEqual(expected);
    expect(await client.result('o-1')).toEqual(expected);
    expect(order.probe.charges).toBe(1);
    expect([...order.probe.lookups].sort()).toEqual(['left', 'right']);
    // Each conversation asked twice (a tool round, then its answer): none of its requests was made again.
    expect(order.probe.requests).toHaveLength(6);

    const mine = events.filter((event) => event.conversationId === 'o-1').map(({ event }) => event);
    const agentEvents = mine.filter((event) => event.type === 'agent.event');
    expect(new Set(agentEvents.map((event) => event.path.join('/')))).toEqual(new Set(['left', 'right', 'payer']));
    // The model's deltas go out live, each with the path of its conversation.
    const deltas = agentEvents.filter((event) => event.event.type === 'text.delta');
    expect(
      deltas
        .filter((event) => event.path[0] === 'payer')
        .map((event) => (event.event.type === 'text.delta' ? event.event.delta : ''))
        .join(''),
    ).toBe('paid 89.00');
    expect(agentEvents).toContainEqual(
      expect.objectContaining({ path: ['payer'], event: expect.objectContaining({ type: 'tool.result', toolCallId: 'charge-1' }) }),
    );
    // `request.started` goes out once for each request made.
    expect(agentEvents.filter((event) => event.event.type === 'request.started')).toHaveLength(6);
    expect(mine.filter((event) => event.type === 'state').at(-1)).toMatchObject({ status: 'done', output: expected });
  }, 30_000);

  it('cancel ends it halted (its chart takes no cancel); it can be started again', async () => {
    await client.start('o-2', { input: { item: 'lamp' } });
    await until(
      () => client.get('o-2'),
      (view) => view?.status === 'awaitingApproval',
    );
    const halted = await client.send('o-2', { type: 'cancel', reason: 'the customer left' });
    const output = { status: 'halted', reason: 'cancelled', message: 'the customer left' };
    expect(halted).toMatchObject({ status: 'halted', output, conversations: [], pendingApprovals: [] });
    expect(await client.result('o-2')).toEqual(output);
    expect(await client.get('o-2')).toMatchObject({ status: 'halted' });
    await expect(client.send('o-2', { type: 'tool.approve', toolCallId: 'charge-1' })).rejects.toSatisfy(
      (error: unknown) => EventRejectedError.isInstance(error) && error.message.includes("the workflow's run ended (halted)"),
    );
    const again = await client.start('o-2', { input: { item: 'desk' } });
    expect(again).toMatchObject({ status: 'running' });
    await until(
      () => client.get('o-2'),
      (view) => view?.status === 'awaitingApproval',
    );
  }, 30_000);

  it("a conversation's backoff and the chart's own timer: each a delayed advance, the workflow goes on from them", async () => {
    const begun = Date.now();
    await timedClient.start('t-1', { input: { waitMs: 300 } });
    expect(await timedClient.result('t-1')).toEqual({ status: 'done', answer: 'hello back', outcome: 'expired' });
    expect(Date.now() - begun).toBeGreaterThanOrEqual(300);
    // The failed request was not made again once answered: one failure, one answer.
    expect(timed.model.requests).toHaveLength(2);
    const told = events.filter(({ conversationId }) => conversationId === 't-1').map(({ event }) => event);
    expect(told).toContainEqual(expect.objectContaining({ path: ['asker'], event: expect.objectContaining({ type: 'request.retry' }) }));
    // Confirmed before its timer is due: the timer goes with the state it belonged to.
    await timedClient.start('t-2', { input: { waitMs: 60_000 } });
    await until(
      () => timedClient.get('t-2'),
      (view) => (view?.value as unknown) === 'waiting',
    );
    const done = await timedClient.send('t-2', { type: 'order.confirm' });
    expect(done).toMatchObject({ status: 'done', output: { outcome: 'confirmed', answer: 'hello back' } });
  }, 30_000);

  it("a workflow whose own action throws ends in error; result rejects with the error's message", async () => {
    await client.start('o-4', { input: { item: 'lamp' } });
    await until(
      () => client.get('o-4'),
      (view) => view?.status === 'awaitingApproval',
    );
    await client.send('o-4', { type: 'tool.approve', toolCallId: 'charge-1' });
    await until(
      () => client.get('o-4'),
      (view) => (view?.value as unknown) === 'confirming',
    );
    const failed = await client.send('o-4', { type: 'order.explode' });
    expect(failed).toMatchObject({ status: 'error' });
    await expect(client.result('o-4')).rejects.toThrow('workflow "o-4" ended in error: the confirm action exploded');
  }, 30_000);

  it('refuses what is not right, naming it; nothing is stored for it', async () => {
    expect(await client.get('nobody')).toBeUndefined();
    await expect(client.send('nobody', { type: 'order.confirm' })).rejects.toSatisfy(
      (error: unknown) => ConversationNotFoundError.isInstance(error) && /start\("nobody", \{ input \}\)/.test(error.message),
    );
    await expect(client.result('nobody')).rejects.toSatisfy(ConversationNotFoundError.isInstance);
    await expect(client.start('o-3', { input: { item: (() => 1) as never } })).rejects.toMatchObject({
      name: 'InvalidOptionsError',
      option: 'options.input',
    });
    await expect(client.start('o-3', 'lamp' as never)).rejects.toMatchObject({ name: 'InvalidOptionsError', option: 'options' });
    await expect(client.send('o-3', { type: 'xstate.done.actor.left' } as never)).rejects.toMatchObject({ option: 'event.type' });
    await expect(client.send('o-3', { nope: 1 } as never)).rejects.toMatchObject({ option: 'event' });
    expect(await client.get('o-3')).toBeUndefined();
    await client.start('o-3', { input: { item: 'desk' } });
    // Checked by the object itself: a workflow's sessionData comes with its start.
    const withSessionData = await client.send('o-3', { type: 'order.confirm' }, { sessionData: { a: 1 } }).catch((error: unknown) => error);
    expect(InvalidOptionsError.isInstance(withSessionData)).toBe(true);
    expect(withSessionData).toMatchObject({
      option: 'options.sessionData',
      message: expect.stringContaining('start(id, { sessionData })'),
    });
    expect(sdkLog.join('\n')).not.toMatch(/TypeError|ReferenceError/);
  }, 30_000);
});

describe("a workflow's conversations, journaled", () => {
  it('each conversation it invokes — named, inline, or in a workflow inside it — runs journaled; the chart is the same', () => {
    const writer = createConversationMachine({ provider: handlerProvider(() => (async function* () {})()) });
    const inner = setup({ actors: { writer } }).createMachine({
      id: 'inner',
      initial: 'writing',
      states: { writing: { invoke: { id: 'writer', src: 'writer', input: () => conversationInput('hi') } } },
    });
    const outer = setup({ actors: { inner } }).createMachine({
      id: 'outer',
      type: 'parallel',
      states: {
        named: { invoke: { id: 'inner', src: 'inner' } },
        // Typed for named sources only by `setup`; XState takes a machine inline as well.
        inline: { invoke: { id: 'direct', src: writer, input: () => conversationInput('hi') } as never, on: { go: '#outer.named' } },
      },
    });
    const { machine, conversations } = journaledWorkflow(outer);
    expect(machine.id).toBe('outer');
    const nested = machine.implementations.actors.inner as typeof inner;
    expect(conversations.has(nested.implementations.actors.writer as object)).toBe(true);
    const sourceOf = (workflow: typeof outer) => (workflow.config.states?.inline?.invoke as { src: unknown } | undefined)?.src;
    const inlineSource = sourceOf(machine);
    expect(inlineSource).not.toBe(writer);
    expect(conversations.has(inlineSource as object)).toBe(true);
    // The user's machine is left as it was.
    expect(sourceOf(outer)).toBe(writer);
    const actor = createActor(machine).start();
    const children = actor.getSnapshot().children as Record<string, { logic: unknown } | undefined>;
    expect(conversations.has(children.direct?.logic as object)).toBe(true);
    actor.stop();
  });
});

describe('a workflow on Restate, its worker killed', () => {
  it('killed while a nested tool runs, then right after one finished: no tool ran twice, no finished conversation ran again, it completes', async () => {
    const executions = join(work, 'executions.log');
    const requests = join(work, 'requests.log');
    const port = await freePort();
    const messages: RestateWorkflowWorkerMessage[] = [];
    const listeners = new Set<() => void>();
    const startWorker = async (hold: string[]) => {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          join(import.meta.dirname, 'support/restate-workflow-worker.ts'),
          String(port),
          executions,
          requests,
          hold.join(','),
        ],
        { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, RESTATE_LOGGING: 'ERROR' } },
      );
      processes.add(child);
      child.once('exit', () => processes.delete(child));
      child.on('message', (message: RestateWorkflowWorkerMessage) => {
        messages.push(message);
        for (const listener of [...listeners]) listener();
      });
      await heard((message) => message.type === 'listening' && message.pid === child.pid);
      return child;
    };
    /** Resolves once a message `accept` takes has come (one that came already counts). */
    const heard = (accept: (message: RestateWorkflowWorkerMessage) => boolean, timeoutMs = 20_000) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`no such worker message in ${timeoutMs} ms; heard ${JSON.stringify(messages)}`));
        }, timeoutMs);
        const check = () => {
          if (!messages.some(accept)) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve();
        };
        listeners.add(check);
        check();
      });
    const kill = async (child: ChildProcess) => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    };
    const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

    // The first worker holds `right`'s lookup: it is running when the worker dies.
    const first = await startWorker(['right']);
    await server.register(`http://127.0.0.1:${port}`);
    const killed = restateConversationClient<OrderMachine>({ url: server.ingressUrl, name: 'orderKill' });
    await killed.start('k-1', { input: { item: 'lamp' } });
    await heard((message) => message.type === 'tool' && message.detail === 'right');
    await heard((message) => message.type === 'tool' && message.detail === 'left');
    // `left`'s lookup is done and journaled by now; `right`'s runs, its start recorded ahead of it.
    await sleep(100);
    await kill(first);

    // Restate retries the invocation on the next worker: the recorded steps are replayed, the cut-off lookup is not run again.
    const second = await startWorker([]);
    const waiting = await until(
      () => killed.get('k-1'),
      (view) => view?.status === 'awaitingApproval',
    );
    expect(waiting?.pendingApprovals).toEqual([{ toolCallId: 'charge-1', name: 'charge', args: { cents: 8900 }, path: ['payer'] }]);
    const researched = lines(requests);

    // The second worker dies right after the charge ran (its result journaled or not).
    await killed.send('k-1', { type: 'tool.approve', toolCallId: 'charge-1' });
    await heard((message) => message.type === 'tool' && message.tool === 'charge' && message.pid === second.pid);
    await kill(second);
    await startWorker([]);
    await until(
      () => killed.get('k-1'),
      (view) => (view?.value as unknown) === 'confirming',
    );
    await killed.send('k-1', { type: 'order.confirm' });
    expect(await killed.result('k-1')).toEqual({ status: 'done', findings: ['left found', 'right found'], payment: 'paid 89.00' });

    // Every tool ran at most once: the cut-off lookup was answered `interrupted`, not run again; the charge once.
    expect(lines(executions).sort()).toEqual(['charge 8900 charge-1', 'lookup left look-left', 'lookup right look-right']);
    // Each research conversation asked its model twice — none of its requests made again, before or after its end.
    const requestsOf = (prefix: string) => lines(requests).filter((line) => line.startsWith(prefix));
    expect(requestsOf('left: ')).toEqual(['left: find lamp\t0\tfalse', 'left: find lamp\t1\tfalse']);
    expect(requestsOf('right: ')).toEqual(['right: find lamp\t0\tfalse', 'right: find lamp\t1\ttrue']);
    expect(researched.filter((line) => !line.startsWith('pay: '))).toEqual(lines(requests).filter((line) => !line.startsWith('pay: ')));
  }, 60_000);
});
