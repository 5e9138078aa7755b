import type { OpenAIChatCompletionChunk } from '../../src/providers/openai/index.js';
import type { ChunkHandler, HandlerRequest } from '../../src/providers/handler/handler-provider.js';

/** One scripted answer: text, tool calls, or a failure, streamed as real OpenAI chunks. */
export type ScriptedTurn =
  | { text: string; finishReason?: string; usage?: { prompt: number; completion: number } }
  | { toolCalls: Array<{ id: string; name: string; args: unknown | string }>; text?: string }
  | { error: unknown }
  | ((request: HandlerRequest) => AsyncIterable<OpenAIChatCompletionChunk>);

let chunkSerial = 0;
function chunk(delta: Record<string, unknown>, finishReason: string | null = null): OpenAIChatCompletionChunk {
  return {
    id: `chatcmpl-scripted-${++chunkSerial}`,
    object: 'chat.completion.chunk',
    model: 'scripted',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

/** Splits a string in pieces of at most `size`, as a model streams it. */
function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let index = 0; index < text.length; index += size) out.push(text.slice(index, index + size));
  return out.length ? out : [''];
}

export async function* turnChunks(
  turn: Exclude<ScriptedTurn, { error: unknown } | ((r: HandlerRequest) => unknown)>,
): AsyncGenerator<OpenAIChatCompletionChunk> {
  yield chunk({ role: 'assistant', content: '' });
  if ('toolCalls' in turn) {
    if (turn.text) for (const piece of pieces(turn.text, 5)) yield chunk({ content: piece });
    for (const [index, call] of turn.toolCalls.entries()) {
      const argsText = typeof call.args === 'string' ? call.args : JSON.stringify(call.args);
      yield chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] });
      for (const piece of pieces(argsText, 7)) yield chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
    }
    yield chunk({}, 'tool_calls');
  } else {
    for (const piece of pieces(turn.text, 5)) yield chunk({ content: piece });
    yield chunk({}, turn.finishReason ?? 'stop');
  }
  const usage = 'usage' in turn && turn.usage ? turn.usage : { prompt: 10, completion: 5 };
  yield {
    id: 'usage',
    object: 'chat.completion.chunk',
    model: 'scripted',
    choices: [],
    usage: { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion },
  };
}

/**
 * A deterministic model: answers the n-th request with `turns[n]`. Records every request so tests
 * can check what the engine sent. Requests past the script fail loudly.
 */
export function scriptedModel(turns: ScriptedTurn[]) {
  const requests: HandlerRequest[] = [];
  const handler: ChunkHandler = (request) => {
    requests.push(request);
    const turn = turns[requests.length - 1];
    if (turn === undefined)
      throw Object.assign(new Error(`scripted model: no turn scripted for request ${requests.length}`), { retryable: false });
    if (typeof turn === 'function') return turn(request);
    if ('error' in turn) throw turn.error;
    return turnChunks(turn);
  };
  return { handler, requests };
}

/** A sentence a gated answer streams (`gatedAnswer`). */
export const gatedText = 'The quick brown fox jumps over the lazy dog, twice over.';

/** Streams `gatedText` in 5-character pieces, pausing after the fourth until `gate` opens (`reached` says it is there). */
export function gatedAnswer(gate: Promise<void>, reached: () => void): ScriptedTurn {
  return async function* (): AsyncGenerator<OpenAIChatCompletionChunk> {
    let count = 0;
    for await (const chunk of turnChunks({ text: gatedText })) {
      yield chunk;
      if (chunk.choices?.[0]?.delta?.content && ++count === 4) {
        reached();
        await gate;
      }
    }
  };
}
