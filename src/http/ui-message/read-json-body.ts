import type { RequestProblem } from './problem-response.js';

/** A value read from a request, or what was wrong with it. */
export type Checked<T> = { ok: true; value: T } | { ok: false; problem: RequestProblem };

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * A request's JSON body: `content-type: application/json` (else 415), at most `maxBytes` (else
 * 413, read no further), valid UTF-8 and JSON (else 400 naming `body`). `JSON.parse` builds deep
 * nesting without recursion; nothing here walks the value.
 *
 * @example
 * ```ts
 * const body = await readJsonBody(request, 1_000_000);
 * if (!body.ok) return problemResponse(body.problem);
 * ```
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<Checked<unknown>> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type.trim())) {
    return fail(
      415,
      `expected content-type: application/json, got ${type === '' ? 'none' : JSON.stringify(type.slice(0, 100))}`,
      'content-type',
    );
  }
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) return tooLarge(maxBytes);
  if (!request.body) return fail(400, 'body: expected a JSON object, got nothing', 'body');
  if (request.bodyUsed) return fail(400, 'body: already read by another handler (pass it as the `body` option)', 'body');
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return tooLarge(maxBytes);
      }
      chunks.push(value);
    }
  } catch {
    return fail(400, 'body: the request body could not be read to its end', 'body');
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return fail(400, 'body: expected UTF-8 text, got bytes that are not UTF-8', 'body');
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return fail(
      400,
      `body: expected JSON, got text that does not parse (${error instanceof Error ? error.message.slice(0, 200) : 'invalid'})`,
      'body',
    );
  }
}

const fail = (status: number, detail: string, field: string): Checked<never> => ({ ok: false, problem: { status, detail, field } });
const tooLarge = (maxBytes: number) => fail(413, `body: expected at most ${maxBytes} bytes`, 'body');
