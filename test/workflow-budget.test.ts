/**
 * One budget over a whole workflow (DESIGN §18, §12's tree rules): `withBudget(workflow, limits)`
 * counts every request of every conversation inside — finished ones, parallel ones — and ends the
 * workflow `halted` / `budget` at a limit, stopping what still runs; the totals show in a host's
 * view. Real conversation machines over a planned model (15 tokens a request).
 */
import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { createConversationHost, InvalidOptionsError, memoryStore, verifyWorkflow, withBudget } from '../src/index.js';
import { orderWorkflow } from './support/hosted-workflow.js';

describe('withBudget', () => {
  it('adds up every conversation and halts the workflow at maxTotalTokens: what runs is stopped, nothing more requested', async () => {
    const { machine, probe, model } = orderWorkflow();
    probe.hold.add('right');
    // Four requests (15 tokens each) reach 60: both research conversations' first, left's answer, and the third is the limit.
    const actor = createActor(withBudget(machine, { maxTotalTokens: 45 }), { input: { item: 'lamp' } });
    actor.start();
    const output = await toPromise(actor);
    expect(output).toMatchObject({
      status: 'halted',
      reason: 'budget',
      budget: { limit: 'maxTotalTokens', max: 45, used: 45 },
      usage: { totalTokens: 45 },
    });
    expect(model.requests).toHaveLength(3);
    expect(probe.aborted).toEqual(['right']);
    expect(probe.charges).toBe(0);
  });

  it('under its limits the output is the workflow’s own; the totals count the finished conversations too (in a host’s view)', async () => {
    const { machine } = orderWorkflow();
    const host = createConversationHost({ machine: withBudget(machine, { maxTotalTokens: 10_000 }), store: memoryStore() });
    await host.start('b-1', { input: { item: 'lamp' } });
    await expect.poll(async () => (await host.get('b-1'))?.status).toBe('awaitingApproval');
    const waiting = await host.get('b-1');
    // Approvals surface with the path through the budget's own invoke.
    expect(waiting?.pendingApprovals).toMatchObject([{ toolCallId: 'charge-1', path: ['workflow', 'payer'] }]);
    // Four requests done: left and right (two each), then the payer's first.
    expect(waiting?.usage.totalTokens).toBe(75);
    await host.send('b-1', { type: 'tool.approve', toolCallId: 'charge-1' });
    // The view's state is the budget's own (`running`); the workflow inside waits for the person once its conversations are done.
    await expect.poll(async () => (await host.get('b-1'))?.conversations).toEqual([]);
    expect((await host.get('b-1'))?.value).toBe('running');
    await expect(host.send('b-1', { type: 'order.unknown' } as never)).rejects.toMatchObject({
      message: expect.stringContaining('does not take order.unknown'),
    });
    const done = await host.send('b-1', { type: 'order.confirm' });
    expect(done).toMatchObject({ status: 'done', usage: { totalTokens: 90 } });
    expect(await host.result('b-1')).toEqual({ status: 'done', findings: ['left found', 'right found'], payment: 'paid 89.00' });
    await host.close();
  });

  it('maxDurationMs: the workflow halts on time, its running tool aborted', async () => {
    const { machine, probe } = orderWorkflow();
    probe.hold.add('right');
    const output = await toPromise(createActor(withBudget(machine, { maxDurationMs: 150 }), { input: { item: 'lamp' } }).start());
    expect(output).toMatchObject({ status: 'halted', reason: 'budget', budget: { limit: 'maxDurationMs', max: 150 } });
    expect((output as { budget: { used: number } }).budget.used).toBeGreaterThanOrEqual(150);
    expect(probe.aborted).toEqual(['right']);
  });

  it('maxCostUsd prices each request by the model that answered; a model with no price ends it in error, never a silent pass', async () => {
    const priced = orderWorkflow();
    const halted = await toPromise(
      createActor(withBudget(priced.machine, { maxCostUsd: 0.0004, prices: { scripted: { input: 10, output: 20 } } }), {
        input: { item: 'lamp' },
      }).start(),
    );
    // 10 input and 5 output tokens a request: 0.0002 dollars; the second request reaches the limit.
    expect(halted).toMatchObject({ status: 'halted', reason: 'budget', budget: { limit: 'maxCostUsd', max: 0.0004 } });
    expect((halted as { costUsd: number }).costUsd).toBeCloseTo(0.0004, 10);

    const unpriced = orderWorkflow();
    const output = await toPromise(createActor(withBudget(unpriced.machine, { maxCostUsd: 1 }), { input: { item: 'lamp' } }).start());
    expect(output).toMatchObject({ status: 'error', reason: 'unpriced_model', model: 'scripted' });
  });

  it('a restored workflow keeps what it spent before', async () => {
    const { machine, probe } = orderWorkflow();
    probe.hold.add('right');
    const budgeted = withBudget(machine, { maxTotalTokens: 60 });
    const first = createActor(budgeted, { input: { item: 'lamp' } }).start();
    await expect.poll(() => (first.getSnapshot().context as { usage: { totalTokens: number } }).usage.totalTokens).toBe(45);
    const persisted = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();
    const second = createActor(budgeted, { snapshot: persisted } as never).start();
    probe.release();
    // The interrupted lookup's conversation asks once more: 60, the limit.
    expect(await toPromise(second)).toMatchObject({ status: 'halted', budget: { limit: 'maxTotalTokens', used: 60 } });
  });

  it('the budget’s chart passes the workflow proofs, as the workflow inside does', () => {
    const { machine } = orderWorkflow();
    const externalEvents = ['order.confirm', 'order.explode'];
    expect(verifyWorkflow(machine, { externalEvents })).toEqual([]);
    expect(verifyWorkflow(withBudget(machine, { maxTotalTokens: 1_000, maxDurationMs: 60_000 }), { externalEvents })).toEqual([]);
  });

  it('the workflow inside failing (its own action threw) ends the budget `failed` with an error output, hosted too', async () => {
    const { machine } = orderWorkflow();
    const host = createConversationHost({ machine: withBudget(machine, { maxTotalTokens: 10_000 }), store: memoryStore() });
    await host.start('b-2', { input: { item: 'lamp' } });
    await expect.poll(async () => (await host.get('b-2'))?.status).toBe('awaitingApproval');
    await host.send('b-2', { type: 'tool.approve', toolCallId: 'charge-1' });
    await expect.poll(async () => (await host.get('b-2'))?.conversations).toEqual([]);
    const view = await host.send('b-2', { type: 'order.explode' });
    expect(view).toMatchObject({ status: 'error', value: 'failed', output: { status: 'error', message: 'the confirm action exploded' } });
    expect(await host.result('b-2')).toEqual({ status: 'error', message: 'the confirm action exploded' });
    await host.close();
  });

  it('bad options are named', () => {
    const { machine } = orderWorkflow();
    expect(() => withBudget(machine, {})).toThrow(InvalidOptionsError);
    expect(() => withBudget(machine, { maxTotalTokens: -1 })).toThrow(/maxTotalTokens/);
    expect(() => withBudget(machine, { maxDurationMs: 1.5 })).toThrow(/maxDurationMs/);
    expect(() => withBudget({} as never, { maxTotalTokens: 1 })).toThrow(/workflow/);
  });
});
