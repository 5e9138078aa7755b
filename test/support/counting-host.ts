import type { ConversationHost } from '../../src/index.js';

/**
 * The real host, with `subscribe` and `subscribeAll` counting the subscriptions held on it: what
 * observers attach and never take off shows as a count above zero.
 */
export function countingHost(host: ConversationHost) {
  const open = { one: 0, all: 0 };
  const counted = (kind: keyof typeof open, stop: () => void) => {
    open[kind]++;
    let stopped = false;
    return () => {
      if (!stopped) open[kind]--;
      stopped = true;
      stop();
    };
  };
  const wrapped: ConversationHost = {
    ...host,
    subscribe: (id, listener) => counted('one', host.subscribe(id, listener)),
    subscribeAll: (listener) => counted('all', host.subscribeAll(listener)),
  };
  return { host: wrapped, subscriptions: () => open.one, allSubscriptions: () => open.all };
}
