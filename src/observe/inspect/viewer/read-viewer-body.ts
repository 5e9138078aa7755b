import { isRecord } from '../../../util/is-record.js';
import { concatBytes } from '../../../util/concat-bytes.js';
import { ViewerRequestError } from './viewer-request-error.js';

/** The largest body a viewer request may have: its bodies are a few ids. */
const maxBodyBytes = 65_536;

/**
 * A viewer POST's body: a JSON object sent as `application/json` (an empty body is `{}`), at most
 * 64 KiB, counted as it arrives.
 *
 * @example
 * ```ts
 * const { toolCallId } = await readViewerBody(request);
 * ```
 */
export async function readViewerBody(request: Request): Promise<Record<string, unknown>> {
  const type = request.headers.get('content-type');
  if (request.body === null) return {};
  if (type === null || !/^application\/json\s*(;|$)/i.test(type))
    throw new ViewerRequestError(
      415,
      `content-type: expected application/json, got ${type === null ? 'none' : JSON.stringify(type.slice(0, 60))}`,
      'content-type',
    );
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBodyBytes) {
      await reader.cancel().catch(() => undefined);
      throw new ViewerRequestError(413, `body: expected at most ${maxBodyBytes} bytes`, 'body');
    }
    chunks.push(value);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(concatBytes(chunks, size));
  } catch {
    throw new ViewerRequestError(400, 'body: expected UTF-8 text', 'body');
  }
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ViewerRequestError(
      400,
      `body: expected JSON, got text that does not parse (${(error as Error).message.slice(0, 100)})`,
      'body',
    );
  }
  if (!isRecord(parsed) || Array.isArray(parsed))
    throw new ViewerRequestError(
      400,
      `body: expected a JSON object, got ${Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : typeof parsed}`,
      'body',
    );
  return parsed;
}
