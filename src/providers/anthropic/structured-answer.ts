import type { ProviderContentPart, ProviderEvent, ResponseFormat } from '../../model/provider.js';
import type { AnthropicThinkingConfig, AnthropicTool } from './wire-types.js';

/**
 * How the Anthropic provider asks for a structured answer: `native` sends
 * `output_config.format` (JSON Schema structured outputs, on the models that support them); `tool`
 * offers a final-answer tool whose input is the answer and makes the model call a tool; `auto`
 * (default) picks `native` for model families known to support it and `tool` for the rest.
 *
 * @example
 * ```ts
 * anthropicProvider({ model: 'claude-3-5-haiku-latest', maxTokens: 1024, structuredOutput: 'tool' });
 * ```
 */
export type AnthropicStructuredOutput = 'auto' | 'native' | 'tool';

/** Claude 4.5 and later families, and Opus 4.1, take `output_config.format`. */
const nativeModels = /^claude-(?:(?:opus|sonnet|haiku)-(?:4-[5-9]|[5-9])|opus-4-1)/;

/** The mode a model gets. */
export function structuredOutputMode(setting: AnthropicStructuredOutput, model: string): 'native' | 'tool' {
  if (setting !== 'auto') return setting;
  return nativeModels.test(model) ? 'native' : 'tool';
}

/** The answer tool of `tool` mode. */
export function answerTool(format: ResponseFormat): AnthropicTool {
  return {
    name: format.name,
    description: format.description ?? 'Give your final answer by calling this tool; its input is the answer.',
    input_schema: { ...format.schema, type: 'object' },
  };
}

/**
 * The body fields of a structured answer. In `tool` mode the model must call a tool (the answer
 * tool alone when it has no other), unless thinking is on, which allows only `auto`. A
 * `tool_choice` or `output_config` in the user's params is kept.
 */
export function structuredAnswerFields(
  format: ResponseFormat,
  mode: 'native' | 'tool',
  context: { hasTools: boolean; thinking: AnthropicThinkingConfig | undefined; params: Record<string, unknown> | undefined },
): Record<string, unknown> {
  if (mode === 'native') {
    const config = context.params?.output_config;
    return {
      output_config: {
        ...(typeof config === 'object' && config !== null ? config : {}),
        format: { type: 'json_schema', schema: format.schema },
      },
    };
  }
  const thinkingOn = context.thinking !== undefined && context.thinking.type !== 'disabled';
  if (thinkingOn || context.params?.tool_choice !== undefined) return {};
  return { tool_choice: context.hasTools ? { type: 'any' } : { type: 'tool', name: format.name } };
}

/**
 * In `tool` mode the answer arrives as a call of the answer tool: it becomes the response's text
 * (its argument deltas stream as text deltas), so the machine sees an answer like any other. When
 * the model called other tools in the same response, the answer call is dropped and the loop goes
 * on.
 */
export async function* answerToolAsText(events: AsyncIterable<ProviderEvent>, name: string): AsyncGenerator<ProviderEvent> {
  const answerIds = new Set<string>();
  for await (const event of events) {
    if (event.type === 'tool.call.delta') {
      if (event.name === name) answerIds.add(event.toolCallId);
      if (answerIds.has(event.toolCallId)) {
        if (event.argsDelta !== '') yield { type: 'text.delta', delta: event.argsDelta };
        continue;
      }
      yield event;
    } else if (event.type === 'finish') {
      const others = event.content.filter((part) => !(part.type === 'tool-call' && part.toolName === name));
      const answer = event.content.find(
        (part): part is Extract<ProviderContentPart, { type: 'tool-call' }> => part.type === 'tool-call' && part.toolName === name,
      );
      if (!answer || others.some((part) => part.type === 'tool-call')) {
        yield { ...event, content: others };
      } else {
        const content: ProviderContentPart[] = [...others.filter((part) => part.type !== 'text'), { type: 'text', text: answer.argsText }];
        yield { ...event, content, finishReason: 'stop' };
      }
    } else {
      yield event;
    }
  }
}
