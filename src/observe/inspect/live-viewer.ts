import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AnyStateMachine, InspectionEvent } from 'xstate';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import type { ConversationEmittedEvent, ConversationMachine, ConversationUserEvent } from '../../machines/types.js';
import { option } from '../../util/option-schema.js';
import { loadElk } from '../chart/layout-chart.js';
import { type ConversationActorLike, type ConversationFeed, isActorLike, isFeed } from '../conversation-source.js';
import type { HostConversationFeed } from '../host-feed.js';
import { stateUpdateOf } from '../state-update.js';
import { observeActor } from '../observe-actor.js';
import { watchFeed } from '../watch-feed.js';
import { ChartStore, type ChartKind } from './chart-store.js';
import { userEventTypes } from './run-log.js';
import { AgentRuns } from './agent-runs.js';
import { type RunChange, RunView } from './run-view.js';
import { viewerPage } from './viewer-page.js';
import { checkWatchableHost, type WatchableHost, type WatchHostOptions, watchHostConversations } from './watch-host.js';

/**
 * Options of {@link startLiveViewer}.
 *
 * @example
 * ```ts
 * const options: LiveViewerOptions = { port: 4400, title: 'support bot' };
 * ```
 */
export type LiveViewerOptions = {
  /** The interface to listen on. Default `127.0.0.1`: only this machine can open the page. */
  host?: string;
  /** The port. Default `0`: a free port (read it from `viewer.url`). */
  port?: number;
  /** The page's title. Default `actorloop live`. */
  title?: string;
  /** The machine to draw for runs whose own machine is not known (feeds). Actors bring theirs. */
  machine?: AnyStateMachine;
  /** Log lines kept per run (the oldest go first). Default 1000. */
  maxLogEntries?: number;
  /** Runs kept in the list; past that, the oldest finished runs are dropped. Default 100. */
  maxRuns?: number;
};

/**
 * Options of {@link LiveViewer.watch}.
 *
 * @example
 * ```ts
 * viewer.watch(actor, { id: 'c-42', label: 'Ada, turn 3' });
 * ```
 */
export type WatchOptions = {
  /** The run's id in the viewer (and in the page's address, `#id`). Default: a host feed's conversation id, else `run-<n>`. */
  id?: string;
  /** What the run list shows. Default: the id. */
  label?: string;
  /** The machine to draw. Default: the actor's own (`actor.logic`), a host feed's, or the viewer's `machine`. */
  machine?: AnyStateMachine;
};

/**
 * A running live viewer: open `url` in a browser.
 *
 * @example
 * ```ts
 * const viewer: LiveViewer = await startLiveViewer();
 * console.log(`watch at ${viewer.url}`);
 * ```
 */
export type LiveViewer = {
  /** The page, e.g. `http://127.0.0.1:41234/`. */
  url: string;
  port: number;
  /**
   * Shows a run: a conversation actor (its machine is drawn, its state lit up, its events and
   * messages listed) or a feed — a durable host conversation, `hostFeed(host, id)`, named after
   * its id and drawn with its host's machine. Returns a function that stops following it (the run
   * stays listed as it was). Never stops the run.
   */
  watch(source: ConversationActorLike | ConversationFeed, options?: WatchOptions): () => void;
  /**
   * Shows every conversation of a durable host: the most recently updated stored ones at once (up
   * to `maxRuns`), then each conversation that moves — started later, or resumed — as it does.
   * Each is listed under its conversation id and stays listed when its run ends (until `maxRuns`
   * drops the oldest finished ones); its next run shows in the same place. Resolves, once the stored
   * conversations are listed, with the function that stops following them. Never stops a run.
   */
  watchHost(host: WatchableHost, options?: WatchHostOptions): Promise<() => void>;
  /** Stops following every run, ends every page's stream and closes the server. */
  close(): Promise<void>;
};

type Client = { response: ServerResponse; run: string | null };
type WatchedRun = { view: RunView; stop: () => void };

/** What a host feed (`hostFeed(host, id)`) says of itself: its conversation id and machine. */
function hostFeedOf(source: ConversationFeed): Partial<Pick<HostConversationFeed, 'conversationId' | 'machine'>> {
  const { conversationId, machine } = source as ConversationFeed & Partial<HostConversationFeed>;
  return { ...(typeof conversationId === 'string' ? { conversationId } : {}), ...(machine ? { machine } : {}) };
}

function isMachine(value: unknown): value is AnyStateMachine {
  return typeof value === 'object' && value !== null && typeof (value as { root?: unknown }).root === 'object' && 'definition' in value;
}

// Unknown keys are ignored, as they always were, so callers passing extra keys keep working.
const liveViewerOptionsSchema = option.object(
  {
    host: option.withDefault(option.string({ nonEmpty: true, expected: 'a host name or IP address' }), '127.0.0.1'),
    port: option.withDefault(option.integer({ minimum: 0, maximum: 65_535, expected: 'an integer from 0 (a free port) to 65535' }), 0),
    title: option.withDefault(option.string(), 'actorloop live'),
    machine: option.optional(option.matching('a state machine (createConversationMachine(...))', isMachine)),
    maxLogEntries: option.withDefault(option.integer({ minimum: 1 }), 1000),
    maxRuns: option.withDefault(option.integer({ minimum: 1 }), 100),
  },
  { expected: 'an object', unknownKeys: 'ignore' },
);

// The id's default depends on the source (a host feed's conversation id), so `watch` applies it.
const watchOptionsSchema = option.object(
  {
    id: option.optional(option.string({ nonEmpty: true })),
    label: option.optional(option.string()),
    machine: option.optional(option.matching('a state machine', isMachine)),
  },
  { expected: 'an object', unknownKeys: 'ignore' },
);

// `stored` defaults to the viewer's own `maxRuns`, so `watchHost` applies it.
const watchHostOptionsSchema = option.object(
  {
    prefix: option.withDefault(option.string(), ''),
    stored: option.optional(option.integer({ minimum: 0, expected: 'an integer ≥ 0 (0: only conversations that move from now on)' })),
    machine: option.optional(option.matching('a state machine', (value): value is ConversationMachine => isMachine(value))),
  },
  { expected: 'an object', unknownKeys: 'ignore' },
);

/** Host names a browser may use to reach a server bound to a loopback address. */
const loopbackNames = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** The host name of a `Host` header (`127.0.0.1:4400` → `127.0.0.1`, `[::1]:4400` → `[::1]`). */
function hostName(header: string | undefined): string {
  if (!header) return '';
  if (header.startsWith('[')) return header.slice(0, header.indexOf(']') + 1);
  const colon = header.lastIndexOf(':');
  return (colon < 0 ? header : header.slice(0, colon)).toLowerCase();
}

/**
 * Starts the live viewer: a small local web server (node:http, no network needed, nothing loaded
 * from elsewhere) whose page draws the conversation statechart from the machine definition — a
 * readable overview or the full chart, laid out by ELK (`elkjs`, an optional peer) — lights up
 * the state of the selected run as it moves (Server-Sent Events), and lists the run's event log
 * (requests, retries, tool calls and results, approvals) and its messages. Watch as many runs as
 * you like; the page lists them.
 *
 * It listens on 127.0.0.1 and answers only requests addressed to this machine's loopback names
 * (a DNS-rebinding guard), since the page shows whole conversations. It keeps the process alive
 * until `close()`.
 *
 * @example
 * ```ts
 * import { startLiveViewer } from 'actorloop/inspect';
 *
 * const viewer = await startLiveViewer({ port: 4400 });
 * console.log(`open ${viewer.url}`);
 * const actor = createActor(machine, { input: { messages: [] } });
 * viewer.watch(actor, { label: 'first question' });
 * actor.start();
 * actor.send({ type: 'user.message', content: 'What is 2+3?' });
 * ```
 */
export async function startLiveViewer(options: LiveViewerOptions = {}): Promise<LiveViewer> {
  const { host, port: listenPort, title, machine: fallbackMachine, maxLogEntries, maxRuns } = liveViewerOptionsSchema.resolve(options, '');
  // Fails now, naming the package, rather than when the page first asks for a chart.
  await loadElk();
  const charts = new ChartStore();
  const runs = new Map<string, WatchedRun>();
  const clients = new Set<Client>();
  const hostWatches = new Set<() => void>();
  const allowedHosts = new Set([...loopbackNames, host.toLowerCase(), host.includes(':') ? `[${host.toLowerCase()}]` : host.toLowerCase()]);
  const anyHost = host === '0.0.0.0' || host === '::';
  let serial = 0;
  let closed = false;

  const send = (client: Client, event: string, data: unknown) => {
    client.response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const summaries = () => [...runs.values()].map((run) => run.view.summary());

  // Text and message updates can come by the hundred per second: the latest one of each goes out
  // at most every 50 ms. The run list likewise.
  const pending = new Map<string, { event: string; data: unknown; run: string | null }>();
  let flushTimer: NodeJS.Timeout | undefined;
  const later = (key: string, event: string, data: unknown, run: string | null) => {
    pending.set(key, { event, data, run });
    flushTimer ??= setTimeout(flush, 50);
  };
  function flush() {
    flushTimer = undefined;
    if (clients.size === 0) {
      pending.clear();
      return;
    }
    for (const [key, { event, data, run }] of pending) {
      const body = key === 'runs' ? summaries() : data;
      for (const client of clients) if (run === null || client.run === run) send(client, event, body);
    }
    pending.clear();
  }

  const changed = (runId: string) => (change: RunChange) => {
    if (change.type === 'text' || change.type === 'messages') {
      later(`${runId}/${change.type}`, change.type, change.type === 'text' ? change.text : change.messages, runId);
      return;
    }
    // The latest text and messages first, so the page never shows a state ahead of them.
    if (pending.size > 0) {
      clearTimeout(flushTimer);
      flush();
    }
    for (const client of clients) if (client.run === runId) send(client, change.type, change.type === 'state' ? change : change.entry);
    if (change.type === 'state') later('runs', 'runs', null, null);
  };

  const dropOldRuns = () => {
    for (const [id, run] of runs) {
      if (runs.size <= maxRuns) break;
      if (run.view.ended) {
        run.stop();
        runs.delete(id);
      }
    }
  };

  function watch(source: ConversationActorLike | ConversationFeed, watchOptions: WatchOptions = {}): () => void {
    if (closed) throw new InvalidOptionsError('watch()', 'a viewer that is still open (it was closed)');
    if (!isActorLike(source) && !isFeed(source))
      throw new InvalidOptionsError('watch(source)', 'a conversation actor or a feed { subscribe(listener) }', source);
    const fromHost = isActorLike(source) ? {} : hostFeedOf(source);
    const {
      id = fromHost.conversationId ?? `run-${++serial}`,
      label,
      machine,
    } = watchOptionsSchema.resolve(watchOptions, 'watch(source, options)');
    if (runs.has(id)) throw new InvalidOptionsError('watch(source, options).id', `an id no other watched run has ("${id}" is taken)`, id);
    const logic = isActorLike(source) ? (source as { logic?: unknown }).logic : undefined;
    const drawn = machine ?? (isMachine(logic) ? logic : isMachine(fromHost.machine) ? fromHost.machine : fallbackMachine);
    const chart = drawn ? charts.idOf(drawn) : null;
    const view = new RunView(id, label ?? id, chart, maxLogEntries, changed(id));
    // Agent calls' children are runs of their own, nested under their call; every conversation
    // machine has the same chart, so each is drawn on its parent's.
    const agents = new AgentRuns(id, {
      started: (childId, childLabel, parent) => {
        const child = new RunView(childId, childLabel, chart, maxLogEntries, changed(childId), parent);
        runs.get(childId)?.stop();
        runs.set(childId, { view: child, stop: () => {} });
        later('runs', 'runs', null, null);
        for (const client of clients) if (client.run === childId) send(client, 'run', child.detail());
        return child;
      },
    });
    const emitted = (event: ConversationEmittedEvent) => {
      view.emitted(event);
      agents.emitted(event);
    };
    const stops: Array<() => void> = [];
    const run: WatchedRun = {
      view,
      stop: () => {
        for (const stop of stops.splice(0)) stop();
      },
    };
    runs.set(id, run);
    if (isActorLike(source)) {
      // What the run receives from its user (approvals, denials, cancel) comes from the actor system's inspection.
      const system = (source as { system?: { inspect?: (observer: (event: InspectionEvent) => void) => { unsubscribe(): void } } }).system;
      const inspection = system?.inspect?.((event) => {
        if (event.type === '@xstate.event' && event.actorRef === (source as unknown) && userEventTypes.has(event.event.type)) {
          view.received(event.event as ConversationUserEvent);
        }
      });
      if (inspection) stops.push(() => inspection.unsubscribe());
      stops.push(
        observeActor(source, {
          onSnapshot: (snapshot) => view.state(stateUpdateOf(snapshot)),
          onEvent: emitted,
          onEnd: () => inspection?.unsubscribe(),
        }),
      );
    } else {
      stops.push(
        watchFeed(source, {
          state: (update) => view.state(update),
          event: emitted,
          writeFailed: (event) => view.writeFailed(event),
          error: (error) => view.failed(error),
        }),
      );
    }
    dropOldRuns();
    later('runs', 'runs', null, null);
    // A page may already be waiting for this id (opened with #id before the run was watched).
    for (const client of clients) if (client.run === id) send(client, 'run', view.detail());
    return run.stop;
  }

  async function watchHost(host: WatchableHost, hostOptions: WatchHostOptions = {}): Promise<() => void> {
    if (closed) throw new InvalidOptionsError('watchHost()', 'a viewer that is still open (it was closed)');
    checkWatchableHost(host);
    const { prefix, stored = maxRuns, machine } = watchHostOptionsSchema.resolve(hostOptions, 'watchHost(host, options)');
    const stop = await watchHostConversations(host, { prefix, stored, ...(machine ? { machine } : {}) }, (feed, runId) =>
      closed || runs.has(runId) ? undefined : watch(feed, { id: runId, label: feed.conversationId }),
    );
    if (closed) {
      stop();
      return () => undefined;
    }
    hostWatches.add(stop);
    return () => {
      hostWatches.delete(stop);
      stop();
    };
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      response.end(error instanceof Error ? error.message : String(error));
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!anyHost && !allowedHosts.has(hostName(request.headers.host))) {
      response.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
      response.end(`this viewer answers requests to ${[...allowedHosts].join(', ')} only`);
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
      response.end('the viewer is read-only: GET only');
      return;
    }
    const url = new URL(request.url ?? '/', 'http://viewer');
    const path = url.pathname;
    if (path === '/') {
      const nonce = randomBytes(16).toString('base64');
      response.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        // Nothing but the viewer itself: no script, style, font or request goes anywhere else.
        'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
        'x-content-type-options': 'nosniff',
      });
      response.end(viewerPage({ title, nonce }));
      return;
    }
    if (path === '/events') {
      const run = url.searchParams.get('run');
      response.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-content-type-options': 'nosniff',
      });
      response.write('retry: 1000\n\n');
      const client: Client = { response, run };
      clients.add(client);
      request.on('close', () => clients.delete(client));
      send(client, 'runs', summaries());
      const watched = run === null ? undefined : runs.get(run);
      if (watched) send(client, 'run', watched.view.detail());
      return;
    }
    const chart = /^\/charts\/([A-Za-z0-9_-]+)\/(overview|full)\.svg$/.exec(path);
    if (chart) {
      const svg = charts.svg(chart[1] ?? '', chart[2] as ChartKind);
      if (!svg) return notFound(response, `no chart ${chart[1]}`);
      const body = await svg;
      response.writeHead(200, {
        'content-type': 'image/svg+xml; charset=utf-8',
        'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff',
      });
      response.end(body);
      return;
    }
    if (path === '/api/runs') return json(response, summaries());
    const detail = /^\/api\/runs\/([^/]+)$/.exec(path);
    if (detail) {
      const watched = runs.get(decodeURIComponent(detail[1] ?? ''));
      return watched ? json(response, watched.view.detail()) : notFound(response, `no run ${detail[1]}`);
    }
    notFound(response, `nothing at ${path}`);
  }

  // A quiet comment now and then keeps idle streams open through proxies.
  const heartbeat = setInterval(() => {
    for (const client of clients) client.response.write(': ping\n\n');
  }, 15_000);
  heartbeat.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Errors of single connections (a page closed mid-write) are the client's business.
  server.on('clientError', (_error, socket) => socket.destroy());
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : anyHost ? '127.0.0.1' : host;

  return {
    url: `http://${urlHost}:${port}/`,
    port,
    watch,
    watchHost,
    close: async () => {
      if (closed) return;
      closed = true;
      for (const stop of hostWatches) stop();
      hostWatches.clear();
      clearInterval(heartbeat);
      clearTimeout(flushTimer);
      for (const run of runs.values()) run.stop();
      for (const client of clients) client.response.end();
      clients.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function json(response: ServerResponse, body: unknown): void {
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  response.end(JSON.stringify(body));
}

function notFound(response: ServerResponse, message: string): void {
  response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
  response.end(message);
}
