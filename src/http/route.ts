import type { AnyConversationHost } from '../host/conversation-host.js';
import type { ConversationStore } from '../host/conversation-store.js';
import type { ProblemTypeName } from './problem.js';
import type { BodyLimits } from './read-json-body.js';
import type { FieldValues, JsonSchema, RequestFields } from './request-fields.js';

/**
 * What a route's `handle` gets: the request (its body already read and checked when the route
 * declares one), the conversation id of its path, its checked query, and the handler's settings.
 *
 * @example
 * ```ts
 * const handle = async ({ host, id }: RouteContext) => Response.json(await host.get(id));
 * ```
 */
export type RouteContext<
  Body extends RequestFields = RequestFields,
  Query extends RequestFields = RequestFields,
  Headers extends RequestFields = RequestFields,
> = {
  request: Request;
  host: AnyConversationHost;
  /** The conversation id from the path (`''` for a route without one). */
  id: string;
  body: FieldValues<Body>;
  query: FieldValues<Query>;
  headers: FieldValues<Headers>;
  settings: RouteSettings;
  /** Every route of the handler (the OpenAPI document is made from them). */
  routes: readonly Route[];
};

/**
 * The handler's settings, as the routes use them.
 *
 * @example
 * ```ts
 * const settings: RouteSettings = {
 *   basePath: '/api', authorize: () => true, bodyLimits: { maxBytes: 1_000_000, idleTimeoutMs: 10_000, timeoutMs: 30_000, maxDepth: 64 },
 *   heartbeatMs: 15_000, maxBufferedBytes: 1_048_576, readLog: undefined, media: undefined, openApi: { title: 'Support', version: '1.0.0' }, chatSessionData: undefined,
 * };
 * ```
 */
export type RouteSettings = {
  basePath: string;
  /** The handler's `authorize`, for a route that authorizes itself (`authorize: 'route'`: its conversation id is in its body). */
  authorize: (request: Request, conversationId: string) => boolean | Promise<boolean>;
  /** The body limits, for a route that reads its body itself (`readJsonBody(request, settings.bodyLimits)`). */
  bodyLimits: BodyLimits;
  heartbeatMs: number;
  maxBufferedBytes: number;
  /** The store's log reader, for `GET …/history` (the `store` option). */
  readLog: ConversationStore['readLog'] | undefined;
  /** The store, for `GET …/media` (a store that keeps media once: `readMedia`). */
  media: Required<Pick<ConversationStore, 'load' | 'readLog' | 'readMedia'>> | undefined;
  openApi: { title: string; version: string };
  /** The `sessionData` a `POST /chat` turn's run gets, from the request (the `chatSessionData` option). */
  chatSessionData: ((request: Request, conversationId: string) => unknown) | undefined;
};

/**
 * One answer a route may give, for the OpenAPI document.
 *
 * @example
 * ```ts
 * const answer: RouteAnswer = { status: 200, description: 'The conversation', type: 'application/json', schema: { $ref: '#/components/schemas/ConversationView' } };
 * ```
 */
export type RouteAnswer = { status: number; description: string; type?: 'application/json' | 'text/event-stream'; schema?: JsonSchema };

/**
 * One route of `actorloop/http`'s table: the router matches requests with it and the OpenAPI
 * document describes it, from the same entry.
 * - `path`: OpenAPI style, under the handler's `basePath`: `/conversations/{id}/messages`.
 *   `{id}` is a conversation id, checked before anything else.
 * - `authorize`: `'path'` calls the handler's `authorize(request, id)` before the body is read or
 *   anything loaded; `'route'` leaves it to `handle` (a route whose conversation id is in its
 *   body); `'none'` is for what names no conversation (the OpenAPI document).
 * - `body`, `query`, `headers`: the fields the route takes, read and checked before `handle` runs
 *   (header names as HTTP writes them, `Last-Event-ID`; headers are never required).
 * - `problems`: the problem types the route may answer besides the ones every route may.
 *
 * @example
 * ```ts
 * const view: Route = {
 *   method: 'GET', path: '/conversations/{id}', operationId: 'getConversation', summary: 'The conversation now',
 *   authorize: 'path', problems: ['conversation-not-found'],
 *   answers: [{ status: 200, description: 'The conversation', type: 'application/json' }],
 *   handle: async ({ host, id }) => Response.json(await host.get(id)),
 * };
 * ```
 */
export type Route<
  Body extends RequestFields = RequestFields,
  Query extends RequestFields = RequestFields,
  Headers extends RequestFields = RequestFields,
> = {
  method: 'GET' | 'POST';
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  authorize: 'path' | 'route' | 'none';
  body?: Body;
  query?: Query;
  headers?: Headers;
  answers: RouteAnswer[];
  problems?: ProblemTypeName[];
  handle(context: RouteContext<Body, Query, Headers>): Promise<Response>;
};

/**
 * A route with its body and query types inferred from its fields.
 *
 * @example
 * ```ts
 * const cancel = defineRoute({ method: 'POST', path: '/conversations/{id}/cancel', body: { reason: fields.optional(fields.text('Why')) }, … });
 * ```
 */
export function defineRoute<
  Body extends RequestFields = Record<never, never>,
  Query extends RequestFields = Record<never, never>,
  Headers extends RequestFields = Record<never, never>,
>(route: Route<Body, Query, Headers>): Route {
  return route as unknown as Route;
}
