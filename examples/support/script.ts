/**
 * The scripted model behind the examples' offline mode: a plain function from what the
 * conversation holds so far to the model's next reply. It is served two ways, both labelled as
 * scripted wherever an example prints its mode:
 *
 * - in the process, as a `handlerProvider` ({@link scriptedProvider});
 * - over HTTP by the local replay server (`replay-server.ts`), in the real OpenAI and Anthropic
 *   wire formats, so the real SDKs parse it exactly as they parse a live answer.
 *
 * Nothing here is recorded traffic: every response is built from the script at request time.
 */
import { handlerProvider, type Provider } from 'actorloop';
import type { OpenAIChatCompletionChunk, OpenAIChatMessage } from 'actorloop/openai';

/** What the script sees of a request. */
export type ScriptView = {
  /** The text of the last user message. */
  userText: string;
  /** The content of every tool result in the history, in order. */
  toolResults: string[];
  /** Assistant messages so far: 0 for the first request of a conversation. */
  turn: number;
};

/** The model's next reply: text, tool calls, or both (reasoning is sent on the Anthropic wire only). */
export type ScriptReply = {
  reasoning?: string;
  text?: string;
  toolCalls?: Array<{ name: string; args: Record<string, unknown> }>;
};

export type Script = (view: ScriptView) => ScriptReply;

/** A reply's tool calls with deterministic ids, unique within a conversation. */
export function callsOf(reply: ScriptReply, turn: number): Array<{ id: string; name: string; argsText: string }> {
  return (reply.toolCalls ?? []).map((call, index) => ({
    id: `call_${turn}_${index}`,
    name: call.name,
    argsText: JSON.stringify(call.args),
  }));
}

/** Usage the scripted model reports: a rough count (four characters a token), so usage events are not all zero. */
export function scriptedUsage(inputText: string, reply: ScriptReply): { input: number; output: number } {
  const output = `${reply.text ?? ''}${JSON.stringify(reply.toolCalls ?? [])}`;
  return { input: Math.ceil(inputText.length / 4), output: Math.ceil(output.length / 4) };
}

/** The script's view of a Chat Completions request. */
export function viewOfChatMessages(messages: OpenAIChatMessage[]): ScriptView {
  let userText = '';
  const toolResults: string[] = [];
  let turn = 0;
  for (const [index, message] of messages.entries()) {
    // Chat Completions carries a tool result's images in a user message after the tool messages: not the user speaking.
    if (message.role === 'user' && isToolMedia(message, messages[index - 1])) continue;
    if (message.role === 'user')
      userText =
        typeof message.content === 'string'
          ? message.content
          : message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
    else if (message.role === 'tool') toolResults.push(message.content);
    else if (message.role === 'assistant') turn++;
  }
  return { userText, toolResults, turn };
}

/** Whether a user message is the media of the tool results before it (its first line names a call). */
function isToolMedia(message: OpenAIChatMessage, previous: OpenAIChatMessage | undefined): boolean {
  if (previous?.role !== 'tool' || message.role !== 'user' || typeof message.content === 'string') return false;
  const first = message.content[0];
  return first?.type === 'text' && first.text.startsWith('The result of tool call ');
}

/** Splits text the way a model streams it: a word (and its trailing space) at a time. */
export function words(text: string): string[] {
  return text.split(/(?<= )/).filter((piece) => piece !== '');
}

/** A reply as the `chat.completion.chunk` objects of a streamed Chat Completions answer. */
export function chatChunks(reply: ScriptReply, turn: number, usage: { input: number; output: number }): OpenAIChatCompletionChunk[] {
  const id = `chatcmpl-scripted-${turn}`;
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): OpenAIChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    model: 'scripted-model',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  const chunks = [chunk({ role: 'assistant', content: '' })];
  for (const piece of words(reply.text ?? '')) chunks.push(chunk({ content: piece }));
  callsOf(reply, turn).forEach((call, index) => {
    // Arguments arrive in pieces, as real models send them.
    const half = Math.ceil(call.argsText.length / 2);
    chunks.push(
      chunk({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: call.argsText.slice(0, half) } }],
      }),
    );
    chunks.push(chunk({ tool_calls: [{ index, function: { arguments: call.argsText.slice(half) } }] }));
  });
  chunks.push(chunk({}, reply.toolCalls?.length ? 'tool_calls' : 'stop'));
  chunks.push({
    id,
    object: 'chat.completion.chunk',
    model: 'scripted-model',
    choices: [],
    usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
  });
  return chunks;
}

/**
 * The script as an in-process provider (a `handlerProvider` streaming OpenAI chunks): no network,
 * no SDK. Used by the examples that are about the engine rather than a wire.
 */
export function scriptedProvider(script: Script): Provider {
  return handlerProvider(async function* ({ messages, signal }) {
    const view = viewOfChatMessages(messages);
    const reply = script(view);
    for (const chunk of chatChunks(reply, view.turn, scriptedUsage(JSON.stringify(messages), reply))) {
      signal.throwIfAborted();
      // A pause between chunks, so the output streams like a model's.
      await new Promise((resolve) => setTimeout(resolve, 5));
      yield chunk;
    }
  });
}
