import type { InspectionEvent, Observer } from 'xstate';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { importOptional } from '../import-optional.js';
import { type InspectableJson, redactContent, toInspectable } from './inspectable.js';

/**
 * Options of {@link createStatelyInspector}.
 *
 * @example
 * ```ts
 * const options: StatelyInspectorOptions = { url: 'ws://127.0.0.1:8080', sanitize: true };
 * ```
 */
export type StatelyInspectorOptions = {
  /**
   * `websocket` (the default in Node) streams to a WebSocket server, such as the bridge of
   * `@statelyai/inspect/server` that opens the Stately inspector in a browser; `browser` opens the
   * inspector window from a web page, and is a no-op in Node (`active: false`).
   */
  transport?: 'websocket' | 'browser';
  /** The WebSocket server (`transport: 'websocket'`). Default `ws://localhost:8080`, the bridge's default. */
  url?: string;
  /** The inspector page (`transport: 'browser'`). Default: the Stately inspector. */
  inspectorUrl?: string;
  /**
   * What leaves the process. `true` (the default) drops message content, tool arguments and
   * results, and sessionData — from snapshots' context and output, events and child actors'
   * input — keeping states, event types, ids, tool names, usage and errors. `false` sends
   * everything. A function gets each inspection event as plain JSON and returns what to send.
   */
  sanitize?: boolean | ((event: InspectableJson) => InspectableJson);
  /** Events kept while the connection is down (the newest win). Default 500. */
  maxBufferedEvents?: number;
  /** First delay before reconnecting after the connection fails or drops; doubles up to 30 s. Default 1000. */
  reconnectDelayMs?: number;
  /** Connection failures (never thrown). Default: ignored. */
  onError?: (error: Error) => void;
};

/**
 * A running bridge to the Stately inspector: pass `inspect` to `createActor`.
 *
 * @example
 * ```ts
 * const inspector: StatelyInspector = await createStatelyInspector();
 * const actor = createActor(machine, { input: { messages: [] }, inspect: inspector.inspect });
 * ```
 */
export type StatelyInspector = {
  /** The inspection observer for `createActor(machine, { inspect })`. */
  inspect: Observer<InspectionEvent>;
  /** False when this inspector does nothing (the browser transport outside a browser). */
  active: boolean;
  /** Stops sending (and reconnecting); resolves once the connection is closed. */
  stop(): Promise<void>;
};

/** The part of `@statelyai/inspect` used here. */
type StatelyInspectModule = {
  createInspector(
    adapter: { start?: () => void; stop?: () => void; send(event: unknown): void },
    options?: { serialize?: (event: never) => unknown; autoStart?: boolean },
  ): { inspect: Observer<InspectionEvent>; start(): void; stop(): void };
  createBrowserInspector(options?: Record<string, unknown>): { inspect?: Observer<InspectionEvent>; stop?: () => void };
};

const feature = 'The Stately inspector bridge (actorloop/inspect)';
const loadStatelyInspect = () =>
  importOptional('@statelyai/inspect', feature, () => import('@statelyai/inspect') as unknown as Promise<StatelyInspectModule>);

const inactive = (): StatelyInspector => ({ inspect: { next: () => undefined }, active: false, stop: async () => undefined });

function checkOptions(options: StatelyInspectorOptions): void {
  const { transport, url, sanitize, maxBufferedEvents, reconnectDelayMs, onError } = options;
  if (transport !== undefined && transport !== 'websocket' && transport !== 'browser')
    throw new InvalidOptionsError('transport', '"websocket" or "browser"', transport);
  if (url !== undefined && (typeof url !== 'string' || !/^wss?:\/\//.test(url)))
    throw new InvalidOptionsError('url', 'a ws:// or wss:// URL', url);
  if (sanitize !== undefined && typeof sanitize !== 'boolean' && typeof sanitize !== 'function')
    throw new InvalidOptionsError('sanitize', 'true, false or a function (event) => event', sanitize);
  if (maxBufferedEvents !== undefined && (!Number.isInteger(maxBufferedEvents) || maxBufferedEvents < 0))
    throw new InvalidOptionsError('maxBufferedEvents', 'an integer ≥ 0', maxBufferedEvents);
  if (reconnectDelayMs !== undefined && (!Number.isFinite(reconnectDelayMs) || reconnectDelayMs < 1))
    throw new InvalidOptionsError('reconnectDelayMs', 'a number of milliseconds ≥ 1', reconnectDelayMs);
  if (onError !== undefined && typeof onError !== 'function') throw new InvalidOptionsError('onError', 'a function', onError);
}

/**
 * Plain JSON, then sanitized as the options say. It runs in a timer of `@statelyai/inspect`, where
 * a throw would be an uncaught exception: a failing sanitizer drops the event and reports it.
 */
function serializer(options: StatelyInspectorOptions, onError: (error: Error) => void): (event: unknown) => InspectableJson | undefined {
  const { sanitize } = options;
  const clean = sanitize === false ? (json: InspectableJson) => json : typeof sanitize === 'function' ? sanitize : redactContent;
  return (event) => {
    try {
      return clean(toInspectable(event) ?? null);
    } catch (error) {
      onError(error instanceof Error ? error : new Error(String(error)));
      return undefined;
    }
  };
}

/**
 * Streams runs to the Stately inspector through `@statelyai/inspect` (an optional peer
 * dependency): every actor created with `inspect: inspector.inspect` shows up with its machine,
 * its snapshots and the events it receives. By default the conversation's content is dropped
 * before it leaves the process (see `sanitize`).
 *
 * In Node it is safe to leave on: with no server listening it neither throws nor keeps the
 * process alive (the connection and its retries are unref'd); events wait in a small buffer
 * until a server answers. Call `stop()` to close the connection before exiting when the last
 * events must get out.
 *
 * @example
 * ```ts
 * // Terminal 1: npx @statelyai/inspect … or any bridge: createInspectorServer() from '@statelyai/inspect/server'
 * import { createStatelyInspector } from 'actorloop/inspect';
 *
 * const inspector = await createStatelyInspector({ url: 'ws://localhost:8080' });
 * const actor = createActor(machine, { input: { messages: [] }, inspect: inspector.inspect }).start();
 * actor.send({ type: 'user.message', content: 'What is 2+3?' });
 * await toPromise(actor);
 * await inspector.stop();
 * ```
 */
export async function createStatelyInspector(options: StatelyInspectorOptions = {}): Promise<StatelyInspector> {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionsError('options', 'an object', options);
  checkOptions(options);
  const inBrowser = 'window' in globalThis && 'document' in globalThis;
  const transport = options.transport ?? (inBrowser ? 'browser' : 'websocket');
  const onError = options.onError ?? (() => undefined);
  const serialize = serializer(options, onError);

  if (transport === 'browser') {
    // `createBrowserInspector` outside a browser logs an error and returns an object without `inspect`.
    if (!inBrowser) return inactive();
    const stately = await loadStatelyInspect();
    const browser = stately.createBrowserInspector({
      serialize,
      ...(options.inspectorUrl === undefined ? {} : { url: options.inspectorUrl }),
    });
    if (!browser.inspect) return inactive();
    return { inspect: browser.inspect, active: true, stop: async () => browser.stop?.() };
  }

  const stately = await loadStatelyInspect();
  const { WebSocketAdapter } = await import('./websocket-adapter.js');
  const adapter = new WebSocketAdapter({
    url: options.url ?? 'ws://localhost:8080',
    maxBufferedEvents: options.maxBufferedEvents ?? 500,
    reconnectDelayMs: options.reconnectDelayMs ?? 1000,
    onError,
  });
  const inspector = stately.createInspector(
    {
      start: () => adapter.start(),
      send: (event) => {
        if (event === undefined) return;
        try {
          adapter.send(JSON.stringify(event));
        } catch (error) {
          onError(error instanceof Error ? error : new Error(String(error)));
        }
      },
    },
    { serialize: serialize as (event: never) => unknown, autoStart: false },
  );
  inspector.start();
  return { inspect: inspector.inspect, active: true, stop: () => adapter.stop() };
}
