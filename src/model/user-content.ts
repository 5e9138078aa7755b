import { isRecord } from '../util/is-record.js';
import { defaultMaxMediaBytes, isMediaPart, mediaPartProblem, storedMediaPart } from './media.js';
import type { UserContentPart } from './messages.js';

/**
 * A user message's content: text, or parts — text, images and files (see `UserContentPart`).
 *
 * @example
 * ```ts
 * const content: UserContent = [{ type: 'text', text: 'What is on this page?' }, { type: 'file', data: pdfBase64, mediaType: 'application/pdf' }];
 * ```
 */
export type UserContent = string | UserContentPart[];

/**
 * Why a `user.message` (or `user.interrupt`) cannot go into a run, or `undefined`: its content is a
 * non-empty string, or parts — text, images, files — with some text or media, each part well formed
 * and no media part over `maxMediaBytes`.
 *
 * @example
 * ```ts
 * userContentProblem([{ type: 'image', data: 'javascript:alert(1)' }]);
 * // 'content[0].data is a javascript: URL; a part takes base64, a data: URL, an https: URL or bytes'
 * ```
 */
export function userContentProblem(content: unknown, maxMediaBytes: number = defaultMaxMediaBytes): string | undefined {
  if (typeof content === 'string') return content.trim() === '' ? shapeProblem : undefined;
  if (!Array.isArray(content) || content.length === 0) return shapeProblem;
  // One event's content is checked by several guards and by the rejection's text: a 20 MB part's
  // base64 is scanned once.
  const known = checkedContent.get(content);
  if (known?.maxMediaBytes === maxMediaBytes) return known.problem;
  const problem = partsProblem(content, maxMediaBytes);
  checkedContent.set(content, { maxMediaBytes, problem });
  return problem;
}

const shapeProblem = 'content must be a non-empty string or a non-empty array of text, image and file parts';
const checkedContent = new WeakMap<readonly unknown[], { maxMediaBytes: number; problem: string | undefined }>();

function partsProblem(content: readonly unknown[], maxMediaBytes: number): string | undefined {
  let substance = false;
  for (const [index, part] of content.entries()) {
    const where = `content[${index}]`;
    if (isRecord(part) && part.type === 'text' && typeof part.text === 'string') {
      substance ||= part.text.trim() !== '';
      continue;
    }
    if (!isMediaPart(part))
      return `${where} must be a { type: "text", text }, { type: "image", data } or { type: "file", data, mediaType } part`;
    const problem = mediaPartProblem(part, where, maxMediaBytes);
    if (problem) return problem;
    substance = true;
  }
  return substance ? undefined : shapeProblem;
}

/** Whether a `user.message`'s content can go into a run ({@link userContentProblem} finds nothing). */
export function isValidUserContent(content: unknown, maxMediaBytes?: number): boolean {
  return userContentProblem(content, maxMediaBytes) === undefined;
}

/**
 * A user message's content as it is stored: media bytes as base64, a `data:` URL split into its
 * base64 and media type, an image's type read from its bytes. The same array when nothing changes.
 *
 * @example
 * ```ts
 * storedUserContent([{ type: 'image', data: new Uint8Array(png) }]); // [{ type: 'image', data: 'iVBORw0…', mediaType: 'image/png' }]
 * ```
 */
export function storedUserContent(content: UserContent): UserContent {
  if (typeof content === 'string' || !content.some((part) => part.type !== 'text')) return content;
  return content.map((part) => (part.type === 'text' ? part : storedMediaPart(part)));
}
