/**
 * OBSERVE: what watching a run costs. The same 5-tool-round conversation (zero-latency scripted
 * model, ten text deltas per answer) run bare, observed through `actorloop/rx` (state$, events$ of
 * tool results, text$, output$), watched by the live viewer with no page open, and watched with
 * one page's event stream open (read in this process). CPU µs per run, sides interleaved after a
 * warm-up; medians, and each side's ratio to the bare run.
 */
import { createActor, toPromise } from 'xstate';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { createConversationMachine, defineTool, handlerProvider } from '../src/index.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai/index.js';
import { startLiveViewer } from '../src/observe/inspect/index.js';
import { events$, output$, state$, text$ } from '../src/observe/rx/index.js';
import { cpuNowUs, median } from './stats.js';

export type ObserveResult = { rounds: number; reps: number; warmup: number; sides: Array<{ side: string; cpuUs: number; ratio: number }> };

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): OpenAIChatCompletionChunk => ({
  choices: [{ index: 0, delta, finish_reason: finishReason }],
});

async function* turn(request: number, rounds: number): AsyncGenerator<OpenAIChatCompletionChunk> {
  for (let piece = 0; piece < 10; piece++) yield chunk({ content: `word${piece} ` });
  if (request <= rounds) {
    yield chunk(
      {
        tool_calls: [{ index: 0, id: `call_${request}`, type: 'function', function: { name: 'add', arguments: `{"a":${request},"b":1}` } }],
      },
      'tool_calls',
    );
  } else yield chunk({}, 'stop');
}

const sides = ['bare', 'rx', 'viewer', 'viewer + page'] as const;
type Side = (typeof sides)[number];

export async function observe(options: { rounds: number; reps: number; warmup: number }): Promise<ObserveResult> {
  const { rounds, reps, warmup } = options;
  let request = 0;
  const add = defineTool({
    name: 'add',
    description: 'add',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => a + b,
  });
  const machine = createConversationMachine({ provider: handlerProvider(() => turn(++request, rounds)), tools: [add] });
  const viewer = await startLiveViewer();
  const page = await fetch(`${viewer.url}events`);
  const reader = page.body?.getReader();
  const reading = (async () => {
    while (reader && !(await reader.read()).done);
  })();
  let serial = 0;

  const once = async (side: Side) => {
    request = 0;
    const started = cpuNowUs();
    const actor = createActor(machine, { input: { messages: [] } });
    const watching: Array<Promise<unknown>> = [];
    if (side === 'rx') {
      watching.push(
        lastValueFrom(state$(actor).pipe(toArray())),
        lastValueFrom(events$(actor, 'tool.result').pipe(toArray())),
        lastValueFrom(text$(actor)),
        lastValueFrom(output$(actor)),
      );
    }
    let unwatch: () => void = () => undefined;
    if (side === 'viewer' || side === 'viewer + page') unwatch = viewer.watch(actor, { id: `r${++serial}` });
    actor.start();
    actor.send({ type: 'user.message', content: 'go' });
    const output = await toPromise(actor);
    await Promise.all(watching);
    unwatch();
    if (output.status !== 'done' || output.iterations !== rounds)
      throw new Error(`OBSERVE ${side}: ${output.status} after ${output.iterations}`);
    return cpuNowUs() - started;
  };

  const samples: Record<Side, number[]> = { bare: [], rx: [], viewer: [], 'viewer + page': [] };
  try {
    for (let index = 0; index < warmup; index++) for (const side of sides) await once(side);
    for (let index = 0; index < reps; index++) {
      // Rotating order, so no side always runs right after the same other.
      for (let offset = 0; offset < sides.length; offset++) {
        const side = sides[(index + offset) % sides.length] as Side;
        samples[side].push(await once(side));
      }
    }
  } finally {
    await reader?.cancel();
    await reading.catch(() => undefined);
    await viewer.close();
  }
  const bare = median(samples.bare);
  return {
    rounds,
    reps,
    warmup,
    sides: sides.map((side) => ({ side, cpuUs: median(samples[side]), ratio: median(samples[side]) / bare })),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await observe({ rounds: 5, reps: 100, warmup: 50 });
  console.log(JSON.stringify(result, null, 2));
}
