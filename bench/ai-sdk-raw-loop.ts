/**
 * The AI SDK's floor for S1-AISDK: a hand-written tool loop over an AI SDK language model's own
 * `doStream` (no actorloop), as `raw-loop.ts` is over the `openai` SDK — the prompt kept in the
 * specification's format, text and tool calls read from the stream parts, the same zod schema and
 * tool, results as text parts, usage summed. It measures what the provider package itself costs a
 * round (its request building, web-stream pipeline and chunk validation), so the adapter's own share
 * is what `aiSdkProvider` adds on top of it.
 */
import type { createOpenAI } from '@ai-sdk/openai';
import type { LoopOptions, LoopResult } from './raw-loop.js';
import { addDescription, addExecutor, addJsonSchema, addName, addSchema } from './tool.js';

type ChatModel = ReturnType<ReturnType<typeof createOpenAI>['chat']>;
type CallOptions = Parameters<ChatModel['doStream']>[0];
type Prompt = CallOptions['prompt'];
type ToolCall = { toolCallId: string; toolName: string; input: string };

export function createAiSdkRawLoop(model: ChatModel, options: LoopOptions) {
  const tools: CallOptions['tools'] = [
    { type: 'function', name: addName, description: addDescription, inputSchema: addJsonSchema() as never },
  ];
  const execute = addExecutor(options.gate);

  async function runTool(call: ToolCall): Promise<string> {
    try {
      const parsed = addSchema.safeParse(JSON.parse(call.input === '' ? '{}' : call.input));
      if (call.toolName !== addName) return `Error: unknown tool ${call.toolName}`;
      if (!parsed.success) return `Error: invalid arguments: ${parsed.error.message}`;
      const result = await execute(parsed.data);
      return typeof result === 'string' ? result : JSON.stringify(result);
    } catch (error) {
      return `Error: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  return async function run(userText: string): Promise<LoopResult> {
    const prompt: Prompt = [{ role: 'user', content: [{ type: 'text', text: userText }] }];
    let totalTokens = 0;
    let rounds = 0;
    let text = '';
    try {
      for (;;) {
        const { stream } = await model.doStream({ prompt, tools });
        text = '';
        const calls: ToolCall[] = [];
        const reader = stream.getReader();
        for (;;) {
          const { done, value: part } = await reader.read();
          if (done) break;
          if (part.type === 'text-delta') text += part.delta;
          else if (part.type === 'tool-call') calls.push(part);
          else if (part.type === 'finish') totalTokens += (part.usage.inputTokens.total ?? 0) + (part.usage.outputTokens.total ?? 0);
          else if (part.type === 'error') throw part.error;
        }
        if (calls.length === 0) {
          prompt.push({ role: 'assistant', content: [{ type: 'text', text }] });
          return { ok: true, rounds, text, messages: prompt.length, totalTokens };
        }
        if (rounds >= options.maxRounds) throw new Error('iteration limit reached');
        prompt.push({
          role: 'assistant',
          content: calls.map((call) => ({
            type: 'tool-call' as const,
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            input: JSON.parse(call.input) as unknown,
          })),
        });
        const results = await Promise.all(calls.map(runTool));
        prompt.push({
          role: 'tool',
          content: calls.map((call, index) => ({
            type: 'tool-result' as const,
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            output: { type: 'text' as const, value: results[index] as string },
          })),
        });
        rounds++;
      }
    } catch (error) {
      return {
        ok: false,
        rounds,
        text,
        messages: prompt.length,
        totalTokens,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      };
    }
  };
}
