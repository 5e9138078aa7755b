import { findJsonProblem } from '../util/json-problem.js';
import { isRecord } from '../util/is-record.js';
import type { JsonValue } from './json.js';
import { type FilePart, type ImagePart, mediaLabel, mediaPartProblem } from './media.js';

export type { FilePart, ImagePart, MediaData } from './media.js';
/**
 * The provider-neutral message model. Messages are plain JSON because they live in persisted
 * snapshots; every provider maps them to and from its own wire format.
 */

/**
 * What a wire must get back on a later request and the neutral fields cannot say — an item id, an
 * encrypted reasoning blob — keyed by the name of the wire that wrote it (`openai`). Plain JSON,
 * so it lives in snapshots; every wire ignores the keys of the others and hands its own back
 * unchanged.
 *
 * @example
 * ```ts
 * const kept: ProviderMetadata = { openai: { itemId: 'rs_06d3…', encryptedContent: 'gAAAAABqhb9u…' } };
 * ```
 */
export type ProviderMetadata = Record<string, JsonValue>;

/**
 * A plain text part, used in user and assistant messages. `providerMetadata.openai` is set on
 * assistant text that came from the OpenAI Responses API (its item and `phase`).
 *
 * @example
 * ```ts
 * const part: TextPart = { type: 'text', text: 'What is 2+3?' };
 * ```
 */
export type TextPart = { type: 'text'; text: string; providerMetadata?: ProviderMetadata };

/**
 * Model reasoning. `signature` is Anthropic's thinking signature: it must be sent back
 * byte-for-byte, so it is stored verbatim and never rewritten. `providerMetadata.openai` holds an
 * OpenAI Responses reasoning item (its encrypted content), sent back verbatim to that API only;
 * `text` is then the reasoning summary.
 *
 * @example
 * ```ts
 * const thinking: ReasoningPart = { type: 'reasoning', text: 'The user wants a sum.', signature: 'EqQBCkgIARAB…' };
 * ```
 */
export type ReasoningPart = { type: 'reasoning'; text: string; signature?: string; providerMetadata?: ProviderMetadata };

/**
 * Anthropic `redacted_thinking`: opaque data that must be sent back unchanged.
 *
 * @example
 * ```ts
 * const redacted: RedactedReasoningPart = { type: 'redacted-reasoning', data: 'EmwKAhgBEgy3va…' };
 * ```
 */
export type RedactedReasoningPart = { type: 'redacted-reasoning'; data: string; providerMetadata?: ProviderMetadata };

/**
 * A tool call the model made. `args` is the parsed JSON arguments; when the model produced
 * arguments that are not valid JSON, `args` holds the raw text so nothing the model said is lost.
 * On the OpenAI Responses API `toolCallId` is the call's `call_id`, and `providerMetadata.openai.itemId`
 * its `fc_…` item.
 *
 * @example
 * ```ts
 * const call: ToolCallPart = { type: 'tool-call', toolCallId: 'c1', toolName: 'add', args: { a: 2, b: 3 } };
 * ```
 */
export type ToolCallPart = {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  args: unknown;
  providerMetadata?: ProviderMetadata;
};

/**
 * The result of one tool call, as fed back to the model. `result` may be any JSON value; the
 * providers send a string as it is and anything else as JSON. A tool that returned
 * `toolContent([...])` also has `content`, its text, image and file parts in order, which the
 * wires send in place of `result` (a text version of them, media named by a label such as
 * `[image image/png, 68 KB]`, for readers of text).
 *
 * @example
 * ```ts
 * const failed: ToolResultPart = { type: 'tool-result', toolCallId: 'c1', toolName: 'add', result: 'Error: overflow', isError: true };
 * const shot: ToolResultPart = {
 *   type: 'tool-result', toolCallId: 'c2', toolName: 'screenshot', result: '[image image/png, 68 B]',
 *   content: [{ type: 'image', data: pngBase64, mediaType: 'image/png' }],
 * };
 * ```
 */
export type ToolResultPart = {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  result: unknown;
  isError?: boolean;
  content?: ToolResultContentPart[];
};

/**
 * One part of a tool result given as content: text, an image or a file, as in a user message.
 *
 * @example
 * ```ts
 * const parts: ToolResultContentPart[] = [{ type: 'text', text: 'The page now:' }, { type: 'image', data: pngBase64, mediaType: 'image/png' }];
 * ```
 */
export type ToolResultContentPart = TextPart | ImagePart | FilePart;

/**
 * One part of an assistant message, kept in the order the model produced it: Anthropic requires
 * thinking blocks back in place.
 *
 * @example
 * ```ts
 * const parts: AssistantContentPart[] = [{ type: 'reasoning', text: 'Need a sum.' }, { type: 'text', text: '5' }];
 * ```
 */
export type AssistantContentPart = TextPart | ReasoningPart | RedactedReasoningPart | ToolCallPart;

/**
 * A system message inside the history, e.g. an instruction added mid-conversation; it comes after
 * the machine's `system` option.
 *
 * @example
 * ```ts
 * const rule: SystemMessage = { role: 'system', content: 'Answer in French from now on.' };
 * ```
 */
export type SystemMessage = { role: 'system'; content: string };
/**
 * One part of a user message: text, an image or a file (a PDF, plain text, audio).
 *
 * @example
 * ```ts
 * const parts: UserContentPart[] = [{ type: 'text', text: 'What is in this chart?' }, { type: 'image', data: chartPngBase64, mediaType: 'image/png' }];
 * ```
 */
export type UserContentPart = TextPart | ImagePart | FilePart;

/**
 * A user message: plain text, or parts — text, images and files.
 *
 * @example
 * ```ts
 * const question: UserMessage = { role: 'user', content: 'What is 2+3?' };
 * const withPhoto: UserMessage = { role: 'user', content: [{ type: 'text', text: 'Which bird?' }, { type: 'image', data: 'https://example.com/bird.jpg' }] };
 * ```
 */
export type UserMessage = { role: 'user'; content: string | UserContentPart[] };
/**
 * One model response: text, reasoning and tool calls in the order they came.
 *
 * @example
 * ```ts
 * const answer: AssistantMessage = { role: 'assistant', content: [{ type: 'text', text: '5' }] };
 * ```
 */
export type AssistantMessage = { role: 'assistant'; content: AssistantContentPart[] };
/**
 * The results of one tool round, in call order: every tool call of the preceding assistant
 * message gets exactly one result, which the provider wires require.
 *
 * @example
 * ```ts
 * const results: ToolMessage = { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'add', result: '5' }] };
 * ```
 */
export type ToolMessage = { role: 'tool'; content: ToolResultPart[] };

/**
 * One message of a conversation history.
 *
 * @example
 * ```ts
 * const history: Message[] = [
 *   { role: 'user', content: 'What is 2+3?' },
 *   { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'add', args: { a: 2, b: 3 } }] },
 *   { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'add', result: '5' }] },
 *   { role: 'assistant', content: [{ type: 'text', text: '5' }] },
 * ];
 * ```
 */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** The text of a user or assistant message's text parts, joined. */
export function textOf(message: Message): string {
  if (typeof message.content === 'string') return message.content;
  let text = '';
  for (const part of message.content) if (part.type === 'text') text += part.text;
  return text;
}

/**
 * A user message's content as one line of text for people and summaries: its text, and each image
 * or file as a label in brackets (its bytes are never part of it).
 *
 * @example
 * ```ts
 * userContentText([{ type: 'text', text: 'Which bird?' }, { type: 'image', data: 'https://example.com/b.jpg' }]); // 'Which bird? [image]'
 * ```
 */
export function userContentText(content: string | readonly UserContentPart[]): string {
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : ` ${mediaLabel(part)}`)).join('');
}

/**
 * Checks a history handed to a run. Returns a message naming the first problem (index, field and
 * what was expected), or `undefined` when the history is well formed.
 */
export function findMessagesProblem(messages: unknown): string | undefined {
  if (!Array.isArray(messages)) return `input.messages must be an array of messages, got ${describe(messages)}`;
  for (let index = 0; index < messages.length; index++) {
    const problem = findMessageProblem(messages[index]);
    if (problem) return `input.messages[${index}]: ${problem}`;
  }
  return undefined;
}

function findMessageProblem(message: unknown): string | undefined {
  if (!isRecord(message)) return `expected a message object, got ${describe(message)}`;
  const { role, content } = message;
  switch (role) {
    case 'system':
      return typeof content === 'string' ? undefined : `system content must be a string, got ${describe(content)}`;
    case 'user':
      if (typeof content === 'string') return undefined;
      return findPartsProblem(content, ['text', 'image', 'file'], 'user');
    case 'assistant':
      return findPartsProblem(content, ['text', 'reasoning', 'redacted-reasoning', 'tool-call'], 'assistant');
    case 'tool':
      return findPartsProblem(content, ['tool-result'], 'tool');
    default:
      return `role must be one of system, user, assistant, tool; got ${describe(role)}`;
  }
}

function findPartsProblem(content: unknown, allowed: string[], role: string): string | undefined {
  if (!Array.isArray(content)) return `${role} content must be an array of parts, got ${describe(content)}`;
  for (let index = 0; index < content.length; index++) {
    const part: unknown = content[index];
    const where = `content[${index}]`;
    if (!isRecord(part) || typeof part.type !== 'string' || !allowed.includes(part.type)) {
      return `${where} must be a part of type ${allowed.join(' | ')}, got ${describe(part)}`;
    }
    switch (part.type) {
      case 'text':
      case 'reasoning':
        if (typeof part.text !== 'string') return `${where}.text must be a string`;
        if (part.signature !== undefined && typeof part.signature !== 'string') return `${where}.signature must be a string`;
        break;
      case 'redacted-reasoning':
        if (typeof part.data !== 'string') return `${where}.data must be a string`;
        break;
      case 'image':
      case 'file': {
        const problem = mediaPartProblem(part as { type: 'image' | 'file' }, where);
        if (problem) return problem;
        break;
      }
      case 'tool-call':
      case 'tool-result':
        if (typeof part.toolCallId !== 'string' || part.toolCallId === '') return `${where}.toolCallId must be a non-empty string`;
        if (typeof part.toolName !== 'string' || part.toolName === '') return `${where}.toolName must be a non-empty string`;
        if (part.type === 'tool-result' && part.content !== undefined) {
          if (!Array.isArray(part.content))
            return `${where}.content must be an array of text, image and file parts, got ${describe(part.content)}`;
          // The parts' own problems name `content[i]`, relative to this result.
          const problem = findPartsProblem(part.content, ['text', 'image', 'file'], 'tool result');
          if (problem) return `${where}.${problem}`;
        }
        break;
    }
    if (part.providerMetadata !== undefined) {
      const problem = findProviderMetadataProblem(part.providerMetadata, `${where}.providerMetadata`);
      if (problem) return problem;
    }
  }
  return undefined;
}

/**
 * `providerMetadata` is an object of plain JSON; what each wire keeps under its key is the wire's
 * to check when it reads it back.
 */
function findProviderMetadataProblem(metadata: unknown, where: string): string | undefined {
  if (!isRecord(metadata)) return `${where} must be an object keyed by provider, got ${describe(metadata)}`;
  return findJsonProblem(metadata, where);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value.length > 40 ? `"${value.slice(0, 40)}…"` : `"${value}"`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}
