/**
 * The machine the host benches run: a scripted model that streams `words` words, then calls `add`
 * until `rounds` results are in, then answers.
 */
import { z } from 'zod';
import { createConversationMachine, defineTool, handlerProvider } from '../src/index.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai/index.js';

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): OpenAIChatCompletionChunk => ({
  choices: [{ index: 0, delta, finish_reason: finishReason }],
});

async function* turn(toolResults: number, rounds: number, words: number): AsyncGenerator<OpenAIChatCompletionChunk> {
  for (let piece = 0; piece < words; piece++) yield chunk({ content: `word${piece} ` });
  if (toolResults < rounds) {
    const call = {
      index: 0,
      id: `call_${toolResults}`,
      type: 'function',
      function: { name: 'add', arguments: `{"a":${toolResults},"b":1}` },
    };
    yield chunk({ tool_calls: [call] }, 'tool_calls');
  } else yield chunk({}, 'stop');
}

export function toolRoundsMachine(options: { rounds: number; words: number }) {
  const add = defineTool({
    name: 'add',
    description: 'add',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => a + b,
  });
  return createConversationMachine({
    provider: handlerProvider(({ messages }) =>
      turn(messages.filter((message) => message.role === 'tool').length, options.rounds, options.words),
    ),
    tools: [add],
  });
}
