/**
 * `GET /conversations/:id/events`: a conversation as Server-Sent Events, built on `actorloop/rx`.
 * `conversation$(hostFeed(host, id))` gives the conversation's current state first, then every
 * event its runs emit and every state change, across runs; each becomes one SSE message named by
 * its type. The client leaving unsubscribes — which never stops the run.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConversationHost, RunOutput } from 'actorloop';
import { type ConversationUpdate, conversation$, hostFeed } from 'actorloop/rx';
import { map } from 'rxjs';

export type EventStreamOptions = {
  /** A comment line this often keeps idle connections open through proxies. */
  heartbeatMs: number;
  /** A client that lets this much pile up unread is dropped (it reconnects and starts from the current state). */
  maxBufferedBytes: number;
  /** Called once when the stream ends, however it ends. */
  onEnd: () => void;
};

/**
 * What goes on the wire for an update: the history only with the first state (later states say
 * where the run is; `GET /conversations/:id` has the history), and a run's output without it.
 */
export function wireUpdate(update: ConversationUpdate, first: boolean): unknown {
  if (update.type !== 'state') return update;
  const { messages, output, ...state } = update;
  const { messages: _history, ...outcome } = output ?? ({} as Partial<RunOutput>);
  return { ...state, ...(first && messages ? { messages } : {}), ...(output ? { output: outcome } : {}) };
}

/** Streams a conversation to `response` until the client leaves, or the service closes it (`close`). */
export function streamConversation(
  host: ConversationHost,
  id: string,
  request: IncomingMessage,
  response: ServerResponse,
  options: EventStreamOptions,
): { close: () => void } {
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    // Tells nginx and the like not to buffer the stream.
    'x-accel-buffering': 'no',
  });
  // A client (EventSource) that loses the connection tries again after this long.
  response.write('retry: 2000\n\n');
  let serial = 0;
  let ended = false;
  const write = (event: string, data: unknown) => {
    if (ended) return;
    response.write(`id: ${++serial}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    if (response.writableLength > options.maxBufferedBytes) end(true);
  };
  const subscription = conversation$(hostFeed(host, id))
    .pipe(map((update, index) => ({ type: update.type, data: wireUpdate(update, index === 0) })))
    .subscribe({
      next: ({ type, data }) => write(type, data),
      // The conversation cannot be loaded, or the host closed: say so, and end.
      error: (error: unknown) => {
        write('error', { message: error instanceof Error ? error.message : String(error) });
        end(false);
      },
    });
  const heartbeat = setInterval(() => {
    if (!ended) response.write(': ping\n\n');
  }, options.heartbeatMs);
  heartbeat.unref();

  function end(drop: boolean) {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    // Unsubscribing takes the host subscription off; the run goes on.
    subscription.unsubscribe();
    if (drop) response.destroy();
    else response.end();
    options.onEnd();
  }
  // The client left (or the connection broke).
  request.on('close', () => end(false));
  response.on('error', () => end(true));
  return { close: () => end(false) };
}
