import type { ConversationEmittedEvent } from '../machines/types.js';
import type { ConversationFeed, ConversationStateUpdate } from './conversation-source.js';

/** What a feed watcher is told. */
export type FeedWatcher = {
  state?: (update: ConversationStateUpdate) => void;
  event?: (event: ConversationEmittedEvent) => void;
  types?: readonly ConversationEmittedEvent['type'][];
};

/** Watches a feed: state updates and emitted events (all, or those of `types`) go to their callbacks. */
export function watchFeed(feed: ConversationFeed, watcher: FeedWatcher): () => void {
  const wanted = watcher.types && watcher.types.length > 0 ? new Set<string>(watcher.types) : undefined;
  return feed.subscribe((update) => {
    if (update.type === 'state') watcher.state?.(update);
    else if (!wanted || wanted.has(update.type)) watcher.event?.(update);
  });
}
