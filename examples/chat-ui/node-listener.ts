/**
 * A Fetch API handler (`(Request) => Promise<Response>`) as a `node:http` listener: the request's
 * body streams in, the response's body streams out at the pace the client reads it, and a client
 * that leaves cancels the response body (which stops following the conversation; the run goes on).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

export type FetchHandler = (request: Request) => Promise<Response>;

function requestOf(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const method = req.method ?? 'GET';
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`);
  const body = method === 'GET' || method === 'HEAD' ? null : (Readable.toWeb(req) as ReadableStream<Uint8Array>);
  return new Request(url, { method, headers, body, signal, ...(body ? { duplex: 'half' } : {}) } as RequestInit);
}

async function writeResponse(response: Response, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const headers = Object.fromEntries(response.headers);
  // A body the handler refused unread (too large): the connection cannot carry another request.
  if (!req.complete) headers.connection = 'close';
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  // Headers go out at once: a stream's client sees the response start before its first event.
  res.flushHeaders();
  const reader = response.body.getReader();
  const left = new Promise<void>((resolve) => res.once('close', resolve));
  res.once('close', () => void reader.cancel().catch(() => undefined));
  for (;;) {
    const next = await Promise.race([reader.read(), left.then(() => undefined)]);
    if (!next || next.done || res.destroyed) break;
    if (!res.write(next.value)) await Promise.race([new Promise((resolve) => res.once('drain', resolve)), left]);
  }
  if (!res.destroyed) res.end();
}

/**
 * @example
 * ```ts
 * createServer(toNodeListener((request) => handleChatRequest(host, request, { authorize }))).listen(3000);
 * ```
 */
export function toNodeListener(handler: FetchHandler): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const aborted = new AbortController();
    res.once('close', () => aborted.abort());
    handler(requestOf(req, aborted.signal))
      .then((response) => writeResponse(response, req, res))
      .catch((error: unknown) => {
        console.error('[chat-ui]', error);
        if (!res.headersSent)
          res.writeHead(500, { 'content-type': 'application/problem+json' }).end('{"status":500,"title":"Internal Server Error"}');
        else res.destroy();
      });
  };
}
