import type { EventStore } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * How much of a Streamable HTTP session's SSE streams `serveMcp` keeps so that a client whose
 * connection dropped can reconnect with `Last-Event-ID` and get what it missed.
 *
 * @example
 * ```ts
 * const resumability: McpResumability = { maxEventsPerStream: 500, retentionMs: 60_000 };
 * ```
 */
export type McpResumability = {
  /** The most events kept per SSE stream (one stream per POST, plus the session's GET stream); the oldest go first. Default 1,000. */
  maxEventsPerStream?: number;
  /** How long an event is kept after it was sent, in ms. Default 300,000 (5 minutes). */
  retentionMs?: number;
};

type Stored = { seq: number; at: number; message: JSONRPCMessage };
type Stream = {
  events: Stored[];
  /** The highest sequence number dropped from this stream (0: none): resuming from before it would skip events. */
  droppedUpTo: number;
  /** Set once a JSON-RPC response was stored: nothing follows it on a request's stream. */
  finalEventId?: string;
};

/**
 * The SDK's `EventStore` for one MCP session, in memory and bounded: each stream keeps its last
 * `maxEventsPerStream` events, none older than `retentionMs`. Event ids are `<stream>/<seq>`, so the
 * stream of an id is read from the id itself and an id of another session is simply unknown.
 *
 * @example
 * ```ts
 * const events = sessionEventStore({ maxEventsPerStream: 100 });
 * const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator, eventStore: events });
 * ```
 */
export type SessionEventStore = EventStore & {
  /**
   * Whether a client holding `eventId` can be replayed everything after it: the id is of this
   * session, and nothing after it was dropped by the bounds. Checked before the SDK sees the
   * request, so a stale id gets a clear 400 rather than a replay with a hole in it.
   */
  canResumeAfter(eventId: string): boolean;
  /** The id of the stream's JSON-RPC response, once stored (its stream then ends with it). */
  finalEventIdOf(eventId: string): string | undefined;
};

/**
 * A new `SessionEventStore` within the given bounds (see `McpResumability` for the defaults).
 *
 * @example
 * ```ts
 * const events = sessionEventStore({ retentionMs: 60_000 });
 * ```
 */
export function sessionEventStore({ maxEventsPerStream = 1_000, retentionMs = 300_000 }: McpResumability = {}): SessionEventStore {
  const streams = new Map<string, Stream>();
  let seq = 0;

  const parse = (eventId: string): { streamId: string; seq: number } | undefined => {
    const slash = eventId.lastIndexOf('/');
    const n = Number(eventId.slice(slash + 1));
    if (slash <= 0 || !Number.isSafeInteger(n) || n <= 0) return undefined;
    return { streamId: eventId.slice(0, slash), seq: n };
  };

  /**
   * Drops what is past the bounds, everywhere: a stream nobody resumes must not be kept for ever
   * either. An emptied stream is forgotten once its response was stored; one whose request still
   * runs stays (an empty entry), so a client quiet for longer than `retentionMs` can still resume
   * and get the answer when it comes.
   */
  const trim = (now: number) => {
    for (const [streamId, stream] of streams) {
      while (
        stream.events.length > 0 &&
        (stream.events.length > maxEventsPerStream || now - (stream.events[0] as Stored).at > retentionMs)
      ) {
        stream.droppedUpTo = (stream.events.shift() as Stored).seq;
      }
      if (stream.events.length === 0 && stream.finalEventId !== undefined) streams.delete(streamId);
    }
  };

  const known = (eventId: string): { streamId: string; stream: Stream; seq: number } | undefined => {
    const parsed = parse(eventId);
    const stream = parsed && streams.get(parsed.streamId);
    if (!parsed || !stream) return undefined;
    // Everything after the id must still be here: its own event (or one dropped just before it) at the least.
    if (parsed.seq < stream.droppedUpTo || parsed.seq > seq) return undefined;
    return { ...parsed, stream };
  };

  return {
    async storeEvent(streamId, message) {
      const now = Date.now();
      const stream = streams.get(streamId) ?? { events: [], droppedUpTo: 0 };
      streams.set(streamId, stream);
      const stored = { seq: ++seq, at: now, message };
      stream.events.push(stored);
      const eventId = `${streamId}/${stored.seq}`;
      if ('id' in message && ('result' in message || 'error' in message)) stream.finalEventId = eventId;
      trim(now);
      return eventId;
    },
    async getStreamIdForEventId(eventId) {
      trim(Date.now());
      return known(eventId)?.streamId;
    },
    async replayEventsAfter(lastEventId, { send }) {
      trim(Date.now());
      const found = known(lastEventId);
      if (!found) throw new Error(`cannot resume after event ${JSON.stringify(lastEventId)}: it is unknown or no longer kept`);
      for (const event of found.stream.events) {
        // Priming events (`{}`) only give the client an id; there is nothing to replay in them.
        if (event.seq > found.seq && Object.keys(event.message).length > 0) await send(`${found.streamId}/${event.seq}`, event.message);
      }
      return found.streamId;
    },
    canResumeAfter(eventId) {
      trim(Date.now());
      return known(eventId) !== undefined;
    },
    finalEventIdOf(eventId) {
      return known(eventId)?.stream.finalEventId;
    },
  };
}
