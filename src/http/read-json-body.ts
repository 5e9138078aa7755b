import { HttpProblemError } from './http-problem-error.js';
import { concatBytes } from '../util/concat-bytes.js';
import { describeValue } from './problem.js';

/**
 * How much of a body is read, and how long it may pause.
 *
 * @example
 * ```ts
 * const limits: BodyLimits = { maxBytes: 1_000_000, idleTimeoutMs: 10_000, timeoutMs: 30_000, maxDepth: 64 };
 * ```
 */
export type BodyLimits = {
  /** Bytes read at most; the first byte past it answers 413 and nothing more is read. */
  maxBytes: number;
  /** The longest wait for the next piece of the body (or the first); past it, 408. */
  idleTimeoutMs: number;
  /** The longest the whole body may take, however it trickles in; past it, 408. */
  timeoutMs: number;
  /** Arrays and objects nested at most this deep; deeper, 400. */
  maxDepth: number;
};

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * A request's body as a JSON object, or `undefined` when it has none. Refused, each as an
 * `HttpProblemError` naming `body` or `content-type` before anything is parsed: a media type other
 * than `application/json` (415), more than `maxBytes` — counted as the bytes arrive, with or
 * without a `content-length`, and read no further (413), a pause longer than `idleTimeoutMs` or a
 * body that takes longer than `timeoutMs` in all (408), bytes that are not UTF-8, text that is not JSON, nesting deeper than `maxDepth`, or JSON
 * that is not an object (400). `JSON.parse` keeps a `__proto__` key as a plain property.
 *
 * @example
 * ```ts
 * const body = await readJsonBody(request, { maxBytes: 1_000_000, idleTimeoutMs: 10_000, timeoutMs: 30_000, maxDepth: 64 });
 * ```
 */
export async function readJsonBody(request: Request, limits: BodyLimits): Promise<Record<string, unknown> | undefined> {
  const type = request.headers.get('content-type');
  if (type !== null) checkMediaType(type);
  const declared = request.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared) > limits.maxBytes) throw tooLarge(limits.maxBytes);
  const bytes = await readBytes(request, limits);
  if (bytes.byteLength === 0) return undefined;
  // A body without a media type is refused once it turns out not to be empty.
  if (type === null) checkMediaType('');
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw malformed('body: expected UTF-8 text, got bytes that are not UTF-8');
  }
  const depth = nestingDepth(text, limits.maxDepth);
  if (depth > limits.maxDepth) throw malformed(`body: expected JSON nested at most ${limits.maxDepth} levels deep, got deeper`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message.slice(0, 160) : 'invalid';
    throw malformed(`body: expected JSON, got text that does not parse (${reason})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw malformed(`body: expected a JSON object, got ${describeValue(value)}`);
  }
  return value as Record<string, unknown>;
}

function checkMediaType(type: string): void {
  const [essence = '', ...parameters] = type.split(';').map((part) => part.trim().toLowerCase());
  const charset = parameters
    .find((parameter) => parameter.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/^"|"$/g, '');
  if (essence === 'application/json' && (charset === undefined || charset === 'utf-8')) return;
  const got = type === '' ? 'none' : JSON.stringify(type.length > 100 ? `${type.slice(0, 100)}…` : type);
  throw new HttpProblemError('unsupported-media-type', `content-type: expected application/json (UTF-8), got ${got}`, {
    field: 'content-type',
  });
}

/** The body's bytes, counted as they come: at most `maxBytes`, each piece within `idleTimeoutMs` of the one before, all within `timeoutMs`. */
async function readBytes(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  if (request.body === null) return new Uint8Array(0);
  if (request.bodyUsed) throw malformed('body: already read by another handler (pass the parsed body on instead)');
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    // Whatever the reader still has is not read: the answer goes out without it.
    reader.cancel().catch(() => undefined);
  };
  const deadline = Date.now() + limits.timeoutMs;
  for (;;) {
    const left = deadline - Date.now();
    const idle = limits.idleTimeoutMs <= left;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), Math.max(0, Math.min(limits.idleTimeoutMs, left)));
    });
    let next: Awaited<ReturnType<typeof reader.read>> | 'timeout';
    try {
      next = await Promise.race([reader.read(), timedOut]);
    } catch {
      throw malformed('body: the request body could not be read to its end');
    } finally {
      clearTimeout(timer);
    }
    if (next === 'timeout') {
      stop();
      const detail = idle
        ? `body: expected the next bytes within ${limits.idleTimeoutMs} ms, got none`
        : `body: expected the whole body within ${limits.timeoutMs} ms, got ${size} bytes by then`;
      throw new HttpProblemError('body-timeout', detail, { field: 'body' });
    }
    if (next.done) break;
    size += next.value.byteLength;
    if (size > limits.maxBytes) {
      stop();
      throw tooLarge(limits.maxBytes);
    }
    chunks.push(next.value);
  }
  return concatBytes(chunks, size);
}

/**
 * How deep arrays and objects nest in JSON text, counted up to one past `limit`: `JSON.parse`
 * would take any depth, but what it builds must be walked and written again, and those recurse.
 */
function nestingDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c)
        index++; // a backslash: the next character is escaped
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return deepest;
}

const malformed = (detail: string) => new HttpProblemError('malformed-body', detail, { field: 'body' });
const tooLarge = (maxBytes: number) =>
  new HttpProblemError('body-too-large', `body: expected at most ${maxBytes} bytes, got more`, { field: 'body' });
