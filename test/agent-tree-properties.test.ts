/**
 * Agent trees under random faults (test/support/agent-tree-run.ts): at every level of the tree the
 * run ends in done, halted or error, every child that started finished, every history stays valid,
 * the usage split adds up, nothing is left running and nothing escapes. `npm run test:soak` runs
 * thousands more (`--tree-runs`).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runTreeCase, treeCaseArb } from './support/agent-tree-run.js';

const seed = Number(process.env.PROPERTY_SEED ?? 20261204);

describe('agent trees under random faults, cancels and approvals', () => {
  it(`keep every guarantee at every level (120 trees, seed ${seed})`, { timeout: 120_000 }, async () => {
    const cases = fc.sample(treeCaseArb, { seed, numRuns: 120 });
    let agents = 0;
    let deepest = 0;
    const statuses = new Set<string>();
    for (const [index, treeCase] of cases.entries()) {
      const report = await runTreeCase(treeCase);
      expect(report.violations, `tree #${index}: ${JSON.stringify(treeCase)}`).toEqual([]);
      agents += report.agents;
      deepest = Math.max(deepest, report.depth);
      if (report.output) statuses.add(`${report.output.status}${report.output.reason ? `/${report.output.reason}` : ''}`);
    }
    // The sample reaches what it is meant to: many agent calls, grandchildren, every way to end.
    expect(agents).toBeGreaterThan(30);
    expect(deepest).toBeGreaterThanOrEqual(2);
    for (const status of ['done', 'halted/cancelled', 'error']) expect([...statuses]).toContain(status);
  });
});
