/**
 * The HTTP API of the service, on node:http: conversations of a durable host over JSON, and their
 * events over Server-Sent Events.
 *
 *   POST /conversations                              { content, id?, sessionData? }   → 201 the conversation
 *   POST /conversations/:id/messages                 { content, sessionData? }        → 202 the conversation
 *   POST /conversations/:id/approvals/:toolCallId    { decision: "approve" | "deny", reason? } → 200
 *   POST /conversations/:id/cancel                   { reason? }                      → 200
 *   GET  /conversations/:id                          state and history
 *   GET  /conversations/:id/events                   Server-Sent Events: the current state, then every event and state change
 *   GET  /health                                     { status: "ok", streams }
 *
 * Errors are JSON, `{ error: { message, field?, code? } }`: 400 naming the field that is wrong, 404
 * for an unknown conversation or tool call, 409 when the conversation cannot take the event now.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ConversationConflictError,
  type ConversationHost,
  ConversationLoadError,
  ConversationNotFoundError,
  type ConversationView,
  EventRejectedError,
  HostClosedError,
  InvalidOptionsError,
} from 'actorloop';
import { streamConversation } from './event-stream.js';
import { HttpError } from './http-error.js';
import { checkId, oneOf, optionalText, pathSegment, readJsonObject, requiredText } from './request-body.js';

export type ConversationServiceOptions = {
  host: ConversationHost;
  /** Largest request body accepted. Default 1 MiB. */
  maxBodyBytes?: number;
  /** SSE heartbeat interval. Default 15 s. */
  heartbeatMs?: number;
  /** Unread SSE output after which a slow client is dropped. Default 1 MiB. */
  maxBufferedBytes?: number;
  /** Where unexpected errors go. Default `console.error`. */
  logError?: (error: unknown) => void;
};

export type ConversationService = {
  /** The request handler: `createServer(service.handle)`. */
  handle: (request: IncomingMessage, response: ServerResponse) => void;
  /** Event streams open now. */
  openStreams: () => number;
  /** Ends every event stream (their clients may reconnect elsewhere). */
  close: () => void;
};

type Route = { method: string; handler: (request: IncomingMessage, response: ServerResponse, params: string[]) => Promise<void> };

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
  response.end(JSON.stringify(body));
}

/** How an error is answered: its status, and what the body says besides the message. */
type ErrorAnswer = { status: number; details: { field?: string; code?: string } };
type ErrorMapping = (error: unknown) => ErrorAnswer | undefined;

/** A row of the table: the errors of one class, told apart by `isInstance` (which also knows those of another copy of actorloop). */
function byClass<E extends Error>(
  type: { readonly prototype: E; isInstance(error: unknown): error is NoInfer<E> },
  answer: (error: E) => ErrorAnswer,
): ErrorMapping {
  return (error) => (type.isInstance(error) ? answer(error) : undefined);
}

/**
 * The status of each error class; the first row that matches answers. Anything else is a 500 whose
 * body says only "internal error": its message and stack may carry internals, and go to `logError`.
 */
export const errorStatuses: readonly ErrorMapping[] = [
  byClass(HttpError, (error) => ({ status: error.status, details: error.details })),
  byClass(InvalidOptionsError, (error) => ({ status: 400, details: { field: error.option } })),
  byClass(ConversationNotFoundError, () => ({ status: 404, details: { code: 'not_found' } })),
  byClass(EventRejectedError, (error) => ({ status: 409, details: { code: error.code } })),
  byClass(ConversationConflictError, () => ({ status: 409, details: { code: 'conflict' } })),
  byClass(ConversationLoadError, (error) => ({ status: 500, details: { code: error.problem } })),
  byClass(HostClosedError, () => ({ status: 503, details: { code: 'closing' } })),
];

/** The status and body an error gets. */
export function errorResponse(error: unknown): { status: number; body: { error: { message: string; field?: string; code?: string } } } {
  for (const row of errorStatuses) {
    const answer = row(error);
    if (answer) return { status: answer.status, body: { error: { message: (error as Error).message, ...answer.details } } };
  }
  return { status: 500, body: { error: { message: 'internal error' } } };
}

/** `sessionData` as sent (any JSON), or absent. */
const sessionDataOf = (body: Record<string, unknown>) => ('sessionData' in body ? { sessionData: body.sessionData } : {});

/** Does any assistant message of the history ask for this tool call? */
const calledIn = (view: ConversationView, toolCallId: string) =>
  view.messages.some(
    (message) =>
      message.role === 'assistant' && message.content.some((part) => part.type === 'tool-call' && part.toolCallId === toolCallId),
  );

export function createConversationService(options: ConversationServiceOptions): ConversationService {
  const { host, maxBodyBytes = 1024 * 1024, heartbeatMs = 15_000, maxBufferedBytes = 1024 * 1024 } = options;
  const logError = options.logError ?? ((error: unknown) => console.error('http-service:', error));
  const streams = new Set<{ close: () => void }>();

  /** The conversation, or 404. */
  async function existing(id: string): Promise<ConversationView> {
    const view = await host.get(id);
    if (!view) throw new HttpError(404, `no conversation ${JSON.stringify(id)}`, { field: 'id' });
    return view;
  }

  const routes: Record<string, Route[]> = {
    conversations: [
      {
        method: 'POST',
        handler: async (request, response) => {
          const body = await readJsonObject(request, maxBodyBytes);
          const content = requiredText(body, 'content');
          const id = body.id === undefined ? crypto.randomUUID() : checkId(body.id, 'id');
          if (await host.get(id)) throw new HttpError(409, `a conversation ${JSON.stringify(id)} exists already`, { field: 'id' });
          const view = await host.send(id, { type: 'user.message', content }, sessionDataOf(body));
          sendJson(response, 201, view, { location: `/conversations/${encodeURIComponent(id)}` });
        },
      },
    ],
    conversation: [
      {
        method: 'GET',
        handler: async (_request, response, [id = '']) => sendJson(response, 200, await existing(id)),
      },
    ],
    messages: [
      {
        method: 'POST',
        handler: async (request, response, [id = '']) => {
          const body = await readJsonObject(request, maxBodyBytes);
          const content = requiredText(body, 'content');
          await existing(id);
          sendJson(response, 202, await host.send(id, { type: 'user.message', content }, sessionDataOf(body)));
        },
      },
    ],
    approvals: [
      {
        method: 'POST',
        handler: async (request, response, [id = '', toolCallId = '']) => {
          const body = await readJsonObject(request, maxBodyBytes);
          const decision = oneOf(body, 'decision', ['approve', 'deny'] as const);
          const reason = optionalText(body, 'reason');
          const view = await existing(id);
          if (!view.pendingApprovals.some((pending) => pending.toolCallId === toolCallId)) {
            if (!calledIn(view, toolCallId)) {
              throw new HttpError(404, `conversation ${JSON.stringify(id)} has no tool call ${JSON.stringify(toolCallId)}`, {
                field: 'toolCallId',
              });
            }
            throw new HttpError(409, `tool call ${JSON.stringify(toolCallId)} is not waiting for approval (status: ${view.status})`, {
              field: 'toolCallId',
              code: 'not_waiting',
            });
          }
          const event =
            decision === 'approve'
              ? ({ type: 'tool.approve', toolCallId } as const)
              : ({ type: 'tool.deny', toolCallId, ...(reason === undefined ? {} : { reason }) } as const);
          sendJson(response, 200, await host.send(id, event));
        },
      },
    ],
    cancel: [
      {
        method: 'POST',
        handler: async (request, response, [id = '']) => {
          const reason = optionalText(await readJsonObject(request, maxBodyBytes), 'reason');
          await existing(id);
          sendJson(response, 200, await host.send(id, { type: 'cancel', ...(reason === undefined ? {} : { reason }) }));
        },
      },
    ],
    events: [
      {
        method: 'GET',
        handler: async (request, response, [id = '']) => {
          await existing(id);
          const stream = streamConversation(host, id, request, response, {
            heartbeatMs,
            maxBufferedBytes,
            onEnd: () => streams.delete(stream),
          });
          streams.add(stream);
        },
      },
    ],
    health: [{ method: 'GET', handler: async (_request, response) => sendJson(response, 200, { status: 'ok', streams: streams.size }) }],
  };

  /** The route a path names, with its checked parameters. */
  function match(path: string): { name: keyof typeof routes; params: string[] } | undefined {
    const segments = path.split('/').slice(1);
    if (segments.at(-1) === '') segments.pop();
    const [root, rawId, action, rawCallId, ...rest] = segments;
    if (root === 'health' && segments.length === 1) return { name: 'health', params: [] };
    if (root !== 'conversations' || rest.length > 0) return undefined;
    if (rawId === undefined) return { name: 'conversations', params: [] };
    const id = checkId(pathSegment(rawId, 'id'), 'id');
    if (action === undefined) return { name: 'conversation', params: [id] };
    if (action === 'approvals' && rawCallId !== undefined) {
      return { name: 'approvals', params: [id, checkId(pathSegment(rawCallId, 'toolCallId'), 'toolCallId')] };
    }
    if (rawCallId !== undefined) return undefined;
    if (action === 'messages' || action === 'events' || action === 'cancel') return { name: action, params: [id] };
    return undefined;
  }

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { pathname } = new URL(request.url ?? '/', 'http://service');
    const found = match(pathname);
    if (!found) throw new HttpError(404, `nothing at ${request.method} ${pathname}`, { code: 'no_route' });
    const candidates = routes[found.name] ?? [];
    const chosen = candidates.find((candidate) => candidate.method === request.method);
    if (!chosen) {
      const allowed = candidates.map((candidate) => candidate.method).join(', ');
      throw Object.assign(new HttpError(405, `${pathname} takes ${allowed}`, { code: 'method_not_allowed' }), { allow: allowed });
    }
    await chosen.handler(request, response, found.params);
  }

  return {
    handle(request, response) {
      route(request, response).catch((error: unknown) => {
        const { status, body } = errorResponse(error);
        if (status >= 500 && status !== 503) logError(error);
        if (response.headersSent) return void response.destroy();
        const allow = (error as { allow?: string }).allow;
        // The rest of a body that was too large is not read: the connection closes after the answer.
        sendJson(response, status, body, { ...(allow ? { allow } : {}), ...(status === 413 ? { connection: 'close' } : {}) });
      });
    },
    openStreams: () => streams.size,
    close() {
      for (const stream of [...streams]) stream.close();
    },
  };
}
