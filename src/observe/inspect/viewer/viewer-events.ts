import type { ConversationStreamItem, FollowOptions } from '../../../host/conversation-stream.js';
import type { ViewerHost } from './viewer-host.js';

const encoder = new TextEncoder();

/** Bytes held for a page that does not read; past it the stream ends and the page reconnects from its last id. */
const maxBufferedBytes = 1_048_576;

/**
 * A conversation's stream for the page, as Server-Sent Events over `host.follow`: each item with
 * `id:` (its stream id, so a reconnecting `EventSource` continues after it) and its `{ id, event }`
 * as `data:`. Ends when the page leaves (`signal`, or the body is cancelled).
 *
 * @example
 * ```ts
 * return viewerEvents(host, 'c-42', { from: 'run' }, request.signal, 15_000);
 * ```
 */
export function viewerEvents(
  host: Pick<ViewerHost, 'follow'>,
  id: string,
  follow: FollowOptions,
  signal: AbortSignal,
  heartbeatMs: number,
): Response {
  let stop: (() => void) | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let ended = false;
  const finish = () => {
    if (ended) return;
    ended = true;
    stop?.();
    if (heartbeat !== undefined) clearInterval(heartbeat);
    signal.removeEventListener('abort', finish);
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const end = () => {
          if (ended) return;
          finish();
          controller.close();
        };
        controller.enqueue(encoder.encode('retry: 1000\n\n'));
        if (signal.aborted) return finish();
        signal.addEventListener('abort', finish, { once: true });
        const next = (item: ConversationStreamItem) => {
          if (ended) return;
          // A page that stopped reading gets the stream ended; its EventSource comes back with Last-Event-ID.
          if ((controller.desiredSize ?? 0) <= 0) return end();
          // JSON.stringify writes no line break, so `data` is one line.
          controller.enqueue(encoder.encode(`id: ${item.id}\ndata: ${JSON.stringify(item)}\n\n`));
        };
        try {
          stop = host.follow(id, { next, error: end }, follow);
        } catch {
          return end();
        }
        if (ended) stop();
        if (heartbeatMs > 0) {
          heartbeat = setInterval(() => {
            if (!ended && (controller.desiredSize ?? 0) > 0) controller.enqueue(encoder.encode(': heartbeat\n\n'));
          }, heartbeatMs);
          heartbeat.unref?.();
        }
      },
      cancel: finish,
    },
    new ByteLengthQueuingStrategy({ highWaterMark: maxBufferedBytes }),
  );
  return new Response(body, {
    status: 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
  });
}
