/**
 * `npm run bench [-- flags]`: actorloop against a hand-written loop over the same `openai` SDK,
 * in the same run, against a local OpenAI-wire server in its own process.
 *
 *   --quick            whole run under a minute: fewer reps, N = 100,250, S3 with 300
 *   --n 1000,5000      S2 concurrency levels (default 1000,5000,10000)
 *   --rounds K         S1 tool rounds per conversation (default 20); S2 uses 5 unless given
 *   --reps R           S1 measured repetitions per side and mode (default 50; quick 12)
 *   --warmup W         S1 warm-up conversations per side and mode (default 60; quick 8)
 *   --transports fetch,node-http  S2's transports (default both)
 *   --s2-reps R        S2 runs per side, transport and N; the best (most rounds/s) stands (default 1; --gate 3)
 *   --s2-minimal       S2 also runs the minimal statechart loop (a third side: what XState's own actors reach)
 *   --only S1,S3       scenarios to run (S1,S1-AISDK,S2,S3,S4,ROUNDS,ENGINE,AGENTS,CONTROLS,WORKFLOW,OBSERVE,HOST_OBSERVE,HTTP,RESTATE,POSTGRES,MEDIA,SERVICE; PROFILE for the CPU profile alone)
 *   --s3-n N           S3 live conversations (default 2000; quick 300)
 *   --s3-wave N        S3's warm-up wave (default the smaller of N and 500; N: hash tables already sized for N)
 *   --service-n N      SERVICE's chats at once (default 1000; quick 200)
 *   --service-reps R   SERVICE's measured runs per side, the best standing (default 2; quick 1)
 *   --profile          S3 heap snapshots diffed by constructor, and the S1 CPU profile
 *   --cpu-prof [side]  the S1 CPU profile only for that side (actorloop | raw | minimal | ai-sdk: S1-AISDK's adapter side), also without --profile
 *   --gate             after the run, compare the S1 and S2 ratios with bench/baseline/node-<major>.json and
 *                      exit 1 on a regression beyond the margin, 2 without a baseline; alone it runs S1 and
 *                      S2 at the baseline's N values and transports (--only / --n / --transports override)
 *   --save-baseline    write this run's S1 / S2 ratios into bench/baseline/node-<major>.json (the scenario
 *                      run replaces its stored one; the other and the margins are kept)
 *   --from <file>      gate / save a stored bench/results/<timestamp>.json instead of measuring
 *   --baseline <file>  another baseline file than bench/baseline/node-<major>.json
 *
 * Prints a markdown table and writes everything to bench/results/<timestamp>.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execSync } from 'node:child_process';
import { baselinePath, readBaseline } from './baseline.js';
import { afterRun, describeCommit, nodeMajorOf, s2Defaults, scenariosIn } from './gate-cli.js';
import { profileS1, type ProfileResult } from './profile.js';
import { measureFlatness, type FlatnessResult } from './rounds.js';
import { s1, type S1Result, type S1SideResult } from './s1-overhead.js';
import { s1AiSdk, type S1AiSdkResult } from './s1-ai-sdk.js';
import { s2, type S2RunResult } from './s2-concurrency.js';
import { s2MinimalRatios } from './s2-sides.js';
import { s3, type S3RunResult } from './s3-memory.js';
import { type RestateResult, restateScenario } from './restate.js';
import { s4, type S4Result, type S4ThroughputResult } from './s4-persistence.js';
import type { AgentsResult } from './agents.js';
import type { ControlsResult } from './controls.js';
import type { WorkflowResult } from './workflow.js';
import type { EngineResult } from './engine.js';
import { type HttpResult, httpFanOut } from './http.js';
import { observe, type ObserveResult } from './observe.js';
import { type MediaResult, mediaScenario } from './media.js';
import { type PostgresBenchResult, postgresBench } from './postgres.js';
import { type ServiceResult, serviceBench, serviceMarkdown } from './service.js';
import { type HostObserveResult, observeHost } from './observe-host.js';
import { fmt, mb } from './stats.js';
import { startWireServerProcess } from './wire.js';
import type { Transport } from './client.js';
import { isLoopSide, type ProfileSide, runInWorker } from './worker-process.js';

type Flags = {
  quick: boolean;
  ns: number[];
  s1Rounds: number;
  s2Rounds: number;
  /** S2 runs per (side, transport, N), best of them reported. */
  s2Reps: number;
  /** S2 also runs the minimal statechart loop. */
  s2Minimal: boolean;
  reps: number;
  warmup: number;
  only: Set<string>;
  s3N: number;
  s3Wave: number;
  /** SERVICE: chats at once, and measured runs per side. */
  serviceN: number;
  serviceReps: number;
  profile: boolean;
  cpuProfSide: ProfileSide | null;
  /** S2's transports: the SDK's default fetch, `createNodeFetch`, or both. */
  transports: Transport[];
  /** Judge the run against the committed baseline (bench/gate.ts). */
  gate: boolean;
  saveBaseline: boolean;
};

/** `gateS2`: the N values and transports of the baseline's S2, which `--gate` measures unless told otherwise. */
function parseFlags(argv: string[], gateS2?: { ns: number[]; transports: Transport[] }): Flags {
  const value = (name: string) => {
    const index = argv.indexOf(name);
    return index === -1 ? undefined : argv[index + 1];
  };
  const quick = argv.includes('--quick');
  const gate = argv.includes('--gate');
  const list = (text: string | undefined) =>
    text
      ?.split(',')
      .map((part) => part.trim())
      .filter(Boolean);
  const ns = list(value('--n'))?.map(Number) ?? (gate && gateS2 ? gateS2.ns : quick ? [100, 250] : [1000, 5000, 10000]);
  const rounds = value('--rounds');
  const only = new Set(
    (
      list(value('--only')) ??
      // The gate watches S1 and S2; the rest of the bench is not needed to judge them.
      (gate ? ['S1', 'S2'] : undefined) ?? [
        'S1',
        'S1-AISDK',
        'S2',
        'S3',
        'S4',
        'ROUNDS',
        'ENGINE',
        'AGENTS',
        'CONTROLS',
        'WORKFLOW',
        'OBSERVE',
        'HOST_OBSERVE',
        'HTTP',
        'RESTATE',
        'POSTGRES',
        'MEDIA',
        'SERVICE',
      ]
    ).map((name) => name.toUpperCase()),
  );
  const cpuProfIndex = argv.indexOf('--cpu-prof');
  const cpuProfArg = cpuProfIndex === -1 ? undefined : argv[cpuProfIndex + 1];
  // A bare `--cpu-prof` (followed by another flag or nothing) profiles actorloop.
  const cpuProfSide: ProfileSide | null =
    cpuProfIndex === -1 ? null : cpuProfArg === 'ai-sdk' || isLoopSide(cpuProfArg) ? cpuProfArg : 'actorloop';
  const profile = argv.includes('--profile');
  if (profile || cpuProfSide) only.add('PROFILE');
  const s3N = Number(value('--s3-n') ?? (quick ? 300 : 2000));
  const flags: Flags = {
    quick,
    ns,
    s1Rounds: rounds ? Number(rounds) : 20,
    s2Rounds: rounds ? Number(rounds) : 5,
    // One S2 run on a machine with anything else on it moves by tens of percent; the gate needs the best of a few.
    s2Reps: Number(value('--s2-reps') ?? (gate ? 3 : 1)),
    s2Minimal: argv.includes('--s2-minimal'),
    reps: Number(value('--reps') ?? (quick ? 12 : 50)),
    // The JIT needs a few thousand rounds before a side's cost settles; a short warm-up measures
    // the compiler as much as the code.
    warmup: Number(value('--warmup') ?? (quick ? 8 : 60)),
    only,
    s3N,
    s3Wave: Number(value('--s3-wave') ?? Math.min(s3N, 500)),
    serviceN: Number(value('--service-n') ?? (quick ? 200 : 1000)),
    serviceReps: Number(value('--service-reps') ?? (quick ? 1 : 2)),
    profile,
    cpuProfSide: cpuProfSide ?? (profile ? 'actorloop' : null),
    gate,
    saveBaseline: argv.includes('--save-baseline'),
    transports: (list(value('--transports')) ?? (gate && gateS2 ? gateS2.transports : ['fetch', 'node-http'])).map((name) => {
      if (name !== 'fetch' && name !== 'node-http') throw new Error(`--transports: expected fetch and/or node-http, got ${name}`);
      return name;
    }),
  };
  for (const [name, number] of [
    ['--rounds', flags.s1Rounds],
    ['--reps', flags.reps],
    ['--s2-reps', flags.s2Reps],
    ['--warmup', flags.warmup],
    ['--s3-n', flags.s3N],
    ['--s3-wave', flags.s3Wave],
    ['--service-n', flags.serviceN],
    ['--service-reps', flags.serviceReps],
    ...flags.ns.map((n) => ['--n', n] as const),
  ] as const) {
    if (!Number.isInteger(number) || number < 1) throw new Error(`${name}: expected a positive integer, got ${number}`);
  }
  return flags;
}

function environment() {
  let ulimitN = 'unknown';
  let somaxconn = 'unknown';
  try {
    ulimitN = execSync('ulimit -n', { shell: '/bin/sh' }).toString().trim();
  } catch {}
  try {
    somaxconn = execSync('cat /proc/sys/net/core/somaxconn').toString().trim();
  } catch {}
  let commit = 'unknown';
  try {
    commit = execSync('git rev-parse --short HEAD').toString().trim();
  } catch {}
  return {
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryBytes: os.totalmem(),
    loadAverageAtStart: os.loadavg(),
    ulimitN,
    somaxconn,
    commit,
  };
}

const log = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const here = path.dirname(fileURLToPath(import.meta.url));
  const baselineIndex = argv.indexOf('--baseline');
  const baselineOverride = baselineIndex === -1 ? undefined : argv[baselineIndex + 1];
  if (baselineIndex !== -1 && !baselineOverride) throw new Error('--baseline: expected a baseline JSON file');
  const fromIndex = argv.indexOf('--from');
  if (fromIndex !== -1) {
    const from = argv[fromIndex + 1];
    if (!from) throw new Error('--from: expected a bench/results/<timestamp>.json file');
    process.exitCode = judgeStoredRun(from, argv, here, baselineOverride);
    return;
  }
  const baselineFile = baselineOverride ?? baselinePath(here, nodeMajorOf(process.version));
  const baseline = readBaseline(baselineFile);
  if (argv.includes('--gate') && !baseline && !argv.includes('--save-baseline')) {
    // Before measuring: minutes of bench to compare with nothing would read as a pass.
    process.stdout.write(
      `### Gate — no baseline\n\nno baseline at ${path.relative(process.cwd(), baselineFile)} for Node ${process.version}: nothing to compare with. ` +
        'Make one on this machine with `npx tsx bench/noise.ts --k 4 --s2-reps 2 --write-margins --save-baseline` ' +
        '(the medians of 4 runs, margins from their spread) and commit it.\n',
    );
    process.exitCode = 2;
    return;
  }
  const flags = parseFlags(argv, s2Defaults(baseline));
  const resultsDir = path.join(here, 'results');
  mkdirSync(resultsDir, { recursive: true });
  const env = environment();
  const startedAt = new Date();
  log(
    `actorloop bench — node ${env.node}, ${env.cpus} CPUs, load ${env.loadAverageAtStart.map((v) => v.toFixed(2)).join(' ')}, ulimit -n ${env.ulimitN}, somaxconn ${env.somaxconn}`,
  );
  const maxN = Math.max(...flags.ns);
  if (flags.only.has('S2') && Number(env.ulimitN) < maxN + 1000) {
    log(`  warning: ulimit -n ${env.ulimitN} is below N=${maxN} + headroom; each side's process needs one descriptor per connection`);
  }

  const server = await startWireServerProcess();
  log(
    `wire server pid ${server.pid} at ${server.url} (listen backlog asked ${server.backlog}, kernel caps it at somaxconn ${env.somaxconn})`,
  );
  const results: {
    s1?: S1Result;
    s1AiSdk?: S1AiSdkResult;
    s2?: S2RunResult[];
    s3?: S3RunResult[];
    s4?: S4Result;
    rounds?: FlatnessResult;
    engine?: EngineResult;
    agents?: AgentsResult;
    controls?: ControlsResult;
    workflow?: WorkflowResult;
    observe?: ObserveResult;
    media?: MediaResult;
    hostObserve?: HostObserveResult;
    http?: HttpResult;
    restate?: RestateResult;
    postgres?: PostgresBenchResult;
    service?: ServiceResult;
    profile?: ProfileResult;
    serverPeakRssBytes?: number;
  } = {};
  try {
    if (flags.only.has('S1')) {
      log(`S1 overhead: ${flags.s1Rounds} rounds, ${flags.reps} reps per side and mode…`);
      results.s1 = await s1(server, { rounds: flags.s1Rounds, reps: flags.reps, warmup: flags.warmup });
    }
    if (flags.only.has('S1-AISDK')) {
      log(`S1-AISDK: aiSdkProvider(@ai-sdk/openai chat) vs openaiProvider, ${flags.s1Rounds} rounds, ${flags.reps} reps per side…`);
      results.s1AiSdk = await s1AiSdk(server, { rounds: flags.s1Rounds, reps: flags.reps, warmup: flags.warmup });
    }
    if (flags.only.has('S2')) {
      log(`S2 concurrency: N = ${flags.ns.join(', ')}, ${flags.s2Rounds} rounds, latency 25 ms…`);
      results.s2 = await s2(server, {
        ns: flags.ns,
        rounds: flags.s2Rounds,
        latencyMs: 25,
        transports: flags.transports,
        reps: flags.s2Reps,
        minimal: flags.s2Minimal,
        log,
      });
    }
    if (flags.only.has('S3')) {
      log(`S3 memory: ${flags.s3N} conversations blocked in a tool call…`);
      results.s3 = await s3(server, {
        n: flags.s3N,
        wave: flags.s3Wave,
        blockAt: 3,
        profile: flags.profile,
        snapshotDir: resultsDir,
        log,
      });
    }
    if (flags.only.has('S4')) {
      const n = flags.quick ? 100 : 500;
      log(
        `S4 persistence: snapshot round trip (20, 200 messages), then N = ${n} conversations × 5 rounds at latency 25 ms, persistence off / on…`,
      );
      results.s4 = await s4(server, {
        sizes: [20, 200],
        reps: flags.quick ? 20 : 100,
        n,
        rounds: 5,
        throughputReps: flags.quick ? 1 : 2,
        log,
      });
    }
    if (flags.only.has('ROUNDS')) {
      log('ROUNDS: 200-round loops, CPU per round early vs late…');
      results.rounds = await measureFlatness(flags.quick ? 3 : 9);
    }
    if (flags.only.has('ENGINE')) {
      log('ENGINE: the machine without network, and XState primitives…');
      results.engine = await runInWorker<EngineResult>({
        kind: 'engine',
        rounds: 20,
        reps: flags.quick ? 40 : 200,
        warmup: flags.quick ? 30 : 150,
        operations: flags.quick ? 2_000 : 20_000,
      });
    }
    if (flags.only.has('CONTROLS')) {
      log('CONTROLS: a plain request beside one with two guardrails and one with a compaction round…');
      results.controls = await runInWorker<ControlsResult>({
        kind: 'controls',
        reps: flags.quick ? 60 : 300,
        warmup: flags.quick ? 40 : 150,
      });
    }
    if (flags.only.has('WORKFLOW')) {
      log('WORKFLOW: a two-conversation workflow beside the same two conversations run by hand…');
      results.workflow = await runInWorker<WorkflowResult>({
        kind: 'workflow',
        reps: flags.quick ? 60 : 300,
        warmup: flags.quick ? 40 : 150,
        deltas: 10,
      });
    }
    if (flags.only.has('AGENTS')) {
      log('AGENTS: an agent call beside a plain tool call doing the same work, and parked parent + child pairs…');
      results.agents = await runInWorker<AgentsResult>(
        { kind: 'agents', reps: flags.quick ? 60 : 300, warmup: flags.quick ? 40 : 200, parked: flags.quick ? 300 : 2000 },
        ['--expose-gc'],
      );
    }
    if (flags.only.has('OBSERVE')) {
      log('OBSERVE: a run bare, through actorloop/rx, and watched by the live viewer…');
      results.observe = await observe({ rounds: 5, reps: flags.quick ? 30 : 150, warmup: flags.quick ? 15 : 60 });
    }
    if (flags.only.has('MEDIA')) {
      log('MEDIA: a 1 MB image over 10 tool rounds (actor, host + sqliteStore), SQLite bytes, Anthropic caching cost…');
      results.media = await mediaScenario({ reps: flags.quick ? 3 : 9, warmup: flags.quick ? 1 : 3 });
    }
    if (flags.only.has('HOST_OBSERVE')) {
      log('HOST_OBSERVE: host conversations unwatched, through hostFeed + actorloop/rx, watchHost, traceHost…');
      results.hostObserve = await observeHost({ rounds: 5, reps: flags.quick ? 20 : 100, warmup: flags.quick ? 10 : 40 });
    }
    if (flags.only.has('HTTP')) {
      const n = flags.quick ? 200 : 1000;
      log(`HTTP: ${n} conversations at once followed on the host, and over SSE through actorloop/http on node:http…`);
      results.http = await httpFanOut({ n, deltas: 50, reps: flags.quick ? 1 : 3, log });
    }
    if (flags.only.has('RESTATE')) {
      results.restate = await restateScenario(server, {
        n: flags.quick ? 50 : 200,
        rounds: 3,
        conversations: flags.quick ? 10 : 30,
        log,
      });
    }
    if (flags.only.has('POSTGRES')) {
      results.postgres = await postgresBench({
        rounds: 5,
        reps: flags.quick ? 1 : 3,
        concurrency: [
          { c: 1, conversations: flags.quick ? 10 : 40 },
          { c: 50, conversations: flags.quick ? 100 : 400 },
        ],
        log,
      });
    }
    if (flags.only.has('SERVICE')) {
      log(
        `SERVICE: ${flags.serviceN} chats at once × 5 tool rounds over SSE against actorloop (SQLite, Postgres) and the AI SDK (plain, resumable-stream), best of ${flags.serviceReps}…`,
      );
      results.service = await serviceBench({ n: flags.serviceN, reps: flags.serviceReps, log });
    }
    if (flags.only.has('PROFILE') && flags.cpuProfSide) {
      const conversations = flags.quick ? 40 : 200;
      log(`CPU profile of S1's ${flags.cpuProfSide} side: ${conversations} conversations × ${flags.s1Rounds} rounds, streaming…`);
      results.profile = await profileS1(server, {
        side: flags.cpuProfSide,
        rounds: flags.s1Rounds,
        conversations,
        stream: true,
        dir: path.join(resultsDir, 'profiles'),
      });
    }
    results.serverPeakRssBytes = (await server.stats()).peakRssBytes;
  } finally {
    await server.close();
  }

  const markdown = render(results, flags, env);
  process.stdout.write(`${markdown}\n`);
  const file = path.join(resultsDir, `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        startedAt: startedAt.toISOString(),
        finishedAt: new Date().toISOString(),
        flags: { ...flags, only: [...flags.only] },
        environment: { ...env, loadAverageAtEnd: os.loadavg() },
        results,
      },
      null,
      2,
    ),
  );
  log(`wrote ${path.relative(process.cwd(), file)}`);
  if (flags.gate || flags.saveBaseline) {
    process.exitCode = afterRun(
      results,
      scenariosIn(results),
      {
        date: startedAt.toISOString(),
        node: env.node,
        commit: describeCommit(),
        cpus: env.cpus,
        loadAverage: { start: env.loadAverageAtStart, end: os.loadavg() },
        s1Flags: { rounds: flags.s1Rounds, reps: flags.reps, warmup: flags.warmup },
        s2Flags: { n: flags.ns, rounds: flags.s2Rounds, transports: flags.transports, reps: flags.s2Reps },
      },
      { gate: flags.gate, save: flags.saveBaseline, benchDir: here, baselineFile },
    );
  }
}

/** `--from`: the gate and / or --save-baseline on a run written earlier, without measuring. */
function judgeStoredRun(file: string, argv: string[], benchDir: string, baselineFile: string | undefined): number {
  const stored = JSON.parse(readFileSync(file, 'utf8')) as {
    startedAt: string;
    flags: { s1Rounds: number; s2Rounds: number; s2Reps?: number; reps: number; warmup: number; ns: number[]; transports: string[] };
    environment: { node: string; commit: string; cpus: number; loadAverageAtStart: number[]; loadAverageAtEnd: number[] };
    results: { s1?: S1Result; s2?: S2RunResult[] };
  };
  const { flags, environment } = stored;
  return afterRun(
    stored.results,
    scenariosIn(stored.results),
    {
      date: stored.startedAt,
      node: environment.node,
      commit: environment.commit,
      cpus: environment.cpus,
      loadAverage: { start: environment.loadAverageAtStart, end: environment.loadAverageAtEnd },
      s1Flags: { rounds: flags.s1Rounds, reps: flags.reps, warmup: flags.warmup },
      s2Flags: { n: flags.ns, rounds: flags.s2Rounds, transports: flags.transports, reps: flags.s2Reps ?? 1 },
    },
    { gate: argv.includes('--gate'), save: argv.includes('--save-baseline'), benchDir, ...(baselineFile ? { baselineFile } : {}) },
  );
}

function render(
  results: {
    s1?: S1Result;
    s1AiSdk?: S1AiSdkResult;
    s2?: S2RunResult[];
    s3?: S3RunResult[];
    s4?: S4Result;
    rounds?: FlatnessResult;
    engine?: EngineResult;
    agents?: AgentsResult;
    controls?: ControlsResult;
    workflow?: WorkflowResult;
    observe?: ObserveResult;
    media?: MediaResult;
    hostObserve?: HostObserveResult;
    http?: HttpResult;
    restate?: RestateResult;
    postgres?: PostgresBenchResult;
    service?: ServiceResult;
    profile?: ProfileResult;
  },
  flags: Flags,
  env: ReturnType<typeof environment>,
): string {
  const lines: string[] = [];
  lines.push(`## actorloop bench${flags.quick ? ' (--quick)' : ''}`, '');
  lines.push(
    `node ${env.node}, ${env.cpus}× ${env.cpuModel}, load average at start ${env.loadAverageAtStart.map((v) => v.toFixed(2)).join(' ')}, commit ${env.commit}`,
    '',
  );
  if (results.s1) {
    const r = results.s1;
    lines.push(
      `### S1 overhead — 1 conversation × ${r.rounds} tool rounds, latency 0, ${r.reps} reps after ${r.warmup} warm-up, interleaved; medians`,
      '',
    );
    lines.push(
      '| mode | actorloop CPU µs/round | raw loop CPU µs/round | **actorloop / raw** | best runs: actorloop / raw | raw+signal µs/round | provider layer alone µs/round (÷ raw) | minimal statechart µs/round (÷ raw) | **actorloop / minimal** (best runs) | machine µs/round (actorloop − provider) | actorloop p10–p90 | raw p10–p90 | wall ms/conversation actorloop / raw |',
    );
    lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|');
    for (const m of r.modes) {
      lines.push(
        `| ${m.mode === 'stream' ? 'streaming' : 'non-streaming'} | ${fmt(m.actorloop.cpuUsPerRound.median, 0)} | ${fmt(m.raw.cpuUsPerRound.median, 0)} | **${fmt(m.ratio, 2)}×** | ` +
          // The least disturbed run of each side: noise only ever adds CPU, so minima compare the code.
          `${fmt(m.actorloop.cpuUsPerRound.min, 0)} / ${fmt(m.raw.cpuUsPerRound.min, 0)} = ${fmt(m.actorloop.cpuUsPerRound.min / m.raw.cpuUsPerRound.min, 2)}× | ` +
          `${fmt(m.rawSignal.cpuUsPerRound.median, 0)} | ${fmt(m.provider.cpuUsPerRound.median, 0)} (${fmt(m.ratioProvider, 2)}×) | ` +
          `${fmt(m.minimal.cpuUsPerRound.median, 0)} (${fmt(m.ratioMinimal, 2)}×) | **${fmt(m.ratioOverMinimal, 2)}×** (${fmt(m.actorloop.cpuUsPerRound.min / m.minimal.cpuUsPerRound.min, 2)}×) | ` +
          `${fmt(m.actorloop.cpuUsPerRound.median - m.provider.cpuUsPerRound.median, 0)} | ` +
          `${fmt(m.actorloop.cpuUsPerRound.p10, 0)}–${fmt(m.actorloop.cpuUsPerRound.p90, 0)} | ${fmt(m.raw.cpuUsPerRound.p10, 0)}–${fmt(m.raw.cpuUsPerRound.p90, 0)} | ` +
          `${fmt(m.actorloop.wallMsPerConversation.median, 1)} / ${fmt(m.raw.wallMsPerConversation.median, 1)} |`,
      );
    }
    // Each side's samples fall in two modes (with or without a young-generation GC inside the
    // conversation), so medians can flip between runs; means count every GC a side causes.
    const meanRatio = (a: S1SideResult, b: S1SideResult) => fmt(a.cpuUsPerRound.mean / b.cpuUsPerRound.mean, 2);
    lines.push(
      '',
      `Means (steadier than medians here): ${r.modes
        .map(
          (m) =>
            `${m.mode === 'stream' ? 'streaming' : 'non-streaming'} actorloop ÷ raw **${meanRatio(m.actorloop, m.raw)}×**, ÷ minimal **${meanRatio(m.actorloop, m.minimal)}×**, minimal ÷ raw ${meanRatio(m.minimal, m.raw)}×`,
        )
        .join('; ')}.`,
    );
    lines.push(
      '',
      "Transport: the same sides with `createNodeFetch` (keep-alive `node:http`) as the client's `fetch` instead of the SDK's default (undici `fetch`):",
      '',
      '| mode | raw on node:http µs/round (÷ raw on fetch) | actorloop on node:http µs/round | **÷ raw on node:http** (best runs) | **÷ raw on fetch** (best runs) |',
      '|---|---:|---:|---:|---:|',
    );
    for (const m of r.modes) {
      const { rawNodeHttp: rawHttp, actorloopNodeHttp: actorHttp } = m;
      lines.push(
        `| ${m.mode === 'stream' ? 'streaming' : 'non-streaming'} | ${fmt(rawHttp.cpuUsPerRound.median, 0)} (${fmt(rawHttp.cpuUsPerRound.median / m.raw.cpuUsPerRound.median, 2)}×) | ` +
          `${fmt(actorHttp.cpuUsPerRound.median, 0)} | **${fmt(actorHttp.cpuUsPerRound.median / rawHttp.cpuUsPerRound.median, 2)}×** (${fmt(actorHttp.cpuUsPerRound.min / rawHttp.cpuUsPerRound.min, 2)}×) | ` +
          `**${fmt(actorHttp.cpuUsPerRound.median / m.raw.cpuUsPerRound.median, 2)}×** (${fmt(actorHttp.cpuUsPerRound.min / m.raw.cpuUsPerRound.min, 2)}×) |`,
      );
    }
    lines.push('', `server requests ${r.serverRequests} (expected ${r.expectedRequests}); pool ${r.modes[0]?.poolKind ?? '?'}`, '');
  }
  if (results.s1AiSdk) {
    const r = results.s1AiSdk;
    const row = (label: string, side: S1SideResult) =>
      `| ${label} | ${fmt(side.cpuUsPerRound.median, 0)} | ${fmt(side.cpuUsPerRound.mean, 0)} | ${fmt(side.cpuUsPerRound.min, 0)} | ${fmt(side.cpuUsPerRound.p10, 0)}–${fmt(side.cpuUsPerRound.p90, 0)} | ${fmt(side.wallMsPerConversation.median, 1)} |`;
    lines.push(
      `### S1-AISDK — the machine with aiSdkProvider(@ai-sdk/openai ${r.aiSdkOpenAI} chat model) vs with openaiProvider, same mock: 1 conversation × ${r.rounds} tool rounds, latency 0, streaming, ${r.reps} reps after ${r.warmup} warm-up, interleaved`,
      '',
      '| side | CPU µs/round median | mean | best run | p10–p90 | wall ms/conversation |',
      '|---|---:|---:|---:|---|---:|',
      row('machine + openaiProvider', r.native),
      row('machine + aiSdkProvider', r.aiSdk),
      row('plain loop + openaiProvider', r.nativeProvider),
      row('plain loop + aiSdkProvider', r.aiSdkProvider),
      row('floor: hand-written loop, openai SDK', r.raw),
      row('floor: hand-written loop, AI SDK model doStream', r.rawAiSdk),
      '',
      `**aiSdkProvider ÷ openaiProvider: ${fmt(r.ratio, 2)}×** (medians; means ${fmt(r.ratioMean, 2)}×, best runs ${fmt(r.ratioMin, 2)}×; target ≤ 1.10×), ` +
        `${fmt(r.aiSdk.cpuUsPerRound.median - r.native.cpuUsPerRound.median, 0)} µs a round more; provider layers alone (plain loop) ${fmt(r.ratioProvider, 2)}×. ` +
        `Of that, the package itself: AI SDK floor ÷ openai SDK floor ${fmt(r.ratioFloor, 2)}× (${fmt(r.rawAiSdk.cpuUsPerRound.median - r.raw.cpuUsPerRound.median, 0)} µs a round); ` +
        `the adapter's own share ${fmt(r.adapterUsPerRound, 0)} µs a round. server requests ${r.serverRequests} (expected ${r.expectedRequests})`,
      '',
    );
  }
  if (results.s2) {
    lines.push(
      `### S2 concurrency — N conversations at once × ${flags.s2Rounds} rounds, streaming, latency 25 ms, one client per side`,
      '',
    );
    lines.push(
      '| N | side | transport | wall s | rounds/s | requests/s | client CPU s | peak RSS MB | conversation p50 / p99 ms | errors | retries | server requests (expected) | server peak sockets |',
    );
    lines.push('|---:|---|---|---:|---:|---:|---:|---:|---|---:|---:|---|---:|');
    for (const r of results.s2) {
      lines.push(
        `| ${r.n} | ${r.side} | ${r.transport} | ${fmt(r.wallMs / 1000, 2)} | ${fmt(r.roundsPerSecond, 0)} | ${fmt(r.requestsPerSecond, 0)} | ${fmt(r.cpuMs / 1000, 2)} | ${mb(r.peakRssBytes)} | ` +
          `${fmt(r.conversationMs.p50, 0)} / ${fmt(r.conversationMs.p99, 0)} | ${r.errors} | ${r.retries} | ${r.serverRequests ?? '?'} (${r.expectedRequests ?? '?'}) | ${r.serverPeakSockets ?? '?'} |`,
      );
    }
    const errors = results.s2.filter((r) => r.errors > 0);
    for (const r of errors) lines.push('', `errors ${r.side} (${r.transport}) N=${r.n}: ${r.errorSamples.join(' | ')}`);
    const minimal = s2MinimalRatios(results.s2);
    if (minimal.length > 0) {
      lines.push(
        '',
        'With the minimal statechart loop (`--s2-minimal`): what a tool loop of XState actors reaches at all.',
        '',
        '| N | transport | rounds/s: actorloop ÷ raw | minimal ÷ raw | **actorloop ÷ minimal** | peak RSS: actorloop ÷ raw | minimal ÷ raw | **actorloop ÷ minimal** |',
        '|---:|---|---:|---:|---:|---:|---:|---:|',
      );
      for (const r of minimal) {
        const cells = (ratios: (typeof r)['peakRss']) =>
          `${fmt(ratios.actorloop, 2)}× | ${fmt(ratios.minimal, 2)}× | **${fmt(ratios.actorloopOverMinimal, 2)}×**`;
        lines.push(`| ${r.n} | ${r.transport} | ${cells(r.roundsPerSecond)} | ${cells(r.peakRss)} |`);
      }
    }
    lines.push('');
  }
  if (results.s3) {
    const first = results.s3[0];
    lines.push(
      `### S3 memory — ${first?.n ?? '?'} conversations blocked inside a tool call (round ${first?.blockAt ?? '?'}), after a warm-up wave of ${first?.wave ?? '?'} and forced GC`,
      '',
    );
    lines.push(
      '| side | heap KiB per conversation | external KiB per conversation | RSS KiB per conversation | baseline heap MB | loaded heap MB | errors after release |',
    );
    lines.push('|---|---:|---:|---:|---:|---:|---:|');
    for (const r of results.s3) {
      lines.push(
        `| ${r.side}${r.machinePerConversation ? ' (a machine per conversation)' : ''} | ${fmt(r.heapBytesPerConversation / 1024, 1)} | ${fmt(r.externalBytesPerConversation / 1024, 2)} | ${fmt(r.rssBytesPerConversation / 1024, 1)} | ${mb(r.baseline.heapUsed)} | ${mb(r.loaded.heapUsed)} | ${r.errors} |`,
      );
    }
    const bySide = (side: string) => results.s3?.find((r) => r.side === side && !r.machinePerConversation)?.heapBytesPerConversation;
    const [actorloopHeap, rawHeap, minimalHeap] = [bySide('actorloop'), bySide('raw'), bySide('minimal')];
    if (actorloopHeap && rawHeap)
      lines.push(
        '',
        `ratio actorloop/raw heap per conversation: **${fmt(actorloopHeap / rawHeap, 2)}×**` +
          (minimalHeap
            ? `; minimal statechart/raw ${fmt(minimalHeap / rawHeap, 2)}× (XState's own share); actorloop/minimal ${fmt(actorloopHeap / minimalHeap, 2)}×`
            : ''),
      );
    for (const r of results.s3) {
      if (!r.creation) continue;
      lines.push(
        '',
        `\`createConversationMachine\` alone (${r.creation.machines} machines made and kept): **${fmt(r.creation.retainedBytes / 1024, 1)} KiB** retained and **${fmt(r.creation.cpuUs / 1000, 3)} ms** CPU per machine`,
      );
    }
    for (const r of results.s3) {
      if (!r.heapDiffTop) continue;
      lines.push('', `heap growth by constructor, ${r.side} (snapshot diff, self size; per conversation = ÷ ${r.n}):`, '');
      lines.push('| constructor / kind | objects + | per conversation | KiB + | bytes per conversation |');
      lines.push('|---|---:|---:|---:|---:|');
      for (const row of r.heapDiffTop) {
        lines.push(
          `| ${row.name.replace(/\|/g, '\\|')} | ${row.countDelta} | ${fmt(row.countDelta / r.n, 1)} | ${fmt(row.bytesDelta / 1024, 0)} | ${fmt(row.bytesDelta / r.n, 0)} |`,
        );
      }
    }
    lines.push('');
  }
  if (results.s4) {
    lines.push(
      '### S4 persistence — snapshot of a run in executingTools, sqliteStore (synchronous FULL, one save per transaction); medians',
      '',
    );
    lines.push(
      '| messages | calls running | snapshot KiB | XState uncompacted KiB | getPersistedSnapshot + stringify µs | save µs | load + parse + check µs | createActor + start µs | round trip µs |',
    );
    lines.push('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of results.s4.rows) {
      lines.push(
        `| ${r.messages} | ${r.runningCalls} | ${fmt(r.snapshotBytes / 1024, 1)} | ${fmt(r.uncompactedBytes / 1024, 1)} | ${fmt(r.serializeUs, 0)} | ${fmt(r.saveUs, 0)} | ${fmt(r.loadUs, 0)} | ${fmt(r.restoreUs, 0)} | ${fmt(r.roundTripUs, 0)} |`,
      );
    }
    const best = new Map<string, S4ThroughputResult>();
    for (const r of results.s4.throughput) {
      const kept = best.get(r.side);
      if (!kept || r.conversationsPerSecond > kept.conversationsPerSecond) best.set(r.side, r);
    }
    const off = best.get('off');
    const first = results.s4.throughput[0];
    lines.push(
      '',
      `Throughput — ${first?.n ?? '?'} conversations at once × ${first?.rounds ?? '?'} tool rounds, latency ${results.s4.latencyMs} ms, streaming; best of ${results.s4.throughput.length / Math.max(1, best.size)} per side (fresh process each)`,
      '',
    );
    lines.push(
      '| side | conversations/s | throughput cost vs off | rounds/s | wall s | client CPU ms/conversation | CPU cost vs off | saves/round | store bytes/round | file bytes/round | errors |',
    );
    lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    const cpuOf = (r: S4ThroughputResult) => r.cpuMs / r.n;
    for (const r of best.values()) {
      const cost = off && r !== off ? `${fmt((1 - r.conversationsPerSecond / off.conversationsPerSecond) * 100, 1)} %` : '—';
      const cpuCost = off && r !== off ? `${fmt((cpuOf(r) / cpuOf(off) - 1) * 100, 1)} %` : '—';
      lines.push(
        `| ${r.side} | ${fmt(r.conversationsPerSecond, 0)} | ${cost} | ${fmt(r.roundsPerSecond, 0)} | ${fmt(r.wallMs / 1000, 2)} | ${fmt(cpuOf(r), 2)} | ${cpuCost} | ` +
          `${fmt(r.savesPerRound, 2)} | ${fmt(r.bytesPerRound / 1024, 1)} KiB | ${r.fileBytesPerRound === null ? '—' : `${fmt(r.fileBytesPerRound / 1024, 1)} KiB`} | ${r.errors} |`,
      );
    }
    for (const r of results.s4.throughput) if (r.errors > 0) lines.push('', `errors ${r.side}: ${r.errorSamples.join(' | ')}`);
    lines.push('');
  }
  if (results.rounds) {
    const r = results.rounds;
    lines.push(
      `### ROUNDS — one conversation × ${r.rounds} tool rounds (cap raised), zero-latency scripted model, medians over ${r.runs} runs`,
      '',
    );
    lines.push('| CPU µs/round, first 50 | CPU µs/round, last 50 | last / first | max stack depth in a tool |', '|---:|---:|---:|---:|');
    lines.push(`| ${fmt(r.firstMedianUs, 0)} | ${fmt(r.lastMedianUs, 0)} | ${fmt(r.ratio, 2)} | ${r.maxStackDepth} |`, '');
  }
  if (results.engine) {
    const e = results.engine;
    lines.push(
      `### ENGINE — the machine without network: 1 conversation × ${e.rounds} tool rounds against a zero-latency scripted model, ${e.reps} reps after ${e.warmup} warm-up; medians`,
      '',
    );
    lines.push('| actorloop CPU µs/round | same provider + planning, plain loop | machine µs/round |', '|---:|---:|---:|');
    lines.push(`| ${fmt(e.actorloopUsPerRound, 0)} | ${fmt(e.floorUsPerRound, 0)} | ${fmt(e.machineUsPerRound, 0)} |`, '');
    lines.push('XState building blocks on this machine (CPU µs each, best of 5 batches):', '', '| operation | µs |', '|---|---:|');
    for (const row of e.primitives) lines.push(`| ${row.name} | ${fmt(row.cpuUs, 1)} |`);
    lines.push('');
  }
  if (results.agents) {
    const a = results.agents;
    lines.push(
      `### AGENTS — an agent call beside a plain tool call doing the same work (zero-latency scripted models, ${a.reps} reps after ${a.warmup} warm-up, interleaved; medians), and ${a.parked} parents parked in their tool call`,
      '',
    );
    lines.push('| side | CPU µs per parent run | heap bytes per parked parent |', '|---|---:|---:|');
    lines.push(`| plain tool | ${fmt(a.plainUsPerRun, 0)} | ${fmt(a.plainBytesPerParked, 0)} |`);
    lines.push(`| agent tool (+ its child) | ${fmt(a.agentUsPerRun, 0)} | ${fmt(a.agentBytesPerParked, 0)} |`);
    lines.push(`| agent ÷ plain | ${fmt(a.ratio, 2)} | ${fmt(a.memoryRatio, 2)} |`);
    lines.push(`| plain parent, then the child's conversation alone (no agent call) | ${fmt(a.twoRunsUsPerRun, 0)} | |`);
    lines.push(
      `| two runs ÷ plain: the agent call without its glue (glue: ${fmt(a.agentUsPerRun - a.twoRunsUsPerRun, 0)} µs) | ${fmt(a.twoRunsRatio, 2)} | |`,
    );
    lines.push(`| agent tool, its child streaming ${a.streamedDeltas} deltas | ${fmt(a.streamingUsPerRun, 0)} | |`);
    lines.push(`| streaming agent ÷ plain | ${fmt(a.streamingRatio, 2)} | |`, '');
  }
  if (results.controls) {
    const c = results.controls;
    lines.push(
      `### CONTROLS — a plain request beside one with an input and an output guardrail, and one with a compaction round (a summary request first); 40-message history, zero-latency scripted model, ${c.reps} reps after ${c.warmup} warm-up, interleaved; medians`,
      '',
    );
    lines.push('| side | CPU µs per run | ÷ plain |', '|---|---:|---:|');
    lines.push(`| plain request | ${fmt(c.plainUsPerRun, 0)} | 1.00 |`);
    lines.push(`| + 2 guardrails | ${fmt(c.guardrailsUsPerRun, 0)} | ${fmt(c.guardrailsRatio, 2)} |`);
    lines.push(`| + compaction round | ${fmt(c.compactionUsPerRun, 0)} | ${fmt(c.compactionRatio, 2)} |`, '');
  }
  if (results.workflow) {
    const w = results.workflow;
    lines.push(
      `### WORKFLOW — a writer and a reviewer (each a tool round and an answer in ${w.deltas} deltas, zero-latency scripted model) in a workflow, beside the same two run by hand; ${w.reps} reps after ${w.warmup} warm-up, interleaved; medians`,
      '',
    );
    lines.push('| side | CPU µs per pair (4 requests) | ÷ by hand |', '|---|---:|---:|');
    lines.push(`| by hand: two actors, one after the other | ${fmt(w.byHandUsPerPair, 0)} | 1.00 |`);
    lines.push(
      `| workflow: invoked with conversationInput, ${fmt(w.eventsPerPair, 0)} agent.events followed | ${fmt(w.workflowUsPerPair, 0)} | ${fmt(w.ratio, 2)} |`,
      '',
    );
    lines.push('| hosted on SQLite | CPU µs per pair | steps stored | ÷ hosted by hand |', '|---|---:|---:|---:|');
    lines.push(
      `| by hand: a host per conversation, send then result, twice | ${fmt(w.hostedByHandUsPerPair, 0)} | ${w.hostedByHandSteps} | 1.00 |`,
    );
    lines.push(
      `| workflow: one host, start then result | ${fmt(w.hostedWorkflowUsPerPair, 0)} | ${w.hostedWorkflowSteps} | ${fmt(w.hostedRatio, 2)} |`,
      '',
    );
  }
  if (results.observe) {
    const o = results.observe;
    lines.push(
      `### OBSERVE — what watching costs: 1 conversation × ${o.rounds} tool rounds (10 text deltas per answer), zero-latency scripted model, ${o.reps} reps after ${o.warmup} warm-up, interleaved; medians`,
      '',
    );
    lines.push('| side | CPU µs per run | × bare |', '|---|---:|---:|');
    for (const row of o.sides) lines.push(`| ${row.side} | ${fmt(row.cpuUs, 0)} | ${fmt(row.ratio, 2)} |`);
    lines.push('');
  }
  if (results.media) {
    const m = results.media;
    lines.push(
      `### MEDIA — a ${fmt(m.imageBytes / 1048576, 1)} MB image in the first message, ${m.rounds} tool rounds, zero-latency scripted model, ${m.reps} reps, interleaved; medians`,
      '',
      '| setting | CPU µs/round, text | with the image | ratio | floor ratio (encode once + hash once) |',
      '|---|---:|---:|---:|---:|',
    );
    for (const row of m.cpu)
      lines.push(`| ${row.setting} | ${fmt(row.textUs, 0)} | ${fmt(row.imageUs, 0)} | ${fmt(row.ratio, 2)} | ${fmt(row.floorRatio, 2)} |`);
    lines.push(
      '',
      `SQLite with every step kept: ${mb(m.sqlite.imageBytes)} MB with the image, ${mb(m.sqlite.textBytes)} MB without: ${fmt(m.sqlite.overImage, 2)}× the image.`,
      `Anthropic, ${m.caching.rounds} rounds, modelPrices: promptCache 'auto' $${fmt(m.caching.autoUsd, 4)} vs false $${fmt(m.caching.offUsd, 4)} (${fmt(m.caching.ratio, 2)}×; ${m.caching.cachedInputTokens} tokens read from the cache, ${m.caching.cacheWriteTokens} written).`,
      '',
    );
  }
  if (results.hostObserve) {
    const o = results.hostObserve;
    lines.push(
      `### HOST_OBSERVE — what watching a host costs: each run a new conversation of a host on memoryStore, ${o.rounds} tool rounds, zero-latency scripted model, ${o.reps} reps after ${o.warmup} warm-up, interleaved; medians`,
      '',
    );
    lines.push('| side | CPU µs per run | × unwatched host |', '|---|---:|---:|');
    for (const row of o.sides) lines.push(`| ${row.side} | ${fmt(row.cpuUs, 0)} | ${fmt(row.ratio, 2)} |`);
    lines.push('');
  }
  if (results.http) {
    const h = results.http;
    lines.push(
      `### HTTP — ${h.n} conversations at once, each a run of ${h.deltas} text deltas from a zero-latency scripted model, followed to its end: on the host (host.follow) and over SSE through actorloop/http on node:http (clients in their own process); medians of ${h.reps} batches`,
      '',
      '| side | wall ms | server CPU ms | server CPU µs per conversation |',
      '|---|---:|---:|---:|',
    );
    for (const row of h.sides)
      lines.push(`| ${row.side} | ${fmt(row.wallMs, 0)} | ${fmt(row.cpuMs, 0)} | ${fmt(row.cpuUsPerConversation, 0)} |`);
    const hostUs = h.sides.find((row) => row.side === 'host')?.cpuUsPerConversation ?? Number.NaN;
    const floor = h.floorCpuUsPerConversation;
    lines.push(
      '',
      `through the handler ÷ on the host: wall **${fmt(h.wallRatio, 2)}×**, server CPU **${fmt(h.cpuRatio, 2)}×**; errors ${h.errors}`,
      '',
      `floors (the same bytes, writes and answers, no host): host + node:http ${fmt((hostUs + floor.nodeHttp) / hostUs, 2)}× the host, host + a Fetch API handler on toNodeListener ${fmt((hostUs + floor.fetchApi) / hostUs, 2)}×; the handler's own share ${fmt(h.cpuRatio - (hostUs + floor.fetchApi) / hostUs, 2)}× the host`,
    );
    for (const sample of h.errorSamples) lines.push(`- ${sample}`);
    lines.push('');
  }
  if (results.restate) {
    const r = results.restate;
    lines.push(
      `### RESTATE — conversations as Restate virtual objects, real restate-server on loopback; ${r.rounds} tool rounds per conversation`,
      '',
      `Throughput: N at once, latency ${r.latencyMs} ms, through the ingress client.`,
      '',
      '| workers | N | wall ms | conversations/s | errors |',
      '|---:|---:|---:|---:|---:|',
    );
    for (const row of r.throughput) {
      lines.push(`| ${row.workers} | ${row.n} | ${fmt(row.wallMs, 0)} | ${fmt(row.conversationsPerSecond, 1)} | ${row.errors} |`);
    }
    lines.push(
      '',
      'Per step: one conversation at a time, latency 0 (a step is a provider request or a tool call); medians.',
      '',
      '| side | conversations | steps each | ms per conversation | ms per step |',
      '|---|---:|---:|---:|---:|',
    );
    for (const row of r.perStep) {
      lines.push(
        `| ${row.side} | ${row.conversations} | ${row.stepsPerConversation} | ${fmt(row.msPerConversation, 1)} | ${fmt(row.msPerStep, 2)} |`,
      );
    }
    lines.push(
      '',
      `Journaling a step through restate-server costs ${fmt(r.journalingMsPerStep.versusSqlite, 2)} ms more than the durable host on sqliteStore, ${fmt(r.journalingMsPerStep.versusMemory, 2)} ms more than on memoryStore.`,
      '',
    );
  }
  if (results.postgres) {
    const p = results.postgres;
    if ('skipped' in p) lines.push('### POSTGRES — not run', '', p.skipped, '');
    else {
      lines.push(
        `### POSTGRES — the durable host on postgresStore vs sqliteStore (synchronous FULL): each conversation new, ${p.rounds} tool rounds, zero-latency scripted model, PostgreSQL ${p.server} at ${p.database}; best of ${p.reps}, sides interleaved`,
        '',
        '| at once | side | conversations | wall ms | host rounds/s | saves per round |',
        '|---:|---|---:|---:|---:|---:|',
      );
      for (const row of p.rows) {
        lines.push(
          `| ${row.concurrency} | ${row.side} | ${row.conversations} | ${fmt(row.wallMs, 0)} | ${fmt(row.roundsPerSecond, 0)} | ${fmt(row.savesPerRound, 1)} |`,
        );
      }
      lines.push(
        '',
        ...p.ratios.map(
          ({ concurrency, postgresOverSqlite }) => `${concurrency} at once: Postgres ÷ SQLite = ${fmt(postgresOverSqlite, 2)}`,
        ),
        '',
      );
    }
  }
  if (results.service) lines.push(...serviceMarkdown(results.service));
  if (results.profile) {
    const p = results.profile;
    lines.push(
      `### CPU profile — S1 ${p.side} side, streaming (node --cpu-prof), ${fmt(p.totalMs, 0)} ms sampled, ${fmt(p.idleMs, 0)} ms idle`,
      '',
    );
    lines.push('| # | function | location | self ms | % of samples | % of non-idle |');
    lines.push('|---:|---|---|---:|---:|---:|');
    p.rows.forEach((row, index) => {
      lines.push(`| ${index + 1} | ${row.fn} | ${row.where} | ${fmt(row.selfMs, 0)} | ${fmt(row.pct, 1)} | ${fmt(row.pctNonIdle, 1)} |`);
    });
    lines.push('', 'self time by owner (non-idle):', '', '| owner | self ms | % of non-idle |', '|---|---:|---:|');
    for (const row of p.byCategory) lines.push(`| ${row.where} | ${fmt(row.selfMs, 0)} | ${fmt(row.pctNonIdle, 1)} |`);
    lines.push('', 'self time by file (non-idle):', '', '| file | self ms | % of non-idle |', '|---|---:|---:|');
    for (const row of p.byFile) lines.push(`| ${row.where} | ${fmt(row.selfMs, 0)} | ${fmt(row.pctNonIdle, 1)} |`);
    lines.push('', `profile: ${p.file}`);
  }
  return lines.join('\n');
}

await main();
