/**
 * The long-conversation controls (DESIGN §12) under random faults (test/support/controls-run.ts):
 * whatever mix of context window, budgets, guardrails, steering, interrupts and fallback chains a
 * run gets, it ends in done, halted or error with a valid history, every call answered once, every
 * message it took in its history once, no request over the token budget, and nothing escaping.
 * `npm run test:soak` runs thousands more (`--controls-runs`).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { controlsCaseArb, runControlsCase } from './support/controls-run.js';

const seed = Number(process.env.PROPERTY_SEED ?? 20261204);

describe('long-conversation controls under random faults', () => {
  it(`keep every guarantee (200 runs, seed ${seed})`, { timeout: 120_000 }, async () => {
    const cases = fc.sample(controlsCaseArb, { seed, numRuns: 200 });
    const outcomes = new Set<string>();
    for (const [index, controlsCase] of cases.entries()) {
      const report = await runControlsCase(controlsCase);
      expect(report.violations, `run #${index}: ${JSON.stringify(controlsCase)}`).toEqual([]);
      if (report.output)
        outcomes.add(
          `${report.output.status}${report.output.reason ? `/${report.output.reason}` : ''}${report.output.error?.code ? ` (${report.output.error.code})` : ''}`,
        );
    }
    // The sample reaches what it is meant to: each control ends runs its own way.
    for (const outcome of ['done', 'halted/budget', 'halted/guardrail', 'error (guardrail_error)', 'error (guardrail_timeout)'])
      expect([...outcomes]).toContain(outcome);
  });
});
