import { serializeResult } from '../../util/serialize-result.js';
import type { Message } from '../../model/messages.js';
import type { ResponseFormat, ToolDescription } from '../../model/provider.js';
import type { OpenAIChatMessage, OpenAIChatTool, OpenAIChatToolCall, OpenAIResponseFormat } from './chat-types.js';

/** Tool-call arguments on the OpenAI wires: the raw text when the model's JSON was invalid. */
export function argumentsText(args: unknown): string {
  return typeof args === 'string' ? args : JSON.stringify(args ?? {});
}

/**
 * Converted messages by identity. History messages are immutable values (the machine only ever
 * appends new ones), so each is converted once per process instead of once per request — which
 * keeps the cost of a request flat as the conversation grows. Treat the returned objects as
 * read-only.
 */
const converted = new WeakMap<Message, OpenAIChatMessage | OpenAIChatMessage[]>();

function convert(message: Message): OpenAIChatMessage | OpenAIChatMessage[] {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: message.content };
    case 'assistant': {
      let text = '';
      for (const part of message.content) if (part.type === 'text') text += part.text;
      // `map` allocates exactly: the converted message is cached for as long as the history lives.
      const toolCalls = message.content
        .filter((part) => part.type === 'tool-call')
        .map(
          (part): OpenAIChatToolCall => ({
            id: part.toolCallId,
            type: 'function',
            function: { name: part.toolName, arguments: argumentsText(part.args) },
          }),
        );
      return toolCalls.length > 0
        ? { role: 'assistant', content: text === '' ? null : text, tool_calls: toolCalls }
        : { role: 'assistant', content: text };
    }
    case 'tool':
      return message.content.map((part) => ({ role: 'tool', tool_call_id: part.toolCallId, content: serializeResult(part.result) }));
  }
}

/**
 * Converts the provider-neutral history to Chat Completions messages, system prompt first.
 * Reasoning parts are dropped: the Chat Completions wire has no way to send them back. The
 * returned messages are cached per history message, so copy one before changing it.
 *
 * @example
 * ```ts
 * const messages = toOpenAIMessages(output.messages, 'You are terse.');
 * // [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'What is 2+3?' }, …]
 * ```
 */
export function toOpenAIMessages(messages: Message[], system?: string): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [];
  if (system !== undefined && system !== '') out.push({ role: 'system', content: system });
  for (const message of messages) {
    let result = converted.get(message);
    if (result === undefined) {
      result = convert(message);
      converted.set(message, result);
    }
    if (Array.isArray(result)) out.push(...result);
    else out.push(result);
  }
  return out;
}

/** Function tools from the tools' JSON Schemas. */
export function toOpenAITools(tools: ToolDescription[], strict?: boolean): OpenAIChatTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: {
      name: tool.name,
      description: tool.description,
      parameters: tool.inputSchema,
      ...(strict === undefined ? {} : { strict }),
    },
  }));
}

/** The `response_format` for the machine's structured answer. */
export function toOpenAIResponseFormat(format: ResponseFormat): OpenAIResponseFormat {
  return {
    type: 'json_schema',
    json_schema: {
      name: format.name,
      ...(format.description === undefined ? {} : { description: format.description }),
      schema: format.schema,
      strict: format.strict,
    },
  };
}
