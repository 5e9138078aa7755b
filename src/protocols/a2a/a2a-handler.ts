import { randomUUID } from 'node:crypto';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import type { AnyConversationHost } from '../../host/conversation-host.js';
import type { ConversationAuthorize } from '../../http/conversation-handler.js';
import { HttpProblemError } from '../../http/http-problem-error.js';
import { readJsonBody } from '../../http/read-json-body.js';
import { conversationIdPattern } from '../../http/request-fields.js';
import { isRecord } from '../../util/is-record.js';
import { type A2ACardOptions, agentCardJson } from './a2a-card.js';
import { hostRequestHandler, newTaskKey, signalKey, taskIdKey } from './host-request-handler.js';
import { loadA2AServerSdk } from './load-sdk.js';

/**
 * What `createA2AHandler` takes.
 *
 * @example
 * ```ts
 * const options: A2AHandlerOptions = {
 *   card: { name: 'Order desk', description: 'Answers questions about orders.', version: '1.0.0' },
 *   authorize: (request) => request.headers.get('authorization') === `Bearer ${process.env.A2A_TOKEN}`,
 *   basePath: '/a2a',
 * };
 * ```
 */
export type A2AHandlerOptions = {
  /** What the agent card says of the agent. */
  card: A2ACardOptions;
  /**
   * Required, the same as `actorloop/http`'s: called with the request and the task id (the
   * conversation id; a new task's id is made up before) before the host is touched. `false`
   * answers 403, a throw 401, each with a JSON-RPC error. The agent card is public.
   */
  authorize: ConversationAuthorize;
  /** Where the agent lives: `'/a2a'` serves JSON-RPC at `POST /a2a` and the card at `/a2a/.well-known/agent-card.json`. Default `''`. */
  basePath?: string;
  /** The largest JSON-RPC request body read, counted as it arrives; past it, 413. Default 1,000,000 bytes. */
  maxBodyBytes?: number;
  /** The longest a whole request body may take; past it, 408. Default 30,000 ms. */
  bodyTimeoutMs?: number;
  /** An SSE comment line this often keeps a quiet stream (a long tool call) open through proxies; `0`: none. Default 15,000 ms. */
  heartbeatMs?: number;
  /** Where the server's own failures go (answered as an internal error without details). Default `console.error`. */
  onError?: (error: unknown) => void;
};

/**
 * A Fetch API handler serving an A2A agent: `GET {basePath}/.well-known/agent-card.json` and
 * JSON-RPC at `POST {basePath}`. `handles(request)` says whether a request is one of its paths,
 * so it mounts beside other handlers on one server.
 *
 * @example
 * ```ts
 * const serve = (request: Request) => (a2a.handles(request) ? a2a(request) : http(request));
 * ```
 */
export type A2AHandler = {
  (request: Request): Promise<Response>;
  /** Whether the request is for this handler's paths (the card, or JSON-RPC under `basePath`). */
  handles(request: Request): boolean;
  readonly basePath: string;
};

const jsonHeaders = { 'content-type': 'application/json', 'cache-control': 'no-store' };

/** A JSON-RPC error answer. */
const rpcError = (id: unknown, code: number, message: string, status = 200, headers: Record<string, string> = {}): Response =>
  new Response(
    JSON.stringify({ jsonrpc: '2.0', id: typeof id === 'string' || typeof id === 'number' ? id : null, error: { code, message } }),
    {
      status,
      headers: { ...jsonHeaders, ...headers },
    },
  );

// JSON-RPC 2.0's own codes, and A2A's (the SDK's A2A_ERROR_CODE).
const parseError = -32700;
const invalidRequest = -32600;
const invalidParams = -32602;
const taskNotFound = -32001;
const contentTypeNotSupported = -32005;
/** JSON-RPC's "server error" range: A2A has no code for a refused caller; HTTP 401 / 403 say which. */
const notAuthorized = -32000;

/** The methods that name a task, and where: a new or continued one in `message.taskId`, else `id`. */
const taskMethods: Record<string, 'message' | 'id'> = {
  SendMessage: 'message',
  SendStreamingMessage: 'message',
  GetTask: 'id',
  CancelTask: 'id',
  SubscribeToTask: 'id',
};

/**
 * Serves a conversation host as an A2A agent (protocol 1.0, JSON-RPC binding) with the official
 * `@a2a-js/sdk` (an optional peer: `npm install @a2a-js/sdk`): a task is a conversation, its id the
 * conversation id. `SendMessage` starts one with the message's text, or continues the task
 * `message.taskId` names (a new turn, or the answer to the approvals it waits for); the task states
 * are `working`, `input-required` (approvals), `completed`, `canceled` and `failed`;
 * `SendStreamingMessage` and `SubscribeToTask` stream status updates and the answer as it comes;
 * `GetTask` and `CancelTask` work on any task the store holds, after a restart too. Every request
 * that names a task is authorized with it first. A host of a workflow serves each task as a run
 * of it: a new task starts the workflow with the message's data part as input (a text alone is
 * `{ message: text }`), `input-required` while a conversation in it waits for an approval, and the
 * output as the artifact `output` once it is done. See docs/a2a.md.
 *
 * Resolves once the SDK is loaded; rejects with `MissingDependencyError` when it is not
 * installed, `InvalidOptionsError` for bad options.
 *
 * @example
 * ```ts
 * import { createA2AHandler, serveA2A } from 'actorloop/a2a';
 *
 * const a2a = await createA2AHandler(host, {
 *   card: { name: 'Order desk', description: 'Answers questions about orders.', version: '1.0.0' },
 *   authorize: (request) => request.headers.get('authorization') === `Bearer ${process.env.A2A_TOKEN}`,
 * });
 * const server = await serveA2A(a2a, { port: 4000 });
 * console.log(`agent card: ${server.url}/.well-known/agent-card.json`);
 *
 * // A workflow behind A2A: each task one run of it.
 * const runs = createConversationHost({ machine: reviewWorkflow(provider), store });
 * const reviews = await createA2AHandler(runs, { card: reviewCard, authorize, basePath: '/review' });
 * ```
 */
export async function createA2AHandler(host: AnyConversationHost, options: A2AHandlerOptions): Promise<A2AHandler> {
  if (!isRecord(host) || typeof host.send !== 'function' || typeof host.follow !== 'function') {
    throw new InvalidOptionsError('host', 'a ConversationHost from createConversationHost(...) (of a conversation or a workflow)', host);
  }
  if (!isRecord(options))
    throw new InvalidOptionsError('options', 'an object { card, authorize, basePath?, maxBodyBytes?, bodyTimeoutMs?, onError? }', options);
  const { card, authorize } = options;
  if (typeof authorize !== 'function') {
    throw new InvalidOptionsError(
      'options.authorize',
      'a function (request, taskId) => boolean | Promise<boolean> (required: there is no default that lets everyone in)',
      authorize,
    );
  }
  const cardFields: unknown = card;
  if (
    !isRecord(cardFields) ||
    !['name', 'description', 'version'].every((key) => typeof cardFields[key] === 'string' && cardFields[key] !== '')
  ) {
    throw new InvalidOptionsError(
      'options.card',
      'an object { name, description, version, skills?, url?, … } with non-empty strings',
      card,
    );
  }
  const basePath = (options.basePath ?? '').replace(/\/$/, '');
  if (!/^(\/[A-Za-z0-9._~-]+)*$/.test(basePath)) {
    throw new InvalidOptionsError(
      'options.basePath',
      'a path like "/a2a" (letters, digits and - _ . ~ between slashes), or "" for none',
      options.basePath,
    );
  }
  const positive = (name: string, value: number | undefined, fallback: number) => {
    if (value === undefined) return fallback;
    if (!Number.isInteger(value) || value < 1) throw new InvalidOptionsError(`options.${name}`, 'a positive integer', value);
    return value;
  };
  const maxBytes = positive('maxBodyBytes', options.maxBodyBytes, 1_000_000);
  const timeoutMs = positive('bodyTimeoutMs', options.bodyTimeoutMs, 30_000);
  const heartbeatMs = options.heartbeatMs === 0 ? 0 : positive('heartbeatMs', options.heartbeatMs, 15_000);
  const onError = options.onError ?? ((error: unknown) => console.error('actorloop/a2a:', error));
  const limits = { maxBytes, idleTimeoutMs: Math.min(10_000, timeoutMs), timeoutMs, maxDepth: 64 };

  const sdk = await loadA2AServerSdk();
  const transport = new sdk.server.JsonRpcTransportHandler(hostRequestHandler(host, sdk, onError));
  const cardPath = `${basePath}/.well-known/agent-card.json`;
  const rpcPaths = new Set([basePath === '' ? '/' : basePath, `${basePath}/`]);

  const answerCard = (request: Request): Response => {
    const url = card.url ?? `${new URL(request.url).origin}${basePath === '' ? '/' : basePath}`;
    return new Response(request.method === 'HEAD' ? null : JSON.stringify(agentCardJson(card, url)), {
      headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' },
    });
  };

  const rpc = async (request: Request): Promise<Response> => {
    let body: Record<string, unknown> | undefined;
    try {
      body = await readJsonBody(request, limits);
    } catch (error) {
      if (!HttpProblemError.isInstance(error)) throw error;
      const { status, detail } = error.problem;
      if (status === 415) return rpcError(null, contentTypeNotSupported, detail, 415);
      return rpcError(null, /does not parse|not UTF-8/.test(detail) ? parseError : invalidRequest, detail, status);
    }
    if (!body) return rpcError(null, invalidRequest, 'body: expected a JSON-RPC request, got none', 400);
    const { id: requestId, method, params } = body;
    if (body.jsonrpc !== '2.0' || typeof method !== 'string') {
      return rpcError(requestId, invalidRequest, 'expected a JSON-RPC 2.0 request { jsonrpc: "2.0", id, method, params }');
    }
    const state = new Map<string, unknown>([[signalKey, request.signal]]);
    const where = Object.hasOwn(taskMethods, method) ? taskMethods[method] : undefined;
    if (where !== undefined) {
      if (!isRecord(params)) return rpcError(requestId, invalidParams, 'params: expected an object');
      let taskId: unknown;
      if (where === 'message') {
        if (!isRecord(params.message)) return rpcError(requestId, invalidParams, 'params.message: expected an object');
        taskId = params.message.taskId;
        if (taskId === undefined || taskId === '') {
          // A new task: its id is made up here, so it can be authorized like any other.
          taskId = randomUUID();
          state.set(newTaskKey, true);
        }
      } else taskId = params.id;
      if (typeof taskId !== 'string')
        return rpcError(requestId, invalidParams, `params.${where === 'id' ? 'id' : 'message.taskId'}: expected a string`);
      if (!conversationIdPattern.test(taskId)) return rpcError(requestId, taskNotFound, `no task ${JSON.stringify(taskId.slice(0, 140))}`);
      let allowed: boolean;
      try {
        allowed = (await authorize(request, taskId)) === true;
      } catch {
        return rpcError(requestId, notAuthorized, 'unauthenticated: the request has no valid credentials', 401, {
          'www-authenticate': 'Bearer',
        });
      }
      if (!allowed) return rpcError(requestId, notAuthorized, `forbidden: not allowed to use task ${taskId}`, 403);
      state.set(taskIdKey, taskId);
    }
    const context = new sdk.server.ServerCallContext({ requestedVersion: request.headers.get('a2a-version') ?? '1.0', state });
    const answer = await transport.handle(body, context);
    if (!isAsyncIterable(answer)) return new Response(JSON.stringify(answer), { headers: jsonHeaders });
    const iterator = answer[Symbol.asyncIterator]();
    // An error before the first event is a plain JSON-RPC error answer, not a stream.
    const first = await iterator.next().catch((error: unknown) => ({ error }));
    if ('error' in first) {
      const { code, message } = sdk.server.JsonRpcTransportHandler.mapToJSONRPCError(first.error);
      return rpcError(requestId, code, message);
    }
    return sseResponse(first, iterator, {
      requestId,
      heartbeatMs,
      mapError: (error) => sdk.server.JsonRpcTransportHandler.mapToJSONRPCError(error),
    });
  };

  const handles = (request: Request): boolean => {
    const { pathname } = new URL(request.url);
    return pathname === cardPath || rpcPaths.has(pathname);
  };

  const handler = async (request: Request): Promise<Response> => {
    const { pathname } = new URL(request.url);
    if (pathname === cardPath) {
      if (request.method === 'GET' || request.method === 'HEAD') return answerCard(request);
      return rpcError(null, invalidRequest, `${request.method} ${pathname}: the agent card is read with GET`, 405, { allow: 'GET, HEAD' });
    }
    if (!rpcPaths.has(pathname))
      return rpcError(null, invalidRequest, `${pathname}: not an A2A path (JSON-RPC is at POST ${[...rpcPaths][0]})`, 404);
    if (request.method !== 'POST')
      return rpcError(null, invalidRequest, `${request.method} ${pathname}: JSON-RPC takes POST`, 405, { allow: 'POST' });
    try {
      return await rpc(request);
    } catch (error) {
      onError(error);
      return rpcError(null, -32603, 'internal error', 500);
    }
  };
  return Object.assign(handler, { handles, basePath });
}

type RpcAnswer = { jsonrpc: string; id: string | number | null; result?: unknown; error?: unknown };

const isAsyncIterable = (value: unknown): value is AsyncIterable<RpcAnswer> =>
  typeof value === 'object' && value !== null && Symbol.asyncIterator in value;

/** A JSON-RPC stream as Server-Sent Events, one `data:` event per answer; an error mid-stream is an `event: error`. */
function sseResponse(
  first: IteratorResult<RpcAnswer, void>,
  iterator: AsyncIterator<RpcAnswer, void, undefined>,
  settings: { requestId: unknown; heartbeatMs: number; mapError: (error: unknown) => { code: number; message: string } },
): Response {
  const encoder = new TextEncoder();
  let pending: IteratorResult<RpcAnswer, void> | undefined = first;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  const finish = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    clearInterval(heartbeat);
    if (closed) return;
    closed = true;
    controller.close();
  };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      if (settings.heartbeatMs === 0) return;
      heartbeat = setInterval(() => {
        if (!closed) controller.enqueue(encoder.encode(': keep-alive\n\n'));
      }, settings.heartbeatMs);
      heartbeat.unref?.();
    },
    async pull(controller) {
      try {
        const next = pending ?? (await iterator.next());
        pending = undefined;
        if (closed) return;
        if (next.done) return finish(controller);
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(next.value)}\n\n`));
      } catch (error) {
        if (closed) return;
        const { code, message } = settings.mapError(error);
        const { requestId } = settings;
        const id = typeof requestId === 'string' || typeof requestId === 'number' ? requestId : null;
        controller.enqueue(encoder.encode(`event: error\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n\n`));
        finish(controller);
      }
    },
    async cancel() {
      closed = true;
      clearInterval(heartbeat);
      // The client left: the generator's `finally` stops following the conversation.
      await iterator.return?.();
    },
  });
  return new Response(stream, {
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
  });
}
