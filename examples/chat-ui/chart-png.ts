/**
 * A bar chart as PNG bytes, drawn with nothing but node:zlib: the `chart` tool's image. A real
 * service would use a charting library; the example keeps its dependencies to the AI SDK and React.
 */
import { crc32, deflateSync } from 'node:zlib';

const bar = [0x4f, 0x7c, 0xff] as const;
const axis = [0x94, 0xa3, 0xb8] as const;
const background = [0xff, 0xff, 0xff] as const;

/** One PNG chunk: length, type, data, and the CRC of type and data. */
function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/**
 * The values as bars (scaled to the largest; negative values draw as none), as a PNG image: 20 px
 * a bar, 80 px high.
 *
 * @example
 * ```ts
 * const png = barChartPng([3, 1, 4]); // Uint8Array, starts with the PNG signature
 * ```
 */
export function barChartPng(values: readonly number[]): Uint8Array {
  const barWidth = 14;
  const gap = 6;
  const height = 80;
  const plot = height - 8;
  const width = gap + values.length * (barWidth + gap);
  const top = Math.max(...values, 0) || 1;
  const heights = values.map((value) => Math.round((Math.max(value, 0) / top) * plot));
  // Each row: filter type 0 (none), then RGB pixels.
  const raw = new Uint8Array(height * (1 + width * 3));
  for (let y = 0; y < height; y++) {
    const row = y * (1 + width * 3);
    for (let x = 0; x < width; x++) {
      const slot = x - gap;
      const index = Math.floor(slot / (barWidth + gap));
      const inBar = slot >= 0 && slot % (barWidth + gap) < barWidth && height - 1 - y < (heights[index] ?? 0);
      const color = y === height - 1 ? axis : inBar ? bar : background;
      raw.set(color, row + 1 + x * 3);
    }
  }
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits a channel, RGB, deflate, no filter, no interlace
  const parts = [
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', new Uint8Array()),
  ];
  const png = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    png.set(part, offset);
    offset += part.length;
  }
  return png;
}
