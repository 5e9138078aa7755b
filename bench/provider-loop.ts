/**
 * actorloop without its statechart: the same provider (in S1 `openaiProvider` over the side's own
 * `openai` client), the
 * same planning of a response (`planResponse`: JSON parse, schema validation), the same result
 * serialisation and neutral message history — driven by a plain `for` loop instead of the
 * conversation machine. One AbortController per request and per round, as the machine has.
 *
 * S1 runs it beside the raw SDK loop and actorloop, so the overhead splits in two: the provider
 * layer (this side − raw) and the machine (actorloop − this side). It has no events, timeouts,
 * retries, doom-loop check, cap or snapshots.
 */
import { defineTool, type Message, type Provider, type ProviderEvent } from '../src/index.js';
import { errorResult, planResponse, resultTexts, toolMessage, toolResult } from '../src/machines/rounds/tool-round.js';
import { capText } from '../src/tools/result-text.js';
import { serializeResult } from '../src/util/serialize-result.js';
import type { LoopOptions, LoopResult } from './raw-loop.js';
import { addDescription, addExecutor, addName, addSchema } from './tool.js';

type Finish = Extract<ProviderEvent, { type: 'finish' }>;

export function createProviderLoop(provider: Provider, options: LoopOptions) {
  const execute = addExecutor(options.gate);
  const tool = defineTool({ name: addName, description: addDescription, parameters: addSchema, execute: (args) => execute(args) });
  const tools = new Map([[tool.name, tool]]);
  const descriptions = [{ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }];
  const maxResultBytes = 100_000;

  return async function run(userText: string): Promise<LoopResult> {
    const messages: Message[] = [{ role: 'user', content: userText }];
    let totalTokens = 0;
    let rounds = 0;
    let text = '';
    try {
      for (;;) {
        const controller = new AbortController();
        let finish: Finish | undefined;
        for await (const event of provider.stream({ messages, tools: descriptions, signal: controller.signal })) {
          if (event.type === 'finish') finish = event;
        }
        if (!finish) throw new Error('the stream ended without a finish');
        totalTokens += finish.usage.totalTokens;
        const { content, calls } = planResponse(finish.content, tools);
        text = content.map((part) => (part.type === 'text' ? part.text : '')).join('');
        if (content.length > 0) messages.push({ role: 'assistant', content });
        if (calls.length === 0) return { ok: true, rounds, text, messages: messages.length, totalTokens };
        if (rounds >= options.maxRounds) throw new Error('iteration limit reached');
        const settled = await Promise.all(
          calls.map(async (call) => {
            if (call.state === 'settled') return call;
            const signal = new AbortController().signal;
            try {
              const value = await tools
                .get(call.toolName)!
                .execute(call.args as never, { signal, toolCallId: call.toolCallId, messages, sessionData: undefined });
              return { ...call, state: 'settled' as const, result: toolResult(call, capText(serializeResult(value), maxResultBytes)) };
            } catch (error) {
              return { ...call, state: 'settled' as const, result: errorResult(call, capText(resultTexts.failed(error), maxResultBytes)) };
            }
          }),
        );
        messages.push(toolMessage(settled));
        rounds++;
      }
    } catch (error) {
      return {
        ok: false,
        rounds,
        text,
        messages: messages.length,
        totalTokens,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      };
    }
  };
}
