import { type FilePart, type ImagePart, type MediaSource, mediaLabel, mediaSourceOf } from '../../model/media.js';
import type { Message, ProviderMetadata, ToolResultPart, UserContentPart } from '../../model/messages.js';
import { serializeResult } from '../../util/serialize-result.js';
import { isRecord } from '../../util/is-record.js';
import type { AiSdkMessage, AiSdkPromptPart, AiSdkProviderData } from './language-model.js';

/** The specification versions the adapter speaks (ai 5's, 6's and 7's provider packages). */
export type AiSdkVersion = 'v2' | 'v3' | 'v4';

/** Where a part's AI SDK `providerMetadata` is kept in the history: apart from the native wires' keys. */
export const aiSdkMetadataKey = 'ai-sdk';

/** The AI SDK data a part kept, as the `providerOptions` it goes back with. */
export function providerOptionsOf(metadata: ProviderMetadata | undefined): { providerOptions?: AiSdkProviderData } {
  const kept = metadata?.[aiSdkMetadataKey];
  return isRecord(kept) ? { providerOptions: kept as AiSdkProviderData } : {};
}

/**
 * A medium as the specification's file part. Version 3 takes the data itself (base64 or a `URL`);
 * version 4 wraps it (`{ type: 'data', data }` / `{ type: 'url', url }`). An image with no known
 * type goes as `image/*`, which the provider packages resolve.
 */
/** Version 4's file data: the bytes or the URL, wrapped. */
const v4FileData = (source: MediaSource) =>
  source.kind === 'url' ? { type: 'url', url: new URL(source.url) } : { type: 'data', data: source.base64 };

function filePart(part: ImagePart | FilePart, version: AiSdkVersion): AiSdkPromptPart {
  const source = mediaSourceOf(part);
  const mediaType = source.mediaType ?? (part.type === 'image' ? 'image/*' : 'application/octet-stream');
  const filename = part.type === 'file' && part.filename ? { filename: part.filename } : {};
  if (version === 'v4') return { type: 'file', data: v4FileData(source), mediaType, ...filename };
  return { type: 'file', data: source.kind === 'url' ? new URL(source.url) : source.base64, mediaType, ...filename };
}

function userParts(content: string | readonly UserContentPart[], version: AiSdkVersion): AiSdkPromptPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part) => (part.type === 'text' ? { type: 'text', text: part.text } : filePart(part, version)));
}

/** A tool result as the specification's output: text, an error's text, or content with media. */
function toolOutput(result: ToolResultPart, version: AiSdkVersion): Record<string, unknown> {
  const text = serializeResult(result.result);
  if (result.isError === true) return { type: 'error-text', value: text };
  if (!result.content) return { type: 'text', value: text };
  return {
    type: 'content',
    value: result.content.map((part) => {
      if (part.type === 'text') return { type: 'text', text: part.text };
      const source = mediaSourceOf(part);
      if (version === 'v4') return { type: 'file', data: v4FileData(source), mediaType: source.mediaType ?? 'image/*' };
      if (version === 'v2') {
        // Version 2 takes media in a tool result inline only: one by URL is named by its label.
        return source.kind === 'url'
          ? { type: 'text', text: `${mediaLabel(part)} ${source.url}` }
          : { type: 'media', data: source.base64, mediaType: source.mediaType };
      }
      if (source.kind === 'url') return { type: 'file-url', url: source.url, ...(source.mediaType ? { mediaType: source.mediaType } : {}) };
      return part.type === 'image'
        ? { type: 'image-data', data: source.base64, mediaType: source.mediaType }
        : { type: 'file-data', data: source.base64, mediaType: source.mediaType, ...(part.filename ? { filename: part.filename } : {}) };
    }),
  };
}

/**
 * The neutral history as the specification's prompt, the system prompt first.
 *
 * - A part the model produced through this adapter goes back with its `providerMetadata` as
 *   `providerOptions`, verbatim: Gemini's thought signatures, Bedrock's reasoning signatures.
 *   Its reasoning goes back even with no metadata (marked by an empty one), as the AI SDK's own
 *   loop sends it: each package decides what its API takes (`reasoning_content` on
 *   OpenAI-compatible servers, which DeepSeek's thinking mode requires in a tool loop).
 * - Reasoning from the native wires (Anthropic thinking, Responses reasoning) has no form here and
 *   is left out, as the native wires leave out each other's; redacted thinking likewise.
 * - Tool-call arguments go as the parsed object (the raw text when the model's JSON was invalid).
 *
 * @example
 * ```ts
 * toAiSdkPrompt([{ role: 'user', content: 'What is 2+3?' }], 'Be brief.', 'v3');
 * // [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: [{ type: 'text', text: 'What is 2+3?' }] }]
 * ```
 */
export function toAiSdkPrompt(messages: readonly Message[], system: string | undefined, version: AiSdkVersion): AiSdkMessage[] {
  const prompt: AiSdkMessage[] = [];
  if (system !== undefined && system !== '') prompt.push({ role: 'system', content: system });
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        prompt.push({ role: 'system', content: message.content });
        break;
      case 'user':
        prompt.push({ role: 'user', content: userParts(message.content, version) });
        break;
      case 'assistant': {
        const content: AiSdkPromptPart[] = [];
        for (const part of message.content) {
          switch (part.type) {
            case 'text':
              if (part.text !== '') content.push({ type: 'text', text: part.text, ...providerOptionsOf(part.providerMetadata) });
              break;
            case 'reasoning': {
              const options = providerOptionsOf(part.providerMetadata);
              if (options.providerOptions) content.push({ type: 'reasoning', text: part.text, ...options });
              break;
            }
            case 'tool-call':
              content.push({
                type: 'tool-call',
                toolCallId: part.toolCallId,
                toolName: part.toolName,
                input: part.args ?? {},
                ...providerOptionsOf(part.providerMetadata),
              });
              break;
            default:
              break;
          }
        }
        if (content.length > 0) prompt.push({ role: 'assistant', content });
        break;
      }
      case 'tool':
        prompt.push({
          role: 'tool',
          content: message.content.map((result) => ({
            type: 'tool-result',
            toolCallId: result.toolCallId,
            toolName: result.toolName,
            output: toolOutput(result, version),
          })),
        });
        break;
    }
  }
  return prompt;
}
