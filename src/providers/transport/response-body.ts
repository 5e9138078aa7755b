/**
 * A web `ReadableStream` over a Node readable response body, with backpressure (the socket is
 * paused while the reader is behind) and both ways of stopping: the reader's `cancel()` and the
 * request's `AbortSignal` destroy the connection, and an abort errors the stream with the signal's
 * reason, as `fetch` does.
 */
export function responseBodyOf(
  source: NodeJS.ReadableStream,
  destroy: () => void,
  signal: AbortSignal | undefined,
): ReadableStream<Uint8Array> {
  let onAbort: (() => void) | undefined;
  // Once ended, errored or cancelled the controller takes nothing more: late socket events are dropped.
  let done = false;
  const detach = () => {
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    onAbort = undefined;
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const finish = (error?: unknown) => {
          if (done) return;
          done = true;
          detach();
          if (error === undefined) controller.close();
          else controller.error(error);
        };
        source.on('data', (chunk: Buffer | string) => {
          if (done) return;
          controller.enqueue(
            typeof chunk === 'string' ? new TextEncoder().encode(chunk) : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength),
          );
          if ((controller.desiredSize ?? 1) <= 0) source.pause();
        });
        source.once('end', () => finish());
        source.once('error', (error) => finish(signal?.aborted ? signal.reason : new TypeError('terminated', { cause: error })));
        // A response cut before its end (the server closed the socket) is an error, not a short body.
        source.once('close', () =>
          finish(
            signal?.aborted
              ? signal.reason
              : new TypeError('terminated', { cause: new Error('the connection closed before the body ended') }),
          ),
        );
        if (signal) {
          onAbort = () => {
            finish(signal.reason);
            destroy();
          };
          signal.addEventListener('abort', onAbort, { once: true });
        }
      },
      pull() {
        source.resume();
      },
      cancel() {
        done = true;
        detach();
        destroy();
      },
    },
    { highWaterMark: 16 },
  );
}
