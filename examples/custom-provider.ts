/**
 * Your own provider: implement `Provider` — a `name` and `stream(request)`, an async iterable of
 * `text.delta` / `reasoning.delta` / `tool.call.delta` events for display, then exactly one
 * `finish` carrying the whole response. This one speaks Chat Completions over plain `fetch`, no
 * SDK, not streamed; the same shape fits any vendor or in-house gateway.
 *
 * What the machine does for you: it retries what your provider throws when the error carries a
 * retryable HTTP `status` (408, 409, 429, 5xx — honouring `retry-after` from its `headers`) or
 * `retryable: true`; it aborts `request.signal` on cancel and timeout; it validates tool arguments.
 *
 *   npx tsx examples/custom-provider.ts     offline: a replay server that first answers 503, then a scripted model
 *   OPENAI_API_KEY=sk-… npx tsx examples/custom-provider.ts                  live, api.openai.com (OPENAI_MODEL)
 *   OPENAI_BASE_URL=http://localhost:11434/v1 npx tsx examples/custom-provider.ts   live, any compatible server
 */
import {
  createConversationMachine,
  defineTool,
  type FinishReason,
  type Provider,
  type ProviderContentPart,
  type ProviderEvent,
  type ProviderRequest,
} from 'actorloop';
import { toOpenAIMessages } from 'actorloop/openai';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { logRun, printOutput } from './support/log.js';
import { modelOfServer, printMode } from './support/model.js';
import { startReplayServer } from './support/replay-server.js';

type ChatCompletion = {
  choices?: Array<{
    message?: { content?: string | null; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> };
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
};

const finishReasons: Record<string, FinishReason> = {
  stop: 'stop',
  tool_calls: 'tool-calls',
  length: 'length',
  content_filter: 'content-filter',
};

/** A `Provider` for any Chat Completions endpoint, over `fetch`. */
function fetchChatProvider(options: { baseURL: string; apiKey: string; model: string }): Provider {
  return {
    name: 'fetch-chat',
    async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
      const tools = request.tools.map((tool) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
      }));
      const response = await fetch(`${options.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${options.apiKey}` },
        body: JSON.stringify({
          model: options.model,
          // The neutral history in Chat Completions form (system prompt first), converted by actorloop's helper.
          messages: toOpenAIMessages(request.messages, request.system),
          ...(tools.length > 0 ? { tools } : {}),
        }),
        // Aborted by the machine on cancel and timeout: the connection closes.
        signal: request.signal,
      });
      if (!response.ok) {
        // `status` (and `headers`, for retry-after) are what the machine classifies the failure by.
        const detail = (await response.text()).slice(0, 200);
        throw Object.assign(new Error(`${options.baseURL} answered ${response.status}: ${detail}`), {
          status: response.status,
          headers: response.headers,
        });
      }
      const completion = (await response.json()) as ChatCompletion;
      const choice = completion.choices?.[0];
      const content: ProviderContentPart[] = [];
      const text = choice?.message?.content ?? '';
      if (text !== '') {
        yield { type: 'text.delta', delta: text };
        content.push({ type: 'text', text });
      }
      for (const call of choice?.message?.tool_calls ?? []) {
        // Argument text as received: the machine parses and validates it, and tells the model when it is not valid.
        content.push({ type: 'tool-call', toolCallId: call.id, toolName: call.function.name, argsText: call.function.arguments });
      }
      const usage = completion.usage ?? {};
      yield {
        type: 'finish',
        content,
        finishReason: finishReasons[choice?.finish_reason ?? ''] ?? 'other',
        ...(choice?.finish_reason ? { rawFinishReason: choice.finish_reason } : {}),
        usage: {
          inputTokens: usage.prompt_tokens ?? 0,
          outputTokens: usage.completion_tokens ?? 0,
          totalTokens: usage.total_tokens ?? (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0),
        },
      };
    },
  };
}

const units = z.enum(['C', 'F', 'K']);
const toKelvin = {
  C: (value: number) => value + 273.15,
  F: (value: number) => ((value - 32) * 5) / 9 + 273.15,
  K: (value: number) => value,
};
const fromKelvin = {
  C: (value: number) => value - 273.15,
  F: (value: number) => ((value - 273.15) * 9) / 5 + 32,
  K: (value: number) => value,
};

const convertTemperature = defineTool({
  name: 'convert_temperature',
  description: 'Convert a temperature between Celsius (C), Fahrenheit (F) and Kelvin (K)',
  parameters: z.object({ value: z.number(), from: units, to: units }),
  execute: ({ value, from, to }) => ({ value: Math.round(fromKelvin[to](toKelvin[from](value)) * 10) / 10, unit: to }),
});

const liveBaseURL = process.env.OPENAI_BASE_URL ?? (process.env.OPENAI_API_KEY ? 'https://api.openai.com/v1' : undefined);
const replay = liveBaseURL
  ? undefined
  : await startReplayServer(
      ({ toolResults }) => {
        if (toolResults.length === 0) return { toolCalls: [{ name: 'convert_temperature', args: { value: 451, from: 'F', to: 'C' } }] };
        const { value } = JSON.parse(toolResults[0] ?? '{}') as { value?: number };
        return { text: `451 °F is ${value} °C, so it is hotter than 200 °C.` };
      },
      // The first request fails like an overloaded server; the machine retries after the 200 ms asked for.
      { faults: [{ status: 503, body: { error: { message: 'overloaded, try again' } }, headers: { 'retry-after-ms': '200' } }] },
    );

const baseURL = replay?.openaiBaseURL ?? liveBaseURL ?? '';
const apiKey = process.env.OPENAI_API_KEY ?? 'not-needed';
const model = process.env.OPENAI_BASE_URL || replay ? await modelOfServer(baseURL, apiKey) : (process.env.OPENAI_MODEL ?? 'gpt-4o-mini');
printMode('custom-provider', {
  live: !replay,
  label: replay
    ? `a SCRIPTED model on the local replay server ${replay.url}, first answer 503 (set OPENAI_API_KEY or OPENAI_BASE_URL to go live)`
    : `${model} at ${baseURL}`,
});

const machine = createConversationMachine({
  provider: fetchChatProvider({ baseURL, apiKey, model }),
  tools: [convertTemperature],
  system: 'You are terse. Use the tool for unit conversions.',
  retry: { maxRetries: 3 },
});

const question = 'Is 451 °F hotter than 200 °C?';
const actor = createActor(machine, { input: { messages: [] } });
logRun(actor);
actor.start();
console.log(`[user] ${question}`);
actor.send({ type: 'user.message', content: question });
const output = await toPromise(actor);
printOutput(output);
await replay?.close();
