/**
 * The host runs any machine (DESIGN §18): a workflow with conversations inside is started with
 * `host.start`, stored step by step (its conversations' steps included), resumed by `recover()`
 * after a crash with the §3 rules inside each conversation, its approvals surfaced at the root with
 * their path and relayed down, cancelled as a whole, time-travelled and forked, followed as a
 * stream. Real conversation machines over a planned model; the memory store and SQLite.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setup } from 'xstate';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConversationLoadError,
  type ConversationMachine,
  conversationInput,
  ConversationNotFoundError,
  type ConversationStore,
  type ConversationStreamItem,
  createConversationHost,
  EventRejectedError,
  InvalidOptionsError,
  createConversationMachine,
  memoryStore,
  type Provider,
} from '../src/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { orderWorkflow } from './support/hosted-workflow.js';
import { call, openEvents, type Service, startService, until } from './support/http-service.js';
import { planStepOf } from './support/planned-model.js';

const keep = (store: ConversationStore): ConversationStore => ({ ...store, close: async () => undefined });

function hostOf(store: ConversationStore = memoryStore()) {
  const workflow = orderWorkflow();
  const errors: unknown[] = [];
  const host = createConversationHost({ machine: workflow.machine, store, onError: (error) => errors.push(error) });
  return { ...workflow, host, errors };
}

const statusOf = async (host: { get: (id: string) => Promise<{ status: string } | undefined> }, id: string) => (await host.get(id))?.status;

describe('a hosted workflow', () => {
  it('starts, surfaces the approval of a conversation inside with its path, takes the approval and its own events, ends done', async () => {
    const { host, probe, errors } = hostOf();
    const items: ConversationStreamItem[] = [];
    host.follow('o-1', { next: (item) => items.push(item) });
    const started = await host.start('o-1', { input: { item: 'lamp' } });
    expect(started).toMatchObject({ id: 'o-1', status: 'running', value: { researching: { left: 'asking', right: 'asking' } } });
    expect(started.conversations?.map(({ path }) => path)).toEqual([['left'], ['right']]);

    await expect.poll(() => statusOf(host, 'o-1')).toBe('awaitingApproval');
    const waiting = await host.get('o-1');
    expect(waiting).toMatchObject({ value: 'paying', pendingApprovals: [{ toolCallId: 'charge-1', name: 'charge', path: ['payer'] }] });
    expect(waiting?.conversations).toMatchObject([{ path: ['payer'], status: 'awaitingApproval' }]);
    // Events of a workflow are its chart's: one it does not take now is refused, nothing stored.
    await expect(host.send('o-1', { type: 'order.confirm' })).rejects.toMatchObject({
      name: 'EventRejectedError',
      message: expect.stringContaining('does not take order.confirm'),
    });
    await expect(host.send('o-1', { type: 'tool.approve', toolCallId: 'nope' })).rejects.toMatchObject({
      message: expect.stringContaining('no call "nope" waits for approval in the workflow'),
    });

    await host.send('o-1', { type: 'tool.approve', toolCallId: 'charge-1' });
    await expect.poll(async () => (await host.get('o-1'))?.value).toBe('confirming');
    expect(await statusOf(host, 'o-1')).toBe('running');
    const done = await host.send('o-1', { type: 'order.confirm' });
    expect(done).toMatchObject({ status: 'done', value: 'confirmed' });
    const output = await host.result('o-1');
    expect(output).toEqual({ status: 'done', findings: ['left found', 'right found'], payment: 'paid 89.00' });
    expect(probe).toMatchObject({ charges: 1 });
    expect([...probe.lookups].sort()).toEqual(['left', 'right']);

    // Every step stored, the conversations' own steps among them.
    const steps = await host.history('o-1');
    expect(steps.length).toBeGreaterThan(8);
    expect(steps.at(-1)).toMatchObject({ status: 'done', state: 'confirmed' });
    const researching = steps.find((step) => step.status === 'running' && typeof step.state === 'object');
    const then = await host.get('o-1', { seq: researching?.seq as number });
    expect(then?.conversations?.length).toBeGreaterThan(0);

    // The stream carries the conversations' events with their path, and the workflow's states.
    const agentEvents = items.filter((item) => item.event.type === 'agent.event');
    expect(new Set(agentEvents.map((item) => (item.event as { path: string[] }).path.join('/')))).toEqual(
      new Set(['left', 'right', 'payer']),
    );
    expect(items.filter((item) => item.event.type === 'state').at(-1)?.event).toMatchObject({ status: 'done', output });
    expect(errors).toEqual([]);
    await host.close();
  });

  it('refuses what is not right, naming it, and stores nothing for it', async () => {
    const { host } = hostOf();
    await expect(host.send('nobody', { type: 'order.confirm' })).rejects.toSatisfy(ConversationNotFoundError.isInstance);
    await expect(host.start('o-2', { input: { item: () => 1 } as never })).rejects.toSatisfy(InvalidOptionsError.isInstance);
    await expect(host.send('o-2', { type: 'xstate.done.actor.left' } as never)).rejects.toMatchObject({ option: 'event.type' });
    await expect(host.send('o-2', { nope: 1 } as never)).rejects.toMatchObject({ option: 'event' });
    expect(await host.get('o-2')).toBeUndefined();
    await host.start('o-2', { input: { item: 'desk' } });
    await expect(host.start('o-2', { input: { item: 'desk' } })).rejects.toMatchObject({
      name: 'EventRejectedError',
      message: expect.stringContaining('a run is in progress'),
    });
    await expect(host.send('o-2', { type: 'order.confirm' }, { sessionData: { a: 1 } })).rejects.toMatchObject({
      option: 'options.sessionData',
    });
    await host.close();
  });

  it('cancel stops every conversation in it (their tools aborted) and ends it halted; it can be started again', async () => {
    const { host, probe, model } = hostOf();
    probe.hold.add('right');
    await host.start('o-3', { input: { item: 'lamp' } });
    await expect.poll(() => probe.lookups.includes('right')).toBe(true);
    const requests = model.requests.length;
    const halted = await host.send('o-3', { type: 'cancel', reason: 'the customer left' });
    expect(halted).toMatchObject({ status: 'halted', output: { status: 'halted', reason: 'cancelled', message: 'the customer left' } });
    expect(await host.result('o-3')).toEqual({ status: 'halted', reason: 'cancelled', message: 'the customer left' });
    expect(probe.aborted).toEqual(['right']);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(model.requests.length).toBe(requests);
    await expect(host.send('o-3', { type: 'order.confirm' })).rejects.toMatchObject({
      message: expect.stringContaining("the workflow's run ended (halted)"),
    });
    probe.release();
    await host.start('o-3', { input: { item: 'lamp' } });
    await expect.poll(() => statusOf(host, 'o-3')).toBe('awaitingApproval');
    await host.close();
  });

  it('a crash mid-workflow: recover() in another host goes on; no finished tool runs again, the one cut off is not run twice', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'actorloop-workflow-host-')), 'runs.db');
    const first = hostOf(sqliteStore({ path }));
    first.probe.hold.add('right');
    await first.host.start('o-4', { input: { item: 'lamp' } });
    // `left` finished its tool and its conversation; `right`'s lookup is running when the process dies.
    await expect.poll(() => first.probe.lookups.length).toBe(2);
    await expect.poll(async () => (await first.host.get('o-4'))?.conversations?.map(({ path }) => path.join('/'))).toEqual(['right']);
    await first.host.close();

    const second = hostOf(sqliteStore({ path }));
    const report = await second.host.recover();
    expect(report).toEqual({ resumed: ['o-4'], skipped: [], failed: [] });
    await expect.poll(() => statusOf(second.host, 'o-4')).toBe('awaitingApproval');
    expect(second.probe.lookups).toEqual([]);
    // The cut-off lookup gets the interrupted result, and the model decides from it.
    const rightAgain = second.model.requests
      .map((request) => planStepOf(request.messages))
      .find((step) => step.conversation.startsWith('right'));
    expect(JSON.stringify(rightAgain?.messages)).toContain('interrupted by a restart; not run again');
    await second.host.send('o-4', { type: 'tool.approve', toolCallId: 'charge-1' });
    await expect.poll(async () => (await second.host.get('o-4'))?.value).toBe('confirming');
    await second.host.send('o-4', { type: 'order.confirm' });
    expect(await second.host.result('o-4')).toMatchObject({ status: 'done', findings: ['left found', 'right found'] });
    expect(second.probe.charges).toBe(1);
    await second.host.close();
  });

  it('waiting for an approval when its host stops: the approval sent to another host resumes it there', async () => {
    const store = memoryStore();
    const first = hostOf(keep(store));
    await first.host.start('o-5', { input: { item: 'lamp' } });
    await expect.poll(() => statusOf(first.host, 'o-5')).toBe('awaitingApproval');
    await first.host.close();
    const second = hostOf(keep(store));
    await second.host.send('o-5', { type: 'tool.approve', toolCallId: 'charge-1' });
    await expect.poll(async () => (await second.host.get('o-5'))?.value).toBe('confirming');
    expect(second.probe.charges).toBe(1);
    expect(second.probe.lookups).toEqual([]);
    await second.host.close();
  });

  it('a fork of a step mid-run goes on at once; the original is untouched', async () => {
    const { host, probe } = hostOf();
    await host.start('o-6', { input: { item: 'lamp' } });
    await expect.poll(() => statusOf(host, 'o-6')).toBe('awaitingApproval');
    const steps = await host.history('o-6');
    const paying = steps.find((step) => (step.state as unknown) === 'paying') as (typeof steps)[number];
    const fork = await host.fork('o-6', { seq: paying.seq, newId: 'o-6b' });
    expect(fork).toMatchObject({ id: 'o-6b', value: 'paying' });
    await expect.poll(() => statusOf(host, 'o-6b')).toBe('awaitingApproval');
    await host.send('o-6b', { type: 'tool.approve', toolCallId: 'charge-1' });
    await expect.poll(async () => (await host.get('o-6b'))?.value).toBe('confirming');
    expect(await statusOf(host, 'o-6')).toBe('awaitingApproval');
    expect(probe.lookups).toHaveLength(2);
    await expect(host.fork('o-6', { seq: paying.seq, newId: 'o-6c', messages: [] })).rejects.toMatchObject({ option: 'options.messages' });
    await host.close();
  });

  it('a workflow whose own action throws ends in error; result() rejects with it', async () => {
    const { host } = hostOf();
    await host.start('o-7', { input: { item: 'lamp' } });
    await expect.poll(() => statusOf(host, 'o-7')).toBe('awaitingApproval');
    await host.send('o-7', { type: 'tool.approve', toolCallId: 'charge-1' });
    await expect.poll(async () => (await host.get('o-7'))?.value).toBe('confirming');
    const view = await host.send('o-7', { type: 'order.explode' });
    expect(view.status).toBe('error');
    await expect(host.result('o-7')).rejects.toThrow('the confirm action exploded');
    await host.close();
  });

  it("a failed workflow's conversations stop with it: the request of one still running is aborted", async () => {
    let asked = 0;
    let aborted = 0;
    const waiting: Provider = {
      name: 'waiting',
      async *stream(request) {
        asked++;
        await new Promise((resolve) => request.signal.addEventListener('abort', resolve, { once: true }));
        aborted++;
        throw request.signal.reason;
      },
    };
    const conversation = createConversationMachine({ provider: waiting });
    const machine = setup({
      actors: { conversation },
      actions: {
        explode: () => {
          throw new Error('the workflow exploded');
        },
      },
    }).createMachine({
      id: 'failing',
      type: 'parallel',
      states: {
        asking: { invoke: { id: 'ask', src: 'conversation', input: () => conversationInput('Hello') } },
        watching: { on: { boom: { actions: 'explode' } } },
      },
    });
    const host = createConversationHost({ machine, store: memoryStore() });
    await host.start('f-1', { input: {} });
    await expect.poll(() => asked).toBe(1);
    const view = await host.send('f-1', { type: 'boom' });
    expect(view.status).toBe('error');
    await expect.poll(() => aborted).toBe(1);
    await expect(host.result('f-1')).rejects.toThrow('the workflow exploded');
    await host.close();
  });

  it("another machine's stored run is a ConversationLoadError naming it; the stored data is left", async () => {
    const store = memoryStore();
    const { host } = hostOf(keep(store));
    await host.start('o-8', { input: { item: 'lamp' } });
    await host.close();
    const other = setup({}).createMachine({ id: 'order', initial: 'elsewhere', states: { elsewhere: {} } });
    const stranger = createConversationHost({ machine: other, store: keep(store) });
    await expect(stranger.get('o-8')).rejects.toSatisfy(
      (error) => ConversationLoadError.isInstance(error) && error.problem === 'other_machine',
    );
    await stranger.close();
    expect(EventRejectedError.isInstance(new Error())).toBe(false);
  });
});

describe('host.start on a conversation host', () => {
  it('starts a conversation from conversationInput; its id must be new (send continues one)', async () => {
    const { machine } = orderWorkflow();
    const researcher = (machine as unknown as { implementations: { actors: { researcher: ConversationMachine } } }).implementations.actors
      .researcher;
    const host = createConversationHost({ machine: researcher, store: memoryStore() });
    const started = await host.start('c-1', { input: conversationInput('left: find lamp'), sessionData: { userId: 'u1' } });
    expect(started).toMatchObject({ id: 'c-1', status: 'running' });
    expect(started.conversations).toBeUndefined();
    const output = await host.result('c-1');
    expect(output).toMatchObject({ status: 'done', text: 'left found' });
    expect((await host.get('c-1'))?.messages[0]).toEqual({ role: 'user', content: 'left: find lamp' });
    await expect(host.start('c-1', { input: conversationInput('again') })).rejects.toMatchObject({ name: 'ConversationExistsError' });
    await expect(host.start('c-2', { input: 'not an input' as never })).rejects.toMatchObject({ option: 'options.input' });
    await host.close();
  });
});

describe('a hosted workflow over HTTP (actorloop/http on a real socket)', () => {
  const services: Service[] = [];
  afterEach(async () => {
    for (const service of services.splice(0)) await service.close();
  });

  it('start, the stream with each conversation event and its path, approve, the workflow event, the result in the view', async () => {
    const { machine } = orderWorkflow();
    const service = await startService({ machine });
    services.push(service);
    const events = openEvents(service.url, '/conversations/o-h/events');
    const started = await call(service.url, 'POST', '/conversations/o-h/start', { body: { input: { item: 'lamp' } } });
    expect(started.status).toBe(201);
    expect(started.json()).toMatchObject({ id: 'o-h', status: 'running' });
    await until(async () => (await call(service.url, 'GET', '/conversations/o-h')).json().status === 'awaitingApproval');
    const waiting = (await call(service.url, 'GET', '/conversations/o-h')).json();
    expect(waiting.pendingApprovals).toEqual([{ toolCallId: 'charge-1', name: 'charge', args: { cents: 8900 }, path: ['payer'] }]);
    expect((await call(service.url, 'POST', '/conversations/o-h/approve', { body: { toolCallId: 'charge-1' } })).status).toBe(200);
    await until(async () => (await call(service.url, 'GET', '/conversations/o-h')).json().value === 'confirming');
    const refused = await call(service.url, 'POST', '/conversations/o-h/send', { body: { event: { type: 'order.unknown' } } });
    expect(refused.status).toBe(409);
    expect(refused.json()).toMatchObject({ type: 'urn:actorloop:problem:event-rejected' });
    const badEvent = await call(service.url, 'POST', '/conversations/o-h/send', { body: { event: 'confirm' } });
    expect(badEvent.status).toBe(400);
    expect(badEvent.json()).toMatchObject({ field: 'event' });
    const done = await call(service.url, 'POST', '/conversations/o-h/send', { body: { event: { type: 'order.confirm' } } });
    expect(done.json()).toMatchObject({ status: 'done', output: { status: 'done', payment: 'paid 89.00' } });
    await events.until((messages) => messages.some((message) => message.event === 'state' && message.data.status === 'done'));
    const paths = new Set(
      events.messages.filter((message) => message.event === 'agent.event').map((message) => (message.data.path as string[]).join('/')),
    );
    expect(paths).toEqual(new Set(['left', 'right', 'payer']));
    events.leave();
    const again = await call(service.url, 'POST', '/conversations/o-h/start', { body: { input: 'lamp', sessionData: { a: 1 } } });
    expect(again.status).toBe(400);
    expect(again.json()).toMatchObject({ field: 'input' });
    expect(service.reported).toEqual([]);
  });
});

describe('the host’s inspect option', () => {
  it('sees every actor of every run it drives; a throw in it is reported, the run goes on', async () => {
    const { machine } = orderWorkflow();
    const seen = new Set<string>();
    const errors: unknown[] = [];
    const host = createConversationHost({
      machine,
      store: memoryStore(),
      onError: (error, id) => errors.push([id, (error as Error).message]),
      inspect: (event) => {
        if (event.type === '@xstate.actor') seen.add((event.actorRef as unknown as { id: string }).id);
        if (event.type === '@xstate.event' && event.event.type === 'order.confirm') throw new Error('inspector broke');
      },
    });
    await host.start('i-1', { input: { item: 'lamp' } });
    await expect.poll(async () => (await host.get('i-1'))?.status).toBe('awaitingApproval');
    await host.send('i-1', { type: 'tool.approve', toolCallId: 'charge-1' });
    await expect.poll(async () => (await host.get('i-1'))?.value).toBe('confirming');
    await host.send('i-1', { type: 'order.confirm' });
    expect(await host.result('i-1')).toMatchObject({ status: 'done' });
    expect([...seen]).toEqual(expect.arrayContaining(['left', 'right', 'payer']));
    expect(errors).toEqual([['i-1', 'inspector broke']]);
    await expect(async () => createConversationHost({ machine, store: memoryStore(), inspect: 42 as never })).rejects.toThrow(/inspect/);
    await host.close();
  });
});
