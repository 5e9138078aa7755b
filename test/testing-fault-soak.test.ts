/**
 * The fault soak (DESIGN §19): a correct conversation passes under every fault kind; the planted
 * bug of examples/fault-soak.ts is found, named by its stuck state, replayed from its seed and
 * shrunk; a user's bug that leaks a rejection is caught; bad options are named; the actor layer's
 * fault hook changes nothing when no soak set it.
 */
import { createConversationMachine, defineTool, emptyUsage, InvalidOptionsError, type Provider } from 'actorloop';
import { faultSoak, type FaultPlan } from 'actorloop/testing';
import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buggyWorkflow, fixedWorkflow } from '../examples/fault-soak.js';
import { setFaultInjector } from '../src/actors/fault-injector.js';

let serial = 0;
/** Books, looks up, then answers; decided from the history so retries and restores get a fitting answer. */
const model: Provider = {
  name: 'soak-model',
  async *stream({ messages }) {
    const toolMessages = messages.filter((message) => message.role === 'tool').length;
    if (toolMessages < 2) {
      const name = toolMessages === 0 ? 'book' : 'lookup';
      const id = `call_${++serial}`;
      yield { type: 'text.delta', delta: 'On it. ' };
      yield { type: 'tool.call.delta', toolCallId: id, name, argsDelta: '{"id":"r1"}' };
      yield {
        type: 'finish',
        content: [
          { type: 'text', text: 'On it. ' },
          { type: 'tool-call', toolCallId: id, toolName: name, argsText: '{"id":"r1"}' },
        ],
        finishReason: 'tool-calls',
        usage: { inputTokens: 10, outputTokens: 4, totalTokens: 14 },
      };
      return;
    }
    for (const delta of ['Booked ', 'and ', 'checked.']) yield { type: 'text.delta', delta };
    yield { type: 'finish', content: [{ type: 'text', text: 'Booked and checked.' }], finishReason: 'stop', usage: emptyUsage() };
  },
};

const book = defineTool({
  name: 'book',
  description: 'Book a room (not idempotent)',
  parameters: z.object({ id: z.string() }),
  execute: async ({ id }) => `booked ${id}`,
});
const lookup = defineTool({
  name: 'lookup',
  description: 'Look a booking up',
  parameters: z.object({ id: z.string() }),
  idempotent: true,
  execute: async ({ id }, { signal }) => {
    await new Promise((resolve) => setTimeout(resolve, 3));
    signal.throwIfAborted();
    return `${id}: confirmed`;
  },
});

const fast = { requestTimeoutMs: 80, toolTimeoutMs: 80, retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5 } };
const machine = createConversationMachine({ provider: model, tools: [book, lookup], ...fast });

const planSize = (plan: FaultPlan) => plan.requests.length + plan.tools.length + (plan.cancel ? 1 : 0) + (plan.restore ? 1 : 0);

describe('faultSoak', { timeout: 40_000 }, () => {
  it('a correct conversation with a non-idempotent tool passes 60 runs under every fault kind, ending done, error and halted', async () => {
    const report = await faultSoak(machine, { runs: 60, seed: 7, runTimeoutMs: 1_000, faults: { rate: 0.3 } });
    expect(report.violations.map((violation) => `${violation.seed}: ${violation.message}`)).toEqual([]);
    expect(report.runs).toBe(60);
    expect(report.outcomes.done).toBeGreaterThan(0);
    expect(report.outcomes.error).toBeGreaterThan(0);
    expect(report.outcomes.halted).toBeGreaterThan(0);
    expect(report.outcomes.stuck + report.outcomes.failed).toBe(0);
    for (const kind of ['reset', 'stall', 'malformed', 'partial', 'tool throw', 'tool hang', 'tool delay', 'cancel', 'restore'])
      expect(report.injected[kind], kind).toBeGreaterThan(0);
    console.log(
      `soak figures: ${report.runs} runs in ${report.ms} ms (${((report.runs * 1000) / report.ms).toFixed(1)} runs/s)`,
      report.outcomes,
    );
  });

  it('the same seed draws the same plans and outcomes', async () => {
    const seen: string[][] = [[], []];
    for (const list of seen)
      await faultSoak(machine, {
        runs: 8,
        seed: 99,
        runTimeoutMs: 1_000,
        faults: { stall: false, hang: false },
        onRun: (run) => list.push(JSON.stringify(run.plan)),
      });
    expect(seen[0]).toEqual(seen[1]);
  });

  it('finds the planted bug of examples/fault-soak.ts: names the stuck state, replays from the seed, shrinks the plan', async () => {
    const report = await faultSoak(buggyWorkflow, { runs: 15, seed: 20240601, runTimeoutMs: 300, shrink: 1 });
    const stuck = report.violations.filter((violation) => violation.check === 'stuck');
    expect(stuck.length).toBeGreaterThan(0);
    const first = stuck[0];
    if (!first) throw new Error('unreachable');
    expect(first.message).toMatch(/did not end within 300 ms of its last fault: stuck in "awaitingReview"/);
    expect(planSize(first.reproduction.plan)).toBeLessThanOrEqual(planSize(first.plan));
    expect(planSize(first.reproduction.plan)).toBeGreaterThan(0);
    expect(first.reproduction.code).toBe(
      `faultSoak(machine, { runs: 1, seed: ${first.seed}, plan: ${JSON.stringify(first.reproduction.plan)} })`,
    );
    // The seed alone replays the run; the seed with the shrunk plan too.
    const again = await faultSoak(buggyWorkflow, { runs: 1, seed: first.seed, runTimeoutMs: 300, shrink: 0 });
    expect(again.violations.map((violation) => violation.message)).toContain(first.message);
    const shrunk = await faultSoak(buggyWorkflow, {
      runs: 1,
      seed: first.seed,
      runTimeoutMs: 300,
      plan: first.reproduction.plan,
      shrink: 0,
    });
    expect(shrunk.violations[0]?.message).toBe(first.message);
    // The fixed workflow passes the same soak.
    const fixed = await faultSoak(fixedWorkflow, { runs: 15, seed: 20240601, runTimeoutMs: 300 });
    expect(fixed.violations).toEqual([]);
  });

  it("catches a user's bug that leaks a rejection from a tool", async () => {
    const leaky = defineTool({
      name: 'book',
      description: 'Book, and forget a promise',
      parameters: z.object({ id: z.string() }),
      execute: async ({ id }) => {
        void Promise.reject(new Error('audit log write failed'));
        return `booked ${id}`;
      },
    });
    const buggy = createConversationMachine({ provider: model, tools: [leaky, lookup], ...fast });
    const report = await faultSoak(buggy, { runs: 3, seed: 1, runTimeoutMs: 1_000, faults: { rate: 0 }, shrink: 0 });
    // The leaks are meant: taken from the suite's own escape check (test/support/no-crash.ts) too.
    (globalThis as { [key: symbol]: unknown[] | undefined })[Symbol.for('actorloop.test.escaped')]?.splice(0);
    expect(report.violations.length).toBeGreaterThan(0);
    expect(report.violations[0]).toMatchObject({ check: 'escape', message: 'escaped the run: Error: audit log write failed' });
  });

  it('names bad options', async () => {
    await expect(faultSoak(machine, { runs: 0 })).rejects.toThrow(InvalidOptionsError);
    await expect(faultSoak(machine, { runs: 0 })).rejects.toThrow(/runs: expected an integer ≥ 1, got 0/);
    await expect(faultSoak({} as never)).rejects.toThrow(/faultSoak machine: expected a state machine/);
    await expect(faultSoak(machine, { runTimeoutMs: -1 })).rejects.toThrow(/runTimeoutMs/);
  });

  it('the fault hook: absent, a run goes as before; set, every request and execution passes through it', async () => {
    const plain = await toPromise(createActor(machine, { input: { prompt: 'Book r1' } }).start());
    expect(plain.status).toBe('done');
    expect(plain.messages.filter((message) => message.role === 'tool')).toHaveLength(2);
    const seen: string[] = [];
    const actor = createActor(machine, { input: { prompt: 'Book r1' } });
    setFaultInjector(actor.system, {
      provider: (provider) => {
        seen.push('request');
        return provider;
      },
      tool: (call, execute) => {
        seen.push(`${call.toolName}${call.idempotent ? ' (idempotent)' : ''}`);
        return execute();
      },
    });
    const hooked = await toPromise(actor.start());
    expect(hooked.status).toBe('done');
    expect(seen).toEqual(['request', 'book', 'request', 'lookup (idempotent)', 'request']);
  });
});
