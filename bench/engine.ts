/**
 * ENGINE: what the statechart costs with no network at all, and what XState's building blocks cost
 * on this machine — the figures that explain S1's machine share.
 *
 * Per round: one conversation × `rounds` tool rounds against a zero-latency scripted model
 * (`handlerProvider` over OpenAI chunks, one tool call per round), CPU µs per round for actorloop
 * and for the same provider + planning driven by a plain loop (bench/provider-loop.ts), after a
 * long warm-up, interleaved; medians.
 *
 * Primitives: CPU µs per operation of the XState pieces a tool round is made of — an event with no
 * action, an `assign` on a context of actorloop's size, an `emit`, invoking a promise actor and
 * taking its result (the provider request and the tool execution are one each), and spawning a
 * child machine that invokes a promise actor and finishes (the per-call tool-call machine actorloop
 * had before each call became a bare execution actor with a deadline on `executingTools`).
 */
import { assign, createActor, createMachine, emit, fromPromise, setup, toPromise } from 'xstate';
import { handlerProvider } from '../src/index.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai/index.js';
import { createActorloopLoop } from './actorloop-loop.js';
import { createProviderLoop } from './provider-loop.js';
import type { LoopResult } from './raw-loop.js';
import { cpuNowUs, median } from './stats.js';

export type EnginePrimitive = { name: string; cpuUs: number };
export type EngineResult = {
  rounds: number;
  reps: number;
  warmup: number;
  actorloopUsPerRound: number;
  floorUsPerRound: number;
  machineUsPerRound: number;
  primitives: EnginePrimitive[];
};

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): OpenAIChatCompletionChunk => ({
  choices: [{ index: 0, delta, finish_reason: finishReason }],
});

async function* toolCallTurn(round: number): AsyncGenerator<OpenAIChatCompletionChunk> {
  yield chunk({ tool_calls: [{ index: 0, id: `call_${round}`, type: 'function', function: { name: 'add', arguments: '' } }] });
  yield chunk({ tool_calls: [{ index: 0, function: { arguments: `{"a":${round},` } }] });
  yield chunk({ tool_calls: [{ index: 0, function: { arguments: '"b":1}' } }] }, 'tool_calls');
}

async function* textTurn(): AsyncGenerator<OpenAIChatCompletionChunk> {
  yield chunk({ content: 'The sum is done.' }, 'stop');
}

async function* afterPause(
  pause: () => Promise<void>,
  turn: AsyncGenerator<OpenAIChatCompletionChunk>,
): AsyncGenerator<OpenAIChatCompletionChunk> {
  await pause();
  yield* turn;
}

/**
 * A scripted model answering `rounds` tool calls, then text; one per side, reset per conversation.
 * With `pause`, each response starts after it (bench/cold-cache.ts: what runs between requests).
 */
export function scriptedModel(rounds: number, pause?: () => Promise<void>) {
  let request = 0;
  const turn = () => (++request <= rounds ? toolCallTurn(request) : textTurn());
  return {
    reset: () => {
      request = 0;
    },
    provider: handlerProvider(() => (pause ? afterPause(pause, turn()) : turn())),
  };
}

async function perRound(rounds: number, reps: number, warmup: number) {
  const options = { model: 'scripted', stream: true, maxRounds: rounds };
  const actorModel = scriptedModel(rounds);
  const floorModel = scriptedModel(rounds);
  const sides: Record<'actorloop' | 'floor', { reset: () => void; run: (text: string) => Promise<LoopResult> }> = {
    actorloop: { reset: actorModel.reset, run: createActorloopLoop(actorModel.provider, options) },
    floor: { reset: floorModel.reset, run: createProviderLoop(floorModel.provider, options) },
  };
  const samples = { actorloop: [] as number[], floor: [] as number[] };
  const once = async (side: 'actorloop' | 'floor') => {
    sides[side].reset();
    const started = cpuNowUs();
    const result = await sides[side].run('Add the numbers, round after round.');
    const cpu = (cpuNowUs() - started) / rounds;
    if (!result.ok || result.rounds !== rounds)
      throw new Error(`ENGINE ${side}: ended ${result.error ?? 'ok'} after ${result.rounds} rounds`);
    return cpu;
  };
  for (let i = 0; i < warmup; i++) {
    await once('actorloop');
    await once('floor');
  }
  for (let i = 0; i < reps; i++) {
    for (const side of i % 2 === 0 ? (['actorloop', 'floor'] as const) : (['floor', 'actorloop'] as const))
      samples[side].push(await once(side));
  }
  return { actorloop: median(samples.actorloop), floor: median(samples.floor) };
}

/** The best of a few batches: the least disturbed estimate of a small, steady cost. */
async function costOf(operation: () => unknown | Promise<unknown>, count: number): Promise<number> {
  for (let i = 0; i < count; i++) await operation();
  let best = Number.POSITIVE_INFINITY;
  for (let batch = 0; batch < 5; batch++) {
    const started = cpuNowUs();
    for (let i = 0; i < count; i++) await operation();
    best = Math.min(best, (cpuNowUs() - started) / count);
  }
  return best;
}

/** `operations`: how many of each costly operation per batch; the cheap ones take 2.5 times as many. */
async function primitives(operations: number): Promise<EnginePrimitive[]> {
  // A context with as many fields as the conversation machine's.
  const context: Record<string, number> = {};
  for (let field = 0; field < 18; field++) context[`field${field}`] = field;
  const flat = (actions: unknown) =>
    createActor(
      createMachine({
        types: {} as { context: Record<string, number> },
        context,
        initial: 'on',
        states: { on: { on: { ping: { actions: actions as never } } } },
      }),
    ).start();
  const bare = flat([]);
  const assigning = flat(assign({ field0: ({ context: current }: { context: Record<string, number> }) => (current.field0 ?? 0) + 1 }));
  const emitting = flat(emit({ type: 'noticed' }));
  const ping = { type: 'ping' };

  const resolved = fromPromise(async () => 1);
  const invoking = setup({ actors: { resolved } }).createMachine({
    initial: 'idle',
    states: { idle: { on: { go: 'busy' } }, busy: { invoke: { src: 'resolved', onDone: 'idle' } } },
  });
  const invoker = createActor(invoking).start();
  const child = setup({ actors: { resolved } }).createMachine({
    initial: 'working',
    states: { working: { invoke: { src: 'resolved', onDone: 'finished' }, after: { 60000: 'finished' } }, finished: { type: 'final' } },
  });
  const spawning = setup({ actors: { child } }).createMachine({
    initial: 'idle',
    states: { idle: { on: { go: 'busy' } }, busy: { invoke: { src: 'child', onDone: 'idle' } } },
  });
  const spawner = createActor(spawning).start();
  type Cycling = {
    send(event: { type: 'go' }): void;
    subscribe(listener: (snapshot: { value: unknown }) => void): { unsubscribe(): void };
  };
  const roundTrip = (actor: Cycling) =>
    new Promise<void>((resolve) => {
      const subscription = actor.subscribe((snapshot) => {
        if (snapshot.value === 'idle') {
          subscription.unsubscribe();
          resolve();
        }
      });
      actor.send({ type: 'go' });
    });
  const lone = async () => toPromise(createActor(resolved).start());

  const cheap = Math.round(operations * 2.5);
  const bareUs = await costOf(() => bare.send(ping), cheap);
  return [
    { name: 'event with no action (macrostep)', cpuUs: bareUs },
    { name: '+ one assign (18-field context)', cpuUs: (await costOf(() => assigning.send(ping), cheap)) - bareUs },
    { name: '+ one emit (no listener)', cpuUs: (await costOf(() => emitting.send(ping), cheap)) - bareUs },
    { name: 'promise actor alone: create, start, resolve', cpuUs: await costOf(lone, operations) },
    {
      name: 'invoke a promise actor and take its done event (2 events)',
      cpuUs: await costOf(() => roundTrip(invoker as unknown as Cycling), operations),
    },
    {
      name: 'invoke a child machine that invokes a promise actor (the former tool-call machine)',
      cpuUs: await costOf(() => roundTrip(spawner as unknown as Cycling), operations),
    },
    { name: 'new AbortController().signal (Node)', cpuUs: await costOf(() => new AbortController().signal, cheap) },
  ];
}

export async function runEngineJob(job: { rounds: number; reps: number; warmup: number; operations: number }): Promise<EngineResult> {
  const { actorloop, floor } = await perRound(job.rounds, job.reps, job.warmup);
  return {
    rounds: job.rounds,
    reps: job.reps,
    warmup: job.warmup,
    actorloopUsPerRound: actorloop,
    floorUsPerRound: floor,
    machineUsPerRound: actorloop - floor,
    primitives: await primitives(job.operations),
  };
}
