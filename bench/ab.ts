/**
 * A/B: actorloop as two (or more) checkouts, interleaved in one process against one wire server,
 * so a change to the machine is measured beside what it replaces, in the same run.
 *
 * ```sh
 * git worktree add /tmp/before HEAD~1 && ln -s "$PWD/node_modules" /tmp/before/node_modules
 * npx tsx bench/ab.ts --checkouts /tmp/before,. --reps 300
 * npx tsx bench/ab.ts --checkouts /tmp/before,. --alloc       # + bytes allocated per round
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

type Run = (text: string) => Promise<LoopResult>;
type ActorloopLoopModule = {
  createActorloopLoop(provider: unknown, options: LoopOptions): Run;
  benchOpenAIProvider(client: OpenAI, options: LoopOptions): unknown;
};

function flag(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}

const checkouts = (flag('--checkouts') ?? '.').split(',').map((dir) => path.resolve(dir));
const rounds = Number(flag('--rounds') ?? 20);
const reps = Number(flag('--reps') ?? 200);
const warmup = Number(flag('--warmup') ?? 30);
const modes = (flag('--modes') ?? 'stream,json').split(',') as Array<'stream' | 'json'>;
const alloc = process.argv.includes('--alloc');
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

const server = await startWireServerProcess();
await server.configure({ latencyMs: 0, rounds });
console.log(`A/B — ${rounds} tool rounds, ${reps} reps after ${warmup} warm-up, interleaved; CPU µs per round`);
for (const mode of modes) {
  const options: LoopOptions = { model: 'bench-model', stream: mode === 'stream', maxRounds: rounds };
  const sides = new Map<string, Run>();
  const clients: Array<{ close(): Promise<void> }> = [];
  const client = async () => {
    const created = await createBenchClient(server.baseURL, { connections: 4 });
    clients.push(created);
    return created.client;
  };
  sides.set('raw', createRawLoop(await client(), options));
  sides.set('minimal', createMinimalLoop(await client(), options));
  for (const [index, dir] of checkouts.entries()) {
    const module = (await import(pathToFileURL(path.join(dir, 'bench/actorloop-loop.ts')).href)) as ActorloopLoopModule;
    sides.set(name(dir, index), module.createActorloopLoop(module.benchOpenAIProvider(await client(), options), options));
  }
  const names = [...sides.keys()];
  const samples = new Map(names.map((side) => [side, [] as number[]]));
  for (let rep = 0; rep < warmup + reps; rep++) {
    for (let offset = 0; offset < names.length; offset++) {
      const side = names[(rep + offset) % names.length] as string;
      const started = cpuNowUs();
      const result = await (sides.get(side) as Run)('Add the numbers, round after round.');
      const cpu = (cpuNowUs() - started) / rounds;
      if (!result.ok || result.rounds !== rounds) throw new Error(`${side}: ended ${result.error ?? 'ok'} after ${result.rounds} rounds`);
      if (rep >= warmup) samples.get(side)?.push(cpu);
    }
  }
  const base = samples.get(name(checkouts[0] as string, 0)) as number[];
  console.log(`\n${mode === 'stream' ? 'streaming' : 'not streaming'}\n`);
  console.log('| side | mean | median | p25 | ÷ first checkout (means) | ÷ first checkout (median of paired ratios) |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const side of names) {
    const values = samples.get(side) as number[];
    const paired = values.map((value, index) => value / (base[index] as number));
    console.log(
      `| ${side} | ${fixed(mean(values))} | ${fixed(median(values))} | ${fixed(percentile(values, 25))} | ${fixed(mean(values) / mean(base), 3)} | ${fixed(median(paired), 3)} |`,
    );
  }
  if (alloc) {
    console.log('\n| side | bytes allocated per round | in XState |\n|---|---:|---:|');
    for (const side of names) {
      const { total, xstate } = await allocationPerRound(sides.get(side) as Run, 30);
      console.log(`| ${side} | ${fixed(total)} | ${fixed(xstate)} |`);
    }
  }
  for (const created of clients) await created.close();
}
await server.close();
process.exit(0);
