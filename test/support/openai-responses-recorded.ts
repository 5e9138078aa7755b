/**
 * Helpers to replay recorded OpenAI Responses traffic (`recorded/openai-responses/`): what a
 * recorded response says, read straight from its bytes (independently of the SDK and of
 * actorloop's assembler); the neutral history and provider options a recorded request stands for;
 * and a request comparison that looks only at what matters to the conversation.
 */
import { deepStrictEqual } from 'node:assert/strict';
import type { AssistantContentPart, Message, ToolResultPart } from '../../src/model/messages.js';
import type { OpenAIResponsesProviderOptions } from '../../src/providers/openai/index.js';
import type { ToolDescription } from '../../src/model/provider.js';
import type { Usage } from '../../src/model/usage.js';
import { splitSseEvents, type Cassette, type WireInteraction } from './wire-server.js';

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

// ---------------------------------------------------------------------------------------------
// Recorded responses.

export type RecordedItem =
  | { type: 'message'; id?: string; text: string; phase?: string; refusal: boolean }
  | { type: 'reasoning'; id?: string; summary: string[]; encrypted?: string }
  | { type: 'function_call'; id?: string; callId: string; name: string; arguments: string; status?: string }
  | { type: 'other'; itemType: string };

export type RecordedOutput = {
  responseId?: string;
  model?: string;
  status?: string;
  incompleteReason?: string;
  /** Final items in output order: `output_item.done` of a stream, `output` of a JSON body. */
  items: RecordedItem[];
  /** Streams: what the deltas say (text, summary parts joined by a blank line, arguments by call). */
  streamedText: string;
  streamedReasoning: string;
  streamedArgs: Map<string, string>;
  inBandError?: { code?: string; message?: string };
};

function recordedItem(raw: unknown): RecordedItem {
  if (!isRecord(raw)) return { type: 'other', itemType: 'invalid' };
  const id = str(raw.id);
  switch (raw.type) {
    case 'message': {
      const parts = asArray(raw.content).filter(isRecord);
      const text = parts.map((part) => str(part.text) ?? str(part.refusal) ?? '').join('');
      const refusal = parts.some((part) => part.type === 'refusal') && !parts.some((part) => part.type === 'output_text' && part.text);
      return { type: 'message', ...(id ? { id } : {}), text, ...(str(raw.phase) ? { phase: str(raw.phase) } : {}), refusal };
    }
    case 'reasoning':
      return {
        type: 'reasoning',
        ...(id ? { id } : {}),
        summary: asArray(raw.summary).flatMap((part) => (isRecord(part) && typeof part.text === 'string' ? [part.text] : [])),
        ...(str(raw.encrypted_content) ? { encrypted: str(raw.encrypted_content) } : {}),
      };
    case 'function_call':
      return {
        type: 'function_call',
        ...(id ? { id } : {}),
        callId: String(raw.call_id),
        name: String(raw.name),
        arguments: String(raw.arguments ?? ''),
        ...(str(raw.status) ? { status: str(raw.status) } : {}),
      };
    default:
      return { type: 'other', itemType: String(raw.type) };
  }
}

/** Reads a recorded response: the terminal response (or JSON body), `output_item.done` items and the deltas. */
export function parseRecordedResponsesOutput(response: WireInteraction['response']): RecordedOutput {
  const parsed: RecordedOutput = { items: [], streamedText: '', streamedReasoning: '', streamedArgs: new Map() };
  let terminal: Json | undefined;
  if ((response.headers['content-type'] ?? '').includes('event-stream')) {
    const done = new Map<number, RecordedItem>();
    const callIdByItem = new Map<string, string>();
    let lastSummaryKey = '';
    for (const block of splitSseEvents(response.body)) {
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .join('');
      if (data === '') continue;
      const event = JSON.parse(data) as Json;
      switch (event.type) {
        case 'response.output_item.added':
          if (isRecord(event.item) && event.item.type === 'function_call')
            callIdByItem.set(String(event.item.id), String(event.item.call_id));
          break;
        case 'response.output_text.delta':
          parsed.streamedText += String(event.delta);
          break;
        case 'response.reasoning_summary_text.delta': {
          const key = `${String(event.item_id)}#${String(event.summary_index)}`;
          if (lastSummaryKey !== '' && key !== lastSummaryKey && lastSummaryKey.startsWith(`${String(event.item_id)}#`))
            parsed.streamedReasoning += '\n\n';
          lastSummaryKey = key;
          parsed.streamedReasoning += String(event.delta);
          break;
        }
        case 'response.function_call_arguments.delta': {
          const callId = callIdByItem.get(String(event.item_id)) ?? String(event.item_id);
          parsed.streamedArgs.set(callId, (parsed.streamedArgs.get(callId) ?? '') + String(event.delta));
          break;
        }
        case 'response.output_item.done':
          done.set(Number(event.output_index), recordedItem(event.item));
          break;
        case 'error':
          parsed.inBandError = isRecord(event.error)
            ? { code: str(event.error.code), message: str(event.error.message) }
            : { code: str(event.code), message: str(event.message) };
          break;
        case 'response.created':
        case 'response.completed':
        case 'response.incomplete':
        case 'response.failed':
          if (isRecord(event.response)) terminal = event.response;
          break;
      }
    }
    parsed.items = [...done.entries()].sort(([a], [b]) => a - b).map(([, item]) => item);
  } else {
    terminal = JSON.parse(response.body) as Json;
    parsed.items = asArray(terminal.output).map(recordedItem);
  }
  if (terminal) {
    if (str(terminal.id)) parsed.responseId = str(terminal.id);
    if (str(terminal.model)) parsed.model = str(terminal.model);
    if (str(terminal.status)) parsed.status = str(terminal.status);
    if (isRecord(terminal.incomplete_details) && str(terminal.incomplete_details.reason)) {
      parsed.incompleteReason = str(terminal.incomplete_details.reason);
    }
    if (terminal.status === 'failed' && isRecord(terminal.error) && !parsed.inBandError) {
      parsed.inBandError = { code: str(terminal.error.code), message: str(terminal.error.message) };
    }
  }
  return parsed;
}

/** The text of a recorded response's messages. */
export const recordedText = (output: RecordedOutput): string =>
  output.items.map((item) => (item.type === 'message' ? item.text : '')).join('');

/** The function calls of a recorded response. */
export const recordedCalls = (output: RecordedOutput) => output.items.flatMap((item) => (item.type === 'function_call' ? [item] : []));

/** A recorded response as the assistant message a client keeps (ids only when the response was stored). */
export function recordedAssistantMessage(output: RecordedOutput, stored: boolean): Message {
  const content: AssistantContentPart[] = [];
  const ids = (id: string | undefined) =>
    stored && id ? { itemId: id, ...(output.responseId ? { responseId: output.responseId } : {}) } : {};
  for (const item of output.items) {
    if (item.type === 'message' && item.text !== '') {
      const openai = { ...ids(item.id), ...(item.phase ? { phase: item.phase } : {}) };
      content.push({ type: 'text', text: item.text, ...(Object.keys(openai).length ? { providerMetadata: { openai } } : {}) });
    } else if (item.type === 'reasoning') {
      const openai = {
        ...ids(item.id),
        ...(item.encrypted ? { encryptedContent: item.encrypted } : {}),
        ...(item.summary.length > 1 ? { summary: item.summary } : {}),
      };
      content.push({
        type: 'reasoning',
        text: item.summary.join('\n\n'),
        ...(Object.keys(openai).length ? { providerMetadata: { openai } } : {}),
      });
    } else if (item.type === 'function_call') {
      const openai = ids(item.id);
      content.push({
        type: 'tool-call',
        toolCallId: item.callId,
        toolName: item.name,
        args: parseArgs(item.arguments),
        ...(Object.keys(openai).length ? { providerMetadata: { openai } } : {}),
      });
    }
  }
  return { role: 'assistant', content };
}

// ---------------------------------------------------------------------------------------------
// Recorded requests.

function parseArgs(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? {};
  if (value.trim() === '') return {};
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map((part) => (isRecord(part) ? (str(part.text) ?? '') : ''))
    .join('');
}

/**
 * Some early clients (pydantic-ai, March 2025) echoed a call's item id (`fc_…`) as its `call_id`;
 * the API accepted it. Each recorded call's item id maps to its real `call_id`, so requests can be
 * compared whichever of the two a client sent.
 */
export function callIdAliases(cassette: Cassette): Map<string, string> {
  const aliases = new Map<string, string>();
  for (const interaction of cassette.interactions) {
    if (interaction.response.status !== 200) continue;
    for (const call of recordedCalls(parseRecordedResponsesOutput(interaction.response))) if (call.id) aliases.set(call.id, call.callId);
  }
  return aliases;
}

const managedKeys = new Set(['model', 'input', 'instructions', 'tools', 'stream', 'store', 'include', 'reasoning', 'previous_response_id']);

export type RecordedResponsesRequest = {
  model: string;
  system?: string;
  messages: Message[];
  tools: ToolDescription[];
  /** The provider options that make actorloop send this request. */
  options: Omit<OpenAIResponsesProviderOptions, 'api' | 'model'>;
  previousResponseId?: string;
};

/**
 * The neutral history of a recorded Responses request: a leading system or developer message (or
 * non-empty `instructions`) becomes `system`; consecutive assistant-side items (reasoning,
 * messages, function calls) one assistant message; consecutive outputs one tool message.
 */
export function recordedResponsesRequestToNeutral(body: unknown, aliases: Map<string, string> = new Map()): RecordedResponsesRequest {
  if (!isRecord(body) || !Array.isArray(body.input)) throw new Error('recordedResponsesRequestToNeutral: not a Responses request body');
  const messages: Message[] = [];
  const toolNames = new Map<string, string>();
  let system = str(body.instructions) || undefined;
  const alias = (id: string) => aliases.get(id) ?? id;
  const assistant = (): AssistantContentPart[] => {
    const last = messages.at(-1);
    if (last?.role === 'assistant') return last.content;
    const content: AssistantContentPart[] = [];
    messages.push({ role: 'assistant', content });
    return content;
  };
  body.input.forEach((raw: unknown, index) => {
    if (!isRecord(raw)) return;
    const role = raw.role;
    if (raw.type === 'reasoning') {
      const summary = asArray(raw.summary).flatMap((part) => (isRecord(part) && typeof part.text === 'string' ? [part.text] : []));
      const id = str(raw.id);
      const encrypted = str(raw.encrypted_content);
      const openai = {
        ...(id ? { itemId: id } : {}),
        ...(encrypted ? { encryptedContent: encrypted } : {}),
        ...(summary.length > 1 ? { summary } : {}),
      };
      assistant().push({
        type: 'reasoning',
        text: summary.join('\n\n'),
        ...(Object.keys(openai).length ? { providerMetadata: { openai } } : {}),
      });
    } else if (raw.type === 'function_call') {
      const toolCallId = alias(String(raw.call_id));
      toolNames.set(toolCallId, String(raw.name));
      const id = str(raw.id);
      assistant().push({
        type: 'tool-call',
        toolCallId,
        toolName: String(raw.name),
        args: parseArgs(raw.arguments),
        ...(id ? { providerMetadata: { openai: { itemId: id } } } : {}),
      });
    } else if (raw.type === 'function_call_output') {
      const toolCallId = alias(String(raw.call_id));
      const part: ToolResultPart = {
        type: 'tool-result',
        toolCallId,
        toolName: toolNames.get(toolCallId) ?? 'unknown',
        result: contentText(raw.output),
      };
      const last = messages.at(-1);
      if (last?.role === 'tool') last.content.push(part);
      else messages.push({ role: 'tool', content: [part] });
    } else if (role === 'assistant') {
      const openai = { ...(str(raw.id) ? { itemId: str(raw.id) } : {}), ...(str(raw.phase) ? { phase: str(raw.phase) } : {}) };
      assistant().push({
        type: 'text',
        text: contentText(raw.content),
        ...(Object.keys(openai).length ? { providerMetadata: { openai } } : {}),
      });
    } else if ((role === 'system' || role === 'developer') && index === 0 && system === undefined) {
      system = contentText(raw.content);
    } else if (role === 'system' || role === 'developer') {
      messages.push({ role: 'system', content: contentText(raw.content) });
    } else if (role === 'user') {
      messages.push({
        role: 'user',
        content:
          typeof raw.content === 'string' ? raw.content : asArray(raw.content).map((part) => ({ type: 'text', text: contentText([part]) })),
      });
    } else {
      throw new Error(`recordedResponsesRequestToNeutral: unexpected input item ${JSON.stringify(raw).slice(0, 80)}`);
    }
  });
  const tools: ToolDescription[] = [];
  const stricts = new Set<unknown>();
  for (const tool of asArray(body.tools)) {
    if (!isRecord(tool)) continue;
    stricts.add(tool.strict);
    tools.push({
      name: String(tool.name),
      description: str(tool.description) ?? '',
      inputSchema: isRecord(tool.parameters) ? tool.parameters : { type: 'object', properties: {} },
    });
  }
  const params: Json = {};
  for (const [key, value] of Object.entries(body)) if (!managedKeys.has(key)) params[key] = value;
  const reasoning = isRecord(body.reasoning) ? body.reasoning : {};
  const include = asArray(body.include).map(String);
  const strict = stricts.size === 1 ? [...stricts][0] : undefined;
  const options: RecordedResponsesRequest['options'] = {
    stream: body.stream === true,
    // The API stores responses unless told not to.
    store: body.store !== false,
    encryptedReasoning: include.includes('reasoning.encrypted_content'),
    ...(str(reasoning.effort) ? { reasoningEffort: str(reasoning.effort) as OpenAIResponsesProviderOptions['reasoningEffort'] } : {}),
    ...(str(reasoning.summary) ? { reasoningSummary: str(reasoning.summary) as OpenAIResponsesProviderOptions['reasoningSummary'] } : {}),
    ...(typeof strict === 'boolean' ? { strict } : {}),
    ...(Object.keys(params).length > 0 ? { params } : {}),
  };
  return {
    model: String(body.model),
    ...(system === undefined ? {} : { system }),
    messages,
    tools,
    options,
    ...(str(body.previous_response_id) ? { previousResponseId: str(body.previous_response_id) } : {}),
  };
}

/** The results a recorded request sends back, by (real) call id. */
export function recordedToolOutputs(body: unknown, aliases: Map<string, string> = new Map()): Map<string, string> {
  const results = new Map<string, string>();
  if (!isRecord(body)) return results;
  for (const item of asArray(body.input)) {
    if (isRecord(item) && item.type === 'function_call_output')
      results.set(aliases.get(String(item.call_id)) ?? String(item.call_id), contentText(item.output));
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// Comparing requests.

type NormalizedItem =
  | { kind: 'message'; role: string; text: string; id?: string; phase?: string }
  | { kind: 'reasoning'; summary: string[]; encrypted?: string; id?: string }
  | { kind: 'call'; callId: string; name: string; args: unknown; id?: string }
  | { kind: 'output'; callId: string; output: string };

export type NormalizedResponsesRequest = {
  model: unknown;
  system: string;
  items: NormalizedItem[];
  tools: string[];
  store: boolean;
  include: string[];
  reasoning: { effort?: unknown; summary?: unknown };
  previousResponseId?: string;
  stream: boolean;
  params: Json;
};

/**
 * Reduces a Responses request body to what {@link assertResponsesRequestMatches} compares. A
 * reasoning item sent whole is compared by its encrypted content and summary, one sent by
 * reference by its id; `store` is compared by its effect (absent means stored).
 */
export function normalizeResponsesRequest(body: unknown, aliases: Map<string, string> = new Map()): NormalizedResponsesRequest {
  if (!isRecord(body)) throw new Error('normalizeResponsesRequest: expected a JSON object request body');
  const alias = (id: unknown) => aliases.get(String(id)) ?? String(id);
  const items: NormalizedItem[] = [];
  // An empty `instructions` (pydantic-ai) is no system prompt.
  let system = str(body.instructions) ?? '';
  asArray(body.input).forEach((raw, index) => {
    if (!isRecord(raw)) return;
    if (raw.type === 'reasoning') {
      const encrypted = str(raw.encrypted_content);
      items.push({
        kind: 'reasoning',
        summary: asArray(raw.summary).map((part) => (isRecord(part) ? String(part.text) : '')),
        ...(encrypted ? { encrypted } : str(raw.id) ? { id: str(raw.id) } : {}),
      });
    } else if (raw.type === 'function_call') {
      items.push({
        kind: 'call',
        callId: alias(raw.call_id),
        name: String(raw.name),
        args: parseArgs(raw.arguments),
        ...(str(raw.id) ? { id: str(raw.id) } : {}),
      });
    } else if (raw.type === 'function_call_output') {
      items.push({ kind: 'output', callId: alias(raw.call_id), output: contentText(raw.output) });
    } else {
      const role = raw.role === 'developer' ? 'system' : String(raw.role);
      if (role === 'system' && index === 0 && system === '') {
        system = contentText(raw.content);
        return;
      }
      items.push({
        kind: 'message',
        role,
        text: contentText(raw.content),
        ...(role === 'assistant' && str(raw.id) ? { id: str(raw.id) } : {}),
        ...(str(raw.phase) ? { phase: str(raw.phase) } : {}),
      });
    }
  });
  const reasoning = isRecord(body.reasoning) ? body.reasoning : {};
  const params: Json = {};
  for (const [key, value] of Object.entries(body)) if (!managedKeys.has(key)) params[key] = value;
  return {
    model: body.model,
    system,
    items,
    tools: asArray(body.tools).map((tool) => (isRecord(tool) ? String(tool.name) : '?')),
    store: body.store !== false,
    include: asArray(body.include).map(String).sort(),
    reasoning: {
      ...(reasoning.effort !== undefined ? { effort: reasoning.effort } : {}),
      ...(reasoning.summary !== undefined ? { summary: reasoning.summary } : {}),
    },
    ...(str(body.previous_response_id) ? { previousResponseId: str(body.previous_response_id) } : {}),
    stream: body.stream === true,
    params,
  };
}

export type ResponsesMatchOptions = {
  aliases?: Map<string, string>;
  /**
   * `exact` (default) compares reasoning items too; `skip` leaves them out of both sides, for a
   * recording whose client did not send reasoning back (check what actorloop sent separately).
   */
  reasoning?: 'exact' | 'skip';
};

/**
 * Checks that a request actorloop sent carries the same conversation and settings as a recorded
 * one: model, system, input items in order (texts, phases, calls with parsed arguments, outputs,
 * reasoning items byte-identical), tool names, `store`, `include`, reasoning settings,
 * `previous_response_id`, `stream` and every other parameter the recording set. Tool schemas and
 * key order are ignored. Throws an assertion error with a diff on mismatch.
 */
export function assertResponsesRequestMatches(recorded: unknown, received: unknown, options: ResponsesMatchOptions = {}): void {
  const recordedBody = isRecord(recorded) && 'method' in recorded && 'body' in recorded ? recorded.body : recorded;
  const receivedBody = isRecord(received) && 'rawBody' in received && 'body' in received ? received.body : received;
  const expected = normalizeResponsesRequest(recordedBody, options.aliases);
  const actual = normalizeResponsesRequest(receivedBody, options.aliases);
  if (options.reasoning === 'skip') {
    expected.items = expected.items.filter((item) => item.kind !== 'reasoning');
    actual.items = actual.items.filter((item) => item.kind !== 'reasoning');
  }
  deepStrictEqual(actual, expected, 'the request sent does not match the recorded request');
}

// ---------------------------------------------------------------------------------------------
// Headline facts of every recorded response.

export type ResponsesPinned =
  | {
      status: string;
      /** [input, output, total, cached, reasoning, cache write]. */
      usage: [number, number, number, number | undefined, number | undefined, number | undefined];
      /** `call_id:name:status` of each function call. */
      toolCalls: string[];
      textLength: number;
      reasoningItems: number;
    }
  | { httpStatus: number }
  | { inBandError: string };

/** Read from the cassettes by an independent script (plain JSON reading, no actorloop code). */
export const pinnedResponsesFacts: Record<string, ResponsesPinned[]> = {
  'fantasy-gpt-4o-mini-simple-streaming': [
    { status: 'completed', usage: [20, 8, 28, 0, 0, undefined], toolCalls: [], textLength: 25, reasoningItems: 0 },
  ],
  'fantasy-gpt-4o-parallel-tools': [
    {
      status: 'completed',
      usage: [108, 51, 159, 0, 0, undefined],
      toolCalls: ['call_IAQ7c0mnAiAE89MUQa42HQy4:add:completed', 'call_gXYDdXX5Ld6zWOSpIAh0QHPr:multiply:completed'],
      textLength: 0,
      reasoningItems: 0,
    },
    { status: 'completed', usage: [154, 21, 175, 0, 0, undefined], toolCalls: [], textLength: 48, reasoningItems: 0 },
  ],
  'fantasy-gpt-5-reasoning-summary-tool-streaming': [
    {
      status: 'completed',
      usage: [63, 121, 184, 0, 64, undefined],
      toolCalls: ['call_zgUaIBRPTwxxOusyyKw5NVMH:weather:completed'],
      textLength: 0,
      reasoningItems: 1,
    },
    { status: 'completed', usage: [92, 456, 548, 0, 384, undefined], toolCalls: [], textLength: 115, reasoningItems: 1 },
  ],
  'fantasy-gpt-5-reasoning-summary-tool': [
    {
      status: 'completed',
      usage: [63, 212, 275, 0, 128, undefined],
      toolCalls: ['call_4QfIn5gPKIOWzKqBb5D2uuh4:weather:completed'],
      textLength: 0,
      reasoningItems: 1,
    },
    { status: 'completed', usage: [92, 544, 636, 0, 448, undefined], toolCalls: [], textLength: 109, reasoningItems: 1 },
  ],
  'mirascope-py-gpt-4o-stream-incomplete-max-output-tokens': [
    { status: 'incomplete:max_output_tokens', usage: [14, 50, 64, 0, 0, undefined], toolCalls: [], textLength: 152, reasoningItems: 0 },
  ],
  'mirascope-py-gpt-5-reasoning-summary-stream-multiturn': [
    { status: 'completed', usage: [32, 839, 871, 0, 832, undefined], toolCalls: [], textLength: 1, reasoningItems: 1 },
    { status: 'completed', usage: [62, 10, 72, 0, 0, undefined], toolCalls: [], textLength: 17, reasoningItems: 1 },
  ],
  'mirascope-ts-error-400-model-not-found-stream': [{ httpStatus: 400 }],
  'mirascope-ts-gpt-5-mini-incomplete-max-output-tokens': [
    { status: 'incomplete:max_output_tokens', usage: [14, 0, 14, 0, 0, undefined], toolCalls: [], textLength: 0, reasoningItems: 1 },
  ],
  'mirascope-ts-gpt-5-mini-stream-incomplete-max-output-tokens': [
    { status: 'incomplete:max_output_tokens', usage: [13, 0, 13, 0, 0, undefined], toolCalls: [], textLength: 0, reasoningItems: 1 },
  ],
  'mirascope-ts-o4-mini-reasoning-summary-stream': [
    { status: 'completed', usage: [14, 14, 28, 0, 0, undefined], toolCalls: [], textLength: 10, reasoningItems: 1 },
  ],
  'pydanticai-gpt-4.1-previous-response-id-tool-chain': [
    { status: 'completed', usage: [40, 3, 43, 0, 0, undefined], toolCalls: [], textLength: 5, reasoningItems: 0 },
    {
      status: 'completed',
      usage: [56, 16, 72, 0, 0, undefined],
      toolCalls: ['call_P1vN20XNjvNyIm0VshHYzmSA:get_weather:completed'],
      textLength: 0,
      reasoningItems: 0,
    },
    {
      status: 'completed',
      usage: [110, 16, 126, 0, 0, undefined],
      toolCalls: ['call_N2BikjqNxghwNIwHl2XKfb0F:get_weather:completed'],
      textLength: 0,
      reasoningItems: 0,
    },
    { status: 'completed', usage: [139, 14, 153, 0, 0, undefined], toolCalls: [], textLength: 42, reasoningItems: 0 },
  ],
  'pydanticai-gpt-4o-stream-tool-loop': [
    {
      status: 'completed',
      usage: [255, 16, 271, 0, 0, undefined],
      toolCalls: ['call_kL0PCQV7M2WMoVX8V8OtYSAL:get_capital:completed'],
      textLength: 0,
      reasoningItems: 0,
    },
    { status: 'completed', usage: [278, 9, 287, 0, 0, undefined], toolCalls: [], textLength: 31, reasoningItems: 0 },
  ],
  'pydanticai-gpt-5-reasoning-item-400-then-retry': [
    { status: 'completed', usage: [13, 248, 261, 0, 64, undefined], toolCalls: [], textLength: 831, reasoningItems: 1 },
    { httpStatus: 400 },
    { status: 'completed', usage: [142, 355, 497, 0, 128, undefined], toolCalls: [], textLength: 969, reasoningItems: 1 },
  ],
  'pydanticai-gpt-5.6-sol-prompt-cache-write-then-read': [
    { status: 'completed', usage: [4020, 5, 4025, 0, 0, 4012], toolCalls: [], textLength: 2, reasoningItems: 0 },
    { status: 'completed', usage: [4020, 5, 4025, 4012, 0, 0], toolCalls: [], textLength: 2, reasoningItems: 0 },
  ],
  'rubyllm-error-400-context-length-exceeded': [{ httpStatus: 400 }],
  'rubyllm-error-401-invalid-api-key': [{ httpStatus: 401 }],
  'rubyllm-gpt-5-nano-parallel-tools': [
    {
      status: 'completed',
      usage: [112, 284, 396, 0, 192, 0],
      toolCalls: ['call_NeNP7bv8VH3cJTxFagvafR2L:weather:completed', 'call_oAtUHJKdNzt8gEH4M6P3Grd3:best_language_to_learn:completed'],
      textLength: 0,
      reasoningItems: 1,
    },
    { status: 'completed', usage: [426, 385, 811, 0, 256, 0], toolCalls: [], textLength: 205, reasoningItems: 1 },
  ],
  'rubyllm-gpt-5-nano-streaming-text': [
    { status: 'completed', usage: [13, 284, 297, 0, 256, 0], toolCalls: [], textLength: 7, reasoningItems: 1 },
  ],
  'rubyllm-gpt-5-nano-tool-no-args-multiturn-streaming': [
    {
      status: 'completed',
      usage: [58, 248, 306, 0, 192, 0],
      toolCalls: ['call_gAlMKYUezxsrjOsVqKjhG5Me:best_language_to_learn:completed'],
      textLength: 0,
      reasoningItems: 1,
    },
    { status: 'completed', usage: [318, 1319, 1637, 0, 1024, 0], toolCalls: [], textLength: 1201, reasoningItems: 1 },
    { status: 'completed', usage: [382, 1010, 1392, 0, 832, 0], toolCalls: [], textLength: 510, reasoningItems: 1 },
  ],
  'vercel-gpt-5-nano-stream-error-insufficient-quota': [{ inBandError: 'insufficient_quota' }],
};

/** A pinned usage tuple as actorloop's `Usage`. */
export function pinnedUsage(usage: [number, number, number, number | undefined, number | undefined, number | undefined]): Usage {
  const [inputTokens, outputTokens, totalTokens, cached, reasoning, written] = usage;
  return {
    inputTokens,
    outputTokens,
    totalTokens,
    ...(cached === undefined ? {} : { cachedInputTokens: cached }),
    ...(written === undefined ? {} : { cacheCreationInputTokens: written }),
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning }),
  };
}
