import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import type { ConversationHost } from '../../host/conversation-host.js';
import type { ConversationSummary } from '../../host/conversation-store.js';
import type { ConversationMachine } from '../../machines/types.js';
import type { ConversationUpdate } from '../conversation-source.js';
import { followConversation, type HostConversationFeed } from '../host-feed.js';

/**
 * What `viewer.watchHost` needs of a host: `createConversationHost(...)` has it all.
 *
 * @example
 * ```ts
 * const watched: WatchableHost = createConversationHost({ machine, store: sqliteStore({ path: 'conversations.db' }) });
 * ```
 */
export type WatchableHost = Pick<ConversationHost, 'subscribe' | 'subscribeAll' | 'get' | 'list'> & {
  readonly machine?: ConversationMachine;
};

/**
 * Options of `viewer.watchHost`.
 *
 * @example
 * ```ts
 * await viewer.watchHost(host, { prefix: 'eu/', stored: 20 });
 * ```
 */
export type WatchHostOptions = {
  /** Put before each conversation id to make its run id in the viewer (to tell two hosts apart). Default `''`. */
  prefix?: string;
  /**
   * How many stored conversations to show from the start, the most recently updated ones. Default:
   * the viewer's `maxRuns`. `0`: only conversations that move from now on.
   */
  stored?: number;
  /** The machine to draw. Default: the host's. */
  machine?: ConversationMachine;
};

/** How the viewer shows one conversation: the run id, label and machine `watch` gets. */
export type FollowConversation = (feed: HostConversationFeed, runId: string) => (() => void) | undefined;

/** Most recently updated first, at most `count` of them, then oldest first (the order the viewer lists runs in). */
export function recentConversations(summaries: readonly ConversationSummary[], count: number): ConversationSummary[] {
  return [...summaries]
    .sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : 1))
    .slice(0, count)
    .reverse();
}

/** Every stored conversation's summary, page by page. */
async function listAll(host: WatchableHost): Promise<ConversationSummary[]> {
  const all: ConversationSummary[] = [];
  const page = 1000;
  let after: string | undefined;
  for (;;) {
    const summaries = await host.list({ limit: page, ...(after === undefined ? {} : { after }) });
    all.push(...summaries);
    const last = summaries.at(-1);
    if (summaries.length < page || !last) return all;
    after = last.id;
  }
}

export function checkWatchableHost(host: unknown): asserts host is WatchableHost {
  const methods = ['subscribe', 'subscribeAll', 'get', 'list'] as const;
  if (
    typeof host !== 'object' ||
    host === null ||
    methods.some((method) => typeof (host as Record<string, unknown>)[method] !== 'function')
  ) {
    throw new InvalidOptionsError('watchHost(host)', 'a conversation host (createConversationHost(...))', host);
  }
}

/**
 * Shows every conversation of a host through `follow`: the most recent stored ones at once, and
 * each conversation that moves from now on (a new one, or one that was not shown) when it does.
 * One host subscription feeds them all; a conversation's updates are routed to its feed, which
 * starts from the conversation's current state. Returns the function that stops following them.
 */
export async function watchHostConversations(
  host: WatchableHost,
  options: { prefix: string; stored: number; machine?: ConversationMachine },
  follow: FollowConversation,
): Promise<() => void> {
  const routes = new Map<string, (update: ConversationUpdate) => void>();
  const stops = new Map<string, () => void>();
  const machine = options.machine ?? host.machine;
  let stopped = false;

  const feedOf = (id: string): HostConversationFeed => ({
    conversationId: id,
    ...(machine ? { machine } : {}),
    subscribe: (listener, error) =>
      followConversation(
        () => host.get(id),
        (live) => {
          routes.set(id, live);
          return () => {
            if (routes.get(id) === live) routes.delete(id);
            stops.delete(id);
          };
        },
        listener,
        error,
      ),
  });

  /** Shows the conversation unless it is shown already (or its run id is taken by another run). */
  const show = (id: string) => {
    if (stopped || routes.has(id)) return;
    const stop = follow(feedOf(id), `${options.prefix}${id}`);
    if (stop && routes.has(id)) stops.set(id, stop);
  };

  // Subscribed before listing, so a conversation that moves while the list is read is not missed.
  const unsubscribe = host.subscribeAll((event, id) => {
    show(id);
    routes.get(id)?.(event);
  });
  const stopAll = () => {
    stopped = true;
    unsubscribe();
    for (const stop of [...stops.values()]) stop();
    stops.clear();
    routes.clear();
  };
  if (options.stored > 0) {
    try {
      for (const { id } of recentConversations(await listAll(host), options.stored)) show(id);
    } catch (error) {
      stopAll();
      throw error;
    }
  }
  return stopAll;
}
