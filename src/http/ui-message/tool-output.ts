import { mediaSourceOf } from '../../model/media.js';
import type { ToolResultContentPart } from '../../model/messages.js';

/**
 * A tool result as a UI shows it: results are kept as the text the model saw, so a result that is
 * a JSON object or array becomes that value again (`part.output.sum`); any other text stays text.
 *
 * @example
 * ```ts
 * toolOutputOf('{"sum":5}'); // { sum: 5 }
 * toolOutputOf('paid');      // 'paid'
 * ```
 */
export function toolOutputOf(result: unknown): unknown {
  if (typeof result !== 'string') return result;
  const first = result.trimStart()[0];
  if (first !== '{' && first !== '[') return result;
  try {
    return JSON.parse(result) as unknown;
  } catch {
    return result;
  }
}

/**
 * One item of a tool output given as content: text, or a medium inline (`data` base64, as the AI
 * SDK's `{ type: 'media' }`) or by URL.
 */
export type UIToolContentItem =
  | { type: 'text'; text: string }
  | { type: 'media'; data: string; mediaType: string; filename?: string }
  | { type: 'media'; url: string; mediaType?: string; filename?: string };

/**
 * A `toolContent` result as a UI shows it, in the AI SDK's content output shape
 * (`{ type: 'content', value }`): text items and media items a page can draw
 * (`data:${mediaType};base64,${data}`, or the `url`).
 *
 * @example
 * ```ts
 * toolContentOutput([{ type: 'text', text: 'Now:' }, { type: 'image', data: 'iVBOR…', mediaType: 'image/png' }]);
 * // { type: 'content', value: [{ type: 'text', text: 'Now:' }, { type: 'media', data: 'iVBOR…', mediaType: 'image/png' }] }
 * ```
 */
export function toolContentOutput(content: readonly ToolResultContentPart[]): { type: 'content'; value: UIToolContentItem[] } {
  return {
    type: 'content',
    value: content.map((part): UIToolContentItem => {
      if (part.type === 'text') return { type: 'text', text: part.text };
      const source = mediaSourceOf(part);
      const filename = part.type === 'file' && part.filename ? { filename: part.filename } : {};
      return source.kind === 'url'
        ? { type: 'media', url: source.url, ...(source.mediaType === undefined ? {} : { mediaType: source.mediaType }), ...filename }
        : { type: 'media', data: source.base64, mediaType: source.mediaType, ...filename };
    }),
  };
}
