/**
 * AGENTS: what an agent call costs beside a plain tool call doing the same work, and the memory of
 * a parked parent with its child.
 *
 * CPU: a parent conversation whose model calls one tool and then answers, against zero-latency
 * scripted models (`handlerProvider` over OpenAI chunks). The tool is either a plain tool returning
 * the answer text, or `agentTool` over a child conversation whose model answers that text at once
 * (one request): so the agent side adds a child actor, its request and the events the parent
 * passes on. CPU µs per parent conversation, interleaved after a warm-up; medians. A fourth side
 * runs the plain parent and then the child's conversation on its own, as two runs: the agent call's
 * work without its glue (starting the child, passing its events up, its output becoming the tool
 * result), the least an agent call can cost beside a plain tool.
 *
 * Memory (run in a process with `--expose-gc`): N parents parked while their tool call runs —
 * plain: the parent waits in `executingTools` for a tool that blocks; agent: the parent waits for
 * its child, which waits in its own `executingTools` for a tool that blocks. Heap bytes per parked
 * parent (with its child) after forced GC, against the same process's baseline.
 */
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { agentTool, createConversationMachine, defineTool, handlerProvider } from '../src/index.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai/index.js';
import { cpuNowUs, median } from './stats.js';

export type AgentsResult = {
  reps: number;
  warmup: number;
  plainUsPerRun: number;
  agentUsPerRun: number;
  /** agent / plain. */
  ratio: number;
  /** The plain parent's run, then the child's conversation alone (no agent call): the work without the glue. */
  twoRunsUsPerRun: number;
  /** two runs / plain: the floor of `ratio`. */
  twoRunsRatio: number;
  /** The agent call whose child streams its answer in `streamedDeltas` deltas: each goes up to the parent. */
  streamingUsPerRun: number;
  streamedDeltas: number;
  /** streaming agent / plain. */
  streamingRatio: number;
  parked: number;
  plainBytesPerParked: number;
  agentBytesPerParked: number;
  memoryRatio: number;
};

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): OpenAIChatCompletionChunk => ({
  choices: [{ index: 0, delta, finish_reason: finishReason }],
});

async function* callTurn(name: string, id: string): AsyncGenerator<OpenAIChatCompletionChunk> {
  yield chunk({ tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }] });
  yield chunk({ tool_calls: [{ index: 0, function: { arguments: '{"prompt":"what is the answer?"}' } }] }, 'tool_calls');
}

/** The text in `pieces` chunks (the last one carries the finish reason), as a model streams it. */
async function* textTurn(text: string, pieces = 1): AsyncGenerator<OpenAIChatCompletionChunk> {
  const size = Math.ceil(text.length / pieces);
  for (let start = 0; start < text.length; start += size) {
    yield chunk({ content: text.slice(start, start + size) }, start + size >= text.length ? 'stop' : null);
  }
}

const answer = 'The answer is 42.';
/** A streamed answer: each of its deltas is an event the child emits and its parent passes on. */
const streamedAnswer = 'The answer, after some thought, is forty-two. '.repeat(8);
export const streamedDeltas = 40;
let serial = 0;

/** A parent's model: a call to `tool`, then an answer (it tells the two by the history's last message). */
const parentProvider = (tool: string) =>
  handlerProvider(({ messages }) => (messages.at(-1)?.role === 'tool' ? textTurn('Done.') : callTurn(tool, `call_${++serial}`)));

/** The three parents AGENTS compares (plain tool, agent call, streaming agent call); `block` parks each tool. */
export function agentsMachines(block: Promise<string> | undefined) {
  const work = defineTool({
    name: 'work',
    description: 'Answer the question',
    parameters: z.object({ prompt: z.string() }),
    execute: () => block ?? answer,
  });
  const plain = createConversationMachine({ provider: parentProvider('work'), tools: [work] });
  // The child does the work the plain tool does: with `block`, it first waits in a tool call of its own.
  const child = block
    ? createConversationMachine({
        provider: handlerProvider(({ messages }) =>
          messages.at(-1)?.role === 'tool' ? textTurn(answer) : callTurn('work', `c_${++serial}`),
        ),
        tools: [work],
      })
    : createConversationMachine({ provider: handlerProvider(() => textTurn(answer)) });
  const agent = createConversationMachine({ provider: parentProvider('ask'), tools: [agentTool(child, { name: 'ask' })] });
  const streamingChild = createConversationMachine({ provider: handlerProvider(() => textTurn(streamedAnswer, streamedDeltas)) });
  const streaming = createConversationMachine({ provider: parentProvider('ask'), tools: [agentTool(streamingChild, { name: 'ask' })] });
  return { plain, agent, streaming, child };
}

/** One parent run to its end; CPU µs it took. */
export async function runOnce(machine: ReturnType<typeof createConversationMachine>): Promise<number> {
  const started = cpuNowUs();
  const actor = createActor(machine, { input: { messages: [] } }).start();
  actor.send({ type: 'user.message', content: 'Ask.' });
  const output = await toPromise(actor);
  if (output.status !== 'done') throw new Error(`AGENTS: a run ended ${output.status}`);
  return cpuNowUs() - started;
}

const gc = () => (globalThis as { gc?: () => void }).gc?.();

async function parkedBytes(side: 'plain' | 'agent', n: number): Promise<number> {
  let release: (value: string) => void = () => undefined;
  const block = new Promise<string>((resolve) => {
    release = resolve;
  });
  const built = agentsMachines(block)[side];
  gc();
  await new Promise((resolve) => setTimeout(resolve, 20));
  gc();
  const before = process.memoryUsage().heapUsed;
  const actors = Array.from({ length: n }, () => createActor(built, { input: { messages: [] } }).start());
  for (const actor of actors) actor.send({ type: 'user.message', content: 'Ask.' });
  // Parked: every parent waits in its tool round (and every child in its own).
  await new Promise((resolve) => setTimeout(resolve, 50));
  const waiting = actors.filter((actor) => JSON.stringify(actor.getSnapshot().value).includes('executingTools')).length;
  if (waiting !== n) throw new Error(`AGENTS: ${n - waiting} of ${n} ${side} parents are not parked in executingTools`);
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  release(answer);
  await Promise.all(actors.map((actor) => toPromise(actor)));
  return (after - before) / n;
}

export async function agents(options: { reps: number; warmup: number; parked: number }): Promise<AgentsResult> {
  const built = agentsMachines(undefined);
  const sides = ['plain', 'agent', 'streaming', 'twoRuns'] as const;
  const measure = async (side: (typeof sides)[number]) =>
    side === 'twoRuns' ? (await runOnce(built.plain)) + (await runOnce(built.child)) : runOnce(built[side]);
  for (let i = 0; i < options.warmup; i++) for (const side of sides) await measure(side);
  const samples = { plain: [] as number[], agent: [] as number[], streaming: [] as number[], twoRuns: [] as number[] };
  for (let i = 0; i < options.reps; i++) {
    // Rotating which goes first, so none always runs on a warmer cache.
    for (let k = 0; k < sides.length; k++) {
      const side = sides[(i + k) % sides.length] as (typeof sides)[number];
      samples[side].push(await measure(side));
    }
  }
  const plainUsPerRun = median(samples.plain);
  const agentUsPerRun = median(samples.agent);
  const twoRunsUsPerRun = median(samples.twoRuns);
  // Warm both parking paths once, so compiled code is not counted as per-conversation memory.
  await parkedBytes('plain', Math.min(200, options.parked));
  await parkedBytes('agent', Math.min(200, options.parked));
  const plainBytesPerParked = await parkedBytes('plain', options.parked);
  const agentBytesPerParked = await parkedBytes('agent', options.parked);
  return {
    reps: options.reps,
    warmup: options.warmup,
    plainUsPerRun,
    agentUsPerRun,
    ratio: agentUsPerRun / plainUsPerRun,
    twoRunsUsPerRun,
    twoRunsRatio: twoRunsUsPerRun / plainUsPerRun,
    streamingUsPerRun: median(samples.streaming),
    streamedDeltas,
    streamingRatio: median(samples.streaming) / plainUsPerRun,
    parked: options.parked,
    plainBytesPerParked,
    agentBytesPerParked,
    memoryRatio: agentBytesPerParked / plainBytesPerParked,
  };
}
