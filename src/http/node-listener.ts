import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { type ProblemDetails, type ProblemTypeName, problemDetails } from './problem.js';

/**
 * What `toNodeListener` takes besides the handler.
 *
 * @example
 * ```ts
 * const options: NodeListenerOptions = { lingerMs: 2_000, onError: (error) => log.error(error) };
 * ```
 */
export type NodeListenerOptions = {
  /**
   * After an answer sent before its request's body was read to the end (a 413, a 408, a 401),
   * how long the rest of the body is read and dropped before the connection closes, so the client
   * reads the answer before the connection goes. Default 2,000 ms.
   */
  lingerMs?: number;
  /** Where a handler's own failures go (the request is answered 500). Default `console.error`. */
  onError?: (error: unknown) => void;
};

/**
 * The reason a request's signal aborts with when its client leaves: one, made once — an `abort()`
 * without a reason makes a DOMException and its stack for every stream a client closes.
 */
const clientLeft = new DOMException('the client closed the connection', 'AbortError');

/**
 * A `node:http` request listener over a Fetch API handler: the request body streams into the
 * `Request` as the handler reads it (the socket is paused while it does not), the response body
 * streams out as the socket drains, and a client that leaves aborts `request.signal` and cancels
 * the response body (an SSE stream stops following the conversation).
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createConversationHandler, toNodeListener } from 'actorloop/http';
 *
 * createServer(toNodeListener(createConversationHandler(host, { authorize }))).listen(3000);
 * ```
 */
export function toNodeListener(
  handler: (request: Request) => Promise<Response>,
  options: NodeListenerOptions = {},
): (request: IncomingMessage, response: ServerResponse) => void {
  const lingerMs = options.lingerMs ?? 2_000;
  const onError = options.onError ?? ((error: unknown) => console.error('actorloop/http:', error));
  return (incoming, outgoing) => {
    serve(handler, incoming, outgoing, { lingerMs, onError }).catch((error: unknown) => {
      report(onError, error);
      outgoing.destroy();
    });
  };
}

async function serve(
  handler: (request: Request) => Promise<Response>,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  options: Required<NodeListenerOptions>,
): Promise<void> {
  const aborter = new AbortController();
  // The client left before the answer was written to its end (as every SSE client does).
  outgoing.once('close', () => {
    if (!outgoing.writableFinished) aborter.abort(clientLeft);
  });

  // The Fetch API has no Request with these methods (node:http hands CONNECT to its own event).
  if (/^(TRACE|TRACK|CONNECT)$/i.test(incoming.method ?? '')) {
    return sendProblem(
      outgoing,
      problemDetails('method-not-implemented', `${incoming.method}: expected a method a Fetch API handler can take`),
    );
  }
  let request: Request;
  try {
    request = requestOf(incoming, aborter.signal);
  } catch {
    return sendProblem(outgoing, problemDetails('malformed-body', 'the request could not be read (its headers or URL are not valid)'));
  }
  let response: Response;
  try {
    response = await handler(request);
  } catch (error) {
    report(options.onError, error);
    return sendProblem(outgoing, problemDetails('internal-error', 'the request could not be answered'));
  }
  if (outgoing.destroyed) {
    await response.body?.cancel().catch(() => undefined);
    return;
  }
  // A body the handler left unread (an answer before it, or a refusal half way) is read and dropped once the answer is out.
  const unread = request.body !== null && !incoming.readableEnded;
  writeHead(outgoing, response, unread && !incoming.complete);
  if (unread) dropUnreadBody(incoming, outgoing, options.lingerMs);
  if (!response.body) return void outgoing.end();
  const reader = response.body.getReader();
  const stop = () => {
    reader.cancel().catch(() => undefined);
  };
  outgoing.once('close', stop);
  let corked = false;
  const uncork = () => {
    corked = false;
    outgoing.uncork();
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (outgoing.destroyed) return stop();
      // What follows at once (the headers, the next chunk, the end) goes out in the same write.
      if (!corked) {
        corked = true;
        outgoing.cork();
        process.nextTick(uncork);
      }
      // The socket's buffer is full: wait until it drains (or the client leaves) before taking more.
      if (!outgoing.write(value)) await drained(outgoing);
    }
    outgoing.end();
  } catch {
    // The body failed half way: the status went out already, so the client can only be told by the connection ending.
    outgoing.destroy();
  } finally {
    outgoing.off('close', stop);
  }
}

/** The `Request` of a `node:http` request: its body is read from the socket only as the handler pulls it. */
function requestOf(incoming: IncomingMessage, signal: AbortSignal): Request {
  const secure = 'encrypted' in incoming.socket && Boolean(incoming.socket.encrypted);
  let url: URL;
  try {
    url = new URL(incoming.url ?? '/', `${secure ? 'https' : 'http'}://${incoming.headers.host ?? 'localhost'}`);
  } catch {
    // A Host header that is not a host: the path still routes.
    url = new URL(incoming.url ?? '/', 'http://localhost');
  }
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) headers.append(raw[index] as string, raw[index + 1] as string);
  const method = incoming.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return new Request(url, {
    method,
    headers,
    signal,
    ...(hasBody ? { body: bodyOf(incoming), duplex: 'half' } : {}),
  } as RequestInit);
}

/** The request body as a stream that reads the socket only when pulled: a handler that stops reading stops the socket. */
function bodyOf(incoming: IncomingMessage): ReadableStream<Uint8Array> {
  let open = true;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      incoming.pause();
      incoming.on('data', (chunk: Buffer) => {
        if (!open) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) incoming.pause();
      });
      incoming.once('end', () => {
        if (open) controller.close();
        open = false;
      });
      // The client left mid-body (or the socket failed): the reader sees an error, not a short body.
      incoming.once('close', () => {
        if (open && !incoming.complete) controller.error(new Error('the request body ended before it was complete'));
        open = false;
      });
    },
    pull() {
      incoming.resume();
    },
    cancel() {
      open = false;
      incoming.pause();
    },
  });
}

function writeHead(outgoing: ServerResponse, response: Response, bodyStillArriving: boolean): void {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  // The rest of the body is not read: the connection cannot carry another request after this one.
  if (bodyStillArriving) headers.connection = 'close';
  outgoing.writeHead(response.status, response.statusText || undefined, headers);
  // An event stream's client learns at once that it is connected; any other answer's headers go out
  // with its first bytes, in the same write.
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) outgoing.flushHeaders();
}

/**
 * Once the answer is out, reads what is left of an unread body and drops it: a body that has all
 * arrived frees the connection for the next request; one still arriving is read for at most
 * `lingerMs`, then the connection closes. Closing at once with unread bytes makes the kernel reset
 * the connection, and a client can lose the answer to that reset before it reads it.
 */
function dropUnreadBody(incoming: IncomingMessage, outgoing: ServerResponse, lingerMs: number): void {
  outgoing.once('finish', () => {
    if (incoming.readableEnded || incoming.destroyed) return;
    if (!incoming.complete) {
      const timer = setTimeout(() => incoming.socket.destroy(), lingerMs);
      timer.unref();
      incoming.once('end', () => clearTimeout(timer));
      incoming.socket.once('close', () => clearTimeout(timer));
    }
    incoming.on('data', () => undefined);
    incoming.resume();
  });
}

function drained(outgoing: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      outgoing.off('drain', done);
      outgoing.off('close', done);
      resolve();
    };
    outgoing.once('drain', done);
    outgoing.once('close', done);
  });
}

function sendProblem(outgoing: ServerResponse, problem: ProblemDetails): void {
  if (outgoing.headersSent) return void outgoing.destroy();
  outgoing.writeHead(problem.status, { 'content-type': 'application/problem+json', 'cache-control': 'no-store', connection: 'close' });
  outgoing.end(JSON.stringify(problem));
}

function report(onError: (error: unknown) => void, error: unknown): void {
  try {
    onError(error);
  } catch {
    // An error handler that throws has nowhere left to report to.
  }
}

/**
 * Answers what `node:http` cannot parse as a request — a request line and headers over its
 * `maxHeaderSize` (431), bytes that are not HTTP (400), headers that never end (408) — with a
 * problem+json answer like the handler's, then closes the connection. Node's own answer has no
 * body. Install it as the server's `clientError` listener.
 *
 * @example
 * ```ts
 * const server = createServer(toNodeListener(handler));
 * server.on('clientError', answerClientError);
 * ```
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  const pending = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || pending?.headersSent) return void socket.destroy();
  const [name, detail]: [ProblemTypeName, string] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? ['headers-too-large', "the request line and headers: expected at most the server's maxHeaderSize (16 KiB by default), got more"]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['body-timeout', "the request: expected it whole within the server's requestTimeout, got it later"]
        : ['malformed-request', 'the request: expected HTTP/1.1, got bytes that do not parse as it'];
  const problem = problemDetails(name, detail);
  const body = JSON.stringify(problem);
  socket.end(
    `HTTP/1.1 ${problem.status} ${problem.title}\r\ncontent-type: application/problem+json\r\ncache-control: no-store\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
