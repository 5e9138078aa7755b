/**
 * The token estimate counts media as the wires do (DESIGN §16, "Counted"): an image by its pixels
 * — read from the first bytes of a PNG, JPEG, GIF or WebP — under OpenAI's tile rule or
 * Anthropic's pixel rule, a PDF by its pages, plain text by its characters, audio by its length;
 * 1,000 when nothing can be read. Compaction estimates with the rule of the provider the next
 * request goes to.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  anthropicProvider,
  estimateMessageTokens,
  imageSize,
  imageTokens,
  mediaTokens,
  openaiProvider,
  unknownMediaTokens,
} from '../src/index.js';
import { withMiddleware } from '../src/middleware/with-middleware.js';
import { estimateTokens } from '../src/model/estimate-tokens.js';
import { promptTokens } from '../src/machines/controls/compaction-plan.js';

const fixture = (name: string) => new Uint8Array(readFileSync(join(import.meta.dirname, 'fixtures/images', name)));

/** A real PNG of one colour, `width` × `height`, written here (zlib, no library). */
function png(width: number, height: number): Uint8Array {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 0, 0, 0, 0], 8); // 8-bit greyscale
  const raw = Buffer.alloc(height * (width + 1), 0x80);
  for (let row = 0; row < height; row++) raw[row * (width + 1)] = 0;
  return new Uint8Array(
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk('IHDR', header),
      chunk('IDAT', deflateSync(raw)),
      chunk('IEND', Buffer.alloc(0)),
    ]),
  );
}

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

describe('imageSize reads the pixels from the first bytes', () => {
  it('of real PNG, JPEG, GIF and extended WebP files', () => {
    for (const name of ['python.png', 'python.jpg', 'python.gif', 'python.webp']) {
      expect(imageSize(fixture(name)), name).toEqual({ width: 16, height: 16 });
    }
    expect(imageSize(png(1024, 768))).toEqual({ width: 1024, height: 768 });
  });

  it('of a JPEG whose frame header follows 70 KB of EXIF data; nothing from bytes of another kind or cut short', () => {
    const jpeg = fixture('python.jpg');
    // Two APP1 segments of 35,000 bytes (a segment holds at most 65,535).
    const segment = Buffer.alloc(35_000 + 2);
    segment.set([0xff, 0xe1], 0);
    segment.writeUInt16BE(35_000, 2);
    const withExif = new Uint8Array(Buffer.concat([jpeg.subarray(0, 2), segment, segment, jpeg.subarray(2)]));
    expect(imageSize(withExif)).toEqual({ width: 16, height: 16 });
    expect(imageSize(withExif.subarray(0, 1000))).toBeUndefined();
    expect(imageSize(new TextEncoder().encode('%PDF-1.4'))).toBeUndefined();
    expect(imageSize(fixture('python.png').subarray(0, 20))).toBeUndefined();
  });
});

describe('the wires’ image rules', () => {
  it('OpenAI: fit 2048, short side 768, 85 + 170 a 512-px tile (the figures of its docs)', () => {
    expect(imageTokens(1024, 1024, 'openai')).toBe(765);
    expect(imageTokens(2048, 4096, 'openai')).toBe(1105);
    expect(imageTokens(512, 512, 'openai')).toBe(255);
    expect(imageTokens(16, 16, 'openai')).toBe(255);
  });

  it('Anthropic: long side at most 1568, width × height / 750, at most about 1,600 (the figures of its docs)', () => {
    expect(imageTokens(200, 200, 'anthropic')).toBe(54);
    expect(imageTokens(1000, 1000, 'anthropic')).toBe(1334);
    expect(imageTokens(1092, 1092, 'anthropic')).toBe(1590);
    expect(imageTokens(4000, 3000, 'anthropic')).toBe(1600);
  });
});

describe('mediaTokens of a part', () => {
  const image = { type: 'image', data: base64(png(1024, 1024)), mediaType: 'image/png' } as const;

  it('an image by the rule given, the larger without one; by URL or unreadable, 1,000', () => {
    expect(mediaTokens(image, 'openai')).toBe(765);
    expect(mediaTokens(image, 'anthropic')).toBe(1399);
    expect(mediaTokens(image)).toBe(1399);
    expect(mediaTokens({ type: 'image', data: new Uint8Array(png(512, 512)) }, 'openai')).toBe(255);
    expect(mediaTokens({ type: 'image', data: 'https://example.com/cat.png' }, 'openai')).toBe(unknownMediaTokens);
    expect(mediaTokens({ type: 'image', data: base64(new Uint8Array(32)), mediaType: 'image/png' }, 'openai')).toBe(unknownMediaTokens);
  });

  it('a PDF 2,000 a page; plain text four characters a token; WAV by its byte rate; other files 1,000', () => {
    const pdf = '%PDF-1.4\n1 0 obj << /Type /Pages /Kids [2 0 R 3 0 R 4 0 R] /Count 3 >> endobj\n'.concat(
      '2 0 obj << /Type /Page >> endobj\n3 0 obj << /Type/Page >> endobj\n4 0 obj <</Type /Page/Parent 1 0 R>> endobj\n%%EOF',
    );
    expect(mediaTokens({ type: 'file', data: Buffer.from(pdf).toString('base64'), mediaType: 'application/pdf' })).toBe(6000);
    expect(mediaTokens({ type: 'file', data: Buffer.from('x'.repeat(400)).toString('base64'), mediaType: 'text/plain' })).toBe(100);
    // 8 kHz, 16-bit mono: 16,000 bytes a second; two seconds of samples.
    const wav = Buffer.alloc(44 + 32_000);
    wav.write('RIFF', 0, 'latin1');
    wav.write('WAVEfmt ', 8, 'latin1');
    wav.writeUInt32LE(16_000, 28);
    expect(mediaTokens({ type: 'file', data: wav.toString('base64'), mediaType: 'audio/wav' })).toBe(20);
    expect(mediaTokens({ type: 'file', data: 'AAAA', mediaType: 'application/zip' })).toBe(unknownMediaTokens);
  });

  it('the estimate counts a user message’s media and a tool result’s by the rule; compaction by the next provider’s', () => {
    const message = { role: 'user' as const, content: [{ type: 'text' as const, text: 'What is this?' }, image] };
    const text = estimateMessageTokens({ role: 'user', content: [{ type: 'text', text: 'What is this?' }] });
    expect(estimateMessageTokens(message, 'openai') - text).toBe(765 + 3);
    expect(estimateMessageTokens(message, 'anthropic') - text).toBe(1399 + 3);
    const toolMessage = {
      role: 'tool' as const,
      content: [{ type: 'tool-result' as const, toolCallId: 'c', toolName: 'shot', result: '[image]', content: [image] }],
    };
    expect(
      estimateMessageTokens(toolMessage, 'openai') -
        estimateMessageTokens({ ...toolMessage, content: [{ ...toolMessage.content[0]!, content: undefined }] }),
    ).toBe(765);
    expect(estimateTokens([message], { mediaRule: 'openai' })).toBe(estimateMessageTokens(message, 'openai'));
    expect(promptTokens({ messages: [message], mediaRule: 'anthropic' })).toBe(estimateMessageTokens(message, 'anthropic'));
  });

  it('each provider names its rule, and middleware keeps it', () => {
    expect(openaiProvider({ model: 'gpt-4o', apiKey: 'sk' }).mediaTokens).toBe('openai');
    expect(openaiProvider({ api: 'responses', model: 'gpt-5', apiKey: 'sk' }).mediaTokens).toBe('openai');
    const claude = anthropicProvider({ model: 'claude-sonnet-4-5', apiKey: 'sk', maxTokens: 100 });
    expect(claude.mediaTokens).toBe('anthropic');
    expect(withMiddleware(claude, []).mediaTokens).toBe('anthropic');
  });
});
