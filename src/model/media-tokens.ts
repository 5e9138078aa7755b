import { base64ByteLength, bytesFromBase64 } from '../util/base64.js';
import { imageSize } from './image-size.js';
import { type FilePart, type ImagePart, mediaSourceOf } from './media.js';

/**
 * Whose rule counts an image's tokens: OpenAI's tiles (both APIs) or Anthropic's pixels. A provider
 * names its own (`Provider.mediaTokens`); without one, the estimate takes the larger of the two.
 */
export type MediaTokenRule = 'openai' | 'anthropic';

/** What a medium counts when nothing about it can be read (a URL, bytes of an unknown kind). */
export const unknownMediaTokens = 1000;
/** What one PDF page counts: its text and the picture of the page both wires send (1,500–3,000 a page). */
const pdfPageTokens = 2000;
/** Audio input, per second (about a token per 100 ms on OpenAI's audio models). */
const audioTokensPerSecond = 10;

/**
 * The tokens of an image of `width` × `height` pixels as a provider counts it:
 *
 * - `openai`: scaled to fit 2048 × 2048, then its short side to 768; 85 tokens plus 170 a 512-px tile.
 * - `anthropic`: scaled to a long side of at most 1568 px; width × height / 750, at most about 1,600.
 *
 * @example
 * ```ts
 * imageTokens(1024, 1024, 'openai');    // 765: 768 × 768, four tiles
 * imageTokens(1024, 1024, 'anthropic'); // 1399
 * ```
 */
export function imageTokens(width: number, height: number, rule: MediaTokenRule): number {
  if (rule === 'openai') {
    let [w, h] = scaledWithin(width, height, 2048);
    const short = Math.min(w, h);
    if (short > 768) [w, h] = [(w * 768) / short, (h * 768) / short];
    return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
  }
  const [w, h] = scaledWithin(width, height, 1568);
  return Math.min(1600, Math.ceil((w * h) / 750));
}

/** Scaled, keeping its shape, so that its long side is at most `limit`. */
function scaledWithin(width: number, height: number, limit: number): [number, number] {
  const long = Math.max(width, height);
  return long <= limit ? [width, height] : [(width * limit) / long, (height * limit) / long];
}

const counted = new WeakMap<object, Partial<Record<MediaTokenRule | 'either', number>>>();

/**
 * The estimated tokens of an image or file part: an image by its pixels (read from its first bytes)
 * under `rule`, or the larger of both rules without one; a PDF by its pages; plain text at four
 * characters a token; WAV or MP3 audio by its length. A part by URL, or one whose size cannot be
 * read, counts {@link unknownMediaTokens}. Remembered per part: a history is estimated again before
 * every request.
 *
 * @example
 * ```ts
 * mediaTokens({ type: 'image', data: pngBase64, mediaType: 'image/png' }, 'anthropic'); // 1399 for a 1024 × 1024 PNG
 * ```
 */
export function mediaTokens(part: ImagePart | FilePart, rule?: MediaTokenRule): number {
  const key = rule ?? 'either';
  const known = counted.get(part)?.[key];
  if (known !== undefined) return known;
  const tokens = countMedia(part, rule);
  counted.set(part, { ...counted.get(part), [key]: tokens });
  return tokens;
}

function countMedia(part: ImagePart | FilePart, rule: MediaTokenRule | undefined): number {
  const source = mediaSourceOf(part);
  if (source.kind === 'url') return unknownMediaTokens;
  const mediaType = source.mediaType.toLowerCase();
  try {
    if (part.type === 'image' || mediaType.startsWith('image/')) {
      // A JPEG's frame header may follow 64 KB of EXIF data; PNG, GIF and WebP say it at once.
      const size = imageSize(bytesFromBase64(source.base64.slice(0, 96 * 1024)));
      if (!size) return unknownMediaTokens;
      return rule
        ? imageTokens(size.width, size.height, rule)
        : Math.max(imageTokens(size.width, size.height, 'openai'), imageTokens(size.width, size.height, 'anthropic'));
    }
    if (mediaType === 'application/pdf') {
      const pages = pdfPages(bytesFromBase64(source.base64));
      return pages > 0 ? pages * pdfPageTokens : unknownMediaTokens;
    }
    if (mediaType.startsWith('text/')) return Math.max(1, Math.ceil(base64ByteLength(source.base64) / 4));
    if (mediaType.startsWith('audio/')) {
      const seconds = audioSeconds(source.base64, mediaType);
      return seconds === undefined ? unknownMediaTokens : Math.max(1, Math.ceil(seconds * audioTokensPerSecond));
    }
  } catch {
    // Stored media were checked when they arrived; data that still does not decode is counted as unknown.
  }
  return unknownMediaTokens;
}

/** The pages of a PDF: its page objects (`/Type /Page`, not the `/Pages` tree nodes). */
function pdfPages(bytes: Uint8Array): number {
  let text = '';
  // Latin-1, in chunks: a PDF's structure is ASCII, and a 20 MB one must not make one huge call.
  for (let offset = 0; offset < bytes.length; offset += 0x8000) text += String.fromCharCode(...bytes.subarray(offset, offset + 0x8000));
  return text.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
}

/** How long WAV (from its header's byte rate) or MP3 (at 128 kbit/s) audio plays, in seconds. */
function audioSeconds(base64: string, mediaType: string): number | undefined {
  const bytes = base64ByteLength(base64);
  if (/wav/.test(mediaType)) {
    const header = bytesFromBase64(base64.slice(0, 64));
    const byteRate = (header[28] ?? 0) | ((header[29] ?? 0) << 8) | ((header[30] ?? 0) << 16) | ((header[31] ?? 0) << 24);
    return byteRate > 0 ? Math.max(0, bytes - 44) / byteRate : undefined;
  }
  if (/mpeg|mp3/.test(mediaType)) return bytes / 16_000;
  return undefined;
}
