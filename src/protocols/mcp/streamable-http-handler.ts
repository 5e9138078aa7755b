import { randomUUID } from 'node:crypto';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { type SessionEventStore, sessionEventStore } from './event-store.js';
import { loadWebStandardModule } from './load-server-sdk.js';
import { conversationIdOf } from './conversation-id.js';
import { readRpcBody, rpcErrorResponse } from './read-rpc-body.js';
import { createSession, type McpSession, type ServedTarget } from './session-server.js';

/** The Streamable HTTP side of `serveMcp`: the Fetch API handler and how to close its sessions. */
export type StreamableHttpHandler = {
  handle(request: Request): Promise<Response>;
  /** Closes every session (their calls in progress are cancelled) and refuses new ones. */
  close(): Promise<void>;
};

type HttpSession = {
  session: McpSession;
  transport: WebStandardStreamableHTTPServerTransport;
  /** When a request of the session last came (epoch ms). */
  lastActive: number;
  /** What its SSE streams sent, for clients that reconnect (none when `resumability` is false). */
  events?: SessionEventStore;
};

/**
 * MCP's Streamable HTTP over the SDK's Fetch API transport, one transport and SDK server per session
 * (an `initialize` without a session id opens one; its id, `Mcp-Session-Id`, routes the rest). What
 * the transport would mishandle or should never see is answered here, as JSON-RPC errors: a path
 * other than `path` (404), an `Origin` not in `allowedOrigins` (403), a request `authorize` refuses (401), a body past `maxBodyBytes` (413) or
 * not JSON (400, -32700), an unknown session (404, so the client initializes again), a request
 * without a session that is not `initialize` (400), more sessions than `maxSessions` (503).
 *
 * @example
 * ```ts
 * const http = streamableHttpHandler(target);
 * const response = await http.handle(request);
 * ```
 */
export function streamableHttpHandler(target: ServedTarget): StreamableHttpHandler {
  const { options } = target;
  const path = options.path ?? '/mcp';
  const maxBodyBytes = options.maxBodyBytes ?? 1_000_000;
  const maxSessions = options.maxSessions ?? 1_000;
  const onError = options.onError ?? ((error: unknown) => console.error('actorloop/mcp:', error));
  const allowedOrigins = new Set(options.allowedOrigins ?? []);
  const sessions = new Map<string, HttpSession>();
  /** Sessions being opened (their `initialize` in progress): counted against `maxSessions` too. */
  let opening = 0;
  let closed = false;
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  let sweeper: ReturnType<typeof setInterval> | undefined;

  function end(sessionId: string, entry: HttpSession): Promise<void> {
    sessions.delete(sessionId);
    return entry.session.close().then(() => entry.transport.close().catch(() => undefined));
  }

  /**
   * Clients that leave without `DELETE` leave their sessions behind: one without a request for
   * `sessionIdleMs` and no call running is closed (its id then answers 404, and the client
   * initializes again), so abandoned sessions do not fill `maxSessions`.
   */
  function sweepIdle(): void {
    const now = Date.now();
    for (const [sessionId, entry] of sessions) {
      if (!entry.session.busy() && now - entry.lastActive > idleMs) void end(sessionId, entry);
    }
    if (sessions.size === 0 && sweeper !== undefined) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  }

  async function authorized(request: Request): Promise<boolean> {
    if (!options.authorize) return true;
    try {
      return (await options.authorize(request)) === true;
    } catch (error) {
      onError(error);
      return false;
    }
  }

  async function open(request: Request, body: unknown): Promise<Response> {
    if (sessions.size + opening >= maxSessions) {
      return rpcErrorResponse(503, -32000, `too many MCP sessions open (${maxSessions}): try again later`, { 'retry-after': '5' });
    }
    opening++;
    let entry: HttpSession | undefined;
    try {
      const { WebStandardStreamableHTTPServerTransport } = await loadWebStandardModule();
      const sessionId = randomUUID();
      const session = await createSession(
        target,
        options.conversationId === undefined
          ? `${options.idPrefix ?? 'mcp-'}${sessionId}`
          : conversationIdOf(options, { transport: 'http', sessionId }),
      );
      // One store per session: the SDK names every session's GET stream alike, and a session's events die with it.
      const events = options.resumability === false ? undefined : sessionEventStore(options.resumability);
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => sessionId,
        ...(events ? { eventStore: events } : {}),
        onsessioninitialized: () => {
          if (!entry) return;
          sessions.set(sessionId, entry);
          // Unref'd: the sweep never keeps a process alive.
          sweeper ??= setInterval(sweepIdle, Math.min(idleMs, 60_000)).unref();
        },
      });
      entry = { session, transport, lastActive: Date.now(), ...(events ? { events } : {}) };
      transport.onclose = () => {
        sessions.delete(sessionId);
        void session.close();
      };
      transport.onerror = (error) => onError(error);
      await session.server.connect(transport);
      const response = await transport.handleRequest(request, { parsedBody: body });
      // Not an initialize the transport took: nothing of this session stays.
      if (!sessions.has(sessionId)) await session.close();
      return response;
    } finally {
      opening--;
    }
  }

  /**
   * A client reconnecting with `Last-Event-ID`: an id this session cannot replay everything after
   * (unknown, or past the bounds) answers 400 saying so, not a replay with a hole in it. When the
   * stream's response is among what is replayed, the stream ends after it: the request is over, and
   * the SDK would otherwise hold the replayed stream open until the session ends.
   */
  async function resume(found: HttpSession, events: SessionEventStore, request: Request, lastEventId: string): Promise<Response> {
    if (!events.canResumeAfter(lastEventId)) {
      return rpcErrorResponse(
        400,
        -32000,
        `cannot resume: the events after Last-Event-ID ${JSON.stringify(lastEventId)} are not kept (an id of another session, or older than the resumability bounds)`,
      );
    }
    const finalEventId = events.finalEventIdOf(lastEventId);
    const response = await found.transport.handleRequest(request);
    if (finalEventId === undefined || !response.ok || !response.body) return response;
    return new Response(endingAfter(response.body, finalEventId, lastEventId === finalEventId), {
      status: response.status,
      headers: response.headers,
    });
  }

  return {
    async handle(request) {
      if (closed) return rpcErrorResponse(503, -32000, 'the MCP server is closing');
      if (new URL(request.url).pathname !== path) return rpcErrorResponse(404, -32000, `not found: the MCP endpoint is ${path}`);
      const origin = request.headers.get('origin');
      if (origin !== null && !allowedOrigins.has(origin)) {
        return rpcErrorResponse(403, -32001, `forbidden: the origin ${JSON.stringify(origin)} is not in allowedOrigins`);
      }
      if (!(await authorized(request))) return rpcErrorResponse(401, -32001, 'unauthorized: the request is not authenticated');
      let body: unknown;
      if (request.method === 'POST') {
        const read = await readRpcBody(request, maxBodyBytes);
        if ('refused' in read) return rpcErrorResponse(read.refused.status, read.refused.code, read.refused.message);
        body = read.body;
      }
      const sessionId = request.headers.get('mcp-session-id');
      if (sessionId !== null) {
        const found = sessions.get(sessionId);
        if (!found) return rpcErrorResponse(404, -32001, 'session not found: it ended or never was; initialize a new one');
        found.lastActive = Date.now();
        const lastEventId = request.method === 'GET' ? request.headers.get('last-event-id') : null;
        if (lastEventId !== null && found.events) return resume(found, found.events, request, lastEventId);
        return found.transport.handleRequest(request, request.method === 'POST' ? { parsedBody: body } : {});
      }
      if (request.method !== 'POST' || !isInitialize(body)) {
        return rpcErrorResponse(400, -32600, 'bad request: no Mcp-Session-Id header; a session starts with an initialize request');
      }
      return open(request, body);
    },
    async close() {
      closed = true;
      if (sweeper !== undefined) clearInterval(sweeper);
      await Promise.all([...sessions].map(([sessionId, entry]) => end(sessionId, entry)));
    },
  };
}

/**
 * The replayed SSE body, ended once the event `finalEventId` has gone through (at once when the
 * client had it already); the SDK's stream is cancelled then, which releases it.
 */
function endingAfter(body: ReadableStream<Uint8Array>, finalEventId: string, already: boolean): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const marker = `id: ${finalEventId}\n`;
  let seen = '';
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (already) {
        controller.close();
        await reader.cancel().catch(() => undefined);
        return;
      }
      const { done, value } = await reader.read();
      if (done) return controller.close();
      controller.enqueue(value);
      seen += decoder.decode(value, { stream: true });
      const at = seen.indexOf(marker);
      // The whole event (it ends with a blank line) has gone out: nothing more belongs to this request.
      if (at >= 0 && seen.indexOf('\n\n', at) >= 0) {
        controller.close();
        await reader.cancel().catch(() => undefined);
        return;
      }
      // Keep only a tail long enough to hold a marker split across chunks.
      if (at < 0 && seen.length > marker.length * 2) seen = seen.slice(-marker.length * 2);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

function isInitialize(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some(
    (message) => typeof message === 'object' && message !== null && (message as { method?: unknown }).method === 'initialize',
  );
}
