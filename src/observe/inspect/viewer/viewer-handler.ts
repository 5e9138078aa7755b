import type { AnyStateMachine } from 'xstate';
import { InvalidOptionsError } from '../../../errors/invalid-options-error.js';
import { MissingDependencyError } from '../../../errors/missing-dependency-error.js';
import type { FollowOptions } from '../../../host/conversation-stream.js';
import type { ConversationView } from '../../../host/conversation-view.js';
import { isConversationMachine } from '../../../machines/names/conversation-mark.js';
import type { ConversationUserEvent } from '../../../machines/names/types.js';
import { isRecord } from '../../../util/is-record.js';
import { maxTimerMs, option, resolveOptionsWith } from '../../../util/option-schema.js';
import { type ConversationFeed, isActorLike, isFeed } from '../../conversation-source.js';
import { ChartStore, type ChartKind } from '../chart-store.js';
import { missingChartPackageHint } from './chart-package.js';
import { hostViewerPage } from './host-viewer-page.js';
import { readViewerBody } from './read-viewer-body.js';
import { viewerEvents } from './viewer-events.js';
import type { ViewerHost } from './viewer-host.js';
import { answerToError, problemAnswer } from './viewer-problem.js';
import { ViewerRequestError } from './viewer-request-error.js';
import { loopbackOnly } from './loopback.js';
import { isMachine, ViewerSources, type WatchHostOptions, type WatchOptions } from './viewer-sources.js';
import type { WatchableActor } from './watched-run.js';

/**
 * Decides whether a request may use the viewer (every route: the page shows whole conversations,
 * and its buttons approve, deny, cancel and fork). `true` lets it in; anything else answers 403, a
 * throw 401.
 *
 * @example
 * ```ts
 * const authorize: ViewerAuthorize = (request) => request.headers.get('authorization') === `Bearer ${token}`;
 * ```
 */
export type ViewerAuthorize = (request: Request) => boolean | Promise<boolean>;

/**
 * What {@link createViewerHandler} takes.
 *
 * @example
 * ```ts
 * const options: ViewerHandlerOptions = { basePath: '/viewer', title: 'support bot', authorize: isStaff };
 * ```
 */
export type ViewerHandlerOptions = {
  /** Where the viewer lives: `'/viewer'` serves the page at `/viewer/` and its routes under it. Default `''`. */
  basePath?: string;
  /**
   * Who may use it. Default: only requests addressed to this machine's loopback names
   * (`localhost`, `127.0.0.1`, `[::1]`) — a local viewer, safe from DNS rebinding. Mounted in a
   * service, pass your own.
   */
  authorize?: ViewerAuthorize;
  /** The page's title. Default `actorloop viewer`. */
  title?: string;
  /** An SSE comment line this often keeps idle streams open through proxies; `0`: none. Default 15,000 ms. */
  heartbeatMs?: number;
  /** Where errors go that are the server's fault (answered 500 with no detail). Default `console.error`. */
  onError?: (error: unknown, request: Request) => void;
  /** The machine drawn for feeds that bring none, and before a conversation is picked. Default: the first host's. */
  machine?: AnyStateMachine;
  /** Runs watched in this process kept in the list; past that, the oldest finished ones are dropped. Default 100. */
  maxRuns?: number;
  /** Steps kept per watched run for time travel (the oldest go first). Default 1000. */
  maxSteps?: number;
  /** Stream events kept per watched run, replayed to a page that opens it (the oldest go first). Default 1000. */
  maxLogEntries?: number;
};

/**
 * What one viewer shows: a durable host (its conversations or workflow runs, read through it), a
 * conversation or workflow actor of this process, a feed (`hostFeed(host, id)`, or your own), or
 * several of them.
 *
 * @example
 * ```ts
 * const sources: ViewerSource[] = [host, createActor(machine, { input: {} })];
 * ```
 */
export type ViewerSource = ViewerHost | WatchableActor | ConversationFeed;

/**
 * The viewer as a Fetch API handler — a `Request` in, a `Response` out — that can be given more to
 * show while it serves.
 *
 * @example
 * ```ts
 * const viewer: ViewerHandler = createViewerHandler(host);
 * viewer.watch(createActor(reviewWorkflow, { input }).start(), { label: 'review of #42' });
 * Bun.serve({ fetch: viewer });
 * ```
 */
export type ViewerHandler = ((request: Request) => Promise<Response>) & {
  /**
   * Shows a run of this process: an actor (a conversation or a workflow; its machine drawn, its
   * state lit, every step kept for time travel, its approvals and cancel operable, any step forked
   * into a new actor the viewer runs) or a feed (read-only). Returns the function that stops
   * recording it (it stays listed as it was). Never stops the run.
   */
  watch(source: WatchableActor | ConversationFeed, options?: WatchOptions): () => void;
  /** Shows every conversation of a durable host, read through it; returns the function that takes it off. */
  watchHost(host: ViewerHost, options?: WatchHostOptions): () => void;
  /** Stops recording watched runs and stops the forks the viewer started. Hosts and watched actors run on. */
  close(): void;
};

const handlerOptionsSchema = option.object(
  {
    basePath: option.withDefault(
      option.transform(
        option.matching(
          'a path like "/viewer" (letters, digits and - _ . ~ between slashes), or "" for none',
          (value): value is string => typeof value === 'string' && /^(\/[A-Za-z0-9._~-]+)*\/?$|^$/.test(value),
        ),
        (value) => value.replace(/\/$/, ''),
      ),
      '',
    ),
    authorize: option.withDefault(option.callable<ViewerAuthorize>('a function (request) => boolean | Promise<boolean>'), loopbackOnly()),
    title: option.withDefault(option.string(), 'actorloop viewer'),
    heartbeatMs: option.withDefault(option.integer({ minimum: 0, maximum: maxTimerMs }), 15_000),
    onError: option.withDefault(
      option.callable<(error: unknown, request: Request) => void>('a function (error, request) => void'),
      (error: unknown) => console.error('actorloop/inspect viewer:', error),
    ),
    machine: option.optional(option.matching('a state machine (createConversationMachine(...), or your workflow)', isMachine)),
    maxRuns: option.withDefault(option.integer({ minimum: 1 }), 100),
    maxSteps: option.withDefault(option.integer({ minimum: 1 }), 1000),
    maxLogEntries: option.withDefault(option.integer({ minimum: 1 }), 1000),
  },
  { expected: 'an object { basePath?, authorize?, title?, heartbeatMs?, onError?, machine?, maxRuns?, maxSteps?, maxLogEntries? }' },
);

const watchOptionsSchema = option.object(
  {
    id: option.optional(option.string({ nonEmpty: true })),
    label: option.optional(option.string()),
    machine: option.optional(option.matching('a state machine', isMachine)),
  },
  { expected: 'an object { id?, label?, machine? }', unknownKeys: 'ignore' },
);

const watchHostOptionsSchema = option.object(
  {
    prefix: option.withDefault(option.string(), ''),
    machine: option.optional(option.matching('a state machine', isMachine)),
  },
  // `stored` (how many stored conversations the old live viewer listed at once) means nothing now: every one is listed.
  { expected: 'an object { prefix?, machine? }', unknownKeys: 'ignore' },
);

const isViewerHost = (value: unknown): value is ViewerHost =>
  isRecord(value) &&
  ['list', 'get', 'history', 'fork', 'send', 'follow'].every((method) => typeof value[method] === 'function') &&
  isRecord(value.machine);

const maxIdLength = 1024;

/** A path segment as a conversation id: percent-decoded, non-empty, at most 1024 characters. */
function idOf(raw: string, field: string): string {
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    throw new ViewerRequestError(
      400,
      `${field}: expected a percent-encoded conversation id, got text that is not valid percent-encoding`,
      field,
    );
  }
  if (id === '' || id.length > maxIdLength) {
    throw new ViewerRequestError(400, `${field}: expected a conversation id of 1 to ${maxIdLength} characters, got ${id.length}`, field);
  }
  return id;
}

/** A step number from the path or the query. */
function seqOf(raw: string, field: string): number {
  if (!/^\d{1,15}$/.test(raw)) {
    const shown = raw.length > 40 ? `${raw.length} characters` : JSON.stringify(raw);
    throw new ViewerRequestError(400, `${field}: expected a step number (an integer ≥ 0), got ${shown}`, field);
  }
  return Number(raw);
}

/** The query, each parameter at most once (which one would count?), only the ones named. */
function queryOf(url: URL, allowed: readonly string[]): Record<string, string> {
  const query: Record<string, string> = Object.create(null);
  for (const [name, value] of url.searchParams) {
    const shown = name.length > 40 ? `${name.slice(0, 40)}…` : name;
    if (!allowed.includes(name))
      throw new ViewerRequestError(
        400,
        `query.${shown}: not a parameter of this route (expected ${allowed.join(', ') || 'none'})`,
        `query.${shown}`,
      );
    if (Object.hasOwn(query, name)) throw new ViewerRequestError(400, `query.${shown}: expected one value, got several`, `query.${shown}`);
    query[name] = value;
  }
  return query;
}

function limitOf(raw: string | undefined, maximum: number): number | undefined {
  if (raw === undefined) return undefined;
  const limit = /^\d{1,7}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(limit >= 1 && limit <= maximum)) {
    const shown = raw.length > 40 ? `${raw.length} characters` : JSON.stringify(raw);
    throw new ViewerRequestError(400, `query.limit: expected an integer from 1 to ${maximum}, got ${shown}`, 'query.limit');
  }
  return limit;
}

/** A body field that must be a non-empty string when `required`, or a string / absent when not. */
function stringField(body: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const value = body[name];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || (required && value === '') || value.length > maxIdLength) {
    const got =
      value === undefined
        ? 'nothing'
        : typeof value === 'string'
          ? `a string of ${value.length} characters`
          : (JSON.stringify(value)?.slice(0, 40) ?? typeof value);
    throw new ViewerRequestError(
      400,
      `${name}: expected ${required ? 'a non-empty string' : 'a string'} of at most ${maxIdLength} characters, got ${got}`,
      name,
    );
  }
  return value;
}

function onlyKeys(body: Record<string, unknown>, allowed: readonly string[]): void {
  const other = Object.keys(body).find((key) => !allowed.includes(key));
  if (other !== undefined) {
    const shown = other.length > 40 ? `${other.slice(0, 40)}…` : other;
    throw new ViewerRequestError(400, `${shown}: not a field of this request (expected ${allowed.join(', ') || 'an empty object'})`, shown);
  }
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  });
}

/** A short random tail for a fork's default id. */
function randomTail(): string {
  const bytes = new Uint8Array(4);
  globalThis.crypto.getRandomValues(bytes);
  return [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** A fresh nonce for the page's inline script and style. */
function nonce(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}

type Action = 'approve' | 'deny' | 'cancel' | 'fork';

/**
 * The viewer you can operate, over a conversation host, as a Fetch API handler — mount it in any
 * service (Hono, Next.js, Bun, Deno, or `node:http` through `toNodeListener` from
 * `actorloop/http`). One page, everything inline (no network, no CDN): the statechart of
 * `host.machine` (drawn server-side, `elkjs` an optional peer) lit at the selected conversation's
 * state, following the newest conversation until you pick one; a step slider over its stored
 * history (time travel) showing the chart, messages, tool calls, usage and streamed text of that
 * step; approve, deny and cancel buttons; fork from the selected step; and the agent tree of its
 * agent calls. A host of a workflow (any other machine) gets the same page for its runs: the
 * workflow's chart with each conversation it invokes drawn inside the state that runs it, the
 * workflow and each running conversation lit at its state; the workflow's status and output; each
 * running conversation's state, streamed text and messages; approvals with their path.
 *
 * Routes under `basePath`: `GET /` the page; `GET /chart/overview.svg`, `/chart/full.svg` (501
 * `missing-dependency` with `package: "elkjs"` when it is not installed: the page says what to install);
 * `GET /api/conversations?after&limit`; `GET /api/conversations/{id}`, `…/history?afterSeq&limit`,
 * `…/steps/{seq}`, `…/events` (Server-Sent Events); `POST …/approve` `{ toolCallId }`, `…/deny`
 * `{ toolCallId, reason? }`, `…/cancel` `{ reason? }`, `…/fork` `{ seq, newId? }`. Every refusal is
 * `application/problem+json` naming what was wrong; an unknown id or step is a 404.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createConversationHost, memoryStore } from 'actorloop';
 * import { toNodeListener } from 'actorloop/http';
 * import { createViewerHandler } from 'actorloop/inspect';
 *
 * const host = createConversationHost({ machine, store: memoryStore() }); // or machine: yourWorkflow
 * createServer(toNodeListener(createViewerHandler(host, { title: 'support bot' }))).listen(4400, '127.0.0.1');
 * // open http://127.0.0.1:4400/
 * ```
 */
export function createViewerHandler(source?: ViewerSource | readonly ViewerSource[], options: ViewerHandlerOptions = {}): ViewerHandler {
  const { basePath, authorize, title, heartbeatMs, onError, machine, maxRuns, maxSteps, maxLogEntries } = resolveOptionsWith(
    handlerOptionsSchema,
    options,
    'options',
  );
  const host = new ViewerSources({ machine, maxRuns, maxSteps, maxItems: maxLogEntries });
  const given: readonly unknown[] = source === undefined ? [] : Array.isArray(source) ? source : [source];
  given.forEach((one, index) => {
    const field = Array.isArray(source) ? `source[${index}]` : 'source';
    // A host has `subscribe` too: told apart first.
    if (isViewerHost(one)) host.watchHost(one);
    else if (isActorLike(one) || isFeed(one)) host.watch(one);
    else
      throw new InvalidOptionsError(
        field,
        'a ConversationHost (createConversationHost(...)), an actor, or a feed { subscribe(listener) }',
        one,
      );
  });
  const charts = new ChartStore();
  /** A view as the page reads it: which chart draws it, and whether it is a workflow's. */
  const shown = (id: string, view: ConversationView) => {
    const drawn = host.machineOf(id) ?? host.defaultMachine();
    return { ...view, ...(drawn ? { chart: charts.idOf(drawn), workflow: !isConversationMachine(drawn) } : {}) };
  };

  async function allowed(request: Request): Promise<void> {
    let verdict: unknown;
    try {
      verdict = await authorize(request);
    } catch {
      throw new ViewerRequestError(401, 'the request is not authenticated');
    }
    if (verdict !== true) throw new ViewerRequestError(403, 'the request may not use this viewer');
  }

  function page(): Response {
    const once = nonce();
    const drawn = host.defaultMachine();
    const workflow = drawn !== undefined && !isConversationMachine(drawn);
    return new Response(hostViewerPage({ title, nonce: once, basePath, workflow, chart: drawn !== undefined }), {
      headers: {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        // Nothing but the viewer itself: no script, style, font or request goes anywhere else.
        'content-security-policy': `default-src 'none'; script-src 'nonce-${once}'; style-src 'nonce-${once}' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
        'x-content-type-options': 'nosniff',
      },
    });
  }

  async function chart(url: URL, id: string | undefined, kind: ChartKind): Promise<Response> {
    const drawn = host.defaultMachine();
    const chartId = id ?? (drawn ? charts.idOf(drawn) : undefined);
    const picture = chartId === undefined ? undefined : charts.svg(chartId, kind);
    if (!picture) throw notFound(url);
    let svg: string;
    try {
      svg = await picture;
    } catch (error) {
      // Not a fault to report: an optional package left out. The page says what to install where the chart would be.
      if (!MissingDependencyError.isInstance(error)) throw error;
      return problemAnswer(501, missingChartPackageHint(error.packageName), undefined, {}, { package: error.packageName });
    }
    return new Response(svg, {
      headers: { 'content-type': 'image/svg+xml; charset=utf-8', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' },
    });
  }

  function method(request: Request, expected: 'GET' | 'POST'): void {
    if (request.method !== expected)
      throw new ViewerRequestError(405, `${request.method.slice(0, 20)}: expected ${expected}`, 'method', { allow: expected });
  }

  /** A POST's JSON body; the page sends `application/json`, which a page of another site cannot without asking (CORS). */
  async function bodyOf(request: Request): Promise<Record<string, unknown>> {
    const origin = request.headers.get('origin');
    if (origin !== null && origin !== new URL(request.url).origin)
      throw new ViewerRequestError(403, `origin: expected this viewer's own origin, got ${JSON.stringify(origin.slice(0, 100))}`, 'origin');
    return readViewerBody(request);
  }

  async function act(request: Request, id: string, action: Action): Promise<Response> {
    method(request, 'POST');
    const body = await bodyOf(request);
    if (action === 'fork') {
      onlyKeys(body, ['seq', 'newId']);
      const seq = body.seq;
      if (typeof seq !== 'number' || !Number.isInteger(seq) || seq < 0)
        throw new ViewerRequestError(
          400,
          `seq: expected a step number (an integer ≥ 0), got ${seq === undefined ? 'nothing' : JSON.stringify(seq)?.slice(0, 40)}`,
          'seq',
        );
      const newId = stringField(body, 'newId', false) ?? `${id}-fork-${seq}-${randomTail()}`;
      if (newId === '') throw new ViewerRequestError(400, 'newId: expected a non-empty string (or none: one is made up)', 'newId');
      return json(await host.fork(id, { seq, newId }), 201);
    }
    let event: ConversationUserEvent;
    if (action === 'approve') {
      onlyKeys(body, ['toolCallId']);
      event = { type: 'tool.approve', toolCallId: stringField(body, 'toolCallId', true) as string };
    } else if (action === 'deny') {
      onlyKeys(body, ['toolCallId', 'reason']);
      const reason = stringField(body, 'reason', false);
      event = {
        type: 'tool.deny',
        toolCallId: stringField(body, 'toolCallId', true) as string,
        ...(reason === undefined ? {} : { reason }),
      };
    } else {
      onlyKeys(body, ['reason']);
      const reason = stringField(body, 'reason', false);
      event = { type: 'cancel', ...(reason === undefined ? {} : { reason }) };
    }
    // Approvals, denials and cancels go to a conversation that exists: a send to an unknown id is a 404, not a new one.
    if ((await host.get(id)) === undefined)
      throw new ViewerRequestError(404, `id: expected a conversation that exists, got ${JSON.stringify(id)}`, 'id');
    return json(await host.send(id, event));
  }

  async function conversation(request: Request, url: URL, id: string, rest: string[]): Promise<Response> {
    const [what, more, ...extra] = rest;
    if (extra.length > 0 || (more !== undefined && what !== 'steps')) throw notFound(url);
    if (what === undefined) {
      method(request, 'GET');
      queryOf(url, []);
      const view = await host.get(id);
      if (!view) throw new ViewerRequestError(404, `id: expected a conversation that exists, got ${JSON.stringify(id)}`, 'id');
      return json(shown(id, view));
    }
    switch (what) {
      case 'history': {
        method(request, 'GET');
        const query = queryOf(url, ['afterSeq', 'limit']);
        const afterSeq = query.afterSeq === undefined ? undefined : seqOf(query.afterSeq, 'query.afterSeq');
        const limit = limitOf(query.limit, 100_000);
        return json(await host.history(id, { ...(afterSeq === undefined ? {} : { afterSeq }), ...(limit === undefined ? {} : { limit }) }));
      }
      case 'steps': {
        method(request, 'GET');
        queryOf(url, []);
        if (more === undefined) throw notFound(url);
        const seq = seqOf(more, 'seq');
        const view = await host.get(id, { seq });
        if (!view) throw new ViewerRequestError(404, `id: expected a conversation that exists, got ${JSON.stringify(id)}`, 'id');
        return json(shown(id, view));
      }
      case 'events': {
        method(request, 'GET');
        queryOf(url, []);
        if ((await host.get(id)) === undefined)
          throw new ViewerRequestError(404, `id: expected a conversation that exists, got ${JSON.stringify(id)}`, 'id');
        const last = request.headers.get('last-event-id');
        const follow: FollowOptions = last && /^\d{1,15}\.\d{1,15}\.[a-z0-9]{1,16}$/.test(last) ? { after: last } : { from: 'run' };
        return viewerEvents(host, id, follow, request.signal, heartbeatMs);
      }
      case 'approve':
      case 'deny':
      case 'cancel':
      case 'fork':
        return act(request, id, what);
      default:
        throw notFound(url);
    }
  }

  function notFound(url: URL): ViewerRequestError {
    const path = url.pathname.length > 100 ? `${url.pathname.slice(0, 100)}…` : url.pathname;
    return new ViewerRequestError(404, `path: no viewer route at ${path}`, 'path');
  }

  async function answer(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname;
    if (path !== basePath && !path.startsWith(`${basePath}/`)) throw notFound(url);
    await allowed(request);
    const local = path.slice(basePath.length);
    if (local === '' || local === '/') {
      method(request, 'GET');
      return page();
    }
    // `/chart/full.svg`: the default machine's; `/chart/<chart>/full.svg`: the one a conversation's view names.
    const drawn = /^\/chart\/(?:([A-Za-z0-9_-]{1,40})\/)?(overview|full)\.svg$/.exec(local);
    if (drawn) {
      method(request, 'GET');
      return chart(url, drawn[1], drawn[2] as ChartKind);
    }
    const segments = local.split('/').slice(1);
    if (segments[0] !== 'api' || segments[1] !== 'conversations') throw notFound(url);
    if (segments.length === 2) {
      method(request, 'GET');
      const query = queryOf(url, ['after', 'limit']);
      if (query.after !== undefined && (query.after === '' || query.after.length > maxIdLength))
        throw new ViewerRequestError(400, `query.after: expected a conversation id of 1 to ${maxIdLength} characters`, 'query.after');
      const limit = limitOf(query.limit, 1000);
      return json(
        await host.list({ ...(query.after === undefined ? {} : { after: query.after }), ...(limit === undefined ? {} : { limit }) }),
      );
    }
    return conversation(request, url, idOf(segments[2] ?? '', 'id'), segments.slice(3));
  }

  const handler = async (request: Request): Promise<Response> => {
    try {
      return await answer(request);
    } catch (error) {
      const { response, serverFault } = answerToError(error);
      if (serverFault) {
        try {
          onError(error, request);
        } catch {
          // An error handler that throws has nowhere left to report to.
        }
      }
      return response;
    }
  };
  return Object.assign(handler, {
    watch(watched: WatchableActor | ConversationFeed, watchOptions: WatchOptions = {}): () => void {
      if (!isActorLike(watched) && !isFeed(watched))
        throw new InvalidOptionsError('watch(source)', 'a conversation or workflow actor, or a feed { subscribe(listener) }', watched);
      const { id, label, machine: drawn } = resolveOptionsWith(watchOptionsSchema, watchOptions, 'watch(source, options)');
      return host.watch(watched, {
        ...(id === undefined ? {} : { id }),
        ...(label === undefined ? {} : { label }),
        ...(drawn ? { machine: drawn } : {}),
      });
    },
    watchHost(watched: ViewerHost, hostOptions: WatchHostOptions = {}): () => void {
      if (!isViewerHost(watched))
        throw new InvalidOptionsError('watchHost(host)', 'a ConversationHost from createConversationHost(...)', watched);
      const { prefix, machine: drawn } = resolveOptionsWith(watchHostOptionsSchema, hostOptions, 'watchHost(host, options)');
      return host.watchHost(watched, { prefix, ...(drawn ? { machine: drawn } : {}) });
    },
    close: () => host.close(),
  });
}
