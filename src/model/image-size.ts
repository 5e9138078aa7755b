/**
 * An image's width and height in pixels, read from the first bytes of a PNG, JPEG, GIF or WebP —
 * what providers' image token counts are made from. `undefined` for anything else, or bytes cut
 * before the size (a JPEG whose frame header is past the bytes given).
 *
 * @example
 * ```ts
 * imageSize(readFileSync('chart.png')); // { width: 1200, height: 800 }
 * ```
 */
export function imageSize(bytes: Uint8Array): { width: number; height: number } | undefined {
  if (bytes.length >= 24 && bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) {
    // The IHDR chunk comes first: width and height, big-endian, at 16 and 20.
    return positive(uint32(bytes, 16), uint32(bytes, 20));
  }
  if (bytes.length >= 10 && bytes[0] === 0x47 && bytes[1] === 0x49 && bytes[2] === 0x46) {
    return positive(uint16le(bytes, 6), uint16le(bytes, 8));
  }
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) return jpegSize(bytes);
  if (bytes.length >= 30 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') return webpSize(bytes);
  return undefined;
}

/** The size in a JPEG's first start-of-frame segment, walking the segments before it. */
function jpegSize(bytes: Uint8Array): { width: number; height: number } | undefined {
  let offset = 2;
  while (offset + 9 < bytes.length) {
    if (bytes[offset] !== 0xff) return undefined;
    const marker = bytes[offset + 1] as number;
    // Fill bytes between segments.
    if (marker === 0xff) {
      offset++;
      continue;
    }
    const length = uint16(bytes, offset + 2);
    // SOF0…SOF15, except DHT (C4), JPG (C8) and DAC (CC), which share the range.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return positive(uint16(bytes, offset + 7), uint16(bytes, offset + 5));
    }
    if (length < 2) return undefined;
    offset += 2 + length;
  }
  return undefined;
}

/** The size of a WebP: lossy (VP8), lossless (VP8L) or extended (VP8X). */
function webpSize(bytes: Uint8Array): { width: number; height: number } | undefined {
  const chunk = ascii(bytes, 12, 4);
  if (chunk === 'VP8 ') return positive(uint16le(bytes, 26) & 0x3fff, uint16le(bytes, 28) & 0x3fff);
  if (chunk === 'VP8L') {
    const bits = (bytes[21] as number) | ((bytes[22] as number) << 8) | ((bytes[23] as number) << 16) | ((bytes[24] as number) << 24);
    return positive((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (chunk === 'VP8X') return positive(uint24le(bytes, 24) + 1, uint24le(bytes, 27) + 1);
  return undefined;
}

const positive = (width: number, height: number) => (width > 0 && height > 0 ? { width, height } : undefined);
const uint16 = (bytes: Uint8Array, at: number) => ((bytes[at] ?? 0) << 8) | (bytes[at + 1] ?? 0);
const uint16le = (bytes: Uint8Array, at: number) => (bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8);
const uint24le = (bytes: Uint8Array, at: number) => (bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8) | ((bytes[at + 2] ?? 0) << 16);
const uint32 = (bytes: Uint8Array, at: number) => uint16(bytes, at) * 0x10000 + uint16(bytes, at + 2);
const ascii = (bytes: Uint8Array, at: number, length: number) => String.fromCharCode(...bytes.subarray(at, at + length));
