import { option, resolveOptionsWith } from '../../util/option-schema.js';
import type { UIMessageChunk } from './ui-message-chunk.js';

/**
 * The headers of a UI message stream response: SSE, never cached or buffered on the way, and the
 * protocol's version header.
 *
 * @example
 * ```ts
 * new Response(body, { headers: uiMessageStreamHeaders });
 * ```
 */
export const uiMessageStreamHeaders: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // Tells nginx and the like not to buffer the stream.
  'x-accel-buffering': 'no',
  'x-vercel-ai-ui-message-stream': 'v1',
};

/**
 * Options of `toUIMessageStreamResponse`.
 *
 * @example
 * ```ts
 * const options: UIMessageStreamResponseOptions = { headers: { 'x-request-id': 'r-1' }, heartbeatMs: 10_000 };
 * ```
 */
export type UIMessageStreamResponseOptions = {
  status?: number;
  /** Added to (or replacing) the stream's own headers. */
  headers?: Record<string, string>;
  /** An SSE comment this often keeps an idle stream open through proxies (default 15,000 ms; `0`: none). */
  heartbeatMs?: number;
};

const responseOptionsSchema = option.object(
  {
    status: option.withDefault(option.integer({ minimum: 200, maximum: 299 }), 200),
    headers: option.withDefault(option.record(option.string()), {}),
    heartbeatMs: option.withDefault(option.integer({ minimum: 0, maximum: 2_147_483_647 }), 15_000),
  },
  { expected: 'an object { status?, headers?, heartbeatMs? }' },
);

const encoder = new TextEncoder();

type ChunkRead = Awaited<ReturnType<ReadableStreamDefaultReader<UIMessageChunk>['read']>>;

/**
 * A UI message stream as the HTTP response `useChat` reads: Server-Sent Events, one chunk a
 * `data: <json>` event, then `data: [DONE]`, with the `x-vercel-ai-ui-message-stream: v1` header.
 * A client that goes away cancels the stream (the run goes on).
 *
 * @example
 * ```ts
 * import { toUIMessageStream, toUIMessageStreamResponse } from 'actorloop/http';
 *
 * export async function GET(request: Request) {
 *   return toUIMessageStreamResponse(toUIMessageStream({ host, id: new URL(request.url).searchParams.get('id') ?? '' }));
 * }
 * ```
 */
export function toUIMessageStreamResponse(stream: ReadableStream<UIMessageChunk>, options: UIMessageStreamResponseOptions = {}): Response {
  const { status, headers, heartbeatMs } = resolveOptionsWith(responseOptionsSchema, options, 'options');
  const reader = stream.getReader();
  /** A read started for the next batch, when the chunk had not arrived yet. */
  let pendingRead: Promise<ChunkRead> | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const stopHeartbeat = () => {
    if (heartbeat !== undefined) clearInterval(heartbeat);
    heartbeat = undefined;
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (heartbeatMs > 0) {
        // SSE comments: the AI SDK's parser skips them.
        heartbeat = setInterval(() => controller.enqueue(encoder.encode(': ping\n\n')), heartbeatMs);
        heartbeat.unref?.();
      }
    },
    async pull(controller) {
      try {
        const first = pendingRead ?? reader.read();
        pendingRead = undefined;
        const { text, done } = await readBatch(reader, await first, (next) => {
          pendingRead = next;
        });
        if (text !== '') controller.enqueue(encoder.encode(text));
        if (done) {
          stopHeartbeat();
          controller.enqueue(encoder.encode('data: [DONE]\n\n'));
          controller.close();
        }
      } catch (error) {
        stopHeartbeat();
        controller.error(error);
      }
    },
    cancel(reason) {
      stopHeartbeat();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status, headers: { ...uiMessageStreamHeaders, ...headers } });
}

/** What one write may carry at most: a long replay goes out in pieces of about this size. */
const maxBatchCharacters = 65_536;
const notArrived = Symbol('not arrived');

/**
 * `first` and every chunk already waiting behind it, as SSE text: the chunks of one step (a
 * response's deltas) go out in one write, not one each. A read whose chunk has not arrived is
 * handed to `keep` for the next batch.
 */
async function readBatch(
  reader: ReadableStreamDefaultReader<UIMessageChunk>,
  first: ChunkRead,
  keep: (next: Promise<ChunkRead>) => void,
): Promise<{ text: string; done: boolean }> {
  let result = first;
  let text = '';
  while (!result.done) {
    text += `data: ${JSON.stringify(result.value)}\n\n`;
    if (text.length >= maxBatchCharacters) return { text, done: false };
    const next = reader.read();
    // A read of a chunk already queued is settled when it returns, so it wins the race; a pending
    // one loses to the resolved sentinel and waits for the next pull.
    const settled = await Promise.race([next, Promise.resolve(notArrived)]);
    if (settled === notArrived) {
      // Read again by the next pull; until then a failing stream must not count as unhandled.
      next.catch(() => undefined);
      keep(next);
      return { text, done: false };
    }
    result = settled;
  }
  return { text, done: true };
}
