import type { S2RunResult } from './s2-concurrency.js';

/**
 * The S2 run that stands for R runs of one (side, transport, N): the one with the most rounds/s,
 * since a busy machine only ever slows a run down. A run with errors never wins over one without.
 * With more than one run, every run's rounds/s and peak RSS go with it, in the order run.
 *
 * @example
 * bestOf([slow, fast]); // fast, with repetitions: [{ roundsPerSecond: slow…}, { roundsPerSecond: fast… }]
 */
export function bestOf(runs: readonly S2RunResult[]): S2RunResult {
  const score = (run: S2RunResult) => (run.errors > 0 || Number.isNaN(run.roundsPerSecond) ? -1 : run.roundsPerSecond);
  const best = runs.reduce((a, b) => (score(b) > score(a) ? b : a));
  if (runs.length === 1) return best;
  return { ...best, repetitions: runs.map((run) => ({ roundsPerSecond: run.roundsPerSecond, peakRssBytes: run.peakRssBytes })) };
}
