/**
 * Time per tool round over a long loop: 200 rounds (cap raised) against a zero-latency scripted
 * model, CPU time per round compared between the first and the last 50 rounds of the same run.
 * A flat loop has a ratio near 1; history copies or scans that grow with the conversation show up
 * as a ratio well above it.
 */
import { performance } from 'node:perf_hooks';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { createConversationMachine, defineTool, handlerProvider } from '../src/index.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai/index.js';

export type RoundsResult = { rounds: number; firstMedianUs: number; lastMedianUs: number; ratio: number; maxStackDepth: number };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function* toolCallChunks(round: number): AsyncGenerator<OpenAIChatCompletionChunk> {
  yield {
    choices: [
      {
        index: 0,
        delta: {
          tool_calls: [{ index: 0, id: `call_${round}`, type: 'function', function: { name: 'add', arguments: `{"a":${round},"b":1}` } }],
        },
        finish_reason: null,
      },
    ],
  };
  yield { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] };
}

async function* textChunks(): AsyncGenerator<OpenAIChatCompletionChunk> {
  yield { choices: [{ index: 0, delta: { content: 'done' }, finish_reason: 'stop' }] };
}

export async function measureRounds(rounds = 200): Promise<RoundsResult> {
  let request = 0;
  let maxStackDepth = 0;
  const add = defineTool({
    name: 'add',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => {
      // Sampled, because capturing a stack is far dearer than the round it measures.
      if (a % 50 === 0) maxStackDepth = Math.max(maxStackDepth, (new Error().stack ?? '').split('\n').length);
      return a + b;
    },
  });
  const machine = createConversationMachine({
    provider: handlerProvider(() => (++request <= rounds ? toolCallChunks(request) : textChunks())),
    tools: [add],
    maxToolIterations: rounds,
    doomLoop: false,
  });
  const actor = createActor(machine, { input: { messages: [] } });
  const cpuAtRequest: number[] = [];
  actor.on('request.started', () => {
    const usage = process.cpuUsage();
    cpuAtRequest.push(usage.user + usage.system);
  });
  actor.start();
  const started = performance.now();
  actor.send({ type: 'user.message', content: 'count' });
  const output = await toPromise(actor);
  if (output.status !== 'done' || output.iterations !== rounds)
    throw new Error(`unexpected run end: ${output.status} after ${output.iterations}`);
  const perRound = cpuAtRequest.slice(1).map((value, index) => value - (cpuAtRequest[index] ?? value));
  const window = Math.min(50, Math.floor(perRound.length / 4));
  const firstMedianUs = median(perRound.slice(0, window));
  const lastMedianUs = median(perRound.slice(-window));
  void started;
  return { rounds, firstMedianUs, lastMedianUs, ratio: lastMedianUs / Math.max(1, firstMedianUs), maxStackDepth };
}

export type FlatnessResult = {
  runs: number;
  rounds: number;
  firstMedianUs: number;
  lastMedianUs: number;
  ratio: number;
  maxStackDepth: number;
};

/** Warms up the JIT, then takes medians over several runs: one run's windows are too noisy. */
export async function measureFlatness(runCount = 9, rounds = 200): Promise<FlatnessResult> {
  for (let warmUp = 0; warmUp < 3; warmUp++) await measureRounds(rounds);
  const runs: RoundsResult[] = [];
  for (let run = 0; run < runCount; run++) runs.push(await measureRounds(rounds));
  const firstMedianUs = median(runs.map((run) => run.firstMedianUs));
  const lastMedianUs = median(runs.map((run) => run.lastMedianUs));
  return {
    runs: runs.length,
    rounds,
    firstMedianUs,
    lastMedianUs,
    ratio: Number((lastMedianUs / Math.max(1, firstMedianUs)).toFixed(2)),
    maxStackDepth: Math.max(...runs.map((run) => run.maxStackDepth)),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await measureFlatness());
}
