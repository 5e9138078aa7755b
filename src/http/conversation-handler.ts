import type { AnyConversationHost } from '../host/conversation-host.js';
import type { ConversationStore } from '../host/conversation-store.js';
import { ConversationConflictError } from '../host/errors/conversation-conflict-error.js';
import { ConversationLoadError } from '../host/errors/conversation-load-error.js';
import { ConversationExistsError } from '../host/errors/conversation-exists-error.js';
import { ConversationNotFoundError } from '../host/errors/conversation-not-found-error.js';
import { ConversationStepNotFoundError } from '../host/errors/conversation-step-not-found-error.js';
import { EventRejectedError } from '../host/errors/event-rejected-error.js';
import { HostClosedError } from '../host/errors/host-closed-error.js';
import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import { isRecord } from '../util/is-record.js';
import { maxJsonDepth } from '../util/json-problem.js';
import { maxTimerMs, option, resolveOptionsWith } from '../util/option-schema.js';
import { conversationRoutes } from './conversation-routes.js';
import { HttpProblemError } from './http-problem-error.js';
import { type ProblemDetails, problemDetails, problemResponse } from './problem.js';
import { readJsonBody } from './read-json-body.js';
import { fields, readFields } from './request-fields.js';
import type { Route, RouteContext, RouteSettings } from './route.js';

/**
 * Decides whether a request may touch a conversation: `true` lets it in; `false` answers 403 and
 * a throw 401, both without a byte of the conversation. Runs before the body is read or anything
 * is loaded. Anything but `true` (a truthy string, a forgotten `await`) counts as `false`.
 *
 * @example
 * ```ts
 * const authorize: ConversationAuthorize = async (request, conversationId) => {
 *   const user = await userOf(request.headers.get('authorization')); // throws when the token is bad: 401
 *   return user.conversations.includes(conversationId); // false: 403
 * };
 * ```
 */
export type ConversationAuthorize = (request: Request, conversationId: string) => boolean | Promise<boolean>;

/**
 * What `createConversationHandler` takes.
 *
 * @example
 * ```ts
 * const options: ConversationHandlerOptions = {
 *   authorize: (request) => request.headers.get('authorization') === `Bearer ${process.env.API_TOKEN}`,
 *   basePath: '/api',
 *   store,
 * };
 * ```
 */
export type ConversationHandlerOptions = {
  /** Required: there is no default that lets everyone in. */
  authorize: ConversationAuthorize;
  /** Where the routes live: `'/api'` serves `/api/conversations/…`. Default `''`. */
  basePath?: string;
  /** The largest request body read, counted as it arrives; past it, 413. Default 1,000,000 bytes. */
  maxBodyBytes?: number;
  /** The longest pause in a request body (or before it); past it, 408. Default 10,000 ms. */
  bodyIdleTimeoutMs?: number;
  /** The longest a whole request body may take, however it trickles in; past it, 408. Default 30,000 ms. */
  bodyTimeoutMs?: number;
  /** How deep a body's arrays and objects may nest; deeper, 400. Default 64. */
  maxBodyDepth?: number;
  /** An SSE comment line this often keeps idle streams open through proxies; `0`: none. Default 15,000 ms. */
  heartbeatMs?: number;
  /** Unread bytes an SSE stream holds for a slow client before it tells it to resume. Default 1 MiB. */
  maxBufferedBytes?: number;
  /**
   * The host's store: `GET …/history` reads the log from it, and `GET …/media` a medium a stored
   * conversation refers to (a store that keeps media once); without it, those routes answer 501.
   */
  store?: Pick<ConversationStore, 'readLog'> & Partial<Pick<ConversationStore, 'load' | 'readMedia'>>;
  /** Where errors go that are the server's fault (answered 500 with no detail). Default `console.error`. */
  onError?: (error: unknown, request: Request) => void;
  /**
   * The `sessionData` the run of a `POST /chat` turn gets (`host.send`'s option), from the request
   * — a verified user id, say. Absent: the conversation keeps what it had.
   */
  chatSessionData?: (request: Request, conversationId: string) => unknown;
  /** The `info` of the OpenAPI document. Default `{ title: 'actorloop conversations', version: '1' }`. */
  openApi?: { title?: string; version?: string };
};

/**
 * A Fetch API request handler: a `Request` in, a `Response` out. Mounts in Hono, Next.js route
 * handlers, Bun, Deno, and `node:http` through `toNodeListener`.
 *
 * @example
 * ```ts
 * const handler: ConversationHandler = createConversationHandler(host, { authorize });
 * Bun.serve({ fetch: handler });
 * ```
 */
export type ConversationHandler = (request: Request) => Promise<Response>;

const basePathSchema = option.transform(
  option.matching(
    'a path like "/api" (letters, digits and - _ . ~ between slashes), or "" for none',
    (value): value is string => typeof value === 'string' && /^(\/[A-Za-z0-9._~-]+)*\/?$|^$/.test(value),
  ),
  (value) => value.replace(/\/$/, ''),
);

const handlerOptionsSchema = option.object(
  {
    authorize: option.callable<ConversationAuthorize>(
      'a function (request, conversationId) => boolean | Promise<boolean> (required: there is no default that lets everyone in)',
    ),
    basePath: option.withDefault(basePathSchema, ''),
    maxBodyBytes: option.withDefault(option.integer({ minimum: 1 }), 1_000_000),
    bodyIdleTimeoutMs: option.withDefault(option.milliseconds(), 10_000),
    bodyTimeoutMs: option.withDefault(option.milliseconds(), 30_000),
    maxBodyDepth: option.withDefault(option.integer({ minimum: 1, maximum: maxJsonDepth }), 64),
    heartbeatMs: option.withDefault(option.integer({ minimum: 0, maximum: maxTimerMs }), 15_000),
    maxBufferedBytes: option.withDefault(option.integer({ minimum: 1 }), 1_048_576),
    store: option.optional(
      option.matching(
        "a ConversationStore (the host's store: its readLog is read)",
        (value): value is Pick<ConversationStore, 'readLog'> & Partial<Pick<ConversationStore, 'load' | 'readMedia'>> =>
          isRecord(value) && typeof value.readLog === 'function',
      ),
    ),
    onError: option.withDefault(
      option.callable<(error: unknown, request: Request) => void>('a function (error, request) => void'),
      (error: unknown) => console.error('actorloop/http:', error),
    ),
    chatSessionData: option.optional(
      option.callable<(request: Request, conversationId: string) => unknown>('a function (request, conversationId) => sessionData'),
    ),
    openApi: option.absentAs(
      option.object({
        title: option.withDefault(option.string({ nonEmpty: true }), 'actorloop conversations'),
        version: option.withDefault(option.string({ nonEmpty: true }), '1'),
      }),
      {},
    ),
  },
  {
    expected:
      'an object { authorize, basePath?, maxBodyBytes?, bodyIdleTimeoutMs?, bodyTimeoutMs?, maxBodyDepth?, heartbeatMs?, maxBufferedBytes?, store?, onError?, chatSessionData?, openApi? }',
  },
);

const isHost = (value: unknown): value is AnyConversationHost =>
  isRecord(value) && ['send', 'get', 'follow'].every((method) => typeof value[method] === 'function');

/** A route's path as a pattern: `{id}` is one path segment. */
type CompiledRoute = { route: Route; pattern: RegExp };

const compile = (route: Route): CompiledRoute => ({
  route,
  pattern: new RegExp(`^${route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace('{id}', '([^/]+)')}$`),
});

const idField = fields.conversationId('The conversation id');

/**
 * Serves a conversation host over HTTP as a Fetch API handler — `(Request) => Promise<Response>`,
 * no server library needed. Routes, under `basePath` (see docs/http.md and the OpenAPI document
 * at `{basePath}/openapi.json`, generated from the same route table):
 *
 * - `POST /conversations/:id/messages` `{ content, sessionData? }` — starts the conversation if new
 * - `GET /conversations/:id` — the view; `GET /conversations/:id/events` — Server-Sent Events,
 *   resumable with `Last-Event-ID`; `GET /conversations/:id/history` — the stored log, paged
 * - `GET /conversations/:id/steps` — the stored steps (time travel), `GET /conversations/:id?seq=n`
 *   — the conversation at step n, `POST /conversations/:id/fork` `{ seq, newId?, messages? }`
 * - `POST /conversations/:id/approve` `{ toolCallId }`, `…/deny` `{ toolCallId, reason? }`,
 *   `…/cancel` `{ reason? }`
 * - `POST /chat` — the AI SDK's `useChat` talks to it unchanged (UI message stream protocol);
 *   `GET /chat/:id/stream` resumes the answer in progress, `GET /chat/:id/messages` the history
 *
 * Every refusal is an `application/problem+json` answer naming what was wrong; a request that is
 * refused never reaches the host. `authorize` is required: a missing one throws
 * `InvalidOptionsError` here.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createConversationHandler, toNodeListener } from 'actorloop/http';
 *
 * const handler = createConversationHandler(host, {
 *   authorize: (request) => request.headers.get('authorization') === `Bearer ${process.env.API_TOKEN}`,
 *   basePath: '/api',
 *   store,
 * });
 * createServer(toNodeListener(handler)).listen(3000);
 * ```
 */
export function createConversationHandler(host: AnyConversationHost, options: ConversationHandlerOptions): ConversationHandler {
  if (!isHost(host)) throw new InvalidOptionsError('host', 'a ConversationHost from createConversationHost(...)', host);
  const resolved = resolveOptionsWith(handlerOptionsSchema, options, 'options');
  const { authorize, basePath, onError } = resolved;
  const limits = {
    maxBytes: resolved.maxBodyBytes,
    idleTimeoutMs: resolved.bodyIdleTimeoutMs,
    timeoutMs: resolved.bodyTimeoutMs,
    maxDepth: resolved.maxBodyDepth,
  };
  const settings: RouteSettings = {
    basePath,
    authorize,
    bodyLimits: limits,
    heartbeatMs: resolved.heartbeatMs,
    maxBufferedBytes: resolved.maxBufferedBytes,
    readLog: resolved.store ? resolved.store.readLog.bind(resolved.store) : undefined,
    media: mediaReaderOf(resolved.store),
    openApi: resolved.openApi,
    chatSessionData: resolved.chatSessionData,
  };
  const routes = conversationRoutes;
  const compiled = routes.map(compile);

  async function answer(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname;
    const local = path.startsWith(`${basePath}/`) ? path.slice(basePath.length) : undefined;
    const matches =
      local === undefined
        ? []
        : compiled.flatMap(({ route, pattern }) => {
            const found = pattern.exec(local);
            return found ? [{ route, raw: found[1] }] : [];
          });
    if (matches.length === 0) {
      const shown = path.length > 100 ? `${path.slice(0, 100)}…` : path;
      throw new HttpProblemError('route-not-found', `no route ${request.method} ${shown} (the routes are in ${basePath}/openapi.json)`);
    }
    const match = matches.find(({ route }) => route.method === request.method);
    if (!match) {
      const allow = [...new Set(matches.map(({ route }) => route.method))].join(', ');
      throw new HttpProblemError('method-not-allowed', `${request.method}: expected ${allow}`, { headers: { allow } });
    }
    const { route, raw } = match;
    const id = raw === undefined ? '' : conversationIdOf(raw);
    if (route.authorize === 'path') await authorized(request, id);
    const query = route.query ? readFields(route.query, queryOf(url), { where: 'query', unknown: 'ignore' }) : {};
    const headers = route.headers ? readHeaders(route, request) : {};
    const body = route.body ? readFields(route.body, (await readJsonBody(request, limits)) ?? {}) : {};
    const context: RouteContext = { request, host, id, body, query, headers, settings, routes };
    return route.handle(context);
  }

  async function authorized(request: Request, id: string): Promise<void> {
    let allowed: unknown;
    try {
      allowed = await authorize(request, id);
    } catch {
      throw new HttpProblemError('unauthorized', 'the request is not authenticated');
    }
    if (allowed !== true) throw new HttpProblemError('forbidden', 'the request may not use this conversation');
  }

  return async (request) => {
    try {
      return await answer(request);
    } catch (error) {
      const { problem, headers } = problemOf(error);
      if (problem.status === 500) report(onError, error, request);
      return problemResponse(problem, headers);
    }
  };
}

/** The id in a path segment, percent-decoded and checked. */
function conversationIdOf(raw: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    throw new HttpProblemError('invalid-field', `id: expected ${idField.expected}, got text that is not valid percent-encoding`, {
      field: 'id',
    });
  }
  const read = idField.read(decoded);
  if (!read) {
    const shown = decoded.length > 60 ? `${decoded.length} characters` : JSON.stringify(decoded);
    throw new HttpProblemError('invalid-field', `id: expected ${idField.expected}, got ${shown}`, { field: 'id' });
  }
  return read.value;
}

/** The query as an object; a parameter given twice is refused (which one would count?). */
function queryOf(url: URL): Record<string, unknown> {
  const query: Record<string, unknown> = Object.create(null);
  for (const [name, value] of url.searchParams) {
    if (Object.hasOwn(query, name)) {
      const shown = name.length > 60 ? `${name.slice(0, 60)}…` : name;
      throw new HttpProblemError('invalid-field', `query.${shown}: expected one value, got several`, { field: `query.${shown}` });
    }
    query[name] = value;
  }
  return query;
}

function readHeaders(route: Route, request: Request): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(route.headers ?? {})) {
    const given = request.headers.get(name);
    if (given === null) continue;
    const read = field.read(given);
    if (!read) {
      const shown = given.length > 64 ? `${given.length} characters` : JSON.stringify(given);
      throw new HttpProblemError('invalid-field', `${name}: expected ${field.expected}, got ${shown}`, { field: name });
    }
    values[name] = read.value;
  }
  return values;
}

/**
 * The answer to an error: a refused request as its problem, a host error by its class (one row
 * each), anything else a 500 that says nothing more (its message may carry internals).
 */
function problemOf(error: unknown): { problem: ProblemDetails; headers: Record<string, string> } {
  const plain = (problem: ProblemDetails) => ({ problem, headers: {} });
  if (HttpProblemError.isInstance(error)) return { problem: error.problem, headers: error.headers };
  if (ConversationNotFoundError.isInstance(error)) {
    return plain(
      problemDetails(
        'conversation-not-found',
        `id: expected a conversation that exists, got ${JSON.stringify(error.conversationId)}`,
        'id',
      ),
    );
  }
  if (EventRejectedError.isInstance(error)) {
    if (error.code === 'busy') {
      return plain(
        problemDetails('conversation-busy', 'the conversation is running in another process; try again once its run has moved on'),
      );
    }
    return plain(problemDetails('event-rejected', error.message));
  }
  if (ConversationStepNotFoundError.isInstance(error)) {
    const kept = error.availableSeqs ? ` (it keeps steps ${error.availableSeqs[0]} to ${error.availableSeqs[1]})` : '';
    return plain(
      problemDetails(
        'step-not-found',
        `seq: expected a stored step of ${JSON.stringify(error.conversationId)}${kept}, got ${error.seq}`,
        'seq',
      ),
    );
  }
  if (ConversationExistsError.isInstance(error)) {
    return plain(
      problemDetails('conversation-exists', `newId: expected an id not in use, got ${JSON.stringify(error.conversationId)}`, 'newId'),
    );
  }
  if (ConversationConflictError.isInstance(error)) {
    return plain(
      problemDetails('conversation-conflict', 'the conversation was changed by another writer meanwhile; read it again and retry'),
    );
  }
  if (ConversationLoadError.isInstance(error)) {
    return plain(
      problemDetails(
        'stored-conversation-unreadable',
        `the stored conversation cannot be loaded (${error.problem.replace('_', ' ')}); it is left as it was`,
      ),
    );
  }
  if (HostClosedError.isInstance(error)) {
    return { problem: problemDetails('host-closed', 'the service is shutting down; try again shortly'), headers: { 'retry-after': '1' } };
  }
  if (InvalidOptionsError.isInstance(error)) {
    // The host's own check of what a route passed on: the field it names is the request's.
    return plain(problemDetails('invalid-field', error.message.replace(/^Invalid option /, ''), error.option));
  }
  return plain(problemDetails('internal-error', 'the request could not be answered'));
}

function report(onError: (error: unknown, request: Request) => void, error: unknown, request: Request): void {
  try {
    onError(error, request);
  } catch {
    // An error handler that throws has nowhere left to report to.
  }
}

/** The store's media reader for `GET …/media`, when it keeps media once and can load a conversation to check it refers to one. */
function mediaReaderOf(
  store: (Pick<ConversationStore, 'readLog'> & Partial<Pick<ConversationStore, 'load' | 'readMedia'>>) | undefined,
): RouteSettings['media'] {
  if (!store || typeof store.readMedia !== 'function' || typeof store.load !== 'function') return undefined;
  return { load: store.load.bind(store), readLog: store.readLog.bind(store), readMedia: store.readMedia.bind(store) };
}
