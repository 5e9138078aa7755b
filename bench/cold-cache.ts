/**
 * COLD CACHE: why the machine's work per round costs more between HTTP requests than in ENGINE.
 *
 * ENGINE's conversation (a zero-latency scripted model, 20 tool rounds) runs with a pause before
 * each response: a `setImmediate`, then a read of `size` MB of memory (one load per 64-byte cache
 * line), as the HTTP stack, the SDK and the garbage collector touch memory between a request and its
 * response in S1. Beside it, in rotating order: the same provider and planning in a plain loop
 * (bench/provider-loop.ts) with the same pause, and the pause alone. The machine's share per round
 * is actorloop − plain loop; at size 0 the pause is the `setImmediate` only.
 *
 * ```sh
 * npx tsx bench/cold-cache.ts                      # sizes 0, 1, 4, 16 MB; 250 reps after 100 warm-up
 * npx tsx bench/cold-cache.ts --sizes 0,8 --reps 400
 * ```
 */
import { createActorloopLoop } from './actorloop-loop.js';
import { scriptedModel } from './engine.js';
import { createProviderLoop } from './provider-loop.js';
import { cpuNowUs, median } from './stats.js';
import { flag } from './flag.js';

const sizes = flag('--sizes', '0,1,4,16').split(',').map(Number);
const reps = Number(flag('--reps', '250'));
const warmup = Number(flag('--warmup', '100'));
const rounds = 20;

let sink = 0;
/** A `setImmediate`, then one load per cache line of `memory`. */
function pauseOver(memory: Float64Array): () => Promise<void> {
  return async () => {
    await new Promise((resolve) => setImmediate(resolve));
    for (let index = 0; index < memory.length; index += 8) sink += memory[index] as number;
  };
}

async function measure(size: number) {
  const memory = new Float64Array((size * 1024 * 1024) / 8);
  const pause = pauseOver(memory);
  const options = { model: 'scripted', stream: true, maxRounds: rounds };
  const actorModel = scriptedModel(rounds, pause);
  const floorModel = scriptedModel(rounds, pause);
  const actorloop = createActorloopLoop(actorModel.provider, options);
  const floor = createProviderLoop(floorModel.provider, options);
  const sides = {
    actorloop: async () => {
      actorModel.reset();
      const result = await actorloop('Add the numbers, round after round.');
      if (!result.ok || result.rounds !== rounds) throw new Error(`cold cache: actorloop ended ${result.error ?? 'ok'}`);
    },
    floor: async () => {
      floorModel.reset();
      const result = await floor('Add the numbers, round after round.');
      if (!result.ok || result.rounds !== rounds) throw new Error(`cold cache: the plain loop ended ${result.error ?? 'ok'}`);
    },
    // One pause per request: the rounds and the final answer.
    pause: async () => {
      for (let request = 0; request <= rounds; request++) await pause();
    },
  };
  const names = Object.keys(sides) as Array<keyof typeof sides>;
  const samples = { actorloop: [] as number[], floor: [] as number[], pause: [] as number[] };
  for (let rep = 0; rep < warmup + reps; rep++) {
    for (let offset = 0; offset < names.length; offset++) {
      const side = names[(rep + offset) % names.length] as keyof typeof sides;
      const started = cpuNowUs();
      await sides[side]();
      if (rep >= warmup) samples[side].push((cpuNowUs() - started) / rounds);
    }
  }
  return { actorloop: median(samples.actorloop), floor: median(samples.floor), pause: median(samples.pause) };
}

console.log(
  `## COLD CACHE — ENGINE's conversation with memory read between requests (node ${process.version}; ${reps} reps after ${warmup} warm-up, medians, CPU µs per round)\n`,
);
console.log(
  '| MB read per pause | pause alone | plain loop − pause | actorloop − pause | **machine** (actorloop − plain loop) | machine ÷ at 0 MB |',
);
console.log('|---:|---:|---:|---:|---:|---:|');
let atZero: number | undefined;
for (const size of sizes) {
  const result = await measure(size);
  const machine = result.actorloop - result.floor;
  atZero ??= machine;
  console.log(
    `| ${size} | ${result.pause.toFixed(0)} | ${(result.floor - result.pause).toFixed(0)} | ${(result.actorloop - result.pause).toFixed(0)} | **${machine.toFixed(0)}** | ${(machine / atZero).toFixed(2)}× |`,
  );
}
// Keeps the reads from being optimised away.
if (Number.isNaN(sink)) console.log('');
