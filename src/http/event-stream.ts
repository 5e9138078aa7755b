import type { AnyConversationHost } from '../host/conversation-host.js';
import type { ConversationStreamItem, FollowOptions } from '../host/conversation-stream.js';
import { HostClosedError } from '../host/errors/host-closed-error.js';
import { concatBytes } from '../util/concat-bytes.js';

/**
 * How a conversation's Server-Sent Events stream runs.
 *
 * @example
 * ```ts
 * const settings: EventStreamSettings = { heartbeatMs: 15_000, maxBufferedBytes: 1_048_576 };
 * ```
 */
export type EventStreamSettings = {
  /** A comment line this often keeps proxies from closing an idle stream; `0`: none. */
  heartbeatMs: number;
  /**
   * Bytes the stream holds for a client that does not read them. Past it the stream ends with a
   * `resume` event naming the last event id written, and the client reconnects from there.
   */
  maxBufferedBytes: number;
};

/**
 * Why a stream told its client to reconnect (`event: resume`): it read too slowly, the host
 * closed (another process may serve the conversation), or the stored events could not be read.
 */
export type ResumeReason = 'slow_client' | 'host_closed' | 'unavailable';

/** How long a client (`EventSource`) waits before it reconnects, sent at the start of every stream. */
const retryMs = 1_000;

const encoder = new TextEncoder();

/** One SSE message: the item's id, its event type as the event name, the event as JSON. */
export function encodeStreamItem(item: ConversationStreamItem): Uint8Array {
  // JSON.stringify never writes a line break, so `data` is one line; ids and types have none either.
  return encoder.encode(`id: ${item.id}\nevent: ${item.event.type}\ndata: ${JSON.stringify(item.event)}\n\n`);
}

/**
 * A conversation's stream as a `text/event-stream` response over `host.follow`: every event with
 * `id:` (its stream id), `event:` (its type) and `data:` (the event as JSON), from `follow`'s
 * starting point on, across runs, until the client leaves (`signal`, or the body is cancelled).
 *
 * Events go out at the pace the client reads, those that arrive together (a step's deltas, a
 * replay) as one chunk: one write to the socket, not one per event. What a replay brings at once
 * (the events a reconnecting client missed, as `follow` hands them over in one go) is held as it came and sent
 * as the client takes it; live events are held up to `maxBufferedBytes`, counted with what waits
 * unsent: past it the stream writes `event: resume` with `{ lastEventId, reason }` — the id of
 * the last event written — and ends, and nothing more is kept for the client.
 *
 * @example
 * ```ts
 * return eventStreamResponse(host, 'c-42', { after: request.headers.get('last-event-id') ?? undefined }, settings, request.signal);
 * ```
 */
export function eventStreamResponse(
  host: AnyConversationHost,
  id: string,
  follow: FollowOptions,
  settings: EventStreamSettings,
  signal?: AbortSignal,
): Response {
  let stopFollowing: (() => void) | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let ended = false;
  let lastEventId: string | undefined = follow.after;
  /** Events received and not yet written: replayed ones as they came, live ones encoded (their bytes count). */
  const waiting: Array<{ item: ConversationStreamItem; bytes: Uint8Array | undefined }> = [];
  let waitingLiveBytes = 0;
  /** True while the first batch `follow` delivers is arriving: a replay comes in one go. */
  let inFirstBatch = false;
  let batches = 0;

  /** Writes what waits while the client's buffer has room (set once the stream has its controller). */
  let flush: () => void = () => undefined;
  /** Events arriving together (a step's, or a replay) are written together, once they have all arrived. */
  let flushScheduled = false;
  const scheduleFlush = () => {
    if (flushScheduled) return;
    flushScheduled = true;
    queueMicrotask(() => flush());
  };

  const finish = () => {
    if (ended) return;
    ended = true;
    waiting.length = 0;
    stopFollowing?.();
    if (heartbeat !== undefined) clearInterval(heartbeat);
    signal?.removeEventListener('abort', finish);
  };

  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        /** Bytes written for the client and not yet taken by the server that sends them. */
        const queued = () => settings.maxBufferedBytes - (controller.desiredSize ?? 0);
        const endWithResume = (reason: ResumeReason) => {
          if (ended) return;
          finish();
          controller.enqueue(encoder.encode(`event: resume\ndata: ${JSON.stringify({ lastEventId: lastEventId ?? null, reason })}\n\n`));
          controller.close();
        };
        /**
         * Writes what waits, as long as the client's buffer has room, as one chunk: the events of a
         * step (a batch of deltas) cost the stream and the socket one write, not one each.
         */
        flush = () => {
          flushScheduled = false;
          let room = controller.desiredSize ?? 0;
          const parts: Uint8Array[] = [];
          while (!ended && waiting.length > 0 && room > 0) {
            const { item, bytes } = waiting.shift() as (typeof waiting)[number];
            if (bytes) waitingLiveBytes -= bytes.byteLength;
            const written = bytes ?? encodeStreamItem(item);
            parts.push(written);
            room -= written.byteLength;
            lastEventId = item.id;
          }
          if (parts.length > 0) controller.enqueue(concatBytes(parts));
        };
        controller.enqueue(encoder.encode(`retry: ${retryMs}\n\n`));
        if (signal?.aborted) return finish();
        signal?.addEventListener('abort', finish, { once: true });
        const observer = {
          next: (item: ConversationStreamItem) => {
            if (ended) return;
            if (batches === 0) {
              batches = 1;
              inFirstBatch = true;
              queueMicrotask(() => {
                inFirstBatch = false;
              });
            }
            if (inFirstBatch) waiting.push({ item, bytes: undefined });
            else {
              const bytes = encodeStreamItem(item);
              // An event larger than the whole buffer still goes out when nothing is waiting before it.
              const behind = queued() + waitingLiveBytes;
              if ((behind > 0 || waiting.length > 0) && behind + bytes.byteLength > settings.maxBufferedBytes) {
                return endWithResume('slow_client');
              }
              waiting.push({ item, bytes });
              waitingLiveBytes += bytes.byteLength;
            }
            scheduleFlush();
          },
          error: (error: unknown) => endWithResume(HostClosedError.isInstance(error) ? 'host_closed' : 'unavailable'),
        };
        try {
          stopFollowing = host.follow(id, observer, follow);
        } catch (error) {
          // The route checked the id and the position already; a host that refuses anyway is not there to follow.
          return observer.error(error);
        }
        if (ended) stopFollowing();
        if (settings.heartbeatMs > 0) {
          heartbeat = setInterval(() => {
            // A stream with bytes still waiting is not idle.
            if (!ended && queued() === 0 && waiting.length === 0) controller.enqueue(encoder.encode(': heartbeat\n\n'));
          }, settings.heartbeatMs);
          heartbeat.unref?.();
        }
      },
      pull: () => flush(),
      cancel: finish,
    },
    new ByteLengthQueuingStrategy({ highWaterMark: settings.maxBufferedBytes }),
  );
  return new Response(body, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      // Tells nginx and the like to pass the stream on as it comes.
      'x-accel-buffering': 'no',
    },
  });
}
