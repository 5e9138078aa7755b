import { setTimeout as sleep } from 'node:timers/promises';
import type { ConversationStatus, ConversationStore } from '../host/conversation-store.js';
import type { ConversationEmittedEvent, ConversationStateValue } from '../machines/names/types.js';
import type { Message } from '../model/messages.js';
import type { ConversationUpdate } from '../observe/conversation-source.js';
import { startLiveViewer } from '../observe/inspect/index.js';
import { handlerProvider } from '../providers/handler/handler-provider.js';
import { sqliteStore } from '../stores/sqlite/index.js';
import { offlineModel } from './offline-model.js';
import type { CliEnvironment } from './run-command.js';
import { cliMachine } from './run-command.js';

/** How often the store is read for new conversations and new log entries. */
const pollMs = 400;

type Listener = (update: ConversationUpdate) => void;

/** What a stored snapshot says of the run: its state value, status and history. */
function stateOf(
  snapshot: string,
  status: ConversationStatus,
): { value: ConversationStateValue; status: ConversationStatus; messages: Message[] } | undefined {
  try {
    const parsed = JSON.parse(snapshot) as { value?: ConversationStateValue; context?: { messages?: Message[] } };
    if (parsed.value === undefined) return undefined;
    return {
      value: parsed.value,
      status,
      messages: parsed.context?.messages ?? [],
    };
  } catch {
    return undefined;
  }
}

/**
 * A conversation stored by another process, as a viewer feed: its log entries become events, its
 * stored state the highlighted state. Read by polling, so it shows what was stored, step by step
 * (streamed text is not stored, so it does not show).
 */
function storedFeed(store: ConversationStore, id: string) {
  const listeners = new Set<Listener>();
  let afterSeq = 0;
  let revision = 0;
  return {
    subscribe(listener: Listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async poll(): Promise<void> {
      for (const entry of await store.readLog(id, { afterSeq })) {
        afterSeq = entry.seq;
        if (entry.event.type === 'run.ended') continue;
        for (const listener of listeners) listener(entry.event as ConversationEmittedEvent);
      }
      const stored = await store.load(id);
      if (!stored || stored.revision === revision) return;
      revision = stored.revision;
      const state = stateOf(stored.snapshot, stored.status);
      if (state) for (const listener of listeners) listener({ type: 'state', ...state });
    },
  };
}

/**
 * `actorloop inspect --db file`: the live viewer on a store — every stored conversation, and new ones
 * as another process writes them, each lit up at its stored state. Runs until Ctrl-C.
 */
export async function inspectStored(db: string, port: number | undefined, environment: CliEnvironment): Promise<number> {
  const store = sqliteStore({ path: db, create: false });
  try {
    // The file is read before the viewer starts: a missing or bad one fails the command at once, with nothing served.
    await store.list({ limit: 1 });
  } catch (error) {
    await store.close();
    throw error;
  }
  const machine = cliMachine(undefined, handlerProvider(offlineModel()));
  const viewer = await startLiveViewer({ machine, title: `actorloop · ${db}`, ...(port === undefined ? {} : { port }) });
  const feeds = new Map<string, ReturnType<typeof storedFeed>>();
  const tick = async () => {
    for (const { id } of await store.list()) {
      if (feeds.has(id)) continue;
      const feed = storedFeed(store, id);
      feeds.set(id, feed);
      viewer.watch(feed, { id, label: id, machine });
    }
    for (const feed of feeds.values()) await feed.poll();
  };
  const abort = new AbortController();
  const remove = environment.onInterrupt(() => abort.abort());
  environment.stderr.write(`actorloop: the live viewer on ${db}: ${viewer.url} (Ctrl-C to stop)\n`);
  try {
    while (!abort.signal.aborted) {
      await tick();
      await sleep(pollMs, undefined, { signal: abort.signal }).catch(() => undefined);
    }
  } finally {
    remove();
    await viewer.close();
    await store.close();
  }
  return 0;
}
