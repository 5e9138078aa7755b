/**
 * The actorloop side: `createConversationMachine` + `openaiProvider` over the side's shared
 * `openai` client + the same one trivial tool, default options except `maxToolIterations`
 * (raised to the rounds asked for). One actor per conversation, as a host would run it.
 */
import type OpenAI from 'openai';
import { createActor, toPromise } from 'xstate';
import { createConversationMachine, defineTool, openaiProvider, type OpenAIClientLike } from '../src/index.js';
import type { LoopOptions, LoopResult } from './raw-loop.js';
import { addDescription, addExecutor, addName, addSchema } from './tool.js';

export function createActorloopMachine(client: OpenAI, options: LoopOptions) {
  const execute = addExecutor(options.gate);
  return createConversationMachine({
    provider: openaiProvider({ model: options.model, client: client as unknown as OpenAIClientLike, stream: options.stream }),
    tools: [defineTool({ name: addName, description: addDescription, parameters: addSchema, execute: (args) => execute(args) })],
    maxToolIterations: options.maxRounds,
  });
}

export function createActorloopLoop(client: OpenAI, options: LoopOptions) {
  const machine = createActorloopMachine(client, options);
  return async function run(userText: string): Promise<LoopResult & { retries: number }> {
    const actor = createActor(machine, { input: { messages: [] } });
    let retries = 0;
    actor.on('request.retry', () => {
      retries++;
    });
    actor.start();
    actor.send({ type: 'user.message', content: userText });
    const output = await toPromise(actor);
    const ok = output.status === 'done';
    return {
      ok,
      rounds: output.iterations,
      text: output.text,
      messages: output.messages.length,
      totalTokens: output.usage.totalTokens,
      retries,
      ...(ok ? {} : { error: `${output.status}/${output.reason ?? ''}: ${output.error?.message ?? ''}` }),
    };
  };
}
