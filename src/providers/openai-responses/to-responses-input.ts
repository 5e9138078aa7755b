import { serializeResult } from '../../util/serialize-result.js';
import type { AssistantMessage, Message, ReasoningPart, TextPart, ToolCallPart, UserContentPart } from '../../model/messages.js';
import { wireMedia } from '../media-support.js';
import { argumentsText } from '../openai-wire/to-openai-messages.js';
import type { ToolDescription } from '../../model/provider.js';
import { ProviderError } from '../../model/errors/provider-error.js';
import { readOpenAIMetadata } from './openai-metadata.js';
import type { OpenAIResponsesFunctionTool, OpenAIResponsesInputItem, OpenAIResponsesUserPart } from './wire-types.js';

/**
 * How {@link toResponsesInput} may refer to what the server holds.
 *
 * @example
 * ```ts
 * const options: ResponsesInputOptions = { stored: true, chain: true };
 * ```
 */
export type ResponsesInputOptions = {
  /**
   * The server stores responses (`store: true`), so an item may be sent back by its id. Without
   * it (the stateless default) no id is ever sent, and reasoning goes back only as encrypted content.
   */
  stored: boolean;
  /**
   * Continue from the last stored response of the history (`previous_response_id`) and send only
   * the messages after it. Needs `stored`.
   */
  chain?: boolean;
};

/**
 * What a Responses request carries of the history.
 *
 * @example
 * ```ts
 * const { input, previousResponseId }: ResponsesInput = toResponsesInput(history, { stored: true, chain: true });
 * ```
 */
export type ResponsesInput = { input: OpenAIResponsesInputItem[]; previousResponseId?: string };

/**
 * Converted messages by identity, one cache per way of referring to stored items. History messages
 * are immutable values (the machine only appends), so each is converted once per process and the
 * cost of a request stays flat as the conversation grows. Treat the returned items as read-only.
 */
const convertedStateless = new WeakMap<Message, OpenAIResponsesInputItem[]>();
const convertedStored = new WeakMap<Message, OpenAIResponsesInputItem[]>();

/**
 * What this wire kept on a part. A field of the wrong type (a hand-edited history) fails the
 * request as a bad request naming the message, the part and the field, rather than sending the
 * API something it refuses or silently dropping reasoning.
 */
function openaiOf(part: TextPart | ReasoningPart | ToolCallPart, where: string) {
  const read = readOpenAIMetadata(part);
  if (read.problem !== undefined) {
    throw new ProviderError(`${where}.${read.problem}`, { code: 'bad_request', retryable: false });
  }
  return read.metadata;
}

/** The summary parts of a reasoning item: kept ones when `text` cannot give them back, else `text`. */
function summaryOf(part: ReasoningPart, summary: string[] | undefined): Array<{ type: 'summary_text'; text: string }> {
  const texts = summary ?? (part.text === '' ? [] : [part.text]);
  return texts.map((text) => ({ type: 'summary_text', text }));
}

/**
 * A reasoning part as an input item, or nothing when this request cannot carry it: encrypted
 * content goes back as it came (without an id, which would make the server look for a stored
 * item); a stored item without it goes back by id only when its follower can go by id too (the
 * API refuses a reasoning item whose following item is missing); reasoning from other wires has
 * neither and is left out.
 */
function reasoningItem(
  part: ReasoningPart,
  where: string,
  stored: boolean,
  followerId: string | undefined,
): OpenAIResponsesInputItem | undefined {
  const metadata = openaiOf(part, where);
  if (metadata?.encryptedContent !== undefined) {
    return { type: 'reasoning', summary: summaryOf(part, metadata.summary), encrypted_content: metadata.encryptedContent };
  }
  if (stored && metadata?.itemId !== undefined && followerId !== undefined) {
    return { type: 'reasoning', id: metadata.itemId, summary: summaryOf(part, metadata.summary) };
  }
  return undefined;
}

function textItem(part: TextPart, where: string, byId: boolean): OpenAIResponsesInputItem {
  const metadata = openaiOf(part, where);
  const phase = metadata?.phase;
  const id = metadata?.itemId;
  if (byId && id !== undefined) {
    return {
      type: 'message',
      id,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: part.text, annotations: [] }],
      ...(phase === undefined ? {} : { phase }),
    };
  }
  return { role: 'assistant', content: part.text, ...(phase === undefined ? {} : { phase }) };
}

function functionCallItem(part: ToolCallPart, where: string, byId: boolean): OpenAIResponsesInputItem {
  const id = openaiOf(part, where)?.itemId;
  return {
    type: 'function_call',
    ...(byId && id !== undefined ? { id } : {}),
    call_id: part.toolCallId,
    name: part.toolName,
    arguments: argumentsText(part.args),
  };
}

/**
 * An assistant message as output items, in order. Each reasoning item goes right before the item
 * that followed it (a text or a tool call of the same message); reasoning that nothing followed —
 * a response cut off after its reasoning — is left out, as the API refuses it.
 */
function assistantItems(message: AssistantMessage, where: string, stored: boolean): OpenAIResponsesInputItem[] {
  const items: OpenAIResponsesInputItem[] = [];
  let pending: Array<{ part: ReasoningPart; where: string }> = [];
  for (const [index, part] of message.content.entries()) {
    const partWhere = `${where}.content[${index}]`;
    if (part.type === 'reasoning') {
      pending.push({ part, where: partWhere });
      continue;
    }
    // Anthropic's redacted thinking and empty texts have no Responses form.
    if (part.type === 'redacted-reasoning' || (part.type === 'text' && part.text === '')) continue;
    const followerId = stored ? openaiOf(part, partWhere)?.itemId : undefined;
    let byId = false;
    for (const reasoning of pending) {
      const item = reasoningItem(reasoning.part, reasoning.where, stored, followerId);
      if (item === undefined) continue;
      if ('id' in item && item.id !== undefined) byId = true;
      items.push(item);
    }
    pending = [];
    items.push(part.type === 'text' ? textItem(part, partWhere, byId) : functionCallItem(part, partWhere, byId));
  }
  return items;
}

/** A user part as the Responses API takes it (the table in ../media-support.ts): images and PDFs inline or by URL. */
function userPart(part: UserContentPart, where: string): OpenAIResponsesUserPart {
  if (part.type === 'text') return { type: 'input_text', text: part.text };
  const { source, rule, url } = wireMedia('responses', part, where);
  if (rule.as === 'input_image') return { type: 'input_image', image_url: url, detail: 'auto' };
  if (source.kind === 'url') return { type: 'input_file', file_url: url };
  return { type: 'input_file', file_data: url, filename: (part.type === 'file' ? part.filename : undefined) ?? 'file.pdf' };
}

function convert(message: Message, where: string, stored: boolean): OpenAIResponsesInputItem[] {
  switch (message.role) {
    case 'system':
      return [{ role: 'system', content: message.content }];
    case 'user':
      return [
        {
          role: 'user',
          content:
            typeof message.content === 'string'
              ? message.content
              : message.content.map((part, index) => userPart(part, `${where}.content[${index}]`)),
        },
      ];
    case 'assistant':
      return assistantItems(message, where, stored);
    case 'tool':
      return message.content.map((part, index) => ({
        type: 'function_call_output',
        call_id: part.toolCallId,
        output:
          part.content === undefined
            ? serializeResult(part.result)
            : part.content.map((inner, innerIndex) => userPart(inner, `${where}.content[${index}].content[${innerIndex}]`)),
      }));
  }
}

/** The response id the history's assistant message at `index` came from, if the server stored it. */
function responseIdAt(messages: Message[], index: number): string | undefined {
  const message = messages[index];
  if (message?.role !== 'assistant') return undefined;
  for (let part = message.content.length - 1; part >= 0; part--) {
    const content = message.content[part];
    if (content === undefined || content.type === 'redacted-reasoning') continue;
    const responseId = openaiOf(content, `messages[${index}].content[${part}]`)?.responseId;
    if (responseId !== undefined) return responseId;
  }
  return undefined;
}

/**
 * Converts the provider-neutral history to Responses `input` items (the system prompt goes in
 * `instructions`, so it is not among them).
 *
 * - User and system messages become messages; a tool message becomes one `function_call_output`
 *   per result (`call_id` = the neutral `toolCallId`; a `toolContent` result's parts as its
 *   `output` items, images and PDFs as in a user message); an assistant message becomes its texts
 *   (with their `phase`) and `function_call`s in order.
 * - Reasoning from this API goes back verbatim, right before the item that followed it: as its
 *   `encrypted_content`, or, when the server stored it, by id. Reasoning from other wires
 *   (Anthropic thinking, `reasoning_content`) and redacted thinking are dropped: this API cannot take them.
 * - With `chain`, the history up to the last stored response is replaced by `previousResponseId`.
 *
 * @example
 * ```ts
 * const { input } = toResponsesInput([{ role: 'user', content: 'What is 2+3?' }], { stored: false });
 * // input => [{ role: 'user', content: 'What is 2+3?' }]
 * ```
 */
export function toResponsesInput(messages: Message[], options: ResponsesInputOptions): ResponsesInput {
  let from = 0;
  let previousResponseId: string | undefined;
  if (options.chain && options.stored) {
    for (let index = messages.length - 1; index >= 0 && previousResponseId === undefined; index--) {
      previousResponseId = responseIdAt(messages, index);
      from = index + 1;
    }
    if (previousResponseId === undefined) from = 0;
  }
  const cache = options.stored ? convertedStored : convertedStateless;
  const input: OpenAIResponsesInputItem[] = [];
  for (let index = from; index < messages.length; index++) {
    const message = messages[index] as Message;
    let items = cache.get(message);
    if (items === undefined) {
      items = convert(message, `messages[${index}]`, options.stored);
      cache.set(message, items);
    }
    input.push(...items);
  }
  return previousResponseId === undefined ? { input } : { input, previousResponseId };
}

/**
 * Function tools in the Responses format. `strict` is always sent: the Responses API makes an
 * omitted `strict` mean strict mode (unlike Chat Completions), which turns every optional
 * parameter into a required one; without `strict: true` tools behave as on Chat Completions.
 *
 * @example
 * ```ts
 * toResponsesTools([{ name: 'add', description: 'Add', inputSchema: { type: 'object', properties: {} } }]);
 * // [{ type: 'function', name: 'add', description: 'Add', parameters: { type: 'object', properties: {} }, strict: false }]
 * ```
 */
export function toResponsesTools(tools: ToolDescription[], strict?: boolean): OpenAIResponsesFunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.inputSchema,
    strict: strict ?? false,
  }));
}
