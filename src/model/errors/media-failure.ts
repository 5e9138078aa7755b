import { isMediaPart } from '../media.js';
import type { Message } from '../messages.js';
import { ProviderError } from './provider-error.js';

/** A part of the history sent by URL, and where it is (`messages[3].content[1]`, or inside a tool result). */
type UrlPart = { where: string; url: string; type: string };

function urlPartsOf(messages: readonly Message[]): UrlPart[] {
  const found: UrlPart[] = [];
  const look = (part: unknown, where: string) => {
    if (isMediaPart(part) && typeof part.data === 'string' && /^https:/i.test(part.data))
      found.push({ where, url: part.data, type: part.type });
  };
  messages.forEach((message, index) => {
    if (typeof message.content === 'string') return;
    (message.content as readonly unknown[]).forEach((part, partIndex) => {
      const where = `messages[${index}].content[${partIndex}]`;
      look(part, where);
      const inner = (part as { type?: unknown; content?: unknown }).content;
      if ((part as { type?: unknown }).type === 'tool-result' && Array.isArray(inner))
        for (const [innerIndex, innerPart] of (inner as unknown[]).entries()) look(innerPart, `${where}.content[${innerIndex}]`);
    });
  });
  return found;
}

/** What the wires say when they could not fetch a medium by URL. */
const fetchFailure =
  /download|fetch|retriev|could not (?:process|load|access)|unable to (?:load|access|process)|invalid_image_url|image_url|url/i;

/**
 * A provider's refusal of a medium it was to fetch by URL, naming the part: the wires answer 400
 * ("Error while downloading https://…", "Unable to download the file") without saying which part
 * of the history it was. The part whose URL the message names, else — when the message is about
 * fetching and the request had parts by URL — each of them. Any other error comes back as it is.
 *
 * @example
 * ```ts
 * const error = mediaFailureNamed(new ProviderError('Error while downloading https://x.test/a.png.', { code: 'bad_request', retryable: false, status: 400 }), messages);
 * // error.message: 'Error while downloading https://x.test/a.png. (the image by URL at messages[0].content[1]: https://x.test/a.png)'
 * ```
 */
export function mediaFailureNamed(error: ProviderError, messages: readonly Message[]): ProviderError {
  if (error.status !== 400 && error.code !== 'bad_request') return error;
  const parts = urlPartsOf(messages);
  if (parts.length === 0) return error;
  const named = parts.filter((part) => error.message.includes(part.url));
  const blamed = named.length > 0 ? named : fetchFailure.test(error.message) ? parts : [];
  if (blamed.length === 0) return error;
  const which = blamed.map((part) => `the ${part.type} by URL at ${part.where}: ${part.url}`).join('; ');
  return new ProviderError(`${error.message} (${which})`, {
    code: error.code,
    retryable: false,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.usage === undefined ? {} : { usage: error.usage }),
    ...(error.model === undefined ? {} : { model: error.model }),
    cause: error,
  });
}
