import { isMediaPart, sniffImageMediaType } from '../model/media.js';
import { base64ByteLength, bytesFromBase64 } from '../util/base64.js';
import { isRecord } from '../util/is-record.js';

/**
 * A medium as a store keeps it, once per content (`ref` is `sha256:` and the hex digest of its
 * bytes): `data` (base64) when the write brings its bytes, absent when the write only refers to
 * bytes the store already has.
 *
 * @example
 * ```ts
 * const media: StoredMedia | undefined = await store.readMedia?.('sha256:9f86d0…');
 * if (media?.data) writeFileSync('image.png', Buffer.from(media.data, 'base64'));
 * ```
 */
export type StoredMedia = { ref: string; mediaType: string; bytes: number; data?: string };

/**
 * A media part as stored snapshots, steps, the log and stored stream entries carry it: its bytes
 * are in the store once, under `ref` (`store.readMedia(ref)`).
 *
 * @example
 * ```ts
 * const part: MediaRefPart = { type: 'image', ref: 'sha256:9f86d0…', mediaType: 'image/png', bytes: 70 };
 * ```
 */
export type MediaRefPart = { type: 'image' | 'file'; ref: string; mediaType: string; bytes: number; filename?: string };

/** Media this small stay inline: a row and a lookup would cost more than the bytes. */
export const inlineMediaLimit = 1024;

const refPattern = /"ref":"(sha256:[0-9a-f]{64})"/g;

/** Whether a value is a stored media reference. */
export function isMediaRefPart(value: unknown): value is MediaRefPart {
  return (
    isRecord(value) &&
    (value.type === 'image' || value.type === 'file') &&
    typeof value.ref === 'string' &&
    value.ref.startsWith('sha256:') &&
    value.data === undefined
  );
}

/** A part whose bytes are inline base64 (not a URL) and large enough to keep by reference. */
function isInlineMedia(value: unknown): value is InlineMedia {
  return (
    isMediaPart(value) &&
    typeof value.data === 'string' &&
    value.data.length >= inlineMediaLimit &&
    (value.mediaType === undefined || typeof value.mediaType === 'string') &&
    !/^[a-z][a-z0-9+.-]*:/i.test(value.data)
  );
}

type InlineMedia = { type: 'image' | 'file'; data: string; mediaType?: string; filename?: string };

const noMedia: readonly InlineMedia[] = [];
/**
 * The inline media parts under each object seen, remembered by object: a conversation's messages
 * and parts never change once made (each step makes new containers), so a write walks only what is
 * new since the last one.
 */
const mediaUnder = new WeakMap<object, readonly InlineMedia[]>();

/** The inline media parts of a value, in the order JSON would write them. */
function inlineMediaOf(value: object): readonly InlineMedia[] {
  const known = mediaUnder.get(value);
  if (known) return known;
  let found: InlineMedia[] | undefined;
  if (isInlineMedia(value)) found = [value];
  else {
    const children = Array.isArray(value) ? (value as unknown[]) : Object.values(value);
    for (const child of children) {
      if (typeof child !== 'object' || child === null || ArrayBuffer.isView(child)) continue;
      const inner = inlineMediaOf(child);
      if (inner.length === 0) continue;
      found ??= [];
      found.push(...inner);
    }
  }
  const result = found ?? noMedia;
  mediaUnder.set(value, result);
  return result;
}

/** The hex SHA-256 of bytes (Web Crypto: the same on every runtime). */
async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** What {@link MediaCodec.encode} gives: the JSON with references, and the media the write refers to. */
export type EncodedMedia = { text: string; media: StoredMedia[] };

/**
 * Keeps media once, by content, for a host whose store can (`readMedia`): writes replace inline
 * bytes with references (`encode`), reads put the bytes back (`decode`). Each part's hash is
 * computed once (remembered by object and by its base64); bytes the store is known to have are not
 * sent again.
 */
export class MediaCodec {
  /** A part (by object) and its reference form. */
  readonly #byPart = new WeakMap<object, MediaRefPart>();
  /** The reference of base64 data already hashed (a snapshot read back gives new objects for the same bytes). */
  readonly #byData = new Map<string, string>();
  /** References whose bytes the store has. */
  readonly #stored = new Set<string>();

  constructor(private readonly readMedia: (ref: string) => Promise<StoredMedia | undefined>) {}

  /**
   * `value` (a persisted snapshot, a log event) as JSON text with its inline media as references,
   * and the media it refers to (with their bytes when the store may not have them). Found in the
   * objects, not the text: a value without media is stringified as it is, one with media once, with
   * the references in place of the parts.
   */
  async encode(value: unknown): Promise<EncodedMedia> {
    const parts = typeof value === 'object' && value !== null ? inlineMediaOf(value) : noMedia;
    if (parts.length === 0) return { text: JSON.stringify(value), media: [] };
    const media = new Map<string, StoredMedia>();
    const refs = new Map<object, MediaRefPart>();
    for (const part of parts) {
      const ref = await this.#refOf(part);
      refs.set(part, ref);
      const known = this.#stored.has(ref.ref);
      media.set(ref.ref, { ref: ref.ref, mediaType: ref.mediaType, bytes: ref.bytes, ...(known ? {} : { data: part.data }) });
    }
    const text = JSON.stringify(value, (_key, inner: unknown) =>
      typeof inner === 'object' && inner !== null ? (refs.get(inner) ?? inner) : inner,
    );
    return { text, media: [...media.values()] };
  }

  /**
   * {@link encode} for JSON text (a record written elsewhere, a step forked from): parsed only when
   * it holds inline media; the references already in it are referred to as well.
   */
  async encodeText(text: string): Promise<EncodedMedia> {
    const inline = text.includes('"data":"') && (text.includes('"type":"image"') || text.includes('"type":"file"'));
    const encoded = inline ? await this.encode(JSON.parse(text) as unknown) : { text, media: [] };
    if (!encoded.text.includes('"ref":"sha256:')) return encoded;
    const media = new Map(encoded.media.map((item) => [item.ref, item]));
    for (const match of encoded.text.matchAll(refPattern)) {
      const ref = match[1] as string;
      if (!media.has(ref)) media.set(ref, { ref, mediaType: '', bytes: 0 });
    }
    return { text: encoded.text, media: [...media.values()] };
  }

  async #refOf(part: InlineMedia): Promise<MediaRefPart> {
    const known = this.#byPart.get(part);
    if (known) return known;
    let ref = this.#byData.get(part.data);
    if (ref === undefined) {
      ref = `sha256:${await sha256(bytesFromBase64(part.data))}`;
      // Bounded: a long-lived host sees many conversations' media.
      if (this.#byData.size >= 256) this.#byData.delete(this.#byData.keys().next().value as string);
      this.#byData.set(part.data, ref);
    }
    const refPart: MediaRefPart = {
      type: part.type,
      ref,
      // A part as the user sent it (the log keeps events as sent) may leave an image's type to its bytes.
      mediaType: part.mediaType ?? sniffImageMediaType(bytesFromBase64(part.data.slice(0, 16))) ?? 'application/octet-stream',
      bytes: base64ByteLength(part.data),
      ...(typeof part.filename === 'string' ? { filename: part.filename } : {}),
    };
    this.#byPart.set(part, refPart);
    return refPart;
  }

  /** After a write: the store has these media's bytes now, so later writes only refer to them. */
  stored(media: readonly StoredMedia[]): void {
    for (const item of media) if (item.data !== undefined) this.#stored.add(item.ref);
  }

  /**
   * JSON text with its references resolved: each reference part becomes the inline part it was,
   * its bytes read from the store. A reference the store no longer has throws {@link MissingMedia}
   * naming it (the caller names the conversation).
   */
  async decode(text: string): Promise<string> {
    if (!text.includes('"ref":"sha256:')) return text;
    const refs = new Set([...text.matchAll(refPattern)].map((match) => match[1] as string));
    const bytes = new Map<string, StoredMedia>();
    for (const ref of refs) {
      const media = await this.readMedia(ref);
      if (media?.data === undefined) throw new MissingMedia(ref);
      bytes.set(ref, media);
      this.#stored.add(ref);
      this.#byData.set(media.data, ref);
    }
    return JSON.stringify(JSON.parse(text), (_key, value: unknown) => {
      if (!isMediaRefPart(value)) return value;
      const media = bytes.get(value.ref);
      if (!media) return value;
      const { ref: _ref, bytes: _bytes, ...part } = value;
      return { ...part, data: media.data };
    });
  }
}

/** A reference whose bytes the store does not have (deleted by hand, or a store that lost them). */
export class MissingMedia extends Error {
  constructor(readonly ref: string) {
    super(`media ${ref} is referred to but not in the store`);
  }
}
