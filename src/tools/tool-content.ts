import { type FilePart, type ImagePart, isMediaPart, mediaLabel, mediaPartProblem, storedMediaPart } from '../model/media.js';
import type { ToolResultContentPart } from '../model/messages.js';
import { isRecord } from '../util/is-record.js';
import { serializeResult } from '../util/serialize-result.js';
import { ToolContentError } from './tool-content-error.js';

// A registered symbol, so a result made by another copy of this package is still recognised.
const toolContentMarker = Symbol.for('actorloop.toolContent');

/**
 * What `toolContent([...])` makes: a tool result given as parts (text, images, files) rather than
 * as one value to serialise. Return it from `execute`.
 *
 * @example
 * ```ts
 * const result: ToolContent = toolContent([{ type: 'text', text: 'Rendered.' }, { type: 'image', data: png, mediaType: 'image/png' }]);
 * ```
 */
export type ToolContent = { readonly [toolContentMarker]: true; readonly parts: readonly ToolResultContentPart[] };

/**
 * A tool result with media: `execute` returns it and the model gets the text, images and files in
 * order, each wire in its own shape (Anthropic `tool_result` blocks, Responses
 * `function_call_output` items; Chat Completions sends the media in one user message right after
 * the round's tool messages, naming the call). Parts are checked like a user message's (media
 * type, URL scheme, base64, `maxMediaBytes`); a bad part makes the call's result an error naming it.
 *
 * @example
 * ```ts
 * const screenshot = defineTool({
 *   name: 'screenshot',
 *   description: 'The page as a PNG',
 *   parameters: { type: 'object', properties: {} },
 *   execute: async () => toolContent([{ type: 'text', text: 'The page now:' }, { type: 'image', data: await page.screenshot(), mediaType: 'image/png' }]),
 * });
 * ```
 */
export function toolContent(parts: readonly ToolResultContentPart[]): ToolContent {
  return { [toolContentMarker]: true, parts };
}

/** Whether a value is a {@link toolContent} result. */
export function isToolContent(value: unknown): value is ToolContent {
  return isRecord(value) && (value as Record<symbol, unknown>)[toolContentMarker] === true;
}

/**
 * What a tool returned, as the run keeps it: `text` for readers of text (the model on a wire that
 * takes only text, `tool.result` events, logs) and, for a {@link toolContent} result, the parts in
 * their stored form.
 */
export type ToolOutput = { text: string; content?: ToolResultContentPart[] };

/**
 * A tool's return value as the run keeps it. Text is capped by `capText`, each text part too;
 * media go in their stored form (bytes as base64). A bad part throws {@link ToolContentError}
 * naming it, which the run turns into the call's error result.
 *
 * @example
 * ```ts
 * toolOutputOf(toolContent([{ type: 'image', data: bytes, mediaType: 'image/png' }]), { capText: (t) => t, maxMediaBytes: 20e6 });
 * // { text: '[image image/png, 68 B]', content: [{ type: 'image', data: 'iVBOR…', mediaType: 'image/png' }] }
 * ```
 */
export function toolOutputOf(value: unknown, limits: { capText: (text: string) => string; maxMediaBytes: number }): ToolOutput {
  if (!isToolContent(value)) return { text: limits.capText(serializeResult(value)) };
  if (!Array.isArray(value.parts)) throw new ToolContentError('toolContent takes an array of text, image and file parts');
  const content: ToolResultContentPart[] = [];
  const texts: string[] = [];
  for (const [index, part] of (value.parts as readonly unknown[]).entries()) {
    const where = `toolContent part ${index}`;
    if (isRecord(part) && part.type === 'text' && typeof part.text === 'string') {
      const text = limits.capText(part.text);
      content.push({ type: 'text', text });
      texts.push(text);
      continue;
    }
    if (!isMediaPart(part))
      throw new ToolContentError(
        `${where} must be a { type: "text", text }, { type: "image", data } or { type: "file", data, mediaType } part`,
      );
    const problem = mediaPartProblem(part, where, limits.maxMediaBytes);
    if (problem) throw new ToolContentError(problem);
    const stored = storedMediaPart(part as ImagePart | FilePart);
    content.push(stored);
    texts.push(mediaLabel(stored));
  }
  // Text alone needs no parts: the wires send it as they send any text result.
  return content.some((part) => part.type !== 'text') ? { text: texts.join('\n'), content } : { text: texts.join('\n') };
}
