import { ProviderError } from '../model/errors/provider-error.js';
import { type FilePart, type ImagePart, type MediaSource, mediaSourceOf } from '../model/media.js';

/** The wires that map media parts, by the names their errors and docs/rich-content.md use. */
export type MediaWire = 'chat-completions' | 'responses' | 'anthropic';

/** How a wire takes one kind of media: its media types, from which sources, as which of its content blocks. */
export type MediaRule = { mediaTypes: readonly string[]; sources: ReadonlyArray<MediaSource['kind']>; as: string };

const images = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;

/**
 * Which wire takes what (docs/rich-content.md shows the same table). A part no rule of its wire
 * takes fails the request before anything is sent ({@link unsupportedContent}): never dropped,
 * never sent for the provider to refuse.
 *
 * - Chat Completions: images inline or by URL (`image_url`); PDFs inline (`file`, which takes no
 *   URL); WAV and MP3 audio inline (`input_audio`).
 * - Responses: images inline or by URL (`input_image`); PDFs inline or by URL (`input_file`).
 * - Anthropic: images inline or by URL (`image`); PDFs inline or by URL, plain text inline
 *   (`document`).
 *
 * @example
 * ```ts
 * mediaRuleFor('anthropic', { kind: 'base64', base64: '…', mediaType: 'audio/wav' }); // undefined: Anthropic takes no audio
 * ```
 */
export const mediaSupport: Readonly<Record<MediaWire, readonly MediaRule[]>> = {
  'chat-completions': [
    { mediaTypes: images, sources: ['base64', 'url'], as: 'image_url' },
    { mediaTypes: ['application/pdf'], sources: ['base64'], as: 'file' },
    { mediaTypes: ['audio/wav', 'audio/x-wav', 'audio/mpeg', 'audio/mp3'], sources: ['base64'], as: 'input_audio' },
  ],
  responses: [
    { mediaTypes: images, sources: ['base64', 'url'], as: 'input_image' },
    { mediaTypes: ['application/pdf'], sources: ['base64', 'url'], as: 'input_file' },
  ],
  anthropic: [
    { mediaTypes: images, sources: ['base64', 'url'], as: 'image' },
    { mediaTypes: ['application/pdf'], sources: ['base64', 'url'], as: 'document' },
    { mediaTypes: ['text/plain'], sources: ['base64'], as: 'document' },
  ],
};

/** The rule of `wire` that takes a part from `source`, if one does; a URL without a known type counts as an image. */
export function mediaRuleFor(wire: MediaWire, source: MediaSource): MediaRule | undefined {
  const mediaType = source.mediaType?.toLowerCase();
  return mediaSupport[wire].find(
    (rule) =>
      rule.sources.includes(source.kind) &&
      (mediaType === undefined ? rule.mediaTypes.includes('image/png') : rule.mediaTypes.includes(mediaType)),
  );
}

/**
 * The error of a part `wire` cannot take, naming the part (`messages[3].content[1]`), its media
 * type and source, and what the wire takes instead. Not retryable: the same history fails the same way.
 *
 * @example
 * ```ts
 * throw unsupportedContent('anthropic', 'messages[0].content[1]', { kind: 'base64', base64: '…', mediaType: 'audio/wav' });
 * ```
 */
export function unsupportedContent(wire: MediaWire, where: string, source: MediaSource): ProviderError {
  const taken = mediaSupport[wire].map((rule) => `${rule.mediaTypes.join(', ')} (${rule.sources.join(' or ')})`).join('; ');
  const kind = source.kind === 'url' ? 'by URL' : 'inline';
  return new ProviderError(
    `the ${wire} wire cannot take ${where} (${source.mediaType ?? 'a URL of unknown type'}, ${kind}); it takes ${taken}. Nothing was sent.`,
    { code: 'unsupported_content', retryable: false },
  );
}

/**
 * A media part as `wire` sends it: where its bytes are, the rule of the table that takes it, and a
 * URL for it (a `data:` URL when inline). A part no rule takes throws {@link unsupportedContent}.
 *
 * @example
 * ```ts
 * const { rule, url } = wireMedia('responses', { type: 'image', data: 'https://example.com/cat.png' }, 'messages[0].content[1]');
 * // rule.as === 'input_image', url === 'https://example.com/cat.png'
 * ```
 */
export function wireMedia(
  wire: MediaWire,
  part: ImagePart | FilePart,
  where: string,
): { source: MediaSource; rule: MediaRule; url: string } {
  const source = mediaSourceOf(part);
  const rule = mediaRuleFor(wire, source);
  if (!rule) throw unsupportedContent(wire, where, source);
  return { source, rule, url: source.kind === 'url' ? source.url : `data:${source.mediaType};base64,${source.base64}` };
}
