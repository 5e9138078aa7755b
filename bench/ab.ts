/**
 * A/B: actorloop as two (or more) checkouts, interleaved in one process against one wire server,
 * so a change to the machine is measured beside what it replaces, in the same run.
 *
 * ```sh
 * git worktree add /tmp/before HEAD~1 && ln -s "$PWD/node_modules" /tmp/before/node_modules
 * npx tsx bench/ab.ts --checkouts /tmp/before,. --reps 300
 * npx tsx bench/ab.ts --checkouts /tmp/before,. --alloc       # + bytes allocated per round
 * npx tsx bench/ab.ts --checkouts /tmp/before,. --scenario agents   # AGENTS' parents, CPU µs per run
 * npx tsx bench/ab.ts --checkouts /tmp/before,. --scenario engine   # ENGINE's machine, no network
 * ```
 *
 * Each checkout's own `bench/actorloop-loop.ts` builds its side (its `src`, this install's
 * `node_modules`), beside the raw SDK loop and the minimal statechart loop as references. Per side
 * and mode: CPU µs per round (mean, median, p25) over `reps` conversations of `rounds` tool rounds
 * after `warmup`, in rotating order; each side's ratio to the first checkout as a ratio of means and
 * as the median of per-repetition ratios. Means carry the young-generation GCs a side's allocation
 * causes, which medians of these two-mode distributions can skip. `--alloc` adds, per side, the
 * bytes allocated per round (V8's sampling heap profiler, counting objects the GC has already
 * collected) and the share allocated in XState's code.
 *
 * `--scenario agents` compares AGENTS' parents instead (a plain tool, an agent call, an agent call
 * whose child streams; zero-latency scripted models, no network), from each checkout's
 * `bench/agents.ts`: CPU µs per parent run. `--scenario engine` compares ENGINE's conversation (a
 * zero-latency scripted model, `rounds` tool rounds, streamed) from each checkout's
 * `bench/engine.ts` and `bench/actorloop-loop.ts`: CPU µs per round, no network between events.
 * Copy this checkout's `bench/agents.ts` or `bench/engine.ts` into an older checkout that lacks
 * their exports.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type OpenAI from 'openai';
import { allocationProfile } from './allocation-profile.js';
import { createBenchClient } from './client.js';
import { createMinimalLoop } from './minimal-loop.js';
import { createRawLoop, type LoopOptions, type LoopResult } from './raw-loop.js';
import { cpuNowUs, median, percentile } from './stats.js';
import { startWireServerProcess } from './wire.js';
import { flag } from './flag.js';

type Run = (text: string) => Promise<LoopResult>;
type ActorloopLoopModule = {
  createActorloopLoop(provider: unknown, options: LoopOptions): Run;
  benchOpenAIProvider(client: OpenAI, options: LoopOptions): unknown;
};

const checkouts = (flag('--checkouts') ?? '.').split(',').map((dir) => path.resolve(dir));
const rounds = Number(flag('--rounds') ?? 20);
const reps = Number(flag('--reps') ?? 200);
const warmup = Number(flag('--warmup') ?? 30);
const modes = (flag('--modes') ?? 'stream,json').split(',') as Array<'stream' | 'json'>;
const alloc = process.argv.includes('--alloc');
const scenario = flag('--scenario') ?? 'rounds';
const name = (dir: string, index: number) => `${index}:${path.basename(dir) || dir}`;

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
const fixed = (value: number, digits = 0) => value.toFixed(digits);

/** Bytes allocated per round by `run`, total and in XState's code, from V8's sampling heap profiler. */
async function allocationPerRound(run: Run, conversations: number): Promise<{ total: number; xstate: number }> {
  const profile = await allocationProfile(() => run('Add the numbers, round after round.'), conversations, 512);
  let total = 0;
  let xstate = 0;
  const walk = (node: (typeof profile)['head']) => {
    total += node.selfSize;
    if (node.callFrame.url.includes('/node_modules/xstate/')) xstate += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  return { total: total / conversations / rounds, xstate: xstate / conversations / rounds };
}

/** Runs every side `warmup + reps` times in rotating order; prints CPU µs per `unit`, and each side against the first checkout's. */
async function interleaved(title: string, sides: Map<string, () => Promise<void>>, units: number, base: string): Promise<void> {
  const names = [...sides.keys()];
  const samples = new Map(names.map((side) => [side, [] as number[]]));
  for (let rep = 0; rep < warmup + reps; rep++) {
    for (let offset = 0; offset < names.length; offset++) {
      const side = names[(rep + offset) % names.length] as string;
      const started = cpuNowUs();
      await (sides.get(side) as () => Promise<void>)();
      if (rep >= warmup) samples.get(side)?.push((cpuNowUs() - started) / units);
    }
  }
  const first = samples.get(base) as number[];
  console.log(`\n${title}\n`);
  console.log('| side | mean | median | p25 | ÷ first checkout (means) | ÷ first checkout (median of paired ratios) |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const side of names) {
    const values = samples.get(side) as number[];
    const paired = values.map((value, index) => value / (first[index] as number));
    console.log(
      `| ${side} | ${fixed(mean(values))} | ${fixed(median(values))} | ${fixed(percentile(values, 25))} | ${fixed(mean(values) / mean(first), 3)} | ${fixed(median(paired), 3)} |`,
    );
  }
}

type EngineModule = {
  scriptedModel(rounds: number): { reset(): void; provider: unknown };
};

if (scenario === 'engine') {
  console.log(`A/B — ENGINE's machine, ${rounds} rounds, ${reps} reps after ${warmup} warm-up, interleaved; CPU µs per round`);
  const sides = new Map<string, () => Promise<void>>();
  for (const [index, dir] of checkouts.entries()) {
    const engine = (await import(pathToFileURL(path.join(dir, 'bench/engine.ts')).href)) as EngineModule;
    const loop = (await import(pathToFileURL(path.join(dir, 'bench/actorloop-loop.ts')).href)) as ActorloopLoopModule;
    const model = engine.scriptedModel(rounds);
    const run = loop.createActorloopLoop(model.provider, { model: 'scripted', stream: true, maxRounds: rounds });
    sides.set(name(dir, index), async () => {
      model.reset();
      const result = await run('Add the numbers, round after round.');
      if (!result.ok || result.rounds !== rounds) throw new Error(`${dir}: ended ${result.error ?? 'ok'} after ${result.rounds} rounds`);
    });
  }
  await interleaved('the machine without network', sides, rounds, name(checkouts[0] as string, 0));
  process.exit(0);
}

type AgentsModule = {
  agentsMachines(block: undefined): Record<'plain' | 'agent' | 'streaming', unknown>;
  runOnce(machine: unknown): Promise<number>;
};

if (scenario === 'agents') {
  console.log(`A/B — AGENTS' parents, ${reps} reps after ${warmup} warm-up, interleaved; CPU µs per parent run`);
  for (const parent of ['plain', 'agent', 'streaming'] as const) {
    const sides = new Map<string, () => Promise<void>>();
    for (const [index, dir] of checkouts.entries()) {
      const module = (await import(pathToFileURL(path.join(dir, 'bench/agents.ts')).href)) as AgentsModule;
      const machine = module.agentsMachines(undefined)[parent];
      sides.set(name(dir, index), async () => {
        await module.runOnce(machine);
      });
    }
    await interleaved(`${parent} parent`, sides, 1, name(checkouts[0] as string, 0));
  }
  process.exit(0);
}
if (scenario !== 'rounds') throw new Error(`ab: --scenario is rounds, agents or engine, not ${scenario}`);

const server = await startWireServerProcess();
await server.configure({ latencyMs: 0, rounds });
console.log(`A/B — ${rounds} tool rounds, ${reps} reps after ${warmup} warm-up, interleaved; CPU µs per round`);
for (const mode of modes) {
  const options: LoopOptions = { model: 'bench-model', stream: mode === 'stream', maxRounds: rounds };
  const runs = new Map<string, Run>();
  const clients: Array<{ close(): Promise<void> }> = [];
  const client = async () => {
    const created = await createBenchClient(server.baseURL, { connections: 4 });
    clients.push(created);
    return created.client;
  };
  runs.set('raw', createRawLoop(await client(), options));
  runs.set('minimal', createMinimalLoop(await client(), options));
  for (const [index, dir] of checkouts.entries()) {
    const module = (await import(pathToFileURL(path.join(dir, 'bench/actorloop-loop.ts')).href)) as ActorloopLoopModule;
    runs.set(name(dir, index), module.createActorloopLoop(module.benchOpenAIProvider(await client(), options), options));
  }
  const sides = new Map<string, () => Promise<void>>();
  for (const [side, run] of runs) {
    sides.set(side, async () => {
      const result = await run('Add the numbers, round after round.');
      if (!result.ok || result.rounds !== rounds) throw new Error(`${side}: ended ${result.error ?? 'ok'} after ${result.rounds} rounds`);
    });
  }
  await interleaved(mode === 'stream' ? 'streaming' : 'not streaming', sides, rounds, name(checkouts[0] as string, 0));
  if (alloc) {
    console.log('\n| side | bytes allocated per round | in XState |\n|---|---:|---:|');
    for (const [side, run] of runs) {
      const { total, xstate } = await allocationPerRound(run, 30);
      console.log(`| ${side} | ${fixed(total)} | ${fixed(xstate)} |`);
    }
  }
  for (const created of clients) await created.close();
}
await server.close();
process.exit(0);
