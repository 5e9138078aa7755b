import { isRecord } from '../util/is-record.js';
/**
 * The provider-neutral message model. Messages are plain JSON because they live in persisted
 * snapshots; every provider maps them to and from its own wire format.
 */

/**
 * Where a part came from on the OpenAI Responses API: the output item and the response that
 * produced it. Plain JSON that the other wires ignore; the Responses provider sends an item id
 * back only when the server stored the item (`store: true`), and uses `responseId` for
 * `previous_response_id`.
 *
 * @example
 * ```ts
 * const origin: OpenAIItemMetadata = { itemId: 'fc_0216a3dd…', responseId: 'resp_0216a3dd…' };
 * ```
 */
export type OpenAIItemMetadata = {
  /** The output item's id: `msg_…`, `rs_…` or `fc_…` (a tool call's neutral id is its `call_id`). */
  itemId?: string;
  /** The id of the response the item belongs to (`resp_…`). */
  responseId?: string;
};

/**
 * Whether an assistant message of the Responses API is commentary before a tool call or the
 * final answer (gpt-5.x models). Sent back with the message, as OpenAI asks.
 *
 * @example
 * ```ts
 * const phase: OpenAIMessagePhase = 'commentary';
 * ```
 */
export type OpenAIMessagePhase = 'commentary' | 'final_answer' | (string & {});

/**
 * What the Responses API said about an assistant text: its message item and its `phase`.
 *
 * @example
 * ```ts
 * const about: OpenAITextMetadata = { itemId: 'msg_0a10…', responseId: 'resp_0a10…', phase: 'final_answer' };
 * ```
 */
export type OpenAITextMetadata = OpenAIItemMetadata & { phase?: OpenAIMessagePhase };

/**
 * A Responses API reasoning item, kept so it can be sent back verbatim: `encryptedContent` is the
 * item's `encrypted_content` (the reasoning itself, which only OpenAI can read), `summary` its
 * summary parts when the part's `text` (the parts joined by a blank line) cannot give them back
 * exactly.
 *
 * @example
 * ```ts
 * const about: OpenAIReasoningMetadata = { itemId: 'rs_06d3…', responseId: 'resp_06d3…', encryptedContent: 'gAAAAABqhb9u…' };
 * ```
 */
export type OpenAIReasoningMetadata = OpenAIItemMetadata & {
  encryptedContent?: string;
  summary?: string[];
};

/**
 * A plain text part, used in user and assistant messages. `openai` is set on assistant text
 * that came from the OpenAI Responses API.
 *
 * @example
 * ```ts
 * const part: TextPart = { type: 'text', text: 'What is 2+3?' };
 * ```
 */
export type TextPart = { type: 'text'; text: string; openai?: OpenAITextMetadata };

/**
 * Model reasoning. `signature` is Anthropic's thinking signature: it must be sent back
 * byte-for-byte, so it is stored verbatim and never rewritten. `openai` holds an OpenAI Responses
 * reasoning item (its encrypted content), sent back verbatim to that API only; `text` is then the
 * reasoning summary.
 *
 * @example
 * ```ts
 * const thinking: ReasoningPart = { type: 'reasoning', text: 'The user wants a sum.', signature: 'EqQBCkgIARAB…' };
 * ```
 */
export type ReasoningPart = { type: 'reasoning'; text: string; signature?: string; openai?: OpenAIReasoningMetadata };

/**
 * Anthropic `redacted_thinking`: opaque data that must be sent back unchanged.
 *
 * @example
 * ```ts
 * const redacted: RedactedReasoningPart = { type: 'redacted-reasoning', data: 'EmwKAhgBEgy3va…' };
 * ```
 */
export type RedactedReasoningPart = { type: 'redacted-reasoning'; data: string };

/**
 * A tool call the model made. `args` is the parsed JSON arguments; when the model produced
 * arguments that are not valid JSON, `args` holds the raw text so nothing the model said is lost.
 * On the OpenAI Responses API `toolCallId` is the call's `call_id`, and `openai.itemId` its `fc_…` item.
 *
 * @example
 * ```ts
 * const call: ToolCallPart = { type: 'tool-call', toolCallId: 'c1', toolName: 'add', args: { a: 2, b: 3 } };
 * ```
 */
export type ToolCallPart = { type: 'tool-call'; toolCallId: string; toolName: string; args: unknown; openai?: OpenAIItemMetadata };

/**
 * The result of one tool call, as fed back to the model. `result` may be any JSON value; the
 * providers send a string as it is and anything else as JSON.
 *
 * @example
 * ```ts
 * const failed: ToolResultPart = { type: 'tool-result', toolCallId: 'c1', toolName: 'add', result: 'Error: overflow', isError: true };
 * ```
 */
export type ToolResultPart = {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  result: unknown;
  isError?: boolean;
};

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
 * A user message: plain text, or text parts.
 *
 * @example
 * ```ts
 * const question: UserMessage = { role: 'user', content: 'What is 2+3?' };
 * ```
 */
export type UserMessage = { role: 'user'; content: string | TextPart[] };
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
      return findPartsProblem(content, ['text'], 'user');
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
      case 'tool-call':
      case 'tool-result':
        if (typeof part.toolCallId !== 'string' || part.toolCallId === '') return `${where}.toolCallId must be a non-empty string`;
        if (typeof part.toolName !== 'string' || part.toolName === '') return `${where}.toolName must be a non-empty string`;
        break;
    }
    if (part.openai !== undefined) {
      const problem = findOpenAIMetadataProblem(part.openai, part.type);
      if (problem) return `${where}.openai${problem}`;
    }
  }
  return undefined;
}

const openaiStringFields: Record<string, string[]> = {
  text: ['itemId', 'responseId', 'phase'],
  reasoning: ['itemId', 'responseId', 'encryptedContent'],
  'tool-call': ['itemId', 'responseId'],
};

/** The Responses API metadata of a part: an object of strings, and `summary` a list of strings. */
function findOpenAIMetadataProblem(metadata: unknown, type: string): string | undefined {
  const fields = openaiStringFields[type];
  if (fields === undefined) return ` is only allowed on text, reasoning and tool-call parts`;
  if (!isRecord(metadata)) return ` must be an object, got ${describe(metadata)}`;
  for (const field of fields) {
    if (metadata[field] !== undefined && typeof metadata[field] !== 'string')
      return `.${field} must be a string, got ${describe(metadata[field])}`;
  }
  if (type === 'reasoning' && metadata.summary !== undefined) {
    if (!Array.isArray(metadata.summary) || !metadata.summary.every((text) => typeof text === 'string')) {
      return `.summary must be an array of strings, got ${describe(metadata.summary)}`;
    }
  }
  return undefined;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value.length > 40 ? `"${value.slice(0, 40)}…"` : `"${value}"`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}
