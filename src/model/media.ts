import { base64ByteLength, base64FromBytes, base64Problem, bytesFromBase64 } from '../util/base64.js';
import { isRecord } from '../util/is-record.js';
import type { JsonValue } from './json.js';

/**
 * An image's or a file's bytes: standard base64, a `data:` URL, an `https:` URL the provider
 * fetches, or — in memory, before the message is stored — the bytes themselves. A stored message
 * holds base64 or the `https:` URL (plain JSON).
 *
 * @example
 * ```ts
 * const data: MediaData = readFileSync('chart.png'); // a Buffer is a Uint8Array
 * ```
 */
export type MediaData = string | Uint8Array;

/**
 * An image in a user message. `mediaType` (`image/png`, `image/jpeg`, `image/gif`, `image/webp`)
 * may be left out for bytes: the run reads it from them.
 *
 * @example
 * ```ts
 * const photo: ImagePart = { type: 'image', data: 'https://example.com/cat.jpg' };
 * ```
 */
export type ImagePart = { type: 'image'; data: MediaData; mediaType?: string; providerMetadata?: Record<string, JsonValue> };

/**
 * A file in a user message: a PDF, plain text, or audio (`audio/wav`, `audio/mpeg`); which wire
 * takes which is in docs/rich-content.md.
 *
 * @example
 * ```ts
 * const report: FilePart = { type: 'file', data: pdfBase64, mediaType: 'application/pdf', filename: 'q3.pdf' };
 * ```
 */
export type FilePart = {
  type: 'file';
  data: MediaData;
  mediaType: string;
  filename?: string;
  providerMetadata?: Record<string, JsonValue>;
};

/** A media part's bytes as the wires send them: inline base64 (with its media type) or a URL. */
export type MediaSource = { kind: 'base64'; base64: string; mediaType: string } | { kind: 'url'; url: string; mediaType?: string };

/** The largest media part a run takes, in bytes, unless `maxMediaBytes` says otherwise: 20 MB. */
export const defaultMaxMediaBytes = 20 * 1024 * 1024;

/** A media type as RFC 6838 names them, without parameters: `image/png`, `application/pdf`. */
const mediaTypePattern = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/i;
const schemePattern = /^([a-z][a-z0-9+.-]*):/i;
const dataUrlPattern = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s;

/** The image types every wire takes, by their first bytes, for an image given without its type. */
const imageSignatures: ReadonlyArray<readonly [string, ReadonlyArray<number | undefined>]> = [
  ['image/png', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
  ['image/jpeg', [0xff, 0xd8, 0xff]],
  ['image/gif', [0x47, 0x49, 0x46, 0x38]],
  // RIFF, four bytes of length, WEBP.
  ['image/webp', [0x52, 0x49, 0x46, 0x46, undefined, undefined, undefined, undefined, 0x57, 0x45, 0x42, 0x50]],
];

/**
 * The media type of an image from its first bytes (PNG, JPEG, GIF, WebP), or `undefined`.
 *
 * @example
 * ```ts
 * sniffImageMediaType(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])); // 'image/png'
 * ```
 */
export function sniffImageMediaType(bytes: Uint8Array): string | undefined {
  for (const [mediaType, signature] of imageSignatures) {
    if (bytes.length >= signature.length && signature.every((byte, index) => byte === undefined || bytes[index] === byte)) return mediaType;
  }
  return undefined;
}

/** The first bytes of base64 data, enough to tell an image's type. */
function leadingBytes(base64: string): Uint8Array {
  return bytesFromBase64(base64.slice(0, 16));
}

function describeData(data: unknown): string {
  if (data instanceof Uint8Array) return `${data.length} bytes`;
  if (typeof data === 'string') return data.length > 32 ? `"${data.slice(0, 32)}…" (${data.length} characters)` : JSON.stringify(data);
  return data === null ? 'null' : typeof data;
}

/** A media part of a user message: the fields every wire reads. */
type MediaPartLike = { type: 'image' | 'file'; data?: unknown; mediaType?: unknown; filename?: unknown };

/**
 * Why a media part cannot go into a run, or `undefined`. `where` names the part (`content[1]`).
 * With `maxBytes` (a message as it arrives) the bytes are checked in full — the base64 alphabet and
 * the size; without it (a stored history, checked on every start) only the shape.
 *
 * @example
 * ```ts
 * mediaPartProblem({ type: 'image', data: 'file:///etc/passwd' }, 'content[0]');
 * // 'content[0].data is a file: URL; a part takes base64, a data: URL, an https: URL or bytes'
 * ```
 */
export function mediaPartProblem(part: MediaPartLike, where: string, maxBytes?: number): string | undefined {
  const { type, data, mediaType, filename } = part;
  if (mediaType !== undefined && (typeof mediaType !== 'string' || !mediaTypePattern.test(mediaType)))
    return `${where}.mediaType must be a media type such as image/png or application/pdf (type/subtype), got ${describeData(mediaType)}`;
  if (type === 'image' && typeof mediaType === 'string' && !mediaType.toLowerCase().startsWith('image/'))
    return `${where}.mediaType must be an image/… type for an image part, got ${mediaType}; send other media as a file part`;
  if (type === 'file' && mediaType === undefined) return `${where}.mediaType is required for a file part (e.g. application/pdf, audio/wav)`;
  if (filename !== undefined && typeof filename !== 'string') return `${where}.filename must be a string, got ${describeData(filename)}`;
  let bytes: number | undefined;
  let base64: string | undefined;
  if (data instanceof Uint8Array) bytes = data.length;
  else if (typeof data !== 'string' || data === '')
    return `${where}.data must be base64, a data: URL, an https: URL or bytes (Uint8Array), got ${describeData(data)}`;
  else {
    const scheme = schemePattern.exec(data)?.[1]?.toLowerCase();
    if (scheme === 'data') {
      const parsed = dataUrlPattern.exec(data);
      if (!parsed || !/;base64$/i.test(parsed[2] ?? ''))
        return `${where}.data is a data: URL that is not base64 (data:<type>;base64,<data>)`;
      if (parsed[1] && !mediaTypePattern.test(parsed[1]))
        return `${where}.data is a data: URL whose media type ${JSON.stringify(parsed[1])} is not type/subtype`;
      base64 = parsed[3] ?? '';
    } else if (scheme === 'https') {
      try {
        new URL(data);
      } catch {
        return `${where}.data is not a valid https: URL: ${describeData(data)}`;
      }
    } else if (scheme !== undefined) {
      return `${where}.data is a ${scheme}: URL; a part takes base64, a data: URL, an https: URL or bytes`;
    } else base64 = data;
  }
  if (base64 !== undefined) {
    // A stored history (no maxBytes) was checked in full when it arrived: its length is enough here.
    const malformed = maxBytes !== undefined || base64.length % 4 !== 0 ? base64Problem(base64) : undefined;
    if (malformed) return `${where}.data is not valid base64: ${malformed}`;
    bytes = base64ByteLength(base64);
  }
  if (maxBytes !== undefined && bytes !== undefined && bytes > maxBytes)
    return `${where} holds ${bytes} bytes, over the ${maxBytes} bytes a part may hold (maxMediaBytes)`;
  if (type === 'image' && mediaType === undefined && maxBytes !== undefined && bytes !== undefined) {
    const head = data instanceof Uint8Array ? data : leadingBytes(base64 ?? '');
    const dataUrlType = typeof data === 'string' ? dataUrlPattern.exec(data)?.[1] : undefined;
    if (!dataUrlType && sniffImageMediaType(head) === undefined)
      return `${where} has no mediaType and its bytes are not PNG, JPEG, GIF or WebP: give its mediaType`;
  }
  return undefined;
}

/**
 * A media part in its stored form: bytes as base64, a `data:` URL split into its base64 and its media
 * type, an image's missing media type read from its bytes. Anything else is returned as it is.
 *
 * @example
 * ```ts
 * storedMediaPart({ type: 'image', data: new Uint8Array(png) }); // { type: 'image', data: 'iVBORw0KGgo…', mediaType: 'image/png' }
 * ```
 */
export function storedMediaPart<TPart extends ImagePart | FilePart>(part: TPart): TPart {
  // The history and the host's log both store a message's parts: bytes are encoded once.
  const known = storedParts.get(part);
  if (known) return known as TPart;
  const stored = storedForm(part);
  storedParts.set(part, stored);
  return stored;
}

const storedParts = new WeakMap<object, ImagePart | FilePart>();

function storedForm<TPart extends ImagePart | FilePart>(part: TPart): TPart {
  const { data } = part;
  let base64: string | undefined;
  let mediaType = part.mediaType;
  if (data instanceof Uint8Array) base64 = base64FromBytes(data);
  else if (/^data:/i.test(data)) {
    const parsed = dataUrlPattern.exec(data);
    if (!parsed) return part;
    base64 = parsed[3] ?? '';
    mediaType ??= parsed[1] || undefined;
  } else if (part.type === 'image' && mediaType === undefined && !schemePattern.test(data)) base64 = data;
  if (base64 === undefined) return part;
  if (part.type === 'image') mediaType ??= sniffImageMediaType(data instanceof Uint8Array ? data : leadingBytes(base64));
  return { ...part, data: base64, ...(mediaType === undefined ? {} : { mediaType }) };
}

/**
 * Where a stored media part's bytes are: inline base64 with its media type, or a URL.
 *
 * @example
 * ```ts
 * mediaSourceOf({ type: 'image', data: 'https://example.com/cat.png' }); // { kind: 'url', url: 'https://example.com/cat.png' }
 * ```
 */
export function mediaSourceOf(part: ImagePart | FilePart): MediaSource {
  const stored = storedMediaPart(part);
  const data = stored.data as string;
  if (/^https:/i.test(data)) return { kind: 'url', url: data, ...(stored.mediaType === undefined ? {} : { mediaType: stored.mediaType }) };
  return { kind: 'base64', base64: data, mediaType: stored.mediaType ?? 'application/octet-stream' };
}

/**
 * How many bytes a part holds: its bytes, its base64 (or a `data:` URL's) decoded length; `undefined`
 * for a part by URL.
 *
 * @example
 * ```ts
 * mediaByteLength({ type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' }); // 8
 * ```
 */
export function mediaByteLength(part: ImagePart | FilePart): number | undefined {
  const { data } = part;
  if (data instanceof Uint8Array) return data.length;
  const base64 = /^data:/i.test(data) ? (dataUrlPattern.exec(data)?.[3] ?? '') : data;
  return /^[A-Za-z0-9+/]*={0,2}$/.test(base64) && base64.length % 4 === 0 ? base64ByteLength(base64) : undefined;
}

/**
 * A media part as a short label, for text that stands for it: `[image image/png, 68 KB]`,
 * `[file q3.pdf application/pdf, 1.2 MB]`, `[image]` for one by URL.
 *
 * @example
 * ```ts
 * mediaLabel({ type: 'file', data: 'JVBERi0x', mediaType: 'application/pdf', filename: 'q3.pdf' }); // '[file q3.pdf application/pdf, 6 B]'
 * ```
 */
export function mediaLabel(part: ImagePart | FilePart): string {
  const bytes = mediaByteLength(part);
  const size =
    bytes === undefined
      ? ''
      : bytes < 1024
        ? `, ${bytes} B`
        : bytes < 1024 * 1024
          ? `, ${Math.round(bytes / 1024)} KB`
          : `, ${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  const name = part.type === 'file' && part.filename ? ` ${part.filename}` : '';
  const type = part.mediaType ? ` ${part.mediaType}` : '';
  return `[${part.type}${name}${type}${size}]`;
}

/** Whether a value is a media part (by its `type`), read structurally as stored data may be. */
export function isMediaPart(part: unknown): part is ImagePart | FilePart {
  return isRecord(part) && (part.type === 'image' || part.type === 'file');
}
