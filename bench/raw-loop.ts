/**
 * The floor: a hand-written tool loop over the same `openai` SDK, written the way a competent
 * user would write it, doing the same work per round as actorloop's openaiProvider + machine:
 *
 * - the same client options (`maxRetries: 0` on the client and per request) and the same request
 *   body shape (`model`, `messages`, `tools`, `stream`, and `stream_options.include_usage` when
 *   streaming), no `AbortSignal` (the SDK would add one abort listener per request to a
 *   signal shared by a conversation and not remove it (MaxListenersExceededWarning after 11
 *   requests), so the floor leaves it out; actorloop makes one AbortController per request;
 *   `signalPerRequest` gives the floor one too — S1 reports that variant as "raw+signal");
 * - streaming: iterates the SDK's stream, accumulates text and tool-call deltas by index, the
 *   finish reason and usage; non-streaming: reads the `chat.completion` message;
 * - runs every call of the round at once: `JSON.parse` of the arguments, validation with the same
 *   zod schema, the tool, result serialised (string as is, else JSON);
 * - appends the assistant message and one `tool` message per call, in OpenAI's format, to one
 *   history array that is sent as `messages` on the next request; sums usage.
 *
 * What it does not do (and actorloop does): provider-neutral messages, events, timeouts on
 * requests and tools, retries, doom-loop detection, iteration cap, snapshots.
 */
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionMessageToolCall, ChatCompletionTool } from 'openai/resources/chat/completions';
import { addDescription, addExecutor, addJsonSchema, addName, addSchema, type Gate } from './tool.js';

export type LoopOptions = {
  model: string;
  stream: boolean;
  maxRounds: number;
  gate?: Gate;
  /** Raw loop only: a fresh AbortController per request (cancellable, as actorloop is). */
  signalPerRequest?: boolean;
  /** actorloop only: a `createConversationMachine` per conversation (a machine per tenant or request), not one for all. */
  machinePerConversation?: boolean;
};
export type LoopResult = { ok: boolean; rounds: number; text: string; messages: number; totalTokens: number; error?: string };

export type Accumulated = { id: string; name: string; args: string };
/** What one request of the raw loop gets back. */
export type RawResponse = { text: string; calls: Accumulated[]; totalTokens: number };

/**
 * The raw loop's pieces — one request (streamed or not, accumulated by hand) and one tool call —
 * shared with the minimal-statechart side, so both do exactly the same work per round.
 */
export function createRawPieces(client: OpenAI, options: LoopOptions) {
  const tools: ChatCompletionTool[] = [
    { type: 'function', function: { name: addName, description: addDescription, parameters: addJsonSchema() } },
  ];
  const execute = addExecutor(options.gate);

  async function runTool(call: Accumulated): Promise<ChatCompletionMessageParam> {
    let content: string;
    try {
      const parsed = addSchema.safeParse(JSON.parse(call.args === '' ? '{}' : call.args));
      if (call.name !== addName) content = `Error: unknown tool ${call.name}`;
      else if (!parsed.success) content = `Error: invalid arguments: ${parsed.error.message}`;
      else {
        const result = await execute(parsed.data);
        content = typeof result === 'string' ? result : JSON.stringify(result);
      }
    } catch (error) {
      content = `Error: ${error instanceof Error ? error.message : String(error)}`;
    }
    return { role: 'tool', tool_call_id: call.id, content };
  }

  async function request(messages: ChatCompletionMessageParam[], signal?: AbortSignal): Promise<RawResponse> {
    const requestOptions = signal ? { signal, maxRetries: 0 } : { maxRetries: 0 };
    let text = '';
    let calls: Accumulated[] = [];
    let totalTokens = 0;
    if (options.stream) {
      const stream = await client.chat.completions.create(
        { model: options.model, messages, tools, stream: true, stream_options: { include_usage: true } },
        requestOptions,
      );
      for await (const chunk of stream) {
        if (chunk.usage) totalTokens += chunk.usage.total_tokens;
        const delta = chunk.choices[0]?.delta;
        if (!delta) continue;
        if (delta.content) text += delta.content;
        if (delta.tool_calls) {
          for (const part of delta.tool_calls) {
            let call = calls[part.index];
            if (!call) {
              call = { id: '', name: '', args: '' };
              calls[part.index] = call;
            }
            if (part.id) call.id = part.id;
            if (part.function?.name) call.name += part.function.name;
            if (part.function?.arguments) call.args += part.function.arguments;
          }
        }
      }
    } else {
      const completion = await client.chat.completions.create({ model: options.model, messages, tools, stream: false }, requestOptions);
      if (completion.usage) totalTokens += completion.usage.total_tokens;
      const message = completion.choices[0]?.message;
      text = message?.content ?? '';
      calls = (message?.tool_calls ?? []).flatMap((call) =>
        call.type === 'function' ? [{ id: call.id, name: call.function.name, args: call.function.arguments }] : [],
      );
    }
    return { text, calls: calls.filter((call) => call !== undefined), totalTokens };
  }

  /** The assistant message of a response with tool calls, in OpenAI's format. */
  function assistantMessage({ text, calls }: RawResponse): ChatCompletionMessageParam {
    const toolCalls: ChatCompletionMessageToolCall[] = calls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.args },
    }));
    return { role: 'assistant', content: text === '' ? null : text, tool_calls: toolCalls };
  }

  return { request, runTool, assistantMessage };
}

export function createRawLoop(client: OpenAI, options: LoopOptions) {
  const { request, runTool, assistantMessage } = createRawPieces(client, options);
  return async function run(userText: string): Promise<LoopResult> {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: userText }];
    let totalTokens = 0;
    let rounds = 0;
    try {
      for (;;) {
        const response = await request(messages, options.signalPerRequest ? new AbortController().signal : undefined);
        totalTokens += response.totalTokens;
        if (response.calls.length === 0) {
          messages.push({ role: 'assistant', content: response.text });
          return { ok: true, rounds, text: response.text, messages: messages.length, totalTokens };
        }
        if (rounds >= options.maxRounds) throw new Error('iteration limit reached');
        messages.push(assistantMessage(response));
        messages.push(...(await Promise.all(response.calls.map(runTool))));
        rounds++;
      }
    } catch (error) {
      return {
        ok: false,
        rounds,
        text: '',
        messages: messages.length,
        totalTokens,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      };
    }
  };
}
