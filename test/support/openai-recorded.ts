/**
 * Helpers to replay recorded Chat Completions traffic: the neutral history a recorded request
 * carries (so our request can be compared with it), and what a recorded response should parse to.
 */
import type { AssistantContentPart, Message, ToolResultPart } from '../../src/model/messages.js';
import type { ToolDescription } from '../../src/model/provider.js';
import { splitSseEvents, type WireInteraction } from './wire-server.js';

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

function parseArguments(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? {};
  if (value.trim() === '') return {};
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

export type RecordedOpenAIRequest = {
  model: string;
  system?: string;
  messages: Message[];
  tools: ToolDescription[];
  stream: boolean;
  reasoningEffort?: string;
  strict?: boolean;
};

/**
 * The neutral history of a recorded Chat Completions request: a leading system (or developer)
 * message becomes `system`, consecutive tool messages become one tool message, tool names of
 * results are looked up from the calls that asked for them.
 */
export function recordedRequestToNeutral(body: unknown): RecordedOpenAIRequest {
  if (!isRecord(body) || !Array.isArray(body.messages)) throw new Error('recordedRequestToNeutral: not a Chat Completions request body');
  const messages: Message[] = [];
  const toolNames = new Map<string, string>();
  let system: string | undefined;
  body.messages.forEach((raw: unknown, index) => {
    if (!isRecord(raw)) return;
    const role = raw.role;
    if ((role === 'system' || role === 'developer') && index === 0) {
      system = text(raw.content);
    } else if (role === 'system' || role === 'developer') {
      messages.push({ role: 'system', content: text(raw.content) });
    } else if (role === 'user') {
      messages.push({ role: 'user', content: typeof raw.content === 'string' ? raw.content : [{ type: 'text', text: text(raw.content) }] });
    } else if (role === 'assistant') {
      const content: AssistantContentPart[] = [];
      const assistantText = text(raw.content);
      if (assistantText !== '') content.push({ type: 'text', text: assistantText });
      for (const call of Array.isArray(raw.tool_calls) ? raw.tool_calls : []) {
        if (!isRecord(call) || !isRecord(call.function)) continue;
        const toolCallId = String(call.id);
        const toolName = String(call.function.name);
        toolNames.set(toolCallId, toolName);
        content.push({ type: 'tool-call', toolCallId, toolName, args: parseArguments(call.function.arguments) });
      }
      messages.push({ role: 'assistant', content });
    } else if (role === 'tool') {
      const toolCallId = String(raw.tool_call_id);
      const part: ToolResultPart = {
        type: 'tool-result',
        toolCallId,
        toolName: toolNames.get(toolCallId) ?? 'unknown',
        result: text(raw.content),
      };
      const last = messages.at(-1);
      if (last?.role === 'tool') last.content.push(part);
      else messages.push({ role: 'tool', content: [part] });
    } else {
      throw new Error(`recordedRequestToNeutral: unexpected role ${String(role)}`);
    }
  });
  const tools: ToolDescription[] = [];
  const stricts = new Set<unknown>();
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    if (!isRecord(tool) || !isRecord(tool.function)) continue;
    stricts.add(tool.function.strict);
    tools.push({
      name: String(tool.function.name),
      description: typeof tool.function.description === 'string' ? tool.function.description : '',
      inputSchema: isRecord(tool.function.parameters) ? tool.function.parameters : { type: 'object', properties: {} },
    });
  }
  const strict = stricts.size === 1 ? [...stricts][0] : undefined;
  return {
    model: String(body.model),
    ...(system === undefined ? {} : { system }),
    messages,
    tools,
    stream: body.stream === true,
    ...(typeof body.reasoning_effort === 'string' ? { reasoningEffort: body.reasoning_effort } : {}),
    ...(typeof strict === 'boolean' ? { strict } : {}),
  };
}

/** The results a recorded request sends back, by tool-call id. */
export function recordedToolResults(body: unknown): Map<string, string> {
  const results = new Map<string, string>();
  if (!isRecord(body) || !Array.isArray(body.messages)) return results;
  for (const message of body.messages) {
    if (isRecord(message) && message.role === 'tool') results.set(String(message.tool_call_id), text(message.content));
  }
  return results;
}

export type ParsedRecordedResponse = {
  text: string;
  reasoning: string;
  toolCalls: Array<{ id: string; name: string; argsText: string }>;
  finishReason: string | undefined;
  inBandError?: unknown;
};

/**
 * What a recorded response says, read straight from the bytes (SSE `data:` lines or the JSON body),
 * independently of the SDK and of `createChunkReader`.
 */
export function parseRecordedResponse(response: WireInteraction['response']): ParsedRecordedResponse {
  const parsed: ParsedRecordedResponse = { text: '', reasoning: '', toolCalls: [], finishReason: undefined };
  if (!(response.headers['content-type'] ?? '').includes('event-stream')) {
    const body = JSON.parse(response.body) as Json;
    const choice = (body.choices as Json[])[0]!;
    const message = choice.message as Json;
    parsed.text = typeof message.content === 'string' ? message.content : '';
    parsed.reasoning = String(message.reasoning_content ?? message.reasoning ?? '');
    for (const call of (message.tool_calls as Json[] | undefined) ?? []) {
      const functionCall = call.function as Json;
      parsed.toolCalls.push({ id: String(call.id), name: String(functionCall.name), argsText: String(functionCall.arguments) });
    }
    parsed.finishReason = choice.finish_reason as string;
    return parsed;
  }
  const byIndex = new Map<number, { id: string; name: string; argsText: string }>();
  for (const event of splitSseEvents(response.body)) {
    for (const line of event.split('\n')) {
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') continue;
      const chunk = JSON.parse(data) as Json;
      if (chunk.error) {
        parsed.inBandError = chunk.error;
        return parsed;
      }
      for (const choice of (chunk.choices as Json[] | undefined) ?? []) {
        if ((choice.index ?? 0) !== 0) continue;
        const delta = (choice.delta ?? {}) as Json;
        const reasoning = delta.reasoning_content ?? delta.reasoning;
        if (typeof reasoning === 'string') parsed.reasoning += reasoning;
        if (typeof delta.content === 'string') parsed.text += delta.content;
        for (const call of (delta.tool_calls as Json[] | undefined) ?? []) {
          const index = call.index as number;
          let entry = byIndex.get(index);
          if (!entry) {
            entry = { id: String(call.id), name: '', argsText: '' };
            byIndex.set(index, entry);
            parsed.toolCalls.push(entry);
          }
          const functionCall = (call.function ?? {}) as Json;
          if (typeof functionCall.name === 'string') entry.name += functionCall.name;
          if (typeof functionCall.arguments === 'string') entry.argsText += functionCall.arguments;
        }
        if (typeof choice.finish_reason === 'string') parsed.finishReason = choice.finish_reason;
      }
    }
  }
  return parsed;
}

export type PinnedResponse =
  | { finish: string; usage: [number, number, number, number | undefined, number | undefined]; toolCalls: string[]; textLength: number }
  | { status: number }
  | { inBandError: number };

/** Headline facts of every recorded Chat Completions response, read from the cassettes by an independent script. usage = [input, output, total, cached, reasoning]. */
export const pinnedResponses: Record<string, PinnedResponse[]> = {
  'openai/fantasy-gpt-4o-mini-multi-tool-streaming': [
    {
      finish: 'tool_calls',
      usage: [106, 50, 156, 0, 0],
      toolCalls: ['call_cclGbjTQkZDEnnHrRiU0n7NO:add', 'call_Nob2SzTcxIjro1HvSBPQS6XG:multiply'],
      textLength: 0,
    },
    { finish: 'stop', usage: [172, 26, 198, 0, 0], toolCalls: [], textLength: 57 },
  ],
  'openai/fantasy-gpt-4o-mini-multi-tool': [
    {
      finish: 'tool_calls',
      usage: [110, 50, 160, 0, 0],
      toolCalls: ['call_2wt6qUGrlxczUadZYf3qXyH0:add', 'call_vZOWZaH7tzu0rLZeogtafvrf:multiply'],
      textLength: 0,
    },
    { finish: 'stop', usage: [176, 26, 202, 0, 0], toolCalls: [], textLength: 57 },
  ],
  'openai/fantasy-gpt-4o-mini-simple-streaming': [{ finish: 'stop', usage: [20, 2, 22, 0, 0], toolCalls: [], textLength: 4 }],
  'openai/fantasy-gpt-4o-mini-tool-streaming': [
    { finish: 'tool_calls', usage: [61, 16, 77, 0, 0], toolCalls: ['call_qLFv8oQOs68qRuEVmG8TuEJp:weather'], textLength: 0 },
    { finish: 'stop', usage: [86, 13, 99, 0, 0], toolCalls: [], textLength: 51 },
  ],
  'openai/fantasy-gpt-4o-tool': [
    { finish: 'tool_calls', usage: [61, 16, 77, 0, 0], toolCalls: ['call_IUonKM9GCNis5eMRHuusMqoy:weather'], textLength: 0 },
    { finish: 'stop', usage: [86, 13, 99, 0, 0], toolCalls: [], textLength: 49 },
  ],
  'openai/fantasy-o4-mini-tool-streaming': [
    { finish: 'tool_calls', usage: [64, 89, 153, 0, 64], toolCalls: ['call_SyhYkKgZpS1zkLbedByQ2MLh:weather'], textLength: 0 },
    { finish: 'stop', usage: [95, 24, 119, 0, 0], toolCalls: [], textLength: 51 },
  ],
  'openai/mirascope-py-gpt-4o-stream-length': [{ finish: 'length', usage: [14, 50, 64, 0, 0], toolCalls: [], textLength: 149 }],
  'openai/mirascope-ts-gpt-4o-mini-tool-loop': [
    { finish: 'tool_calls', usage: [69, 17, 86, 0, 0], toolCalls: ['call_srro7VgqpCJYyJBQVLbbaHOp:passphrase_test_tool'], textLength: 0 },
    { finish: 'stop', usage: [111, 34, 145, 0, 0], toolCalls: [], textLength: 164 },
  ],
  'openai/mirascope-ts-gpt-5-mini-forced-tool-stream-length': [
    { finish: 'length', usage: [179, 1000, 1179, 0, 1000], toolCalls: [], textLength: 0 },
  ],
  'openai/mirascope-ts-gpt-5-mini-length-empty-content': [{ finish: 'length', usage: [13, 50, 63, 0, 50], toolCalls: [], textLength: 0 }],
  'openai/mirascope-ts-gpt-5-mini-stream-length': [{ finish: 'length', usage: [44, 50, 94, 0, 50], toolCalls: [], textLength: 0 }],
  'openai/mirascope-ts-gpt-5-mini-stream-text': [{ finish: 'stop', usage: [11, 139, 150, 0, 128], toolCalls: [], textLength: 11 }],
  'openai/pydanticai-error-400-code-null': [{ status: 400 }],
  'openai/pydanticai-error-400-unsupported-value': [{ status: 400 }],
  'openai/pydanticai-error-404-model-not-found': [{ status: 404 }],
  'openai/pydanticai-gpt-4o-mini-stream-tool-call': [
    { finish: 'tool_calls', usage: [53, 15, 68, 0, 0], toolCalls: ['call_ZR5UUuTt3pf61kjwAJIYdVMj:get_capital'], textLength: 0 },
    { finish: 'stop', usage: [78, 9, 87, 0, 0], toolCalls: [], textLength: 32 },
  ],
  'openai/pydanticai-gpt-4o-parallel-tools-stream-loop': [
    {
      finish: 'tool_calls',
      usage: [364, 40, 404, 0, 0],
      toolCalls: ['call_q2UyBRP7eXNTzAoR8lEhjc9Z:get_country', 'call_b51ijcpFkDiTQG1bQzsrmtW5:get_product_name'],
      textLength: 0,
    },
    { finish: 'tool_calls', usage: [423, 15, 438, 0, 0], toolCalls: ['call_LwxJUB9KppVyogRRLQsamRJv:get_weather'], textLength: 0 },
    { finish: 'tool_calls', usage: [448, 62, 510, 0, 0], toolCalls: ['call_CCGIWaMeYWmxOQ91orkmTvzn:final_result'], textLength: 0 },
  ],
  'openai/pydanticai-o3-mini-reasoning-nonstream': [{ finish: 'stop', usage: [13, 238, 251, 0, 192], toolCalls: [], textLength: 161 }],
  'openai/rubyllm-error-401-invalid-api-key': [{ status: 401 }],
  'openai/rubyllm-error-429-rate-limit-tokens': [{ status: 429 }],
  'openai/rubyllm-gpt-5-nano-parallel-tools': [
    {
      finish: 'tool_calls',
      usage: [194, 255, 449, 0, 192],
      toolCalls: ['call_GOotzq3y3C45fdLNjm8SXXRo:weather', 'call_6IvZGzhTPoSUAGUWnRx0po6X:best_language_to_learn'],
      textLength: 0,
    },
    { finish: 'stop', usage: [294, 256, 550, 0, 192], toolCalls: [], textLength: 188 },
  ],
  'openai/rubyllm-gpt-5-nano-streaming-text': [{ finish: 'stop', usage: [13, 142, 155, 0, 128], toolCalls: [], textLength: 5 }],
  'openai/rubyllm-gpt-5-nano-tools-multiturn-streaming': [
    { finish: 'tool_calls', usage: [169, 96, 265, 0, 64], toolCalls: ['call_N2fJZh6fGguUrjbTlDD9mkbh:weather'], textLength: 0 },
    { finish: 'stop', usage: [230, 299, 529, 0, 256], toolCalls: [], textLength: 116 },
    { finish: 'tool_calls', usage: [292, 416, 708, 0, 384], toolCalls: ['call_YgwUnzoQxMiTk13gSo5CBC3O:weather'], textLength: 0 },
    { finish: 'stop', usage: [353, 301, 654, 0, 256], toolCalls: [], textLength: 124 },
  ],
  'openai/rubyllm-gpt-5.4-reasoning-effort-streaming': [{ finish: 'stop', usage: [50, 965, 1015, 0, 781], toolCalls: [], textLength: 657 }],
  'openai/vercel-error-400-unsupported-parameter': [{ status: 400 }],
  'openai/vercel-gpt-4.1-nano-stream-text-usage': [{ finish: 'stop', usage: [16, 300, 316, 0, 0], toolCalls: [], textLength: 1724 }],
  'openai/vercel-gpt-4.1-nano-text': [{ finish: 'stop', usage: [16, 363, 379, 0, 0], toolCalls: [], textLength: 1842 }],
  'openai-compatible/fantasy-groq-kimi-k2-multi-tool-streaming': [
    {
      finish: 'tool_calls',
      usage: [201, 58, 259, undefined, undefined],
      toolCalls: ['functions.add:0:add', 'functions.multiply:1:multiply'],
      textLength: 77,
    },
    { finish: 'stop', usage: [296, 30, 326, undefined, undefined], toolCalls: [], textLength: 71 },
  ],
  'openai-compatible/fantasy-llama-cpp-gpt-oss-tool-streaming': [
    {
      finish: 'tool_calls',
      usage: [139, 41, 180, undefined, undefined],
      toolCalls: ['g2KOIWzn722hzEaZQmNVP4roUPEiYafL:weather'],
      textLength: 0,
    },
    { finish: 'stop', usage: [196, 18, 214, undefined, undefined], toolCalls: [], textLength: 52 },
  ],
  'openai-compatible/pydanticai-openrouter-429-retries': [{ status: 429 }, { status: 429 }, { status: 429 }],
  'openai-compatible/pydanticai-openrouter-stream-inband-error': [{ inBandError: 400 }],
  'openai-compatible/vercel-azure-gpt-5-nano-stream': [{ finish: 'stop', usage: [15, 78, 93, 0, 64], toolCalls: [], textLength: 19 }],
  'openai-compatible/vercel-deepseek-reasoner-stream': [{ finish: 'stop', usage: [18, 219, 237, 0, 205], toolCalls: [], textLength: 42 }],
  'openai-compatible/vercel-deepseek-reasoner-tool-call-stream': [
    { finish: 'tool_calls', usage: [339, 83, 422, 320, 39], toolCalls: ['call_00_ioIn7yN9p1ZOMNpDLwd4MgAF:weather'], textLength: 0 },
  ],
  'openai-compatible/vercel-groq-llama-tool-call-stream': [
    { finish: 'tool_calls', usage: [210, 15, 225, undefined, undefined], toolCalls: ['tk85n1k4m:weather'], textLength: 0 },
  ],
};
