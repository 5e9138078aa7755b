/**
 * The OFFLINE model: a SCRIPTED stand-in (a `handlerProvider` in this process) that answers from
 * the conversation's own history, the way a model would:
 *
 *   "what is 2+3?"     → add({ a: 2, b: 3 }) → "2 + 3 = 5."
 *   "pay 80"           → pay({ amount: 80 }), which waits for your approval → "Done: …" or "I did not pay: …"
 *   "chart 3 1 4"      → chart({ values: [3, 1, 4] }), an image → "Here is the chart … (image/png, 185 bytes)"
 *   "tell me a story"  → a long answer, streamed a word at a time (reload the page while it streams)
 *   an attached image or PDF → what it received: each file's media type and size, read from the request
 */
import { handlerProvider, type Provider } from 'actorloop';
import type { OpenAIChatMessage } from 'actorloop/openai';
import { chatChunks, type ScriptReply, scriptedUsage, viewOfChatMessages } from '../support/script.js';

const story =
  'Once upon a time a small actor ran a long loop. Every step it took was a state you could see, and every tool it called waited ' +
  'for its turn. When the page that watched it was reloaded, nothing was lost: the stream picked up where the reader left, ' +
  'replayed from the first word, and went on to the end, which is here.';

type UserPart = Exclude<Extract<OpenAIChatMessage, { role: 'user' }>['content'], string>[number];

/** A medium of a request as the model received it: its media type and size (from its base64), or its URL. */
export type ReceivedMedium = { kind: 'image' | 'file' | 'audio'; mediaType?: string; bytes?: number; filename?: string; url?: string };

const base64Bytes = (base64: string) => (base64.length / 4) * 3 - (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0);

/** A `data:` URL's media type and byte count; any other URL as it is. */
function fromUrl(url: string): Pick<ReceivedMedium, 'mediaType' | 'bytes' | 'url'> {
  const inline = /^data:([^;,]+)(?:;[^;,]*)*;base64,(.*)$/s.exec(url);
  return inline ? { mediaType: inline[1] as string, bytes: base64Bytes(inline[2] as string) } : { url };
}

/** The media of a user message on the Chat Completions wire (the one `handlerProvider` speaks). */
export function receivedMedia(message: OpenAIChatMessage | undefined): ReceivedMedium[] {
  if (message?.role !== 'user' || typeof message.content === 'string') return [];
  return message.content.flatMap((part: UserPart): ReceivedMedium[] => {
    if (part.type === 'image_url') return [{ kind: 'image', ...fromUrl(part.image_url.url) }];
    if (part.type === 'file') return [{ kind: 'file', filename: part.file.filename, ...fromUrl(part.file.file_data) }];
    if (part.type === 'input_audio')
      return [{ kind: 'audio', mediaType: `audio/${part.input_audio.format}`, bytes: base64Bytes(part.input_audio.data) }];
    return [];
  });
}

/**
 * A medium as the answer names it: `an image (image/png, 70 bytes)`. A real model would say what the
 * picture shows; this one can only prove it got the bytes.
 */
export function describeMedium(medium: ReceivedMedium): string {
  const what =
    medium.kind === 'image'
      ? 'an image'
      : medium.kind === 'audio'
        ? 'a recording'
        : `a file${medium.filename ? ` ${medium.filename}` : ''}`;
  return medium.url ? `${what} at ${medium.url}` : `${what} (${medium.mediaType}, ${medium.bytes} bytes)`;
}

/**
 * Whether a user message is the media of the tool results before it, not something the user said:
 * a tool message takes only text on this wire, so a round's media follow its tool messages in one
 * user message, each call's introduced by `The result of tool call <id> (<name>) includes:`.
 */
function isToolMedia(messages: OpenAIChatMessage[], index: number): boolean {
  const message = messages[index];
  if (message?.role !== 'user' || messages[index - 1]?.role !== 'tool' || typeof message.content === 'string') return false;
  const [first] = message.content;
  return first?.type === 'text' && /^The result of tool call \S+ \(.+\) includes:$/.test(first.text);
}

/** The reply to this turn: the user's last message and the tool results that came after it. */
export function chatReply(messages: OpenAIChatMessage[]): ScriptReply {
  const asked = messages.findLastIndex((message, index) => message.role === 'user' && !isToolMedia(messages, index));
  const { userText } = viewOfChatMessages(messages.slice(asked, asked + 1));
  const after = messages.slice(asked + 1);
  const toolResults = after.flatMap((message) => (message.role === 'tool' ? [message.content] : []));
  const [result] = toolResults;
  const attached = receivedMedia(messages[asked]);
  if (attached.length > 0) {
    const list = attached.map(describeMedium);
    const all = list.length === 1 ? list[0] : `${list.slice(0, -1).join(', ')} and ${list.at(-1)}`;
    return { text: `I received ${all}. I am a scripted model: I can tell what I was sent, not what it shows.` };
  }
  const sum = /(-?\d+(?:\.\d+)?)\s*\+\s*(-?\d+(?:\.\d+)?)/.exec(userText);
  if (sum) {
    const [a, b] = [Number(sum[1]), Number(sum[2])];
    if (result === undefined) return { text: 'Let me add them. ', toolCalls: [{ name: 'add', args: { a, b } }] };
    return { text: `${a} + ${b} = ${(JSON.parse(result) as { sum: number }).sum}.` };
  }
  const pay = /\bpay\s+(\d+)/i.exec(userText);
  if (pay) {
    const amount = Number(pay[1]);
    if (result === undefined) return { text: `Paying ${amount} needs your approval. `, toolCalls: [{ name: 'pay', args: { amount } }] };
    return { text: result.startsWith('denied by user') ? `I did not pay: ${result}.` : `Done: ${result}.` };
  }
  const chart = /\bchart\b(.*)/i.exec(userText);
  if (chart) {
    const values = [...(chart[1] ?? '').matchAll(/\d+(?:\.\d+)?/g)].map((match) => Number(match[0]));
    if (values.length === 0) return { text: 'Which numbers? Try "chart 3 1 4 1 5".' };
    if (result === undefined) return { text: 'Drawing it. ', toolCalls: [{ name: 'chart', args: { values } }] };
    // The chart as this model received it: the image that followed the tool message.
    const [image] = after.flatMap((message, index) => (isToolMedia(after, index) ? receivedMedia(message) : []));
    return { text: image ? `Here is the chart of ${values.join(', ')}: ${describeMedium(image)}.` : `The chart tool said: ${result}` };
  }
  if (/story/i.test(userText)) return { text: story };
  return { text: 'Ask me "what is 2+3?", "pay 80", "chart 3 1 4", "tell me a story", or attach an image.' };
}

/** The scripted model as a provider: `wordDelayMs` between streamed pieces, so an answer visibly streams. */
export function scriptedChatModel(options: { wordDelayMs?: number } = {}): Provider {
  const delay = options.wordDelayMs ?? 40;
  return handlerProvider(async function* ({ messages, signal }) {
    const reply = chatReply(messages);
    const { turn } = viewOfChatMessages(messages);
    for (const chunk of chatChunks(reply, turn, scriptedUsage(JSON.stringify(messages), reply))) {
      signal.throwIfAborted();
      await new Promise((resolve) => setTimeout(resolve, delay));
      yield chunk;
    }
  });
}
