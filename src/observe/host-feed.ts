import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import type { ConversationHost } from '../host/conversation-host.js';
import type { ConversationView } from '../host/conversation-view.js';
import type { ConversationMachine } from '../machines/names/types.js';
import type { ConversationFeed, ConversationUpdate } from './conversation-source.js';

/**
 * What {@link hostFeed} needs of a host: `createConversationHost(...)` has it all.
 *
 * @example
 * ```ts
 * const conversations: HostConversations = createConversationHost({ machine, store: memoryStore() });
 * ```
 */
export type HostConversations = Pick<ConversationHost, 'subscribe' | 'get'> & { readonly machine?: ConversationMachine };

/**
 * A feed of one host conversation, which knows where it comes from: the viewer names a watched
 * run after `conversationId` and draws `machine`.
 *
 * @example
 * ```ts
 * const feed: HostConversationFeed = hostFeed(host, 'c-42');
 * console.log(feed.conversationId); // 'c-42'
 * ```
 */
export type HostConversationFeed = ConversationFeed & { readonly conversationId: string; readonly machine?: ConversationMachine };

/** The current state of a conversation view as a state update. */
export function stateOfView(view: ConversationView): ConversationUpdate {
  return { type: 'state', value: view.value, status: view.status, messages: view.messages };
}

/**
 * Follows a conversation: `attach` delivers live updates from now on, `current` reads where the
 * conversation stands. The listener gets the current state first (when there is a conversation),
 * then the live updates that came meanwhile and after, in order. The last state delivered is never
 * older than the live ones: a live update that arrives while `current` is read is delivered after it.
 */
export function followConversation(
  current: () => Promise<ConversationView | undefined>,
  attach: (listener: (update: ConversationUpdate) => void) => () => void,
  listener: (update: ConversationUpdate) => void,
  onError?: (error: unknown) => void,
): () => void {
  let pending: ConversationUpdate[] | undefined = [];
  let stopped = false;
  const detach = attach((update) => {
    if (stopped) return;
    if (pending) pending.push(update);
    else listener(update);
  });
  const stop = () => {
    if (stopped) return;
    stopped = true;
    pending = undefined;
    detach();
  };
  const flush = (view: ConversationView | undefined) => {
    if (stopped || !pending) return;
    const queued = pending;
    pending = undefined;
    if (view) listener(stateOfView(view));
    for (const update of queued) {
      if (stopped) return;
      listener(update);
    }
  };
  let reading: Promise<ConversationView | undefined>;
  try {
    reading = current();
  } catch (error) {
    reading = Promise.reject(error);
  }
  reading.then(flush, (error: unknown) => {
    if (stopped) return;
    if (!onError) return flush(undefined);
    stop();
    onError(error);
  });
  return stop;
}

/**
 * One conversation of a durable host as a feed for `actorloop/rx`, the live viewer and tracing: the
 * conversation's current state first — `{ type: 'state', value, status, messages }`, as
 * `host.get(id)` sees it, so a late subscriber starts from now — then every event its runs emit and
 * every state change, across runs, for as long as the subscription lasts. A conversation that does
 * not exist yet starts with its first run's updates. A conversation that cannot be loaded
 * (`ConversationLoadError`) or a closed host fails the subscription (`error`) instead.
 * Unsubscribing never stops a run, and takes the feed's host subscription off.
 *
 * @example
 * ```ts
 * import { conversation$, hostFeed, state$, text$ } from 'actorloop/rx';
 *
 * const feed = hostFeed(host, 'c-42');
 * state$(feed).subscribe(({ value, status }) => console.log(status, value));
 * text$(feed).subscribe(render);
 * conversation$(feed).subscribe((update) => sse.send(update));
 * ```
 */
export function hostFeed(host: HostConversations, conversationId: string): HostConversationFeed {
  if (typeof host !== 'object' || host === null || typeof host.subscribe !== 'function' || typeof host.get !== 'function') {
    throw new InvalidOptionsError('hostFeed(host)', 'a conversation host (createConversationHost(...))', host);
  }
  if (typeof conversationId !== 'string' || conversationId === '') {
    throw new InvalidOptionsError('hostFeed(host, conversationId)', 'a conversation id (a non-empty string)', conversationId);
  }
  return {
    conversationId,
    ...(host.machine ? { machine: host.machine } : {}),
    subscribe: (listener, error) =>
      followConversation(
        () => host.get(conversationId),
        (live) => host.subscribe(conversationId, live),
        listener,
        error,
      ),
  };
}
