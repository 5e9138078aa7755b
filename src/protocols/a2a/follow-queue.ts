import type { AnyConversationHost } from '../../host/conversation-host.js';
import type { ConversationStreamEvent } from '../../host/conversation-stream.js';

/** A conversation's stream from now on, pulled one event at a time. */
export type FollowQueue = {
  /** The next event; `undefined` once the stream ended (the host closed, `signal` aborted, `stop()`). */
  next(): Promise<ConversationStreamEvent | undefined>;
  stop(): void;
};

/**
 * Follows a conversation into a queue. Started before the event a caller sends, so nothing the run
 * does in between is missed; `signal` (the client leaving) ends it at once, even while a `next()`
 * waits — an async generator's `return()` would only run at its next `yield`.
 */
export function followQueue(host: AnyConversationHost, id: string, signal: AbortSignal | undefined): FollowQueue {
  const items: ConversationStreamEvent[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const end = () => {
    ended = true;
    wake?.();
  };
  const stopFollowing = host.follow(id, {
    next: ({ event }) => {
      items.push(event);
      wake?.();
    },
    error: end,
  });
  const onAbort = () => stop();
  signal?.addEventListener('abort', onAbort, { once: true });
  let stopped = false;
  function stop() {
    if (stopped) return;
    stopped = true;
    stopFollowing();
    signal?.removeEventListener('abort', onAbort);
    end();
  }
  if (signal?.aborted) stop();
  return {
    async next() {
      while (items.length === 0 && !ended) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      return items.shift();
    },
    stop,
  };
}
