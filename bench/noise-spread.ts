/**
 * How much a ratio moves between runs of the same code on the same machine: the gate's margin is
 * this spread times a safety factor, not a guess. Pure, so test/bench-gate.test.ts can check it.
 */
import { median } from './stats.js';

export type Spread = {
  runs: number;
  median: number;
  min: number;
  max: number;
  /** max |rᵢ − median| ÷ median: how far one run strays from the typical one. */
  maxDeviation: number;
  /** (max − min) ÷ median: the largest run-to-run difference seen, which is what the gate compares (one run against another). */
  range: number;
};

/**
 * @example
 * spreadOf([0.9, 0.92, 0.88]); // { median: 0.9, maxDeviation: 0.0222…, range: 0.0444…, … }
 */
export function spreadOf(values: readonly number[]): Spread {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) throw new Error('spreadOf: expected at least one finite ratio, got none');
  const middle = median(finite);
  const min = Math.min(...finite);
  const max = Math.max(...finite);
  return {
    runs: finite.length,
    median: middle,
    min,
    max,
    maxDeviation: Math.max(...finite.map((value) => Math.abs(value - middle))) / middle,
    range: (max - min) / middle,
  };
}

/**
 * The margin for a ratio from its spread: the largest run-to-run difference seen × `factor`, never
 * below `floor` (a ratio that happened to hold still over K runs still moves a little), rounded up
 * to the next 0.5 % so the figure in the baseline reads as a choice.
 *
 * @example
 * marginFrom(spreadOf([0.9, 0.92, 0.88]), { factor: 1.5, floor: 0.03 }); // 0.07
 */
export function marginFrom(spread: Spread, options: { factor: number; floor: number }): number {
  const raw = Math.max(options.floor, spread.range * options.factor);
  return Math.ceil(raw * 200 - 1e-9) / 200;
}
