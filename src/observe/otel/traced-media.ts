import { isMediaPart, mediaByteLength } from '../../model/media.js';
import type { Message } from '../../model/messages.js';

/** Media in a history: how many parts and how many bytes (URLs count as parts of unknown size). */
export type MediaTally = { parts: number; bytes: number };

const tallies = new WeakMap<Message, MediaTally>();
const none: MediaTally = { parts: 0, bytes: 0 };

function tallyOf(message: Message): MediaTally {
  if (message.role !== 'user' || typeof message.content === 'string') return none;
  let tally = tallies.get(message);
  if (!tally) {
    tally = { parts: 0, bytes: 0 };
    for (const part of message.content) {
      if (!isMediaPart(part)) continue;
      tally.parts += 1;
      tally.bytes += mediaByteLength(part) ?? 0;
    }
    tallies.set(message, tally);
  }
  return tally;
}

/**
 * The media a request carries, for span attributes that say what it cost without its bytes.
 * Each message is counted once (histories share their messages from request to request).
 *
 * @example
 * ```ts
 * mediaTally([{ role: 'user', content: [{ type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' }] }]); // { parts: 1, bytes: 8 }
 * ```
 */
export function mediaTally(messages: readonly Message[]): MediaTally {
  let parts = 0;
  let bytes = 0;
  for (const message of messages) {
    const tally = tallyOf(message);
    parts += tally.parts;
    bytes += tally.bytes;
  }
  return { parts, bytes };
}

/**
 * A history as a span records it: each image or file by its media type and size, never its bytes
 * (a URL stays: it is what was sent).
 *
 * @example
 * ```ts
 * tracedMessages([{ role: 'user', content: [{ type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' }] }]);
 * // [{ role: 'user', content: [{ type: 'image', mediaType: 'image/png', bytes: 8 }] }]
 * ```
 */
export function tracedMessages(messages: readonly Message[]): unknown[] {
  return messages.map((message) => {
    if (tallyOf(message).parts === 0 || message.role !== 'user' || typeof message.content === 'string') return message;
    return {
      ...message,
      content: message.content.map((part) => {
        if (!isMediaPart(part)) return part;
        const { data, providerMetadata: _metadata, ...rest } = part;
        const bytes = mediaByteLength(part);
        return bytes === undefined ? { ...rest, url: data } : { ...rest, bytes };
      }),
    };
  });
}
