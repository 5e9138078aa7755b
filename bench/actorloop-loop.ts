/**
 * The actorloop side: `createConversationMachine` + `openaiProvider` over the side's shared
 * `openai` client + the same one trivial tool, default options except `maxToolIterations`
 * (raised to the rounds asked for). One actor per conversation, as a host would run it; one machine
 * for all, or (`machinePerConversation`) one made per conversation.
 */
import type OpenAI from 'openai';
import { createActor, toPromise } from 'xstate';
import { createConversationMachine, defineTool, openaiProvider, type Provider } from '../src/index.js';
import type { OpenAIClientLike } from '../src/providers/openai/index.js';
import type { LoopOptions, LoopResult } from './raw-loop.js';
import { addDescription, addExecutor, addName, addSchema } from './tool.js';

/** The bench's `openaiProvider` over a side's own client. */
export function benchOpenAIProvider(client: OpenAI, options: LoopOptions): Provider {
  return openaiProvider({ model: options.model, client: client as unknown as OpenAIClientLike, stream: options.stream });
}

/** The side's one tool. */
export function benchTools(options: LoopOptions) {
  const execute = addExecutor(options.gate);
  return [defineTool({ name: addName, description: addDescription, parameters: addSchema, execute: (args) => execute(args) })];
}

/** The side's machine; `tools` made once and given to many machines measures `createConversationMachine` alone. */
export function createActorloopMachine(provider: Provider, options: LoopOptions, tools = benchTools(options)) {
  return createConversationMachine({ provider, tools, maxToolIterations: options.maxRounds });
}

export function createActorloopLoop(provider: Provider, options: LoopOptions) {
  const shared = options.machinePerConversation ? undefined : createActorloopMachine(provider, options);
  return async function run(userText: string): Promise<LoopResult & { retries: number }> {
    const machine = shared ?? createActorloopMachine(provider, options);
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
