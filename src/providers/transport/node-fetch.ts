import type * as http from 'node:http';
import type * as https from 'node:https';
import type * as zlib from 'node:zlib';
import { option, resolveOptionsWith } from '../../util/option-schema.js';
import { nodeBuiltin, requireNodeRuntime } from '../../util/runtime.js';
import type { FetchFunction } from './fetch-function.js';
import { redirectTarget } from './redirect.js';
import { requestBodyOf, toHeaderRecord } from './request-parts.js';
import { responseBodyOf } from './response-body.js';

/** Options of {@link createNodeFetch}. */
export type NodeFetchOptions = {
  /** Open connections per origin at most; requests beyond wait for a free one. Default 256. */
  maxSockets?: number;
  /** Idle connections kept per origin for reuse. Default 256. */
  maxFreeSockets?: number;
  /** How long an idle connection is kept before it is closed, in ms. Default 30,000. */
  freeSocketTimeoutMs?: number;
  /** Redirects followed at most, as `fetch` does (it allows 20). Default 20. */
  maxRedirects?: number;
};

/** A `fetch` over `node:http` / `node:https` with its own keep-alive pools; `close()` ends them. */
export type NodeFetch = FetchFunction & {
  /** Closes the idle connections and stops pooling; requests in flight finish. */
  close(): void;
};

/** An option reported as `createNodeFetch({ maxSockets })`, the form its errors always had, whatever path it is resolved under. */
// Unknown keys are ignored, not refused: createNodeFetch never refused them.
const nodeFetchOptionsSchema = option.object(
  {
    maxSockets: option.at('createNodeFetch({ maxSockets })', option.withDefault(option.integer({ minimum: 1 }), 256)),
    maxFreeSockets: option.at('createNodeFetch({ maxFreeSockets })', option.withDefault(option.integer({ minimum: 1 }), 256)),
    freeSocketTimeoutMs: option.at('createNodeFetch({ freeSocketTimeoutMs })', option.withDefault(option.integer({ minimum: 1 }), 30_000)),
    maxRedirects: option.at('createNodeFetch({ maxRedirects })', option.withDefault(option.integer({ minimum: 0 }), 20)),
  },
  { label: 'createNodeFetch(options)', expected: 'an options object', unknownKeys: 'ignore' },
);

type NodeModules = { http: typeof http; https: typeof https; zlib: typeof zlib };

/**
 * Node's modules, taken when a fetch is made rather than imported: the root exports this file, and
 * a static `import 'node:http'` would stop the whole package loading where Node's modules are not
 * (workerd without `nodejs_compat`), though only this function needs them.
 */
function nodeModules(): NodeModules {
  requireNodeRuntime('createNodeFetch', "pass no fetch: the providers then use the runtime's own fetch");
  return {
    http: nodeBuiltin<typeof http>('node:http') as typeof http,
    https: nodeBuiltin<typeof https>('node:https') as typeof https,
    zlib: nodeBuiltin<typeof zlib>('node:zlib') as typeof zlib,
  };
}

function decoderFor(zlib: NodeModules['zlib'], encoding: string): (() => NodeJS.ReadWriteStream) | undefined {
  const sync = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return () => zlib.createGunzip(sync);
    case 'deflate':
      return () => zlib.createInflate();
    case 'br':
      return () => zlib.createBrotliDecompress();
    default:
      return undefined;
  }
}

/** What `fetch` rejects with when the network fails: a `TypeError` whose `cause` is the socket's error. */
function networkError(cause: unknown): TypeError {
  return new TypeError('fetch failed', { cause });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/**
 * A `fetch` for the provider SDKs built on `node:http` and `node:https` keep-alive agents instead of
 * Node's built-in `fetch` (undici). On this project's benchmark a tool round's HTTP work costs
 * noticeably less CPU this way (see docs/performance.md for the figures); the behaviour the SDKs rely
 * on is kept: streamed bodies with backpressure, `AbortSignal` (the request and its body stop), gzip,
 * deflate and brotli bodies, redirects, and network failures rejecting with `TypeError('fetch failed')`.
 *
 * Not covered, by design: `HTTP_PROXY` / `HTTPS_PROXY` are not read (Node's own `fetch` does not read
 * them either); request bodies other than strings, bytes and `URLSearchParams` (multipart uploads,
 * streams) are handed to the global `fetch`; cookies and caches are not kept.
 *
 * @example
 * ```ts
 * import OpenAI from 'openai';
 * import { createNodeFetch, openaiProvider } from 'actorloop';
 *
 * const fetch = createNodeFetch({ maxSockets: 64 });
 * const provider = openaiProvider({ model: 'gpt-4o-mini', fetch });
 * // or your own client: new OpenAI({ fetch, maxRetries: 0 })
 * // at shutdown: fetch.close();
 * ```
 */
export function createNodeFetch(options: NodeFetchOptions = {}): NodeFetch {
  const modules = nodeModules();
  const { http, https } = modules;
  const { maxSockets, maxFreeSockets, freeSocketTimeoutMs, maxRedirects } = resolveOptionsWith(nodeFetchOptionsSchema, options);
  const agentOptions: http.AgentOptions = {
    keepAlive: true,
    maxSockets,
    maxFreeSockets,
    timeout: freeSocketTimeoutMs,
    // The most recently used connection is the one least likely to have been closed by the server.
    scheduling: 'lifo',
  };
  const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
  let closed = false;

  function once(
    url: URL,
    method: string,
    headers: Record<string, string>,
    body: string | Uint8Array | null,
    signal: AbortSignal | undefined,
  ) {
    return new Promise<{ message: http.IncomingMessage; url: URL }>((resolve, reject) => {
      const secure = url.protocol === 'https:';
      const request = (secure ? https : http).request(url, {
        method,
        headers,
        agent: closed ? undefined : secure ? agents.https : agents.http,
        ...(signal ? { signal } : {}),
      });
      request.once('response', (message) => resolve({ message, url }));
      request.once('error', (error) => reject(signal?.aborted ? abortReason(signal) : networkError(error)));
      request.end(body ?? undefined);
    });
  }

  async function nodeFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
    if (typeof Request !== 'undefined' && input instanceof Request) return globalThis.fetch(input, init);
    const body = requestBodyOf(init.body);
    if (body === undefined) return globalThis.fetch(input, init);
    const signal = init.signal ?? undefined;
    if (signal?.aborted) throw abortReason(signal);
    let url = new URL(String(input));
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return globalThis.fetch(input, init);
    let method = (init.method ?? 'GET').toUpperCase();
    const headers = toHeaderRecord(init.headers);
    if (typeof body === 'string' && headers['content-type'] === undefined) headers['content-type'] = 'text/plain;charset=UTF-8';
    let payload = body;
    for (let redirects = 0; ; redirects++) {
      const { message } = await once(url, method, headers, payload, signal);
      const next = init.redirect === 'manual' ? null : redirectTarget(message.statusCode ?? 0, message.headers.location, url, method);
      if (next === null) return toResponse(modules.zlib, message, url, method, signal, redirects > 0);
      message.resume();
      if (init.redirect === 'error') throw networkError(new Error(`redirected to ${next.url.href} with redirect: 'error'`));
      if (redirects >= maxRedirects) throw networkError(new Error(`more than ${maxRedirects} redirects`));
      url = next.url;
      if (next.method !== method) {
        method = next.method;
        payload = null;
        delete headers['content-type'];
        delete headers['content-length'];
      }
    }
  }

  return Object.assign(nodeFetch, {
    close() {
      closed = true;
      agents.http.destroy();
      agents.https.destroy();
    },
  });
}

function toResponse(
  zlib: NodeModules['zlib'],
  message: http.IncomingMessage,
  url: URL,
  method: string,
  signal: AbortSignal | undefined,
  redirected: boolean,
): Response {
  const status = message.statusCode ?? 0;
  if (status < 200 || status > 599) {
    message.destroy();
    throw networkError(new Error(`unexpected HTTP status ${status}`));
  }
  const headers = new Headers();
  for (let index = 0; index < message.rawHeaders.length; index += 2) {
    headers.append(message.rawHeaders[index] as string, message.rawHeaders[index + 1] as string);
  }
  const nullBody = method === 'HEAD' || status === 204 || status === 205 || status === 304;
  let source: NodeJS.ReadableStream = message;
  const encoding = message.headers['content-encoding']?.trim().toLowerCase();
  const decoder = encoding ? decoderFor(zlib, encoding) : undefined;
  if (decoder && !nullBody) {
    const decoding = decoder();
    message.once('error', (error) => decoding.emit('error', error));
    source = message.pipe(decoding);
  }
  if (nullBody) message.resume();
  const response = new Response(nullBody ? null : responseBodyOf(source, () => message.destroy(), signal), {
    status,
    statusText: message.statusMessage ?? '',
    headers,
  });
  Object.defineProperty(response, 'url', { value: url.href });
  if (redirected) Object.defineProperty(response, 'redirected', { value: true });
  return response;
}
