import type { ConversationHost } from '../../host/conversation-host.js';
import type { ConversationView } from '../../host/conversation-view.js';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { ConversationConflictError } from '../../host/errors/conversation-conflict-error.js';
import { ConversationNotFoundError } from '../../host/errors/conversation-not-found-error.js';
import { EventRejectedError } from '../../host/errors/event-rejected-error.js';
import { HostClosedError } from '../../host/errors/host-closed-error.js';
import type { ConversationUserEvent } from '../../machines/names/types.js';
import { option, resolveOptionsWith } from '../../util/option-schema.js';
import { type ChatRequest, chatIdExpected, chatIdProblem, isChatId, parseChatRequest } from './chat-request.js';
import { trailingAnswerIndex, uiMessageIdAt } from './message-ids.js';
import { HttpProblemError } from '../http-problem-error.js';
import { problemResponse as problemDetailsResponse } from '../problem.js';
import { type BodyLimits, readJsonBody } from '../read-json-body.js';
import { requestProblemResponse as problemResponse, type RequestProblem } from './problem-response.js';
import { fromHost } from './to-ui-message-stream.js';
import { toUIMessages } from './to-ui-messages.js';
import type { UIMessage } from './ui-message.js';
import type { UIMessageMapperOptions } from './ui-message-mapper.js';
import { toUIMessageStreamResponse } from './ui-message-stream-response.js';

/**
 * Who may talk to a conversation: `true` lets the request in; `false` answers 403, a throw 401,
 * both without a byte of the conversation.
 *
 * @example
 * ```ts
 * const authorize: ChatAuthorize = (request, conversationId) => request.headers.get('authorization') === `Bearer ${tokenOf(conversationId)}`;
 * ```
 */
export type ChatAuthorize = (request: Request, conversationId: string) => boolean | Promise<boolean>;

/**
 * Options of `handleChatRequest`.
 *
 * @example
 * ```ts
 * const options: ChatRequestOptions = { authorize: (request) => request.headers.get('x-user') !== null, maxBodyBytes: 256_000 };
 * ```
 */
export type ChatRequestOptions = Pick<UIMessageMapperOptions, 'errorText' | 'messageMetadata'> & {
  /** Required: there is no default that lets everyone in. The conversation id is the body's `id`. */
  authorize: ChatAuthorize;
  /** The largest body taken (default 1,000,000 bytes; `useChat` sends the whole chat each time unless told otherwise). */
  maxBodyBytes?: number;
  /** How long the body may pause, take in all, and how deep it may nest (defaults 10,000 ms, 30,000 ms, 64), as in `createConversationHandler`. */
  bodyLimits?: Partial<Omit<BodyLimits, 'maxBytes'>>;
  /** An SSE comment this often keeps an idle stream open (default 15,000 ms; `0`: none). */
  heartbeatMs?: number;
  /** Chunks a reader may leave unread before its stream ends telling it to resume (default 10,000). */
  maxBufferedChunks?: number;
  /**
   * The body, when the caller has read it already (a framework that parsed it, a handler that
   * checks every body the same way): the parsed JSON. Without it the handler reads `request`'s body
   * itself (content type, `maxBodyBytes`, UTF-8, JSON).
   */
  body?: { json: unknown };
  /**
   * The `sessionData` a new message's run gets (`host.send`'s option): per-user data the tools
   * read, taken from the request (a verified user id, say). Absent: the conversation keeps its own.
   */
  sessionData?: (request: Request, conversationId: string) => unknown;
};

/**
 * Options of `resumeChatStream`: the route authorizes first (the id is in its path).
 *
 * @example
 * ```ts
 * const options: ResumeChatOptions = { heartbeatMs: 10_000 };
 * ```
 */
export type ResumeChatOptions = Omit<ChatRequestOptions, 'authorize' | 'maxBodyBytes' | 'sessionData' | 'body'>;

const streamShape = {
  errorText: option.optional(option.callable<NonNullable<UIMessageMapperOptions['errorText']>>('a function (error) => string')),
  messageMetadata: option.optional(
    option.callable<NonNullable<UIMessageMapperOptions['messageMetadata']>>('a function (moment) => metadata'),
  ),
  heartbeatMs: option.withDefault(option.integer({ minimum: 0, maximum: 2_147_483_647 }), 15_000),
  maxBufferedChunks: option.withDefault(option.integer({ minimum: 1 }), 10_000),
};

const chatOptionsSchema = option.object(
  {
    ...streamShape,
    authorize: option.callable<ChatAuthorize>('a function (request, conversationId) => boolean | Promise<boolean>'),
    maxBodyBytes: option.withDefault(option.integer({ minimum: 1 }), 1_000_000),
    bodyLimits: option.withDefault(
      option.object(
        {
          idleTimeoutMs: option.withDefault(option.milliseconds(), 10_000),
          timeoutMs: option.withDefault(option.milliseconds(), 30_000),
          maxDepth: option.withDefault(option.integer({ minimum: 1, maximum: 1_000 }), 64),
        },
        { expected: 'an object { idleTimeoutMs?, timeoutMs?, maxDepth? }' },
      ),
      { idleTimeoutMs: 10_000, timeoutMs: 30_000, maxDepth: 64 },
    ),
    sessionData: option.optional(
      option.callable<NonNullable<ChatRequestOptions['sessionData']>>('a function (request, conversationId) => sessionData'),
    ),
    body: option.optional(option.object({ json: option.unchecked() }, { expected: 'an object { json } (the parsed body)' })),
  },
  {
    expected:
      'an object { authorize, maxBodyBytes?, bodyLimits?, body?, heartbeatMs?, maxBufferedChunks?, errorText?, messageMetadata?, sessionData? }',
  },
);

const resumeOptionsSchema = option.object(streamShape, {
  expected: 'an object { heartbeatMs?, maxBufferedChunks?, errorText?, messageMetadata? }',
});

/** What went wrong on the host's side, without its details: they may name more than the caller may see. */
function hostProblem(error: unknown): RequestProblem {
  if (EventRejectedError.isInstance(error)) return { status: 409, detail: error.message };
  if (ConversationConflictError.isInstance(error)) return { status: 409, detail: 'the conversation changed meanwhile: try again' };
  if (ConversationNotFoundError.isInstance(error)) return { status: 404, detail: 'no such conversation' };
  if (HostClosedError.isInstance(error)) return { status: 503, detail: 'the service is shutting down' };
  return { status: 500, detail: 'the conversation could not be read or written' };
}

/** The conversation, or the problem response when it cannot be read. */
async function viewOrProblem(host: ConversationHost, id: string): Promise<ConversationView | undefined | Response> {
  try {
    return await host.get(id);
  } catch (error) {
    return problemResponse(hostProblem(error));
  }
}

async function authorized(authorize: ChatAuthorize, request: Request, id: string): Promise<RequestProblem | undefined> {
  let allowed: boolean;
  try {
    allowed = (await authorize(request, id)) === true;
  } catch {
    return { status: 401, detail: 'not authenticated' };
  }
  return allowed ? undefined : { status: 403, detail: 'not allowed' };
}

/** The events a chat request leads to: answers to approvals that wait, then the new message. */
function eventsOf(chat: ChatRequest, view: ConversationView | undefined): ConversationUserEvent[] | RequestProblem {
  const waiting = new Set(view?.pendingApprovals.map((pending) => pending.toolCallId));
  const events: ConversationUserEvent[] = chat.approvals
    .filter((answer) => waiting.has(answer.toolCallId))
    .map(({ toolCallId, approved, reason }) =>
      approved ? { type: 'tool.approve', toolCallId } : { type: 'tool.deny', toolCallId, ...(reason === undefined ? {} : { reason }) },
    );
  if (chat.content !== undefined) events.push({ type: 'user.message', content: chat.content });
  else if (events.length === 0) {
    const field = chat.approvals[0]?.field.replace(/\.parts\[\d+\]$/, '');
    return { status: 409, detail: 'none of the approval responses answers a call that waits for one', ...(field ? { field } : {}) };
  }
  return events;
}

/**
 * `POST /chat`: takes the body `useChat`'s default transport sends, applies it to the conversation
 * named by its `id` — the new user message (`user.message`, which starts the conversation if it is
 * new), or the answers to approvals (`addToolApprovalResponse` → `tool.approve` / `tool.deny`) —
 * and answers with the UI message stream of what follows, until the run ends or waits for approval.
 * A bad body is a 400 (413, 415) `application/problem+json` naming the field; an event the run
 * cannot take now, a 409. See docs/ui-protocol.md.
 *
 * @example
 * ```ts
 * import { handleChatRequest, resumeChatStream } from 'actorloop/http';
 *
 * // Next.js: app/api/chat/route.ts
 * export const POST = (request: Request) => handleChatRequest(host, request, { authorize: (request) => isSignedIn(request) });
 * ```
 */
export async function handleChatRequest(host: ConversationHost, request: Request, options: ChatRequestOptions): Promise<Response> {
  const resolved = resolveOptionsWith(chatOptionsSchema, options, 'options');
  if (request.method !== 'POST') return problemResponse({ status: 405, detail: `expected POST, got ${request.method}` }, { allow: 'POST' });
  let json: unknown;
  if (resolved.body) json = resolved.body.json;
  else {
    try {
      json = (await readJsonBody(request, { maxBytes: resolved.maxBodyBytes, ...resolved.bodyLimits })) ?? {};
    } catch (error) {
      if (HttpProblemError.isInstance(error)) return problemDetailsResponse(error.problem, error.headers);
      throw error;
    }
  }
  const chat = parseChatRequest(json);
  if (!chat.ok) return problemResponse(chat.problem);
  const { id } = chat.value;
  const refused = await authorized(resolved.authorize, request, id);
  if (refused) return problemResponse(refused);

  const view = await viewOrProblem(host, id);
  if (view instanceof Response) return view;
  const events = eventsOf(chat.value, view);
  if (!Array.isArray(events)) return problemResponse(events);
  // A new message's answer goes after it; answers to approvals continue the message they answer.
  const messageId = chat.value.continues ?? uiMessageIdAt((view?.messages.length ?? 0) + 1);
  const answered = events.flatMap((event) => (event.type === 'tool.approve' || event.type === 'tool.deny' ? [event.toolCallId] : []));
  const control = fromHost(host, id, { ...streamOptions(resolved, { from: 'now', messageId }), answeredApprovals: answered });
  let now: ConversationView | undefined;
  for (const [index, event] of events.entries()) {
    try {
      const sessionData = event.type === 'user.message' && resolved.sessionData ? await resolved.sessionData(request, id) : undefined;
      now = await host.send(id, event, sessionData === undefined ? {} : { sessionData });
    } catch (error) {
      if (index === 0) {
        control.abandon();
        return problemResponse(hostProblem(error));
      }
      // What was applied before is in the stream; the rest is said in it.
      control.end({ errorText: hostProblem(error).detail });
      break;
    }
  }
  // Answers that left other calls waiting change no state: the message ends here.
  if (now?.status === 'awaitingApproval' && !control.sawState) control.end({ finishReason: 'tool-calls', status: 'awaitingApproval' });
  return toUIMessageStreamResponse(control.stream, { heartbeatMs: resolved.heartbeatMs });
}

/**
 * `GET /chat/:id/stream`: the answer of the run in progress, replayed from its first event and then
 * live (what `useChat({ resume: true })` asks for after a reload); 204 when no run is in progress
 * (also when it waits for approval: the page's history, `chatMessages`, shows those). Authorize the
 * request before calling it.
 *
 * @example
 * ```ts
 * // Next.js: app/api/chat/[id]/stream/route.ts
 * export async function GET(request: Request, { params }: { params: Promise<{ id: string }> }) {
 *   const { id } = await params;
 *   if (!(await isAllowed(request, id))) return new Response(null, { status: 403 });
 *   return resumeChatStream(host, id);
 * }
 * ```
 */
export async function resumeChatStream(host: ConversationHost, id: string, options: ResumeChatOptions = {}): Promise<Response> {
  const resolved = resolveOptionsWith(resumeOptionsSchema, options, 'options');
  const bad = chatIdProblem(id);
  if (bad) return problemResponse(bad);
  const view = await viewOrProblem(host, id);
  if (view instanceof Response) return view;
  if (view?.status !== 'running') return new Response(null, { status: 204, headers: { 'cache-control': 'no-store' } });
  const control = fromHost(
    host,
    id,
    streamOptions(resolved, { from: 'run', messageId: uiMessageIdAt(trailingAnswerIndex(view.messages)) }),
  );
  return toUIMessageStreamResponse(control.stream, { heartbeatMs: resolved.heartbeatMs });
}

/**
 * The conversation as `useChat` holds it (`toUIMessages` of its history, with the calls that wait
 * for approval), `[]` when there is none: a page's initial messages. Authorize before calling it.
 *
 * @example
 * ```ts
 * const initialMessages = await chatMessages(host, 'c-42');
 * ```
 */
export async function chatMessages(host: ConversationHost, id: string): Promise<UIMessage[]> {
  if (!isChatId(id)) throw new InvalidOptionsError('id', chatIdExpected, id);
  const view = await host.get(id);
  return view ? toUIMessages(view.messages, { pendingApprovals: view.pendingApprovals }) : [];
}

function streamOptions(
  resolved: {
    errorText?: UIMessageMapperOptions['errorText'];
    messageMetadata?: UIMessageMapperOptions['messageMetadata'];
    maxBufferedChunks: number;
  },
  where: { from: 'now' | 'run'; messageId: string },
) {
  return {
    ...where,
    endAtApproval: true,
    maxBufferedChunks: resolved.maxBufferedChunks,
    ...(resolved.errorText ? { errorText: resolved.errorText } : {}),
    ...(resolved.messageMetadata ? { messageMetadata: resolved.messageMetadata } : {}),
  };
}
