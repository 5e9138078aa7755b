/**
 * Group commit for the Postgres store: writes (saves, lease calls) are gathered into batches, each
 * sent as one statement, so many conversations writing at once pay for one round trip and one
 * commit (one WAL flush) per batch instead of one per write.
 *
 * A batch is cut at the end of a turn of the event loop. Up to `maxInFlight` batches are on their
 * way at once; writes that arrive while that many are in flight wait and go in the next batch, cut
 * as soon as one of them is done — so the busier the store, the larger its batches. A conversation
 * has at most one write of a queue in flight: a later write of it waits behind the earlier one (in
 * the queue, never beside it in a batch), so its writes land in the order they were made, and a
 * batch never holds two writes of one conversation (which keeps a retried batch's "was it written
 * already?" check exact).
 */
export type BatchQueue<Item> = {
  /** Queues a write; it goes in the next batch its conversation may join. */
  add(item: Item): void;
};

export function batchQueue<Item>(settings: {
  /** The write's conversation. */
  conversationOf: (item: Item) => string;
  /** Batches on their way at once. */
  maxInFlight: number;
  /** Writes in one batch at most. */
  maxSize: number;
  /** Sends a batch (its writes in the order they came); it must settle every write of it, and never reject. */
  write: (batch: Item[]) => Promise<void>;
}): BatchQueue<Item> {
  const { conversationOf, maxInFlight, maxSize, write } = settings;
  let waiting: Item[] = [];
  /** Conversations with a write in a batch on its way. */
  const writing = new Set<string>();
  let inFlight = 0;
  /** Whether a cut is due at the end of this turn. */
  let cutting = false;

  const schedule = () => {
    if (cutting) return;
    cutting = true;
    setImmediate(flush);
  };

  /** The next batch out of `waiting`: the first waiting write of each conversation not being written, in order. */
  const nextBatch = (): Item[] => {
    const batch: Item[] = [];
    const rest: Item[] = [];
    const taken = new Set<string>();
    for (const item of waiting) {
      const id = conversationOf(item);
      if (batch.length < maxSize && !writing.has(id) && !taken.has(id)) {
        taken.add(id);
        batch.push(item);
      } else {
        rest.push(item);
      }
    }
    waiting = rest;
    return batch;
  };

  function flush() {
    cutting = false;
    while (inFlight < maxInFlight && waiting.length > 0) {
      const batch = nextBatch();
      if (batch.length === 0) return;
      const ids = batch.map(conversationOf);
      for (const id of ids) writing.add(id);
      inFlight++;
      const done = () => {
        for (const id of ids) writing.delete(id);
        inFlight--;
        if (waiting.length > 0) schedule();
      };
      write(batch).then(done, done);
    }
  }

  return {
    add(item) {
      waiting.push(item);
      schedule();
    },
  };
}
