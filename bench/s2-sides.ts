import type { S2RunResult } from './s2-concurrency.js';

/**
 * `sides` started at `first` (modulo their number), so that over as many runs as there are sides
 * each goes first once: a warmer (or busier) machine does not always favour one.
 *
 * @example
 * rotated(['actorloop', 'raw', 'minimal'], 1); // ['raw', 'minimal', 'actorloop']
 */
export function rotated<T>(sides: readonly T[], first: number): T[] {
  const start = first % sides.length;
  return [...sides.slice(start), ...sides.slice(0, start)];
}

/** One (N, transport) of an S2 run with the minimal statechart loop beside actorloop and the raw loop. */
export type S2MinimalRatios = {
  n: number;
  transport: S2RunResult['transport'];
  roundsPerSecond: { actorloop: number; minimal: number; actorloopOverMinimal: number };
  peakRss: { actorloop: number; minimal: number; actorloopOverMinimal: number };
};

/**
 * actorloop and the minimal statechart loop against the raw loop, and actorloop against the
 * minimal loop, per (N, transport) that has all three sides: how much of the gap to the raw loop
 * a tool loop of XState actors already has.
 *
 * @example
 * s2MinimalRatios(results); // [{ n: 5000, transport: 'fetch', roundsPerSecond: { actorloop: 0.57, minimal: 0.8, … }, … }]
 */
export function s2MinimalRatios(results: readonly S2RunResult[]): S2MinimalRatios[] {
  const out: S2MinimalRatios[] = [];
  for (const minimal of results) {
    if (minimal.side !== 'minimal') continue;
    const find = (side: 'actorloop' | 'raw') =>
      results.find((row) => row.side === side && row.n === minimal.n && row.transport === minimal.transport);
    const [actorloop, raw] = [find('actorloop'), find('raw')];
    if (!actorloop || !raw) continue;
    const ratios = (of: (row: S2RunResult) => number) => ({
      actorloop: of(actorloop) / of(raw),
      minimal: of(minimal) / of(raw),
      actorloopOverMinimal: of(actorloop) / of(minimal),
    });
    out.push({
      n: minimal.n,
      transport: minimal.transport,
      roundsPerSecond: ratios((row) => row.roundsPerSecond),
      peakRss: ratios((row) => row.peakRssBytes),
    });
  }
  return out;
}
