import { serializeResult } from '../../util/serialize-result.js';
import type { Message, ToolResultPart, UserContentPart } from '../../model/messages.js';
import { wireMedia } from '../media-support.js';
import type { ResponseFormat, ToolDescription } from '../../model/provider.js';
import type { OpenAIChatMessage, OpenAIChatTool, OpenAIChatToolCall, OpenAIChatUserPart, OpenAIResponseFormat } from './chat-types.js';

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

/**
 * A user part as Chat Completions takes it (the table in ../media-support.ts): media inline as a
 * `data:` URL, or by URL where the wire fetches it.
 */
function userPart(part: UserContentPart, where: string): OpenAIChatUserPart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  const { source, rule, url: inline } = wireMedia('chat-completions', part, where);
  switch (rule.as) {
    case 'image_url':
      return { type: 'image_url', image_url: { url: inline } };
    case 'file':
      return { type: 'file', file: { file_data: inline, filename: (part.type === 'file' ? part.filename : undefined) ?? 'file.pdf' } };
    default:
      // `input_audio`: the rule takes inline WAV and MP3 only.
      return {
        type: 'input_audio',
        input_audio: { data: source.kind === 'base64' ? source.base64 : '', format: /wav/i.test(source.mediaType ?? '') ? 'wav' : 'mp3' },
      };
  }
}

/**
 * The media of a round's `toolContent` results, in one user message right after its tool messages:
 * a tool message takes only text here. Each call's media follow a line naming the call, so the
 * model can tell whose they are; the tool message itself names them by label.
 */
function toolMediaMessage(results: readonly ToolResultPart[], where: string): OpenAIChatMessage | undefined {
  const parts: OpenAIChatUserPart[] = [];
  for (const [index, result] of results.entries()) {
    const media = (result.content ?? []).flatMap((part, inner) => (part.type === 'text' ? [] : [{ part, inner }]));
    if (media.length === 0) continue;
    parts.push({ type: 'text', text: toolMediaCaption(result) });
    for (const { part, inner } of media) parts.push(userPart(part, `${where}.content[${index}].content[${inner}]`));
  }
  return parts.length === 0 ? undefined : { role: 'user', content: parts };
}

/**
 * The line before a call's media in {@link toolMediaMessage}.
 *
 * @example
 * ```ts
 * toolMediaCaption({ type: 'tool-result', toolCallId: 'call_1', toolName: 'screenshot', result: '' });
 * // 'The result of tool call call_1 (screenshot) includes:'
 * ```
 */
export function toolMediaCaption(result: Pick<ToolResultPart, 'toolCallId' | 'toolName'>): string {
  return `The result of tool call ${result.toolCallId} (${result.toolName}) includes:`;
}

function convert(message: Message, where: string): OpenAIChatMessage | OpenAIChatMessage[] {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return {
        role: 'user',
        content:
          typeof message.content === 'string'
            ? message.content
            : message.content.map((part, index) => userPart(part, `${where}.content[${index}]`)),
      };
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
    case 'tool': {
      const results: OpenAIChatMessage[] = message.content.map((part) => ({
        role: 'tool',
        tool_call_id: part.toolCallId,
        content: serializeResult(part.result),
      }));
      const media = toolMediaMessage(message.content, where);
      return media === undefined ? results : [...results, media];
    }
  }
}

/**
 * Converts the provider-neutral history to Chat Completions messages, system prompt first.
 * Reasoning parts are dropped: the Chat Completions wire has no way to send them back. The media
 * of `toolContent` results follow the round's tool messages in one user message naming each call
 * (a tool message takes only text on this wire). A media part the wire cannot take throws a `ProviderError` (`unsupported_content`) naming it. The
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
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as Message;
    let result = converted.get(message);
    if (result === undefined) {
      result = convert(message, `messages[${index}]`);
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
