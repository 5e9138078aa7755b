import { serializeResult } from '../util/serialize-result.js';
import type { Message } from './messages.js';
import type { ToolDescription } from './provider.js';
import { isMediaPart } from './media.js';
import { type MediaTokenRule, mediaTokens } from './media-tokens.js';

/**
 * A token estimate without a tokenizer: tokenizers differ per model and weigh megabytes, and the
 * estimate only has to tell whether a prompt is near a limit. Each wire reports the real count
 * with every response, which corrects the estimate's base (see `promptTokens`).
 */

/** Characters per token of English prose and JSON, the usual rule of thumb for BPE tokenizers. */
const charactersPerToken = 4;
/** What a message costs beyond its content: role markers and separators of the chat template. */
const messageOverheadTokens = 4;
/** What a part costs beyond its text: block markers, a tool call's id and framing. */
const partOverheadTokens = 3;
/** A part the estimate cannot measure (a kind a later model adds, e.g. an image): about what one image costs. */
const unknownPartTokens = 1000;
/** What one tool description costs beyond its name, description and schema. */
const toolOverheadTokens = 8;

/**
 * The JSON length of tool arguments and results already measured. They are the large part of a
 * long history and the same objects are measured before every request, so each is serialized once;
 * history messages are never mutated in place (they live in snapshots), so the length stays true.
 */
const measuredLengths = new WeakMap<object, number>();

function valueLength(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (typeof value !== 'object' || value === null) return serializeResult(value).length;
  const known = measuredLengths.get(value);
  if (known !== undefined) return known;
  const length = serializeResult(value).length;
  measuredLengths.set(value, length);
  return length;
}

function tokensOf(characters: number, parts: number, unknownParts: number, media = 0): number {
  return (
    messageOverheadTokens +
    parts * partOverheadTokens +
    unknownParts * unknownPartTokens +
    media +
    Math.ceil(characters / charactersPerToken)
  );
}

/** A medium's tokens by the wire's rule; a part too malformed to read counts as an unknown one. */
function partMediaTokens(part: unknown, rule: MediaTokenRule | undefined): number {
  return isMediaPart(part) && (typeof part.data === 'string' || part.data instanceof Uint8Array)
    ? mediaTokens(part, rule)
    : unknownPartTokens;
}

/**
 * The estimated tokens of one message; see {@link estimateTokens} for how.
 *
 * @example
 * ```ts
 * estimateMessageTokens({ role: 'user', content: 'What is 2+3?' }); // 4 + ceil(12 / 4) = 7
 * ```
 */
export function estimateMessageTokens(message: Message, mediaRule?: MediaTokenRule): number {
  if (typeof message.content === 'string') return tokensOf(message.content.length, 0, 0);
  // Parts are read structurally: a history restored from storage may hold a part of a kind this version does not know.
  const parts = message.content as ReadonlyArray<{ type: string } & Record<string, unknown>>;
  let characters = 0;
  let unknownParts = 0;
  let media = 0;
  for (const part of parts) {
    switch (part.type) {
      case 'image':
      case 'file':
        media += partMediaTokens(part, mediaRule);
        break;
      case 'text':
      case 'reasoning':
        characters += typeof part.text === 'string' ? part.text.length : 0;
        break;
      case 'redacted-reasoning':
        characters += typeof part.data === 'string' ? part.data.length : 0;
        break;
      case 'tool-call':
        characters += (typeof part.toolName === 'string' ? part.toolName.length : 0) + valueLength(part.args);
        break;
      case 'tool-result':
        characters += valueLength(part.result);
        // A `toolContent` result's text is in `result`; its images and files cost like a user's.
        if (Array.isArray(part.content))
          for (const inner of part.content as unknown[]) if (isMediaPart(inner)) media += partMediaTokens(inner, mediaRule);
        break;
      default:
        unknownParts++;
    }
  }
  return tokensOf(characters, parts.length, unknownParts, media);
}

/**
 * Estimates the tokens of a prompt: the history, and the system prompt and tool descriptions sent
 * with it. Fast and deterministic, with no tokenizer:
 *
 * - Text counts one token per 4 characters (UTF-16 code units): user and assistant text, reasoning
 *   text, Anthropic's redacted reasoning data, a tool call's name and its arguments as JSON, a tool
 *   result as the model sees it (strings as they are, anything else as JSON). Reasoning
 *   signatures and provider metadata are not counted.
 * - Each message adds 4 tokens and each part 3, for the chat template's framing.
 * - An image counts by its pixels, as the wire counts it (`mediaRule`: OpenAI's 512-px tiles,
 *   Anthropic's width × height / 750; without one, the larger); a PDF 2,000 a page; plain text
 *   four characters a token; WAV or MP3 audio ten a second; a medium by URL, or one whose size
 *   cannot be read, 1,000 (see `mediaTokens`). So do the images and files of a `toolContent` result.
 * - A part of a kind the estimate does not know counts 1,000 tokens.
 * - The system prompt counts as one message; each tool, its name, description and JSON schema plus 8.
 *
 * Prose and code in English come out close to the real count; text in scripts that take about a
 * token per character (Chinese, Japanese) comes out low, so leave room under a limit for them.
 * Arguments and results are serialized once and remembered by object, so estimating a long history
 * again before every request costs little.
 *
 * @example
 * ```ts
 * const tokens = estimateTokens(output.messages, { system: 'You are terse.', tools: [add] });
 * if (tokens > 100_000) console.warn('the history is getting long');
 * ```
 */
export function estimateTokens(
  messages: readonly Message[],
  extra: { system?: string; tools?: readonly ToolDescription[]; mediaRule?: MediaTokenRule } = {},
): number {
  let tokens = 0;
  for (const message of messages) tokens += estimateMessageTokens(message, extra.mediaRule);
  if (extra.system !== undefined && extra.system !== '') tokens += tokensOf(extra.system.length, 0, 0);
  for (const tool of extra.tools ?? []) {
    const characters = tool.name.length + tool.description.length + valueLength(tool.inputSchema);
    tokens += toolOverheadTokens + Math.ceil(characters / charactersPerToken);
  }
  return tokens;
}
