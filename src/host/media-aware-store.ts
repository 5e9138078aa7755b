import type { ConversationStore, LogAppend, StoredConversation, StreamAppend } from './conversation-store.js';
import type { SaveOptions } from './conversation-lease.js';
import { ConversationLoadError } from './errors/conversation-load-error.js';
import { MediaCodec, MissingMedia, type StoredMedia } from './stored-media.js';

const codecs = new WeakMap<ConversationStore, MediaCodec>();

/** The codec of a store made by {@link mediaAwareStore}, for the host's writes that encode media themselves. */
export function mediaCodecOf(store: ConversationStore): MediaCodec | undefined {
  return codecs.get(store);
}

/** Log events that may hold media: user content as parts, a tool result with parts, compacted messages. */
const mayHoldMedia = (event: { type: string } & Record<string, unknown>) =>
  ((event.type === 'user.message' || event.type === 'user.interrupt') && Array.isArray(event.content)) ||
  (event.type === 'tool.result' && event.content !== undefined) ||
  event.type === 'context.compacted';

/**
 * The host's view of a store that keeps media once (it has `readMedia`): every write's snapshot,
 * log entries and stream items carry references instead of inline bytes, and the write hands the
 * store the media it refers to (`SaveOptions.media`, with the bytes of those it may not have yet);
 * every read of a snapshot (`load`, `loadStep`) has its references resolved, so the host and the
 * machine see whole parts. A reference whose bytes are gone is a `ConversationLoadError`
 * (`missing_media`) naming the conversation and the reference. The log and stored stream stay as
 * stored: their references are read with `store.readMedia(ref)`. A store without `readMedia` is
 * returned as it is.
 */
export function mediaAwareStore(store: ConversationStore): ConversationStore {
  const readMedia = store.readMedia?.bind(store);
  if (!readMedia) return store;
  const codec = new MediaCodec(readMedia);

  const decoded = async (id: string, stored: StoredConversation | undefined): Promise<StoredConversation | undefined> => {
    if (!stored) return stored;
    try {
      return { ...stored, snapshot: await codec.decode(stored.snapshot) };
    } catch (error) {
      if (error instanceof MissingMedia) {
        throw new ConversationLoadError(id, 'missing_media', `its snapshot refers to ${error.ref}, which the store does not have`);
      }
      throw error;
    }
  };

  const wrapped: ConversationStore = {
    load: async (id) => decoded(id, await store.load(id)),
    async save(conversation, log = [], stream?: StreamAppend, options: SaveOptions = {}) {
      const media = new Map<string, StoredMedia>();
      const add = (found: readonly StoredMedia[]) => {
        for (const item of found) if (!media.get(item.ref)?.data) media.set(item.ref, item);
      };
      let record = conversation;
      // The host's own writes encode their snapshot as they make it; any other (a fork) is encoded here.
      if (options.media) add(options.media);
      else {
        const encoded = await codec.encodeText(conversation.snapshot);
        add(encoded.media);
        record = { ...conversation, snapshot: encoded.text };
      }
      const entries: LogAppend[] = [];
      for (const entry of log) {
        if (!mayHoldMedia(entry.event as { type: string } & Record<string, unknown>)) entries.push(entry);
        else {
          const encoded = await codec.encode(entry.event);
          add(encoded.media);
          entries.push({ at: entry.at, event: JSON.parse(encoded.text) as LogAppend['event'] });
        }
      }
      let items = stream?.items;
      if (stream?.items.some((item) => item.event.type === 'tool.result' && 'content' in item.event)) {
        const encoded = await codec.encode(stream.items);
        add(encoded.media);
        items = JSON.parse(encoded.text) as StreamAppend['items'];
      }
      const written = [...media.values()];
      const saveOptions: SaveOptions = { ...options, media: written };
      await store.save(record, entries, stream && items ? { ...stream, items } : stream, saveOptions);
      codec.stored(written);
    },
    readLog: (id, options) => store.readLog(id, options),
    list: (options) => store.list(options),
    delete: (id) => store.delete(id),
    close: () => store.close(),
    readMedia,
  };
  if (store.readStream) wrapped.readStream = store.readStream.bind(store);
  if (store.readSteps) wrapped.readSteps = store.readSteps.bind(store);
  if (store.loadStep) {
    const loadStep = store.loadStep.bind(store);
    wrapped.loadStep = async (id, seq) => decoded(id, await loadStep(id, seq));
  }
  if (store.acquireLease) wrapped.acquireLease = store.acquireLease.bind(store);
  if (store.renewLease) wrapped.renewLease = store.renewLease.bind(store);
  if (store.releaseLease) wrapped.releaseLease = store.releaseLease.bind(store);
  codecs.set(wrapped, codec);
  return wrapped;
}
