import type { JsonValue } from '../model/json.js';
import type { CassetteRequest } from './cassette.js';
import type { Scrubber } from './scrub-traffic.js';

/**
 * A request as a `fetch` received it, read once into what a cassette needs, whatever shape the SDK
 * passed (a URL and init, or a `Request`), plus the arguments to hand on to the real `fetch`.
 */
export type SentRequest = {
  url: URL;
  method: string;
  headers: Headers;
  /** The body as text, `undefined` when there was none or it could not be read without consuming it. */
  bodyText: string | undefined;
  /** Why the body is not recorded, when it is not. */
  bodyNote: string | undefined;
  signal: AbortSignal | undefined;
  /** What to call the real `fetch` with: the original arguments, or copies when the body had to be teed. */
  forward: [input: string | URL | Request, init: RequestInit | undefined];
};

const decoder = new TextDecoder();

async function readStream(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

/** Reads a request's body text without taking it from the real `fetch`. */
async function bodyOf(
  input: string | URL | Request,
  init: RequestInit | undefined,
): Promise<{ text: string | undefined; note: string | undefined; init: RequestInit | undefined }> {
  const body = init?.body;
  if (body === undefined || body === null) {
    if (input instanceof Request && input.body !== null) return { text: await input.clone().text(), note: undefined, init };
    return { text: undefined, note: undefined, init };
  }
  if (typeof body === 'string') return { text: body, note: undefined, init };
  if (body instanceof URLSearchParams) return { text: body.toString(), note: undefined, init };
  if (body instanceof ArrayBuffer) return { text: decoder.decode(body), note: undefined, init };
  if (ArrayBuffer.isView(body)) return { text: decoder.decode(body), note: undefined, init };
  if (body instanceof Blob) return { text: await body.text(), note: undefined, init };
  if (body instanceof ReadableStream) {
    // A stream can be read once: one branch goes on to the server, the other is recorded.
    const [onward, recorded] = (body as ReadableStream<Uint8Array>).tee();
    return { text: await readStream(recorded), note: undefined, init: { ...init, body: onward } };
  }
  return { text: undefined, note: `request body of type ${Object.prototype.toString.call(body)} not recorded`, init };
}

/** Reads what a `fetch` was called with. */
export async function readSentRequest(input: string | URL | Request, init: RequestInit | undefined): Promise<SentRequest> {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
  const headers = new Headers(input instanceof Request ? input.headers : undefined);
  for (const [name, value] of new Headers(init?.headers)) headers.set(name, value);
  const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined) ?? undefined;
  const body = await bodyOf(input, init);
  return { url, method, headers, bodyText: body.text, bodyNote: body.note, signal, forward: [input, body.init] };
}

/** The body's JSON, or `undefined` when it is not JSON. */
function parseJson(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

/**
 * The request as a cassette records it: no host, no headers, the query apart, the body parsed and
 * scrubbed. A body that is not JSON is `null` with a note saying so.
 */
export function toCassetteRequest(sent: SentRequest, scrub: Scrubber): { request: CassetteRequest; note: string | undefined } {
  const query = sent.url.search === '' ? undefined : scrub.query(sent.url.search.slice(1));
  const parsed = sent.bodyText === undefined || sent.bodyText === '' ? undefined : parseJson(sent.bodyText);
  const note =
    sent.bodyNote ??
    (sent.bodyText !== undefined && sent.bodyText !== '' && parsed === undefined
      ? `request body not JSON (${sent.bodyText.length} characters), not recorded`
      : undefined);
  return {
    request: {
      method: sent.method,
      path: sent.url.pathname,
      ...(query === undefined ? {} : { query }),
      body: parsed === undefined ? null : scrub.json(parsed),
    },
    note,
  };
}
