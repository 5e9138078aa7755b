/** The `fetch` signature the SDK's HTTP transport takes. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A `fetch` that tells `onBroken` when the body of a server-sent-event response fails mid-way (the
 * server died, the network dropped). The SDK would otherwise wait for an answer on that stream
 * forever: without resumable event ids it does not reconnect it, and the call only ends at its
 * timeout. A stream the client itself aborts (closing, cancelling) is not reported.
 */
export function watchEventStreams(fetchImpl: FetchLike, onBroken: (error: unknown) => void): FetchLike {
  return async (url, init) => {
    const response = await fetchImpl(url, init);
    const body = response.body;
    if (!body || !response.ok || !response.headers.get('content-type')?.includes('text/event-stream')) return response;
    const reader = body.getReader();
    const watched = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (error) {
          if (!init?.signal?.aborted) onBroken(error);
          controller.error(error);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(watched, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
