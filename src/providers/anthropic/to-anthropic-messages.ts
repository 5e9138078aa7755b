import { isRecord } from '../../util/is-record.js';
import { serializeResult } from '../../util/serialize-result.js';
import { bytesFromBase64 } from '../../util/base64.js';
import type { Message, ToolResultPart, UserContentPart } from '../../model/messages.js';
import { wireMedia } from '../media-support.js';
import type { ToolDescription } from '../../model/provider.js';
import type {
  AnthropicDocumentBlockParam,
  AnthropicImageBlockParam,
  AnthropicImageMediaType,
  AnthropicMessageParam,
  AnthropicRedactedThinkingBlockParam,
  AnthropicTextBlockParam,
  AnthropicThinkingBlockParam,
  AnthropicTool,
  AnthropicToolResultBlockParam,
  AnthropicToolUseBlockParam,
} from './wire-types.js';

/**
 * What an empty tool result is sent as. The Anthropic wire rejects `tool_result` blocks with empty
 * content when `is_error` is set, and empty text anywhere; a tool that legitimately returns nothing
 * must not poison the history.
 *
 * @example
 * ```ts
 * toAnthropicMessages([{ role: 'tool', content: [{ type: 'tool-result', toolCallId: 't1', toolName: 'save', result: '' }] }]);
 * // => user message with { type: 'tool_result', tool_use_id: 't1', content: emptyToolResultText }
 * ```
 */
export const emptyToolResultText = '(no output)';

type UserBlock = AnthropicTextBlockParam | AnthropicImageBlockParam | AnthropicDocumentBlockParam | AnthropicToolResultBlockParam;
type AssistantBlock =
  | AnthropicTextBlockParam
  | AnthropicThinkingBlockParam
  | AnthropicRedactedThinkingBlockParam
  | AnthropicToolUseBlockParam;

type Turn = { role: 'user'; blocks: UserBlock[] } | { role: 'assistant'; blocks: AssistantBlock[] };

/**
 * What {@link toAnthropicMessages} produces: the `system` and `messages` request fields.
 *
 * @example
 * ```ts
 * const { system, messages }: AnthropicConversation = toAnthropicMessages(history, 'You are terse.');
 * await client.messages.create({ model, max_tokens: 1024, messages, ...(system ? { system } : {}) });
 * ```
 */
export type AnthropicConversation = {
  /** Absent when there is no system text at all: an empty `system` is an API error. */
  system?: string;
  messages: AnthropicMessageParam[];
};

const hasVisibleText = (text: string): boolean => text.trim() !== '';

/** A tool result as a `tool_result` block: its text, or a `toolContent` result's text, image and document blocks. */
function toolResultBlock(part: ToolResultPart, where: string): AnthropicToolResultBlockParam {
  const error = part.isError === true ? { is_error: true } : {};
  if (part.content !== undefined) {
    const blocks: Array<AnthropicTextBlockParam | AnthropicImageBlockParam | AnthropicDocumentBlockParam> = [];
    for (const [index, inner] of part.content.entries()) {
      if (inner.type !== 'text') blocks.push(mediaBlock(inner, `${where}.content[${index}]`));
      else if (hasVisibleText(inner.text)) blocks.push({ type: 'text', text: inner.text });
    }
    if (blocks.length > 0) return { type: 'tool_result', tool_use_id: part.toolCallId, content: blocks, ...error };
  }
  const text = serializeResult(part.result);
  return { type: 'tool_result', tool_use_id: part.toolCallId, content: hasVisibleText(text) ? text : emptyToolResultText, ...error };
}

/** A user part's media block (the table in ../media-support.ts): images and PDFs inline or by URL, plain text inline. */
function mediaBlock(
  part: Exclude<UserContentPart, { type: 'text' }>,
  where: string,
): AnthropicImageBlockParam | AnthropicDocumentBlockParam {
  const { source, rule } = wireMedia('anthropic', part, where);
  const title = part.type === 'file' && part.filename ? { title: part.filename } : {};
  if (source.kind === 'url')
    return rule.as === 'image'
      ? { type: 'image', source: { type: 'url', url: source.url } }
      : { type: 'document', source: { type: 'url', url: source.url }, ...title };
  if (rule.as === 'image') {
    // The rule took the type from the four the wire names.
    const mediaType = source.mediaType.toLowerCase() as AnthropicImageMediaType;
    return { type: 'image', source: { type: 'base64', media_type: mediaType, data: source.base64 } };
  }
  if (source.mediaType.toLowerCase() === 'application/pdf')
    return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: source.base64 }, ...title };
  const text = new TextDecoder().decode(bytesFromBase64(source.base64));
  return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: text }, ...title };
}

/**
 * Converts the provider-neutral history to Anthropic Messages.
 *
 * - The system prompt and every `system` message of the history are joined (blank line between)
 *   into the top-level `system` field: the Messages API has no system role that every model and
 *   API version accepts inside `messages`.
 * - Roles must alternate, so tool results and user messages that follow each other become one
 *   user message, `tool_result` blocks first (the API requires them before any text), and
 *   consecutive assistant messages become one.
 * - Thinking blocks go back byte-for-byte with their `signature`; reasoning without a signature
 *   (from another provider) is dropped, because Anthropic rejects unsigned thinking.
 * - Tool-call arguments that are not a JSON object (the model's JSON was invalid) are sent as
 *   `{}`: `tool_use.input` must be an object, and the matching error result tells the model why.
 * - Empty text blocks and assistant messages left empty are dropped; the API rejects them.
 * - Images and documents go as `image` and `document` blocks, in a user message or inside a
 *   `tool_result` (a `toolContent` result); a part the wire cannot take (audio) throws a
 *   `ProviderError` (`unsupported_content`) naming it.
 *
 * @example
 * ```ts
 * const { system, messages } = toAnthropicMessages(
 *   [{ role: 'user', content: 'What is 2+3?' }],
 *   'You are terse.',
 * );
 * // system === 'You are terse.', messages[0] => { role: 'user', content: 'What is 2+3?' }
 * ```
 */
export function toAnthropicMessages(history: Message[], systemPrompt?: string): AnthropicConversation {
  const systemTexts: string[] = [];
  if (systemPrompt !== undefined && hasVisibleText(systemPrompt)) systemTexts.push(systemPrompt);
  const turns: Turn[] = [];

  const userTurn = (): UserBlock[] => {
    const last = turns.at(-1);
    if (last?.role === 'user') return last.blocks;
    const blocks: UserBlock[] = [];
    turns.push({ role: 'user', blocks });
    return blocks;
  };
  const assistantTurn = (): AssistantBlock[] => {
    const last = turns.at(-1);
    if (last?.role === 'assistant') return last.blocks;
    const blocks: AssistantBlock[] = [];
    turns.push({ role: 'assistant', blocks });
    return blocks;
  };

  for (let index = 0; index < history.length; index++) {
    const message = history[index] as Message;
    switch (message.role) {
      case 'system':
        if (hasVisibleText(message.content)) systemTexts.push(message.content);
        break;
      case 'user': {
        const blocks = userTurn();
        if (typeof message.content === 'string') blocks.push({ type: 'text', text: message.content });
        else
          for (const [partIndex, part] of message.content.entries()) {
            if (part.type !== 'text') blocks.push(mediaBlock(part, `messages[${index}].content[${partIndex}]`));
            else if (hasVisibleText(part.text)) blocks.push({ type: 'text', text: part.text });
          }
        break;
      }
      case 'tool': {
        const blocks = userTurn();
        for (const [partIndex, part] of message.content.entries())
          blocks.push(toolResultBlock(part, `messages[${index}].content[${partIndex}]`));
        break;
      }
      case 'assistant': {
        const blocks: AssistantBlock[] = [];
        for (const part of message.content) {
          switch (part.type) {
            case 'text':
              if (hasVisibleText(part.text)) blocks.push({ type: 'text', text: part.text });
              break;
            case 'reasoning':
              if (part.signature !== undefined && part.signature !== '') {
                blocks.push({ type: 'thinking', thinking: part.text, signature: part.signature });
              }
              break;
            case 'redacted-reasoning':
              blocks.push({ type: 'redacted_thinking', data: part.data });
              break;
            case 'tool-call':
              blocks.push({
                type: 'tool_use',
                id: part.toolCallId,
                name: part.toolName,
                input: isRecord(part.args) ? part.args : {},
              });
              break;
          }
        }
        if (blocks.length > 0) assistantTurn().push(...blocks);
        break;
      }
    }
  }

  const messages: AnthropicMessageParam[] = turns.map((turn) => {
    if (turn.role === 'assistant') return { role: 'assistant', content: turn.blocks };
    const first = turn.blocks[0];
    // A lone text block goes as a plain string, the form most clients send for a user prompt.
    if (turn.blocks.length === 1 && first?.type === 'text') return { role: 'user', content: first.text };
    const results = turn.blocks.filter((block) => block.type === 'tool_result');
    const texts = turn.blocks.filter((block) => block.type !== 'tool_result');
    return { role: 'user', content: [...results, ...texts] };
  });

  return systemTexts.length > 0 ? { system: systemTexts.join('\n\n'), messages } : { messages };
}

/**
 * Tools in the Messages format.
 *
 * @example
 * ```ts
 * toAnthropicTools([{ name: 'add', description: 'Add', inputSchema: { type: 'object', properties: {} } }]);
 * // [{ name: 'add', description: 'Add', input_schema: { type: 'object', properties: {} } }]
 * ```
 */
export function toAnthropicTools(tools: ToolDescription[]): AnthropicTool[] {
  return tools.map((tool) => ({
    name: tool.name,
    ...(tool.description === '' ? {} : { description: tool.description }),
    input_schema: { type: 'object', ...tool.inputSchema },
  }));
}
