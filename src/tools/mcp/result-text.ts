import { serializeResult } from '../../util/serialize-result.js';
import { type FilePart, type ImagePart, mediaPartProblem } from '../../model/media.js';
import type { ToolResultContentPart } from '../../model/messages.js';
import { type ToolContent, toolContent } from '../tool-content.js';
import type { McpCallToolResult, McpContent } from './mcp-types.js';

/** Bytes a base64 string decodes to, without decoding it. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/** One content part as text; binary data is named and sized, never inlined. */
function contentText(part: McpContent): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'image':
    case 'audio':
      return `[${part.type}: ${part.mimeType}, ${base64Bytes(part.data)} bytes; not shown to the model]`;
    case 'resource': {
      const { uri, mimeType, text, blob } = part.resource;
      const label = `resource ${uri}${mimeType ? ` (${mimeType})` : ''}`;
      if (typeof text === 'string') return `[${label}]\n${text}`;
      return `[${label}, ${typeof blob === 'string' ? base64Bytes(blob) : 0} bytes of binary data; not shown to the model]`;
    }
    case 'resource_link': {
      const details = [part.mimeType, part.description].filter(Boolean).join(': ');
      return `[resource link: ${part.title ?? part.name} <${part.uri}>${details ? ` (${details})` : ''}]`;
    }
    default:
      // A content type newer than this package: shown as the JSON the server sent.
      return serializeResult(part);
  }
}

/**
 * The text the model reads for an MCP tool result — every provider takes text. Text parts as they
 * are; an embedded text resource with its URI; images, audio and binary resources as a placeholder
 * naming the type and size (their data is not sent); a result with only `structuredContent` as its
 * JSON. Parts are joined with a newline. Use it in your own `mapResult` for the parts you do not
 * handle yourself.
 *
 * @example
 * ```ts
 * mcpResultText({ content: [{ type: 'text', text: 'Here:' }, { type: 'image', data: png, mimeType: 'image/png' }] });
 * // 'Here:\n[image: image/png, 68 bytes; not shown to the model]'
 * ```
 */
export function mcpResultText(result: McpCallToolResult): string {
  const content = Array.isArray(result.content) ? result.content : [];
  if (content.length === 0) return result.structuredContent === undefined ? '' : serializeResult(result.structuredContent);
  return content.map(contentText).join('\n');
}

/**
 * The binary resources that go to the model as files: those some wire reads (images, PDFs, plain
 * text, audio). Other blobs (an `application/octet-stream`, a zip) no model reads, and a part no
 * wire takes would fail every request: they stay placeholders.
 */
const modelReadable = /^(image\/|audio\/|application\/pdf$|text\/plain$)/i;

/** An MCP image, audio or readable binary resource as a part; `undefined` when it stays a placeholder. */
function mediaPart(part: McpContent): ImagePart | FilePart | undefined {
  let media: ImagePart | FilePart | undefined;
  if (part.type === 'image') media = { type: 'image', data: part.data, mediaType: part.mimeType };
  else if (part.type === 'audio') media = { type: 'file', data: part.data, mediaType: part.mimeType };
  else if (part.type === 'resource' && typeof part.resource.blob === 'string' && modelReadable.test(part.resource.mimeType ?? '')) {
    const { uri, mimeType = '', blob } = part.resource;
    const filename = uri.slice(uri.lastIndexOf('/') + 1);
    media = { type: 'file', data: blob, mediaType: mimeType, ...(filename === '' ? {} : { filename }) };
  }
  // A server's malformed part (not base64, no media type) stays a placeholder rather than failing the call.
  return media && mediaPartProblem(media, 'part') === undefined ? media : undefined;
}

/**
 * What the model reads for an MCP tool result: with images, audio or binary resources a model
 * reads (PDF, plain text, images, audio), a `toolContent` result that sends them as parts (images
 * as image parts, audio and blobs as file parts with the server's `mimeType`, each blob resource
 * after a line naming its URI), in order with the text; without, the text of {@link mcpResultText}.
 * Other blobs, and parts whose data is not usable (not base64, no type), stay placeholders. The
 * default of `mcpTools`' `mapResult`. A wire that cannot take a part (audio on Anthropic) fails the
 * request with `unsupported_content`, as for a user's part: give `mapResult` to send less.
 *
 * @example
 * ```ts
 * mcpResultContent({ content: [{ type: 'text', text: 'Here:' }, { type: 'image', data: png, mimeType: 'image/png' }] });
 * // toolContent([{ type: 'text', text: 'Here:' }, { type: 'image', data: png, mediaType: 'image/png' }])
 * ```
 */
export function mcpResultContent(result: McpCallToolResult): string | ToolContent {
  const content = Array.isArray(result.content) ? result.content : [];
  const media = content.map(mediaPart);
  if (!media.some((part) => part !== undefined)) return mcpResultText(result);
  const parts: ToolResultContentPart[] = [];
  for (const [index, part] of content.entries()) {
    const found = media[index];
    if (found === undefined) parts.push({ type: 'text', text: contentText(part) });
    else {
      if (part.type === 'resource') parts.push({ type: 'text', text: `[resource ${part.resource.uri}]` });
      parts.push(found);
    }
  }
  return toolContent(parts);
}
