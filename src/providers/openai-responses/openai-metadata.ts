import type { ProviderMetadata, ReasoningPart, TextPart, ToolCallPart } from '../../model/messages.js';
import { isRecord } from '../../util/is-record.js';

/**
 * What the Responses API keeps on message parts, under `providerMetadata.openai`: plain JSON that
 * the other wires ignore. The Responses provider sends an item id back only when the server
 * stored the item (`store: true`), and uses `responseId` for `previous_response_id`.
 */

/**
 * Where a part came from on the OpenAI Responses API: the output item and the response that
 * produced it.
 *
 * @example
 * ```ts
 * const origin: OpenAIItemMetadata = { itemId: 'fc_0216a3dd…', responseId: 'resp_0216a3dd…' };
 * ```
 */
export type OpenAIItemMetadata = {
  /** The output item's id: `msg_…`, `rs_…` or `fc_…` (a tool call's neutral id is its `call_id`). */
  itemId?: string;
  /** The id of the response the item belongs to (`resp_…`). */
  responseId?: string;
};

/**
 * Whether an assistant message of the Responses API is commentary before a tool call or the
 * final answer (gpt-5.x models). Sent back with the message, as OpenAI asks.
 *
 * @example
 * ```ts
 * const phase: OpenAIMessagePhase = 'commentary';
 * ```
 */
export type OpenAIMessagePhase = 'commentary' | 'final_answer' | (string & {});

/**
 * What the Responses API said about an assistant text: its message item and its `phase`.
 *
 * @example
 * ```ts
 * const about: OpenAITextMetadata = { itemId: 'msg_0a10…', responseId: 'resp_0a10…', phase: 'final_answer' };
 * ```
 */
export type OpenAITextMetadata = OpenAIItemMetadata & { phase?: OpenAIMessagePhase };

/**
 * A Responses API reasoning item, kept so it can be sent back verbatim: `encryptedContent` is the
 * item's `encrypted_content` (the reasoning itself, which only OpenAI can read), `summary` its
 * summary parts when the part's `text` (the parts joined by a blank line) cannot give them back
 * exactly.
 *
 * @example
 * ```ts
 * const about: OpenAIReasoningMetadata = { itemId: 'rs_06d3…', responseId: 'resp_06d3…', encryptedContent: 'gAAAAABqhb9u…' };
 * ```
 */
export type OpenAIReasoningMetadata = OpenAIItemMetadata & {
  encryptedContent?: string;
  summary?: string[];
};

/** Everything this wire may have kept on one part. */
type OpenAIPartMetadata = OpenAITextMetadata & OpenAIReasoningMetadata;

/** The key of this wire in `providerMetadata`. */
const key = 'openai';

const stringFields = ['itemId', 'responseId', 'phase', 'encryptedContent'] as const;

/**
 * What this wire kept on a part (`providerMetadata.openai`), or why it cannot be read: a field of
 * the wrong type would otherwise send a request the API refuses, or drop reasoning silently.
 */
export function readOpenAIMetadata(
  part: TextPart | ReasoningPart | ToolCallPart,
): { metadata: OpenAIPartMetadata | undefined; problem?: undefined } | { problem: string } {
  const found = part.providerMetadata?.[key];
  if (found === undefined) return { metadata: undefined };
  if (!isRecord(found)) return { problem: `providerMetadata.${key} must be an object` };
  const metadata: OpenAIPartMetadata = {};
  for (const field of stringFields) {
    const value = found[field];
    if (value === undefined) continue;
    if (typeof value !== 'string') return { problem: `providerMetadata.${key}.${field} must be a string` };
    metadata[field] = value;
  }
  const summary = found.summary;
  if (summary !== undefined) {
    if (!Array.isArray(summary) || !summary.every((text) => typeof text === 'string')) {
      return { problem: `providerMetadata.${key}.summary must be an array of strings` };
    }
    metadata.summary = summary;
  }
  return { metadata };
}

/**
 * The `providerMetadata` of a part this wire produced, to spread into it: nothing when there is
 * nothing to keep, so parts from a server without ids stay as plain as the other wires' parts.
 */
export function withOpenAIMetadata(metadata: OpenAITextMetadata | OpenAIReasoningMetadata): { providerMetadata?: ProviderMetadata } {
  const kept: { [field: string]: string | string[] } = {};
  for (const [field, value] of Object.entries(metadata)) if (value !== undefined) kept[field] = value;
  return Object.keys(kept).length === 0 ? {} : { providerMetadata: { [key]: kept } };
}
