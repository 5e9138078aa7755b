/**
 * CONTROLS: what the long-conversation controls (DESIGN §12) cost beside a plain request, against
 * zero-latency scripted models (`handlerProvider` over OpenAI chunks), CPU µs per run, interleaved
 * after a warm-up; medians.
 *
 * - plain: a run over a 40-message history whose model answers at once (one request);
 * - guardrails: the same run with one input and one output guardrail (each a synchronous check that
 *   passes): two more states, two guardrail actors;
 * - compaction: the same run with `context` set so that the history is over the window: the run
 *   passes through `compacting`, whose summary is one more request to the scripted model, and the
 *   request is then made over the compacted history.
 */
import { createActor, toPromise } from 'xstate';
import { createConversationMachine, handlerProvider, type Message } from '../src/index.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai/index.js';
import { cpuNowUs, median } from './stats.js';

export type ControlsResult = {
  reps: number;
  warmup: number;
  plainUsPerRun: number;
  guardrailsUsPerRun: number;
  compactionUsPerRun: number;
  /** guardrails / plain. */
  guardrailsRatio: number;
  /** compaction / plain. */
  compactionRatio: number;
};

async function* answer(text: string): AsyncGenerator<OpenAIChatCompletionChunk> {
  yield { choices: [{ index: 0, delta: { content: text }, finish_reason: 'stop' }] };
  yield { choices: [], usage: { prompt_tokens: 900, completion_tokens: 12, total_tokens: 912 } };
}

const provider = handlerProvider(() => answer('The tide turns at noon.'));
const history: Message[] = Array.from({ length: 20 }, (_, index) => [
  { role: 'user' as const, content: `question ${index}: when does the tide turn in the harbour today?` },
  { role: 'assistant' as const, content: [{ type: 'text' as const, text: `answer ${index}: it turns about every six hours.` }] },
]).flat();
const pass = { name: 'pass', check: () => ({ tripped: false }) };

const machines = {
  plain: createConversationMachine({ provider }),
  guardrails: createConversationMachine({ provider, guardrails: { input: [pass], output: [pass] } }),
  compaction: createConversationMachine({ provider, context: { maxInputTokens: 200, keepLast: 4 } }),
};

async function runOnce(machine: ReturnType<typeof createConversationMachine>, expectCompaction: boolean): Promise<number> {
  const started = cpuNowUs();
  const actor = createActor(machine, { input: { messages: history } });
  let compacted = false;
  if (expectCompaction) actor.on('context.compacted', () => (compacted = true));
  actor.start();
  actor.send({ type: 'user.message', content: 'And tomorrow?' });
  const output = await toPromise(actor);
  const spent = cpuNowUs() - started;
  if (output.status !== 'done') throw new Error(`CONTROLS: a run ended ${output.status}: ${output.error?.message ?? output.reason}`);
  if (expectCompaction && !compacted) throw new Error('CONTROLS: the compaction run did not compact');
  return spent;
}

export async function controls(options: { reps: number; warmup: number }): Promise<ControlsResult> {
  const sides = ['plain', 'guardrails', 'compaction'] as const;
  for (let i = 0; i < options.warmup; i++) for (const side of sides) await runOnce(machines[side], side === 'compaction');
  const samples: Record<(typeof sides)[number], number[]> = { plain: [], guardrails: [], compaction: [] };
  for (let i = 0; i < options.reps; i++) {
    // Rotating which goes first, so none always runs on a warmer cache.
    for (let k = 0; k < sides.length; k++) {
      const side = sides[(i + k) % sides.length] as (typeof sides)[number];
      samples[side].push(await runOnce(machines[side], side === 'compaction'));
    }
  }
  const plainUsPerRun = median(samples.plain);
  const guardrailsUsPerRun = median(samples.guardrails);
  const compactionUsPerRun = median(samples.compaction);
  return {
    reps: options.reps,
    warmup: options.warmup,
    plainUsPerRun,
    guardrailsUsPerRun,
    compactionUsPerRun,
    guardrailsRatio: guardrailsUsPerRun / plainUsPerRun,
    compactionRatio: compactionUsPerRun / plainUsPerRun,
  };
}
