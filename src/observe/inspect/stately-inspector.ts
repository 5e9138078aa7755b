import type { InspectionEvent, Observer } from 'xstate';
import { option } from '../../util/option-schema.js';
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

const inBrowser = () => 'window' in globalThis && 'document' in globalThis;

type Sanitizer = (event: InspectableJson) => InspectableJson;
const sendEverything: Sanitizer = (json) => json;

// Unknown keys are ignored, as they always were, so callers passing extra keys keep working.
const statelyInspectorOptionsSchema = option.object(
  {
    // Read at creation, not at import: a test or a bundle may set up `window` and `document` in between.
    transport: option.transform(
      option.optional(option.choice(['websocket', 'browser'])),
      (transport) => transport ?? (inBrowser() ? 'browser' : 'websocket'),
    ),
    url: option.withDefault(
      option.matching('a ws:// or wss:// URL', (value): value is string => typeof value === 'string' && /^wss?:\/\//.test(value)),
      'ws://localhost:8080',
    ),
    // Passed through unchecked, as before: `@statelyai/inspect` decides what it accepts.
    inspectorUrl: option.optional(option.unchecked<string>()),
    sanitize: option.transform(
      option.optional(
        option.matching(
          'true, false or a function (event) => event',
          (value): value is boolean | Sanitizer => typeof value === 'boolean' || typeof value === 'function',
        ),
      ),
      (sanitize): Sanitizer => (sanitize === false ? sendEverything : typeof sanitize === 'function' ? sanitize : redactContent),
    ),
    maxBufferedEvents: option.withDefault(option.integer({ minimum: 0 }), 500),
    reconnectDelayMs: option.withDefault(option.number({ minimum: 1, expected: 'a number of milliseconds ≥ 1' }), 1000),
    onError: option.withDefault(option.callable<(error: Error) => void>('a function'), () => undefined),
  },
  { expected: 'an object', unknownKeys: 'ignore' },
);

/**
 * Plain JSON, then sanitized as the options say. It runs in a timer of `@statelyai/inspect`, where
 * a throw would be an uncaught exception: a failing sanitizer drops the event and reports it.
 */
function serializer(clean: Sanitizer, onError: (error: Error) => void): (event: unknown) => InspectableJson | undefined {
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
  const { transport, url, inspectorUrl, sanitize, maxBufferedEvents, reconnectDelayMs, onError } = statelyInspectorOptionsSchema.resolve(
    options,
    '',
  );
  const serialize = serializer(sanitize, onError);

  if (transport === 'browser') {
    // `createBrowserInspector` outside a browser logs an error and returns an object without `inspect`.
    if (!inBrowser()) return inactive();
    const stately = await loadStatelyInspect();
    const browser = stately.createBrowserInspector({
      serialize,
      ...(inspectorUrl === undefined ? {} : { url: inspectorUrl }),
    });
    if (!browser.inspect) return inactive();
    return { inspect: browser.inspect, active: true, stop: async () => browser.stop?.() };
  }

  const stately = await loadStatelyInspect();
  const { WebSocketAdapter } = await import('./websocket-adapter.js');
  const adapter = new WebSocketAdapter({ url, maxBufferedEvents, reconnectDelayMs, onError });
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
