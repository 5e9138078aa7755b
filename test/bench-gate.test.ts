/**
 * The bench's regression gate (bench/gate.ts, bench/baseline.ts, bench/noise-spread.ts): which way
 * each ratio regresses, margins, skipped scenarios, a missing baseline, merging saved scenarios —
 * and `npm run bench -- --gate --from <results>` end to end in its own process, exit codes included.
 * No timing here: the ratios are made up, the judging is what is tested.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { type Baseline, type BaselineRun, mergeBaseline, readBaseline, withNoise } from '../bench/baseline.js';
import { s2Defaults } from '../bench/gate-cli.js';
import { compareWithBaseline, gateExitCode, renderGate } from '../bench/gate.js';
import { type GateInput, gateRatios } from '../bench/gate-ratios.js';
import { marginFrom, spreadOf } from '../bench/noise-spread.js';
import type { S1ModeResult, S1Result, S1SideResult } from '../bench/s1-overhead.js';
import { bestOf } from '../bench/s2-best-of.js';
import type { S2RunResult } from '../bench/s2-concurrency.js';
import { rotated, s2MinimalRatios } from '../bench/s2-sides.js';
import { isLoopSide } from '../bench/worker-process.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), 'bench-gate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const side = (median: number, mean = median, p10 = median * 0.8): S1SideResult => ({
  cpuUsPerRound: { median, mean, p10, p90: median, min: median },
  wallMsPerConversation: { median: 1 },
  samples: [],
});
/** A run whose ratios actorloop ÷ raw are `ratios` (raw is 1000 µs, 1000 rounds/s, 100 MB). */
function results(ratios: {
  stream?: number;
  json?: number;
  /** actorloop ÷ raw of the 10th percentiles, when it differs from the medians' ratio. */
  p10?: number;
  rps?: Record<number, number>;
  rss?: number;
  errors?: number;
}): GateInput {
  const mode = (name: 'stream' | 'json', ratio: number): S1ModeResult =>
    ({
      mode: name,
      actorloop: side(1000 * ratio, 1000 * ratio, 800 * (ratios.p10 ?? ratio)),
      raw: side(1000),
      actorloopNodeHttp: side(900 * ratio, 900 * ratio, 720 * (ratios.p10 ?? ratio)),
      rawNodeHttp: side(900),
    }) as S1ModeResult;
  const s1: S1Result | undefined =
    ratios.stream === undefined
      ? undefined
      : {
          rounds: 20,
          reps: 50,
          warmup: 60,
          modes: [mode('stream', ratios.stream), mode('json', ratios.json ?? ratios.stream)],
          serverRequests: 0,
          expectedRequests: 0,
        };
  const row = (sideName: 'actorloop' | 'raw', n: number, rps: number, rss: number, errors: number) =>
    ({ side: sideName, transport: 'fetch', n, roundsPerSecond: rps, peakRssBytes: rss, errors }) as S2RunResult;
  const s2 = ratios.rps
    ? Object.entries(ratios.rps).flatMap(([n, ratio]) => [
        row('actorloop', Number(n), 1000 * ratio, 100e6 * (ratios.rss ?? 1.2), ratios.errors ?? 0),
        row('raw', Number(n), 1000, 100e6, 0),
      ])
    : undefined;
  return { ...(s1 ? { s1 } : {}), ...(s2 ? { s2 } : {}) };
}

const run: BaselineRun = {
  date: '2026-12-04T18:00:00.000Z',
  commit: 'abc1234',
  node: 'v20.20.2',
  flags: {},
  loadAverage: { start: [1, 1, 1], end: [1, 1, 1] },
  cpus: 2,
};
/** The baseline the tests judge against: S1 1.40× both modes, S2 0.91× at 5,000 and 0.95× at 1,000, RSS 1.2×. */
const baseline = (margins: Record<string, number> = {}): Baseline => {
  const base = mergeBaseline(undefined, 20, gateRatios(results({ stream: 1.4, rps: { 1000: 0.95, 5000: 0.91 } })), run);
  return { ...base, margins: { ...base.margins, ...margins } };
};
const both = new Set(['S1', 'S2'] as const);
const row = (report: ReturnType<typeof compareWithBaseline>, id: string) => {
  if (report.status === 'no-baseline') throw new Error('expected rows');
  const found = report.rows.find((candidate) => candidate.id === id);
  if (!found) throw new Error(`no row ${id}`);
  return found;
};

describe('gateRatios', () => {
  it('reads S1 medians and means on both transports and pairs S2 sides per N and transport', () => {
    const ratios = gateRatios(results({ stream: 1.5, json: 1.2, p10: 1.1, rps: { 5000: 0.8 }, rss: 1.3 }));
    const byId = Object.fromEntries(ratios.map((ratio) => [ratio.id, ratio]));
    expect(byId['S1/stream/fetch/cpu']?.value).toBeCloseTo(1.5);
    expect(byId['S1/stream/fetch/cpu-p10']).toMatchObject({ direction: 'lower-is-better', scenario: 'S1' });
    expect(byId['S1/stream/fetch/cpu-p10']?.value).toBeCloseTo(1.1);
    expect(byId['S1/json/node-http/cpu-p10']?.value).toBeCloseTo(1.1);
    expect(byId['S1/json/fetch/cpu-mean']?.value).toBeCloseTo(1.2);
    expect(byId['S1/json/node-http/cpu']?.value).toBeCloseTo(1.2);
    expect(byId['S2/5000/fetch/rounds-per-second']).toMatchObject({ direction: 'higher-is-better', scenario: 'S2' });
    expect(byId['S2/5000/fetch/rounds-per-second']?.value).toBeCloseTo(0.8);
    expect(byId['S2/5000/fetch/peak-rss']).toMatchObject({ direction: 'lower-is-better' });
    expect(byId['S2/5000/fetch/peak-rss']?.value).toBeCloseTo(1.3);
    expect(Object.keys(byId)).toHaveLength(14);
  });
});

describe('compareWithBaseline', () => {
  it('fails the fall of S2 at 5,000 from 0.91× to 0.79× (13 %) with an 8 % margin, and passes a 5 % dip', () => {
    const margins = { 'S2/5000/fetch/rounds-per-second': 0.08 };
    const fell = compareWithBaseline(baseline(margins), gateRatios(results({ stream: 1.4, rps: { 1000: 0.95, 5000: 0.79 } })), both);
    expect(fell.status).toBe('fail');
    expect(gateExitCode(fell)).toBe(1);
    expect(row(fell, 'S2/5000/fetch/rounds-per-second')).toMatchObject({ verdict: 'regressed', baseline: 0.91, margin: 0.08 });
    expect(row(fell, 'S2/5000/fetch/rounds-per-second').change).toBeCloseTo(0.79 / 0.91 - 1);
    expect(row(fell, 'S2/1000/fetch/rounds-per-second').verdict).toBe('pass');
    expect(renderGate(fell, 'node-20.json')).toMatch(
      /S2\/5000\/fetch\/rounds-per-second \| higher \| 0\.910 \| 0\.790 \| -13\.2 % \| ±8\.0 % \| \*\*REGRESSED\*\*/,
    );

    const dipped = compareWithBaseline(baseline(margins), gateRatios(results({ stream: 1.4, rps: { 1000: 0.95, 5000: 0.865 } })), both);
    expect(dipped.status).toBe('pass');
    expect(gateExitCode(dipped)).toBe(0);
  });

  it('takes the direction from the ratio: CPU and RSS up regress, throughput up improves', () => {
    const margins = { 'S1/stream/fetch/cpu': 0.1, 'S2/5000/fetch/peak-rss': 0.1, 'S2/1000/fetch/rounds-per-second': 0.08 };
    const report = compareWithBaseline(
      baseline(margins),
      gateRatios(results({ stream: 1.6, json: 1.4, rps: { 1000: 1.1, 5000: 0.91 }, rss: 1.4 })),
      both,
    );
    expect(row(report, 'S1/stream/fetch/cpu').verdict).toBe('regressed');
    expect(row(report, 'S1/json/fetch/cpu').verdict).toBe('pass');
    expect(row(report, 'S2/5000/fetch/peak-rss').verdict).toBe('regressed');
    expect(row(report, 'S2/1000/fetch/rounds-per-second').verdict).toBe('improved');
    // CPU down is an improvement, not a regression.
    const faster = compareWithBaseline(baseline(margins), gateRatios(results({ stream: 1.1, rps: { 1000: 0.95, 5000: 0.91 } })), both);
    expect(row(faster, 'S1/stream/fetch/cpu').verdict).toBe('improved');
    expect(faster.status).toBe('pass');
  });

  it('uses the default margin of the ratio kind when the baseline has none', () => {
    const report = compareWithBaseline(baseline(), gateRatios(results({ stream: 1.4, rps: { 1000: 0.95, 5000: 0.91 } })), both);
    expect(row(report, 'S2/5000/fetch/rounds-per-second').margin).toBeGreaterThan(0);
    expect(report.status).toBe('pass');
  });

  it('skips a scenario not run and says so; S1 alone still judges S1', () => {
    const report = compareWithBaseline(baseline(), gateRatios(results({ stream: 1.9 })), new Set(['S1'] as const));
    if (report.status === 'no-baseline') throw new Error('expected a report');
    expect(report.skippedScenarios).toEqual(['S2: not run']);
    expect(report.rows.every((candidate) => candidate.scenario === 'S1')).toBe(true);
    expect(report.status).toBe('fail');
    expect(renderGate(report, 'node-20.json')).toContain('skipped S2: not run');
  });

  it('skips an N the run did not measure and one the baseline does not hold', () => {
    const report = compareWithBaseline(baseline(), gateRatios(results({ stream: 1.4, rps: { 1000: 0.95, 10000: 0.5 } })), both);
    expect(row(report, 'S2/5000/fetch/rounds-per-second')).toMatchObject({ verdict: 'skipped', note: 'not measured in this run' });
    expect(row(report, 'S2/10000/fetch/rounds-per-second')).toMatchObject({ verdict: 'skipped', note: 'not in the baseline' });
    expect(report.status).toBe('pass');
  });

  it('fails a ratio over failed conversations', () => {
    const report = compareWithBaseline(baseline(), gateRatios(results({ stream: 1.4, rps: { 1000: 0.95, 5000: 0.91 }, errors: 3 })), both);
    expect(row(report, 'S2/5000/fetch/rounds-per-second').verdict).toBe('failed-run');
    expect(gateExitCode(report)).toBe(1);
  });

  it('reports a missing baseline, and nothing in common, as exit code 2 — not a pass', () => {
    const missing = compareWithBaseline(undefined, gateRatios(results({ stream: 1.4 })), both, {
      baselineFile: 'bench/baseline/node-99.json',
    });
    expect(missing).toMatchObject({ status: 'no-baseline' });
    expect(missing.status === 'no-baseline' && missing.message).toContain('bench/baseline/node-99.json');
    expect(gateExitCode(missing)).toBe(2);
    const onlyS2 = mergeBaseline(undefined, 20, gateRatios(results({ rps: { 5000: 0.91 } })), run);
    const none = compareWithBaseline(onlyS2, gateRatios(results({ stream: 1.4 })), new Set(['S1'] as const));
    expect(none.status).toBe('nothing-compared');
    expect(gateExitCode(none)).toBe(2);
  });
});

describe('baseline', () => {
  it('a noise run of S1 alone keeps the S2 spreads and margins of the run before it, and names that run', () => {
    const record = (k: number, ids: string[], margin: number) => ({
      measuredAt: `2026-12-0${k}T00:00:00.000Z`,
      node: run.node,
      k,
      settings: {},
      loadAverage: { min: 1, mean: 1.5, max: 2 },
      factor: 1.5,
      floor: 0.1,
      spreads: Object.fromEntries(ids.map((id) => [id, { median: 1, maxDeviation: 0.01, range: 0.02 }])),
      margins: Object.fromEntries(ids.map((id) => [id, margin])),
    });
    const both = withNoise(baseline(), 20, record(4, ['S1/stream/fetch/cpu', 'S2/5000/fetch/rounds-per-second'], 0.15));
    const next = withNoise(both, 20, record(5, ['S1/stream/fetch/cpu', 'S1/stream/fetch/cpu-p10'], 0.12));
    expect(Object.keys(next.noise?.spreads ?? {}).sort()).toEqual([
      'S1/stream/fetch/cpu',
      'S1/stream/fetch/cpu-p10',
      'S2/5000/fetch/rounds-per-second',
    ]);
    expect(next.margins['S2/5000/fetch/rounds-per-second']).toBe(0.15);
    expect(next.margins['S1/stream/fetch/cpu']).toBe(0.12);
    expect(next.noise?.k).toBe(5);
    expect(next.noise?.earlier?.map((earlier) => earlier.k)).toEqual([4]);
    // A run that measures everything again replaces the record and its history.
    const full = withNoise(next, 20, record(6, Object.keys(next.noise?.spreads ?? {}), 0.1));
    expect(full.noise?.earlier).toBeUndefined();
  });

  it('saving S1 alone keeps the stored S2, the margins and the noise record', () => {
    const noisy = withNoise(baseline(), 20, {
      measuredAt: run.date,
      node: run.node,
      k: 5,
      settings: {},
      loadAverage: { min: 1, mean: 1.5, max: 2 },
      factor: 1.5,
      floor: 0.03,
      spreads: {},
      margins: { 'S2/5000/fetch/rounds-per-second': 0.07 },
    });
    const later = { ...run, commit: 'def5678' };
    const next = mergeBaseline(noisy, 20, gateRatios(results({ stream: 1.2 })), later);
    expect(next.scenarios.S1?.run.commit).toBe('def5678');
    expect(next.scenarios.S1?.ratios['S1/stream/fetch/cpu']).toBeCloseTo(1.2);
    expect(next.scenarios.S2).toEqual(noisy.scenarios.S2);
    expect(next.margins['S2/5000/fetch/rounds-per-second']).toBe(0.07);
    expect(next.noise?.k).toBe(5);
  });

  it('refuses to save ratios over failed conversations', () => {
    expect(() => mergeBaseline(undefined, 20, gateRatios(results({ rps: { 5000: 0.9 }, errors: 2 })), run)).toThrow(
      /not saving a baseline over failed runs: S2\/5000\/fetch\/rounds-per-second \(2 failed/,
    );
  });

  it('reads a missing file as no baseline and names a malformed one', () => {
    expect(readBaseline(path.join(dir, 'absent.json'))).toBeUndefined();
    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, '{"ratios": {}}');
    expect(() => readBaseline(bad)).toThrow(`${bad}: expected a bench baseline`);
  });

  it('s2Defaults reads the N values and transports a gate run measures', () => {
    expect(s2Defaults(baseline())).toEqual({ ns: [1000, 5000], transports: ['fetch'] });
    expect(s2Defaults(undefined)).toBeUndefined();
  });
});

describe('the committed baselines', () => {
  // What a gate run measures by default: S1 in both modes on both transports, S2 at 1,000 and 5,000 on both.
  const gated = gateRatios(results({ stream: 1.5, json: 1.6, rps: { 1000: 0.6, 5000: 0.55 } })).map((ratio) => ratio.id);
  const withNodeHttp = [
    ...gated,
    ...gated.filter((id) => id.startsWith('S1/')).map((id) => id.replace('/fetch/', '/node-http/')),
    ...gated.filter((id) => id.startsWith('S2/')).map((id) => id.replace('/fetch/', '/node-http/')),
  ];

  for (const major of [20, 24]) {
    it(`node-${major}.json holds every gated ratio with a margin from a noise run, for the Node major it names`, () => {
      const committed = readBaseline(path.join(root, 'bench', 'baseline', `node-${major}.json`));
      if (!committed) throw new Error(`bench/baseline/node-${major}.json is missing`);
      expect(committed.nodeMajor).toBe(major);
      const stored = { ...committed.scenarios.S1?.ratios, ...committed.scenarios.S2?.ratios };
      for (const id of new Set(withNodeHttp)) {
        expect(stored[id], id).toBeGreaterThan(0);
        expect(committed.margins[id], id).toBeGreaterThanOrEqual(0.1);
      }
      expect(committed.noise?.k).toBeGreaterThanOrEqual(3);
      expect(committed.scenarios.S2?.run.node.startsWith(`v${major}.`)).toBe(true);
      // The gate run's S2 defaults come from the baseline: 1,000 and 5,000 on both transports.
      expect(s2Defaults(committed)).toEqual({ ns: [1000, 5000], transports: ['fetch', 'node-http'] });
    });
  }
});

describe('S2 best of R runs', () => {
  const s2 = (roundsPerSecond: number, peakRssBytes: number, errors = 0) =>
    ({ side: 'actorloop', transport: 'fetch', n: 5000, roundsPerSecond, peakRssBytes, errors }) as S2RunResult;

  it('reports the run with the most rounds/s and keeps every run beside it, in order', () => {
    const best = bestOf([s2(900, 3e8), s2(1100, 4e8), s2(1000, 2e8)]);
    expect(best.roundsPerSecond).toBe(1100);
    expect(best.peakRssBytes).toBe(4e8);
    expect(best.repetitions).toEqual([
      { roundsPerSecond: 900, peakRssBytes: 3e8 },
      { roundsPerSecond: 1100, peakRssBytes: 4e8 },
      { roundsPerSecond: 1000, peakRssBytes: 2e8 },
    ]);
  });

  it('never lets a run with errors or a failed worker win, and leaves a single run as it is', () => {
    expect(bestOf([s2(2000, 1e8, 3), s2(800, 1e8)]).roundsPerSecond).toBe(800);
    expect(bestOf([s2(Number.NaN, Number.NaN, 5000), s2(700, 1e8)]).roundsPerSecond).toBe(700);
    const single = s2(900, 1e8);
    expect(bestOf([single])).toBe(single);
    expect(bestOf([s2(900, 1e8, 2), s2(950, 1e8, 1)]).errors).toBe(2);
  });
});

describe('S2 with the minimal statechart loop (--s2-minimal)', () => {
  const row = (side: S2RunResult['side'], n: number, roundsPerSecond: number, peakRssBytes: number) =>
    ({ side, transport: 'fetch', n, roundsPerSecond, peakRssBytes, errors: 0 }) as S2RunResult;
  const rows = [row('raw', 5000, 1000, 100e6), row('actorloop', 5000, 600, 125e6), row('minimal', 5000, 800, 110e6)];

  it('rotates the sides so each goes first once over as many runs, and two sides alternate as before', () => {
    const sides = ['actorloop', 'raw', 'minimal'] as const;
    const firsts = [0, 1, 2].map((rep) => rotated(sides, rep));
    expect(firsts).toEqual([
      ['actorloop', 'raw', 'minimal'],
      ['raw', 'minimal', 'actorloop'],
      ['minimal', 'actorloop', 'raw'],
    ]);
    for (const order of firsts) expect([...order].sort()).toEqual([...sides].sort());
    expect(rotated(['actorloop', 'raw'], 0)).toEqual(['actorloop', 'raw']);
    expect(rotated(['actorloop', 'raw'], 3)).toEqual(['raw', 'actorloop']);
  });

  it('puts actorloop and the minimal loop against the raw loop, and actorloop against the minimal loop', () => {
    const [ratios] = s2MinimalRatios(rows);
    expect(ratios).toMatchObject({ n: 5000, transport: 'fetch' });
    expect(ratios?.roundsPerSecond.actorloop).toBeCloseTo(0.6);
    expect(ratios?.roundsPerSecond.minimal).toBeCloseTo(0.8);
    expect(ratios?.roundsPerSecond.actorloopOverMinimal).toBeCloseTo(0.75);
    expect(ratios?.peakRss.actorloop).toBeCloseTo(1.25);
    expect(ratios?.peakRss.actorloopOverMinimal).toBeCloseTo(125 / 110);
  });

  it('gives no ratios without the minimal side, or where a side is missing at that N', () => {
    expect(s2MinimalRatios(rows.slice(0, 2))).toEqual([]);
    expect(s2MinimalRatios([row('raw', 1000, 1000, 1e8), ...rows.slice(1)])).toEqual([]);
  });

  it('takes a side from a flag only when it names one (--cpu-prof, alloc-sites --side)', () => {
    for (const side of ['actorloop', 'raw', 'minimal']) expect(isLoopSide(side)).toBe(true);
    for (const text of ['Raw', 'provider', '', '--only', undefined]) expect(isLoopSide(text)).toBe(false);
  });

  it('leaves the gate as it was: the minimal side is no ratio of its own', () => {
    const ids = gateRatios({ s2: rows }).map((ratio) => ratio.id);
    expect(ids).toEqual(['S2/5000/fetch/rounds-per-second', 'S2/5000/fetch/peak-rss']);
    expect(gateRatios({ s2: rows })[0]?.value).toBeCloseTo(0.6);
  });
});

describe('noise spread', () => {
  it('measures the largest run-to-run difference and derives a margin with a floor', () => {
    const spread = spreadOf([0.9, 0.92, 0.88, Number.NaN]);
    expect(spread.runs).toBe(3);
    expect(spread.median).toBeCloseTo(0.9);
    expect(spread.range).toBeCloseTo(0.04 / 0.9);
    expect(spread.maxDeviation).toBeCloseTo(0.02 / 0.9);
    expect(marginFrom(spread, { factor: 1.5, floor: 0.03 })).toBe(0.07);
    expect(marginFrom(spreadOf([1, 1.001]), { factor: 1.5, floor: 0.03 })).toBe(0.03);
    expect(() => spreadOf([Number.NaN])).toThrow('spreadOf: expected at least one finite ratio');
  });
});

describe('npm run bench -- --gate --from <results>', () => {
  const exec = promisify(execFile);
  const tsx = path.join(root, 'node_modules', '.bin', 'tsx');
  const stored = (input: GateInput, node = 'v20.20.2') => {
    const file = path.join(dir, `results-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        startedAt: run.date,
        flags: { s1Rounds: 20, s2Rounds: 5, reps: 50, warmup: 60, ns: [1000, 5000], transports: ['fetch'] },
        environment: { node, commit: 'abc1234', cpus: 2, loadAverageAtStart: [1, 1, 1], loadAverageAtEnd: [1, 1, 1] },
        results: input,
      }),
    );
    return file;
  };
  const bench = async (args: string[]) => {
    try {
      const { stdout, stderr } = await exec(tsx, ['bench/index.ts', ...args], { cwd: root });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  };

  /** `npm run bench -- --from <a stored run of these ratios> <action> --baseline <file>`. */
  const withStored = (ratios: Parameters<typeof results>[0], action: '--gate' | '--save-baseline', baselineFile: string) =>
    bench(['--from', stored(results(ratios)), action, '--baseline', baselineFile]);

  it('saves a baseline, passes the same run, fails the 0.91× → 0.79× fall, and exits 2 without a baseline', async () => {
    const baselineFile = path.join(dir, 'node-20.json');
    const saved = await withStored({ stream: 1.4, rps: { 1000: 0.95, 5000: 0.91 } }, '--save-baseline', baselineFile);
    expect(saved.code).toBe(0);
    const written = JSON.parse(readFileSync(baselineFile, 'utf8')) as Baseline;
    expect(written.scenarios.S2?.ratios['S2/5000/fetch/rounds-per-second']).toBeCloseTo(0.91);
    expect(written.scenarios.S1?.run).toMatchObject({ commit: 'abc1234', node: 'v20.20.2', flags: { reps: 50, warmup: 60 } });

    const same = await withStored({ stream: 1.4, rps: { 1000: 0.95, 5000: 0.91 } }, '--gate', baselineFile);
    expect(same.stdout).toContain('gate: pass');
    expect(same.code).toBe(0);

    const fell = await withStored({ stream: 1.4, rps: { 1000: 0.95, 5000: 0.79 } }, '--gate', baselineFile);
    expect(fell.stdout).toMatch(/S2\/5000\/fetch\/rounds-per-second .*\*\*REGRESSED\*\*/);
    expect(fell.code).toBe(1);

    const missing = await withStored({ stream: 1.4 }, '--gate', path.join(dir, 'none.json'));
    expect(missing.stdout).toContain('no baseline at');
    expect(missing.code).toBe(2);
    // Four processes that each load the whole bench through tsx: seconds each on a busy 2-core machine.
  }, 120_000);
});
