/**
 * The minimal-statechart side of S1: the raw loop's own request and tool code (bench/raw-loop.ts,
 * `createRawPieces`) inside the smallest XState tool loop a careful user would write — one invoked
 * promise actor per request (with its AbortSignal), one per tool round, `assign`s for the history,
 * final states. No events emitted, no timers, no guards beyond the loop's own. actorloop − minimal
 * is what actorloop's machine adds beyond XState's inherent cost.
 */
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { assign, createActor, fromPromise, setup, toPromise } from 'xstate';
import { createRawPieces, type LoopOptions, type LoopResult, type RawResponse } from './raw-loop.js';

export function createMinimalLoop(client: OpenAI, options: LoopOptions) {
  const { request, runTool, assistantMessage } = createRawPieces(client, options);
  type Context = {
    messages: ChatCompletionMessageParam[];
    rounds: number;
    totalTokens: number;
    response: RawResponse | null;
    error: string | null;
  };
  const machine = setup({
    types: { context: {} as Context, input: {} as { userText: string }, output: {} as LoopResult },
    actors: {
      request: fromPromise<RawResponse, ChatCompletionMessageParam[]>(({ input, signal }) => request(input, signal)),
      tools: fromPromise<ChatCompletionMessageParam[], RawResponse>(({ input }) => Promise.all(input.calls.map(runTool))),
    },
  }).createMachine({
    context: ({ input }) => ({
      messages: [{ role: 'user', content: input.userText }],
      rounds: 0,
      totalTokens: 0,
      response: null,
      error: null,
    }),
    initial: 'requesting',
    states: {
      requesting: {
        invoke: {
          src: 'request',
          input: ({ context }) => context.messages,
          onDone: [
            {
              guard: ({ event }) => event.output.calls.length === 0,
              target: 'done',
              actions: assign(({ context, event }) => ({
                messages: [...context.messages, { role: 'assistant' as const, content: event.output.text }],
                totalTokens: context.totalTokens + event.output.totalTokens,
                response: event.output,
              })),
            },
            {
              guard: ({ context }) => context.rounds >= options.maxRounds,
              target: 'failed',
              actions: assign({ error: 'iteration limit reached' }),
            },
            {
              target: 'executing',
              actions: assign(({ context, event }) => ({
                messages: [...context.messages, assistantMessage(event.output)],
                totalTokens: context.totalTokens + event.output.totalTokens,
                response: event.output,
              })),
            },
          ],
          onError: { target: 'failed', actions: assign(({ event }) => ({ error: String(event.error) })) },
        },
      },
      executing: {
        invoke: {
          src: 'tools',
          input: ({ context }) => context.response as RawResponse,
          onDone: {
            target: 'requesting',
            actions: assign(({ context, event }) => ({ messages: [...context.messages, ...event.output], rounds: context.rounds + 1 })),
          },
          onError: { target: 'failed', actions: assign(({ event }) => ({ error: String(event.error) })) },
        },
      },
      done: { type: 'final' },
      failed: { type: 'final' },
    },
    output: ({ context }) => ({
      ok: context.error === null,
      rounds: context.rounds,
      text: context.response?.text ?? '',
      messages: context.messages.length,
      totalTokens: context.totalTokens,
      ...(context.error === null ? {} : { error: context.error }),
    }),
  });
  return async function run(userText: string): Promise<LoopResult> {
    return toPromise(createActor(machine, { input: { userText } }).start());
  };
}
