import type { WriteFailedEvent } from '../host/live-run.js';
import type { ConversationEmittedEvent } from '../machines/names/types.js';
import type { ConversationFeed, ConversationStateUpdate, ConversationUpdate } from './conversation-source.js';

/** What a feed watcher is told. */
export type FeedWatcher = {
  state?: (update: ConversationStateUpdate) => void;
  event?: (event: ConversationEmittedEvent) => void;
  types?: readonly ConversationEmittedEvent['type'][];
  /** The host could not store the run and stopped its copy (the stored state is the last one written). */
  writeFailed?: (event: WriteFailedEvent) => void;
  /** The feed failed (it delivers nothing after). */
  error?: (error: unknown) => void;
};

/** Watches a feed: state updates and emitted events (all, or those of `types`) go to their callbacks. */
export function watchFeed(feed: ConversationFeed, watcher: FeedWatcher): () => void {
  const wanted = watcher.types && watcher.types.length > 0 ? new Set<string>(watcher.types) : undefined;
  const listener = (update: ConversationUpdate) => {
    if (update.type === 'state') watcher.state?.(update);
    else if (update.type === 'write.failed') watcher.writeFailed?.(update);
    else if (!wanted || wanted.has(update.type)) watcher.event?.(update);
  };
  return feed.subscribe(listener, watcher.error);
}
