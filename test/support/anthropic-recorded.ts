/**
 * Helpers for replaying recorded Anthropic Messages traffic: turning a recorded request body back
 * into the provider-neutral request that should produce it, and reading the expected content of a
 * recorded response straight from its bytes (an oracle written apart from the provider's parser).
 */
import type { Message, ToolResultPart, AssistantContentPart, TextPart } from '../../src/model/messages.js';
import type { ProviderContentPart, ToolDescription } from '../../src/model/provider.js';
import type { Usage } from '../../src/model/usage.js';

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Text of a string or of `{type: 'text'}` blocks, joined. */
export function blockText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((block): block is Json => isRecord(block) && block.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text as string)
    .join('');
}

/** The neutral request a recorded Messages request body corresponds to. */
export type RecordedRequest = {
  model: string;
  maxTokens: number;
  stream: boolean;
  thinking?: { type: 'enabled'; budget_tokens: number };
  system?: string;
  messages: Message[];
  tools: ToolDescription[];
  /** Request fields that are neither conversation nor provider options (`stop_sequences`, …). */
  params: Json;
};

const ownFields = new Set(['model', 'max_tokens', 'stream', 'thinking', 'system', 'messages', 'tools']);

/**
 * Rebuilds the neutral history from a recorded Anthropic request: `tool_result` blocks become a
 * tool message (tool names looked up from the earlier `tool_use`), text blocks a user message,
 * assistant blocks keep their order; thinking signatures and redacted data are copied verbatim.
 */
export function recordedRequestToNeutral(body: unknown): RecordedRequest {
  if (!isRecord(body)) throw new Error('recordedRequestToNeutral: the request body was not recorded');
  const toolNames = new Map<string, string>();
  const messages: Message[] = [];
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    if (!isRecord(message)) continue;
    if (message.role === 'assistant') {
      const content: AssistantContentPart[] = [];
      const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
      for (const block of Array.isArray(blocks) ? blocks : []) {
        if (!isRecord(block)) continue;
        if (block.type === 'text') content.push({ type: 'text', text: String(block.text) });
        else if (block.type === 'thinking')
          content.push({ type: 'reasoning', text: String(block.thinking), signature: String(block.signature) });
        else if (block.type === 'redacted_thinking') content.push({ type: 'redacted-reasoning', data: String(block.data) });
        else if (block.type === 'tool_use') {
          toolNames.set(String(block.id), String(block.name));
          content.push({ type: 'tool-call', toolCallId: String(block.id), toolName: String(block.name), args: block.input });
        } else throw new Error(`recordedRequestToNeutral: unexpected assistant block ${String(block.type)}`);
      }
      messages.push({ role: 'assistant', content });
      continue;
    }
    if (message.role !== 'user') throw new Error(`recordedRequestToNeutral: unexpected role ${String(message.role)}`);
    if (typeof message.content === 'string') {
      messages.push({ role: 'user', content: message.content });
      continue;
    }
    const results: ToolResultPart[] = [];
    const texts: TextPart[] = [];
    for (const block of Array.isArray(message.content) ? message.content : []) {
      if (!isRecord(block)) continue;
      if (block.type === 'tool_result') {
        const id = String(block.tool_use_id);
        results.push({
          type: 'tool-result',
          toolCallId: id,
          toolName: toolNames.get(id) ?? 'unknown',
          result: blockText(block.content),
          ...(block.is_error === true ? { isError: true } : {}),
        });
      } else if (block.type === 'text') texts.push({ type: 'text', text: String(block.text) });
      else throw new Error(`recordedRequestToNeutral: unexpected user block ${String(block.type)}`);
    }
    if (results.length > 0) messages.push({ role: 'tool', content: results });
    if (texts.length > 0) messages.push({ role: 'user', content: texts });
  }
  const tools: ToolDescription[] = (Array.isArray(body.tools) ? body.tools : []).filter(isRecord).map((tool) => ({
    name: String(tool.name),
    description: typeof tool.description === 'string' ? tool.description : '',
    inputSchema: isRecord(tool.input_schema) ? tool.input_schema : { type: 'object' },
  }));
  const system = typeof body.system === 'string' ? body.system : Array.isArray(body.system) ? blockText(body.system) : undefined;
  const params = Object.fromEntries(Object.entries(body).filter(([key]) => !ownFields.has(key)));
  const thinking = isRecord(body.thinking) ? (body.thinking as RecordedRequest['thinking']) : undefined;
  return {
    model: String(body.model),
    maxTokens: Number(body.max_tokens),
    stream: body.stream === true,
    ...(thinking ? { thinking } : {}),
    ...(system === undefined ? {} : { system }),
    messages,
    tools,
    params,
  };
}

/** What a recorded response says, read directly from its bytes. */
export type ExpectedResponse = {
  content: ProviderContentPart[];
  stopReason: string | null;
  usage: Usage;
};

/** Splits an SSE body into `{event, data}` pairs the way the spec frames them (blank-line separated). */
export function parseSse(body: string): Array<{ event: string | null; data: string }> {
  const events: Array<{ event: string | null; data: string }> = [];
  for (const frame of body.split(/\r?\n\r?\n/)) {
    let event: string | null = null;
    const data: string[] = [];
    for (const line of frame.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (event !== null || data.length > 0) events.push({ event, data: data.join('\n') });
  }
  return events;
}

function usageFrom(counters: Json): Usage {
  const number = (key: string): number | undefined => (typeof counters[key] === 'number' ? (counters[key] as number) : undefined);
  const read = number('cache_read_input_tokens');
  const creation = number('cache_creation_input_tokens');
  const inputTokens = (number('input_tokens') ?? 0) + (read ?? 0) + (creation ?? 0);
  const outputTokens = number('output_tokens') ?? 0;
  return {
    inputTokens,
    outputTokens,
    totalTokens: inputTokens + outputTokens,
    ...(read === undefined ? {} : { cachedInputTokens: read }),
    ...(creation === undefined ? {} : { cacheCreationInputTokens: creation }),
  };
}

function contentFromBlocks(blocks: Json[]): ProviderContentPart[] {
  const content: ProviderContentPart[] = [];
  for (const block of blocks) {
    if (block.type === 'text' && block.text !== '') content.push({ type: 'text', text: String(block.text) });
    if (block.type === 'thinking') content.push({ type: 'reasoning', text: String(block.thinking), signature: String(block.signature) });
    if (block.type === 'redacted_thinking') content.push({ type: 'redacted-reasoning', data: String(block.data) });
    if (block.type === 'tool_use') {
      content.push({ type: 'tool-call', toolCallId: String(block.id), toolName: String(block.name), argsText: String(block.argsText) });
    }
  }
  return content;
}

/**
 * The content, stop reason and usage of a recorded 200 response. Streams: events with an
 * `event:` line only (what the SDK yields), blocks by index, `partial_json` concatenated (`{}`
 * when a tool got none), counters of `message_start` overlaid by non-null ones of `message_delta`.
 */
export function expectedResponse(response: { headers: Record<string, string>; body: string }): ExpectedResponse {
  const isStream = (response.headers['content-type'] ?? '').includes('event-stream');
  if (!isStream) {
    const message = JSON.parse(response.body) as Json;
    const blocks = (message.content as Json[]).map((block) =>
      block.type === 'tool_use' ? { ...block, argsText: JSON.stringify(block.input ?? {}) } : block,
    );
    return {
      content: contentFromBlocks(blocks),
      stopReason: (message.stop_reason as string | null) ?? null,
      usage: usageFrom(message.usage as Json),
    };
  }
  const blocks: Json[] = [];
  let counters: Json = {};
  let stopReason: string | null = null;
  for (const { event, data } of parseSse(response.body)) {
    if (event === null || event === 'ping' || data === '') continue;
    const payload = JSON.parse(data) as Json;
    if (event === 'message_start') counters = { ...((payload.message as Json).usage as Json) };
    if (event === 'content_block_start') {
      blocks[payload.index as number] = { ...(payload.content_block as Json), argsText: '' };
    }
    if (event === 'content_block_delta') {
      const block = blocks[payload.index as number] as Json;
      const delta = payload.delta as Json;
      if (delta.type === 'text_delta') block.text = String(block.text) + String(delta.text);
      if (delta.type === 'thinking_delta') block.thinking = String(block.thinking) + String(delta.thinking);
      if (delta.type === 'signature_delta') block.signature = String(block.signature ?? '') + String(delta.signature);
      if (delta.type === 'input_json_delta') block.argsText = String(block.argsText) + String(delta.partial_json);
    }
    if (event === 'message_delta') {
      stopReason = ((payload.delta as Json).stop_reason as string | null) ?? null;
      for (const [key, value] of Object.entries((payload.usage as Json) ?? {})) if (typeof value === 'number') counters[key] = value;
    }
  }
  for (const block of blocks) if (block.type === 'tool_use' && block.argsText === '') block.argsText = '{}';
  return { content: contentFromBlocks(blocks.filter(isRecord)), stopReason, usage: usageFrom(counters) };
}

/** The assistant message the conversation machine would store for a finished response. */
export function assistantMessageFrom(content: ProviderContentPart[]): Message {
  return {
    role: 'assistant',
    content: content.map((part): AssistantContentPart => {
      if (part.type !== 'tool-call') return part;
      let args: unknown;
      try {
        args = JSON.parse(part.argsText);
      } catch {
        args = part.argsText;
      }
      return { type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, args };
    }),
  };
}
