import { mediaPartProblem } from '../../model/media.js';
import type { UserContentPart } from '../../model/messages.js';
import type { UserContent } from '../../model/user-content.js';
import type { RequestProblem } from './problem-response.js';

/** A value read from a request, or what was wrong with it. */
export type Checked<T> = { ok: true; value: T } | { ok: false; problem: RequestProblem };

/**
 * An answer to a tool approval that a `useChat` request carries (`addToolApprovalResponse` left the
 * call's part `approval-responded`): `field` is where in the body it was.
 *
 * @example
 * ```ts
 * const answer: ApprovalAnswer = { toolCallId: 'c2', approved: false, reason: 'too expensive', field: 'messages[1].parts[3]' };
 * ```
 */
export type ApprovalAnswer = { toolCallId: string; approved: boolean; reason?: string; field: string };

/**
 * What a `useChat` request asks for, read from the default transport's body
 * (`{ id, messages, trigger, messageId }`): the conversation, the approval answers of its last
 * assistant message, and the new user message's content when the last message is one. Only the
 * end of `messages` is read: the history is the host's.
 *
 * @example
 * ```ts
 * const request: ChatRequest = { id: 'c-42', approvals: [], content: 'What is 2+3?' };
 * ```
 */
export type ChatRequest = {
  id: string;
  approvals: ApprovalAnswer[];
  /** The new user message, when the last message is one. */
  content?: UserContent;
  /** The id of the assistant message the answer continues, when the last message is one (answers to approvals). */
  continues?: string;
};

/** Conversation ids: letters, digits and `._:-`, up to 128, not `.` or `..` (the AI SDK puts the id in the resume URL's path). */
const idPattern = /^(?!\.{1,2}$)[A-Za-z0-9._:-]{1,128}$/;
/** What a chat id is, in the words of an error. */
export const chatIdExpected = 'a chat id of 1 to 128 letters, digits or . _ : - (not . or ..)';

/**
 * Whether `id` is a chat id the chat routes take (the AI SDK's default resume URL has it in its path).
 *
 * @example
 * ```ts
 * isChatId('c-42'); // true
 * isChatId('..');   // false
 * ```
 */
export const isChatId = (id: unknown): id is string => typeof id === 'string' && idPattern.test(id);

/**
 * The 400 problem naming `id` when it is not a chat id.
 *
 * @example
 * ```ts
 * const problem = chatIdProblem(params.id);
 * if (problem) return problemResponse(problem);
 * ```
 */
export function chatIdProblem(id: unknown): RequestProblem | undefined {
  if (isChatId(id)) return undefined;
  return { status: 400, detail: `id: expected ${chatIdExpected}, got ${describe(id)}`, field: 'id' };
}
const maxIdLength = 256;

const describe = (value: unknown): string => {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
};

/** An own field: a body's `__proto__` or `constructor` key is data, never the prototype's. */
const own = (record: Record<string, unknown>, key: string): unknown => (Object.hasOwn(record, key) ? record[key] : undefined);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

class Refusal {
  constructor(
    readonly field: string,
    readonly detail: string,
  ) {}
}

const refuse = (field: string, expected: string, got: unknown): never => {
  throw new Refusal(field, `${field}: expected ${expected}, got ${describe(got)}`);
};

function text(value: unknown, field: string, maxLength: number): string {
  if (typeof value !== 'string' || value === '' || value.length > maxLength)
    refuse(field, `a string of 1 to ${maxLength} characters`, value);
  return value as string;
}

/**
 * Reads a `useChat` request body (the default transport's, or one with the same fields): a 400
 * problem naming the field for anything else. Unknown top-level fields are left alone (a
 * transport's `body` option adds its own).
 *
 * @example
 * ```ts
 * const chat = parseChatRequest({ id: 'c-42', trigger: 'submit-message', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] }] });
 * if (chat.ok) await host.send(chat.value.id, { type: 'user.message', content: chat.value.content ?? '' });
 * ```
 */
export function parseChatRequest(body: unknown): Checked<ChatRequest> {
  try {
    return { ok: true, value: read(body) };
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, problem: { status: 400, detail: error.detail, field: error.field } };
    throw error;
  }
}

function read(body: unknown): ChatRequest {
  if (!isObject(body)) refuse('body', 'a JSON object { id, messages, trigger }', body);
  const record = body as Record<string, unknown>;
  const id = own(record, 'id');
  if (!isChatId(id)) refuse('id', chatIdExpected, id);
  const trigger = own(record, 'trigger');
  if (trigger === 'regenerate-message') {
    throw new Refusal('trigger', 'trigger: "regenerate-message" is not supported (a conversation keeps its answers): send a new message');
  }
  if (trigger !== undefined && trigger !== 'submit-message') refuse('trigger', '"submit-message"', trigger);
  const messages = own(record, 'messages');
  if (!Array.isArray(messages) || messages.length === 0) refuse('messages', 'a non-empty array of UI messages', messages);
  const list = messages as unknown[];
  const lastIndex = list.length - 1;
  const last = message(list[lastIndex], `messages[${lastIndex}]`);
  const messageId = own(record, 'messageId');
  if (messageId !== undefined && messageId !== last.id) {
    // useChat sends a messageId to edit an earlier user message, or to continue the last assistant one.
    refuse('messageId', `the id of the last message (${describe(last.id)}); editing an earlier message is not supported`, messageId);
  }
  if (last.role === 'assistant') {
    const approvals = approvalsOf(last.parts, `messages[${lastIndex}]`);
    if (approvals.length === 0) {
      throw new Refusal(
        `messages[${lastIndex}]`,
        `messages[${lastIndex}]: the last message is an assistant message without approval responses; expected a user message, or approval responses (addToolApprovalResponse)`,
      );
    }
    return { id: id as string, approvals, continues: text(last.id, `messages[${lastIndex}].id`, maxIdLength) };
  }
  // Answers given to the approvals of the answer before, then a message typed without sending them first.
  const before = lastIndex > 0 ? list[lastIndex - 1] : undefined;
  const approvals =
    isObject(before) && own(before, 'role') === 'assistant' && Array.isArray(own(before, 'parts'))
      ? approvalsOf(own(before, 'parts') as unknown[], `messages[${lastIndex - 1}]`)
      : [];
  return { id: id as string, approvals, content: userContent(last.parts, `messages[${lastIndex}]`) };
}

function message(value: unknown, field: string): { id: unknown; role: 'user' | 'assistant'; parts: unknown[] } {
  if (!isObject(value)) refuse(field, 'a UI message { id, role, parts }', value);
  const record = value as Record<string, unknown>;
  const role = own(record, 'role');
  if (role !== 'user' && role !== 'assistant') refuse(`${field}.role`, '"user" or "assistant"', role);
  const parts = own(record, 'parts');
  if (!Array.isArray(parts)) refuse(`${field}.parts`, 'an array of parts', parts);
  return { id: own(record, 'id'), role: role as 'user' | 'assistant', parts: parts as unknown[] };
}

/**
 * The user message's parts as the run takes them: its text, and each `file` part (what `useChat`
 * sends for attachments: a `data:` URL or an `https:` URL, with its media type) as an image part
 * when it is an image, else as a file part. One text part alone stays a string.
 */
function userContent(parts: unknown[], field: string): UserContent {
  const content: UserContentPart[] = [];
  for (const [index, part] of parts.entries()) {
    const where = `${field}.parts[${index}]`;
    if (!isObject(part)) refuse(where, 'a part { type, … }', part);
    const type = own(part as Record<string, unknown>, 'type');
    if (type === 'text') {
      const value = own(part as Record<string, unknown>, 'text');
      if (typeof value !== 'string') refuse(`${where}.text`, 'a string', value);
      content.push({ type: 'text', text: value as string });
    } else if (type === 'file') {
      content.push(filePart(part as Record<string, unknown>, where));
    } else if (type === 'step-start' || (typeof type === 'string' && type.startsWith('data-'))) {
      // Markers and the page's own data parts: nothing the model reads.
    } else {
      refuse(`${where}.type`, '"text" or "file" (a conversation takes text, images and files)', type);
    }
  }
  const texts = content.flatMap((part) => (part.type === 'text' ? [part.text] : []));
  if (texts.length === content.length) {
    if (texts.join('').trim() === '')
      refuse(`${field}.parts`, 'a text part with some text, or a file part', parts.length === 0 ? [] : texts.join(''));
    if (texts.length === 1) return texts[0] as string;
  }
  return content;
}

/** A UI `file` part as an image or file part of the run, checked as the run checks one (sizes are the run's). */
function filePart(part: Record<string, unknown>, where: string): UserContentPart {
  const mediaType = own(part, 'mediaType');
  const url = own(part, 'url');
  const filename = own(part, 'filename');
  if (typeof mediaType !== 'string') refuse(`${where}.mediaType`, 'a media type such as image/png or application/pdf', mediaType);
  if (typeof url !== 'string') refuse(`${where}.url`, 'a data: URL or an https: URL', url);
  const converted: UserContentPart = (mediaType as string).toLowerCase().startsWith('image/')
    ? { type: 'image', data: url as string, mediaType: mediaType as string }
    : {
        type: 'file',
        data: url as string,
        mediaType: mediaType as string,
        ...(typeof filename === 'string' && filename !== '' ? { filename } : {}),
      };
  const problem = mediaPartProblem(converted, where, Number.POSITIVE_INFINITY);
  if (problem) throw new Refusal(where, problem.replace(`${where}.data`, `${where}.url`));
  return converted;
}

function approvalsOf(parts: unknown[], field: string): ApprovalAnswer[] {
  const answers: ApprovalAnswer[] = [];
  for (const [index, part] of parts.entries()) {
    if (!isObject(part) || own(part, 'state') !== 'approval-responded') continue;
    const where = `${field}.parts[${index}]`;
    const toolCallId = text(own(part, 'toolCallId'), `${where}.toolCallId`, maxIdLength);
    const approval = own(part, 'approval');
    if (!isObject(approval)) refuse(`${where}.approval`, 'an object { id, approved, reason? }', approval);
    const approved = own(approval as Record<string, unknown>, 'approved');
    if (typeof approved !== 'boolean') refuse(`${where}.approval.approved`, 'true or false', approved);
    const reason = own(approval as Record<string, unknown>, 'reason');
    if (reason !== undefined && typeof reason !== 'string') refuse(`${where}.approval.reason`, 'a string', reason);
    answers.push({
      toolCallId,
      approved: approved as boolean,
      ...(typeof reason === 'string' && reason !== '' ? { reason } : {}),
      field: where,
    });
  }
  return answers;
}
