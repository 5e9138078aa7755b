import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import { type FilePart, type ImagePart, isMediaPart, mediaByteLength, sniffImageMediaType } from '../model/media.js';
import type { ProviderRequest } from '../model/provider.js';
import { base64FromBytes, bytesFromBase64 } from '../util/base64.js';
import { isRecord } from '../util/is-record.js';

/**
 * How a medium's bytes are given: standard base64, a `data:` URL, bytes in memory (a `Uint8Array`),
 * or a URL the provider fetches. A conversation machine sends what it stores: base64 or a URL.
 *
 * @example
 * ```ts
 * const inline: SentMediaKind = 'base64';
 * ```
 */
export type SentMediaKind = 'base64' | 'data-url' | 'bytes' | 'url';

/**
 * One image or file a request carries, and where it is: in a user message, or in a tool result
 * (`toolContent`), with the call it answers. Keys that do not apply are left out.
 *
 * @example
 * ```ts
 * const chart: SentMedia = {
 *   type: 'image', mediaType: 'image/png', role: 'tool', messageIndex: 2, toolCallId: 'call_1_1', toolName: 'chart',
 *   kind: 'base64', byteLength: 68, path: 'messages[2].content[0].content[1]',
 *   part: { type: 'image', data: 'iVBORw0KGgo…', mediaType: 'image/png' },
 * };
 * ```
 */
export type SentMedia = {
  type: 'image' | 'file';
  /** As given, else read from a `data:` URL or from an image's first bytes; absent when unknown (an image by URL). */
  mediaType?: string;
  /** A file part's name, when it has one. */
  filename?: string;
  /** The message that carries it: a user message, or the tool message of a round's results. */
  role: 'user' | 'tool';
  /** That message's index in `request.messages`. */
  messageIndex: number;
  /** For a tool result's medium: the call it answers, and its tool. */
  toolCallId?: string;
  toolName?: string;
  kind: SentMediaKind;
  /** The URL, for a medium by URL. */
  url?: string;
  /** Its size in bytes (decoded); absent for a medium by URL. */
  byteLength?: number;
  /** Where it is in the request, as `unsupported_content` names a part: `messages[0].content[1]`, `messages[2].content[0].content[1]`. */
  path: string;
  /** With a provider: the index in `provider.requests` of the first request that carried it. */
  request?: number;
  /** The part itself. */
  part: ImagePart | FilePart;
};

/**
 * Which media {@link mediaOf} lists.
 *
 * @example
 * ```ts
 * const fromTools: MediaOfOptions = { role: 'tool', latest: true };
 * ```
 */
export type MediaOfOptions = {
  /**
   * Only what is new: for a request, the media of the messages after the model's last answer (the
   * new user message, or the round's tool results) — what a function turn answers; for a provider,
   * the media its last request brought.
   */
  latest?: boolean;
  /** Only the media of user messages, or only those of tool results. */
  role?: 'user' | 'tool';
};

/**
 * What {@link mediaOf} reads: one request, or a provider that records its requests (a
 * `ScriptedProvider`).
 *
 * @example
 * ```ts
 * const sources: SentMediaSource[] = [provider, provider.requests[0]!];
 * ```
 */
export type SentMediaSource = ProviderRequest | { readonly requests: readonly ProviderRequest[] };

/**
 * The images and files a request carries, in order, each with where it came from: a user message
 * (its index) or a tool result (its `toolCallId` and tool name), its media type, its size and how
 * its bytes are given (base64, a `data:` URL, bytes or a URL). Given a provider (a
 * `ScriptedProvider`), the media of all its requests, each listed once, at the first request that
 * carried it (a later request carries the history again, a retry the same one). In a function turn,
 * `mediaOf(request, { latest: true })` is what the model was just given.
 *
 * @example
 * ```ts
 * const provider = scriptedProvider([
 *   (request) => ({ text: `I see ${mediaOf(request, { latest: true }).map((medium) => medium.mediaType).join(' and ')}.` }),
 * ]);
 * // … run a conversation whose prompt holds a PNG and a PDF …
 * mediaOf(provider).map(({ role, type, mediaType }) => `${role} ${type} ${mediaType}`); // ['user image image/png', 'user file application/pdf']
 * ```
 */
export function mediaOf(source: SentMediaSource, options: MediaOfOptions = {}): SentMedia[] {
  const { latest = false, role } = checkedOptions(options);
  const requests = requestsOf(source, 'mediaOf(source)');
  let media: SentMedia[];
  if (requests === undefined) {
    const request = source as ProviderRequest;
    media = requestMedia(request.messages, latest ? afterLastAnswer(request.messages) : 0);
  } else {
    const brought = newMediaByRequest(requests);
    media = (latest ? brought.slice(-1) : brought).flat();
  }
  return role === undefined ? media : media.filter((medium) => medium.role === role);
}

/** A source's requests when it is a provider, `undefined` when it is one request; anything else throws. */
export function requestsOf(source: unknown, where: string): readonly ProviderRequest[] | undefined {
  if (isRecord(source) && Array.isArray(source.requests)) return source.requests as ProviderRequest[];
  if (isRecord(source) && Array.isArray(source.messages) && Array.isArray(source.tools)) return undefined;
  throw new InvalidOptionsError(
    where,
    "a ProviderRequest (a function turn's request, provider.requests[0]) or a provider that records its requests (a ScriptedProvider)",
    source,
  );
}

function checkedOptions(options: unknown): MediaOfOptions {
  if (!isRecord(options)) throw new InvalidOptionsError('mediaOf options', 'an object { latest?, role? }', options);
  if (options.latest !== undefined && typeof options.latest !== 'boolean')
    throw new InvalidOptionsError('mediaOf options.latest', 'true or false', options.latest);
  if (options.role !== undefined && options.role !== 'user' && options.role !== 'tool')
    throw new InvalidOptionsError('mediaOf options.role', '"user" or "tool"', options.role);
  return options as MediaOfOptions;
}

/** The index after the last assistant message: where what the request brings begins. */
function afterLastAnswer(messages: readonly unknown[]): number {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (isRecord(message) && message.role === 'assistant') return index + 1;
  }
  return 0;
}

/** The media of the messages from `start` on. Read structurally: a hand-made request may hold anything. */
function requestMedia(messages: readonly unknown[], start: number): SentMedia[] {
  const media: SentMedia[] = [];
  for (let messageIndex = start; messageIndex < messages.length; messageIndex++) {
    const message = messages[messageIndex];
    if (!isRecord(message) || !Array.isArray(message.content)) continue;
    if (message.role === 'user') {
      for (const [index, part] of message.content.entries()) {
        if (isMediaPart(part))
          media.push(describePart(part, { role: 'user', messageIndex, path: `messages[${messageIndex}].content[${index}]` }));
      }
    } else if (message.role === 'tool') {
      for (const [resultIndex, result] of message.content.entries()) {
        if (!isRecord(result) || !Array.isArray(result.content)) continue;
        for (const [index, part] of result.content.entries()) {
          if (!isMediaPart(part)) continue;
          media.push(
            describePart(part, {
              role: 'tool',
              messageIndex,
              ...(typeof result.toolCallId === 'string' ? { toolCallId: result.toolCallId } : {}),
              ...(typeof result.toolName === 'string' ? { toolName: result.toolName } : {}),
              path: `messages[${messageIndex}].content[${resultIndex}].content[${index}]`,
            }),
          );
        }
      }
    }
  }
  return media;
}

const dataUrlPattern = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s;
const schemePattern = /^[a-z][a-z0-9+.-]*:/i;

type Origin = Pick<SentMedia, 'role' | 'messageIndex' | 'toolCallId' | 'toolName' | 'path'>;

function describePart(part: ImagePart | FilePart, origin: Origin): SentMedia {
  const { data } = part;
  let kind: SentMediaKind;
  let head: Uint8Array | undefined;
  let mediaType = typeof part.mediaType === 'string' && part.mediaType !== '' ? part.mediaType : undefined;
  if (data instanceof Uint8Array) {
    kind = 'bytes';
    head = data.subarray(0, 12);
  } else if (typeof data === 'string' && /^data:/i.test(data)) {
    kind = 'data-url';
    const parsed = dataUrlPattern.exec(data.slice(0, 256));
    mediaType ??= parsed?.[1] || undefined;
    head = headOf(parsed?.[3]);
  } else if (typeof data === 'string' && schemePattern.test(data)) {
    kind = 'url';
  } else {
    kind = 'base64';
    head = headOf(typeof data === 'string' ? data : undefined);
  }
  if (mediaType === undefined && part.type === 'image' && head !== undefined) mediaType = sniffImageMediaType(head);
  const byteLength = lengthOf(part, kind);
  const filename = part.type === 'file' && typeof part.filename === 'string' ? part.filename : undefined;
  return {
    type: part.type,
    ...(mediaType === undefined ? {} : { mediaType }),
    ...(filename === undefined ? {} : { filename }),
    role: origin.role,
    messageIndex: origin.messageIndex,
    ...(origin.toolCallId === undefined ? {} : { toolCallId: origin.toolCallId }),
    ...(origin.toolName === undefined ? {} : { toolName: origin.toolName }),
    kind,
    ...(kind === 'url' ? { url: data as string } : {}),
    ...(byteLength === undefined ? {} : { byteLength }),
    path: origin.path,
    part,
  };
}

/** The first bytes of base64, enough to tell an image's type; `undefined` when it is not base64. */
function headOf(base64: string | undefined): Uint8Array | undefined {
  if (base64 === undefined) return undefined;
  const start = base64.slice(0, 16);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(start)) return undefined;
  try {
    return bytesFromBase64(start.length % 4 === 0 ? start : start.slice(0, start.length - (start.length % 4)));
  } catch {
    return undefined;
  }
}

function lengthOf(part: ImagePart | FilePart, kind: SentMediaKind): number | undefined {
  if (kind === 'url') return undefined;
  try {
    return mediaByteLength(part);
  } catch {
    return undefined;
  }
}

/**
 * What each request brought that the one before did not carry (a medium counted as often as it
 * appears): a later request carries the history again, a retry the same one.
 */
function newMediaByRequest(requests: readonly ProviderRequest[]): SentMedia[][] {
  let before = new Map<string, number>();
  return requests.map((request, requestIndex) => {
    const media = isRecord(request) && Array.isArray(request.messages) ? requestMedia(request.messages, 0) : [];
    const now = new Map<string, number>();
    const brought: SentMedia[] = [];
    for (const medium of media) {
      const key = identityOf(medium);
      now.set(key, (now.get(key) ?? 0) + 1);
      const seen = before.get(key) ?? 0;
      if (seen > 0) before.set(key, seen - 1);
      else brought.push({ ...medium, request: requestIndex });
    }
    before = now;
    return brought;
  });
}

/** A medium's identity across requests: where it belongs and what it holds (its length and ends: no 20 MB key). */
function identityOf(medium: SentMedia): string {
  const { data } = medium.part;
  const text =
    data instanceof Uint8Array ? `${base64FromBytes(data.subarray(0, 48))}…${base64FromBytes(data.subarray(-48))}` : String(data);
  const fingerprint = text.length > 160 ? `${text.slice(0, 80)}…${text.slice(-80)}` : text;
  return JSON.stringify([
    medium.role,
    medium.toolCallId ?? null,
    medium.type,
    medium.mediaType ?? null,
    medium.byteLength ?? null,
    fingerprint,
  ]);
}

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * A medium on one line, for messages: `messages[0].content[1]: image image/png, base64, 68 B (user
 * message)`, with `requests[1].` before the path when it came through a provider.
 */
export function mediumLine(medium: SentMedia): string {
  const where = `${medium.request === undefined ? '' : `requests[${medium.request}].`}${medium.path}`;
  const name = medium.filename === undefined ? '' : ` ${JSON.stringify(medium.filename)}`;
  const size =
    medium.kind === 'url' ? ` ${clip(medium.url ?? '', 60)}` : medium.byteLength === undefined ? '' : `, ${sizeText(medium.byteLength)}`;
  const from =
    medium.role === 'user'
      ? 'user message'
      : `result of ${medium.toolName ?? 'a tool'}${medium.toolCallId === undefined ? '' : `, ${medium.toolCallId}`}`;
  return `${where}: ${medium.type}${name} ${medium.mediaType ?? '(no media type)'}, ${medium.kind}${size} (${from})`;
}

function clip(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}
