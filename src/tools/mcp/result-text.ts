import { serializeResult } from '../../util/serialize-result.js';
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
