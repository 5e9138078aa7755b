import type { AnyStateMachine } from 'xstate';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { option, resolveOptionsWith } from '../../util/option-schema.js';
import type { ConversationFeed } from '../conversation-source.js';
import { serveViewer } from './viewer/serve-viewer.js';
import { loopbackOnly } from './viewer/loopback.js';
import { createViewerHandler } from './viewer/viewer-handler.js';
import type { ViewerHost } from './viewer/viewer-host.js';
import { isMachine, type WatchHostOptions, type WatchOptions } from './viewer/viewer-sources.js';
import type { WatchableActor } from './viewer/watched-run.js';

export type { WatchHostOptions, WatchOptions };

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
  /** Stream events kept per run, replayed to a page that opens it (the oldest go first). Default 1000. */
  maxLogEntries?: number;
  /** Runs kept in the list; past that, the oldest finished runs are dropped. Default 100. */
  maxRuns?: number;
  /** Steps kept per run for time travel (the oldest go first). Default 1000. */
  maxSteps?: number;
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
   * Shows a run: a conversation or workflow actor (its machine drawn, its state lit, every step
   * kept for time travel; approve, deny, cancel and fork work from the page) or a feed — e.g.
   * `hostFeed(host, id)`, named after its id and drawn with its host's machine (read-only). Returns
   * a function that stops following it (the run stays listed as it was). Never stops the run.
   */
  watch(source: WatchableActor | ConversationFeed, options?: WatchOptions): () => void;
  /**
   * Shows every conversation of a durable host, read through the host: its stored history (time
   * travel), its live stream, and approve, deny, cancel and fork. Resolves with the function that
   * takes the host off the page. Never stops a run.
   */
  watchHost(host: ViewerHost, options?: WatchHostOptions): Promise<() => void>;
  /** Stops following every run, stops the forks started from the page, ends every page's stream and closes the server. */
  close(): Promise<void>;
};

// Unknown keys are ignored, as they always were, so callers passing extra keys keep working.
const liveViewerOptionsSchema = option.object(
  {
    host: option.withDefault(option.string({ nonEmpty: true, expected: 'a host name or IP address' }), '127.0.0.1'),
    port: option.withDefault(option.integer({ minimum: 0, maximum: 65_535, expected: 'an integer from 0 (a free port) to 65535' }), 0),
    title: option.withDefault(option.string(), 'actorloop live'),
    machine: option.optional(option.matching('a state machine (createConversationMachine(...))', isMachine)),
    maxLogEntries: option.withDefault(option.integer({ minimum: 1 }), 1000),
    maxRuns: option.withDefault(option.integer({ minimum: 1 }), 100),
    maxSteps: option.withDefault(option.integer({ minimum: 1 }), 1000),
  },
  { expected: 'an object', unknownKeys: 'ignore' },
);

/**
 * Starts the live viewer on a port of this machine: `createViewerHandler` served by `serveViewer`,
 * with nothing to show yet — give it actors, feeds and hosts with `watch` and `watchHost`. One page
 * for every source (no network needed, nothing loaded from elsewhere): the statechart of the
 * selected run — a conversation's, or a workflow's with each running conversation drawn inside it
 * and lit — laid out by ELK (`elkjs`, an optional peer: the page says how to install it), time
 * travel over its steps, approvals, cancel and fork, its conversations, messages, agent tree and
 * event log.
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
  const { host, port, title, machine, maxLogEntries, maxRuns, maxSteps } = resolveOptionsWith(liveViewerOptionsSchema, options, 'options');
  const handler = createViewerHandler(undefined, {
    title,
    authorize: loopbackOnly(host),
    maxLogEntries,
    maxRuns,
    maxSteps,
    ...(machine ? { machine } : {}),
  });
  const served = await serveViewer(handler, { host, port });
  let closed = false;
  const open = (what: string) => {
    if (closed) throw new InvalidOptionsError(what, 'a viewer that is still open (it was closed)');
  };
  return {
    url: served.url,
    port: served.port,
    watch: (source, watchOptions) => {
      open('watch()');
      return handler.watch(source, watchOptions);
    },
    watchHost: async (watched, hostOptions) => {
      open('watchHost()');
      return handler.watchHost(watched, hostOptions);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      handler.close();
      await served.close();
    },
  };
}
