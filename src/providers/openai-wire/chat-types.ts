/**
 * The parts of the OpenAI Chat Completions wire that actorloop reads and writes. Declared here,
 * structurally, so `handlerProvider` users need no `openai` install; the SDK's own types are
 * assignable to these.
 */

export type OpenAIChatToolCall = {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
};

/**
 * A Chat Completions message, as a {@link ChunkHandler} receives them.
 *
 * @example
 * ```ts
 * const result: OpenAIChatMessage = { role: 'tool', tool_call_id: 'call_1', content: '5' };
 * ```
 */
/**
 * One part of a Chat Completions user message: text, an image (inline as a `data:` URL, or by
 * URL), a PDF (inline) or audio (inline, WAV or MP3).
 *
 * @example
 * ```ts
 * const part: OpenAIChatUserPart = { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } };
 * ```
 */
export type OpenAIChatUserPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } }
  | { type: 'file'; file: { file_data: string; filename: string } }
  | { type: 'input_audio'; input_audio: { data: string; format: 'wav' | 'mp3' } };

export type OpenAIChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | OpenAIChatUserPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: OpenAIChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/**
 * A Chat Completions function tool, built from a tool's JSON Schema.
 *
 * @example
 * ```ts
 * const tool: OpenAIChatTool = { type: 'function', function: { name: 'add', parameters: { type: 'object', properties: {} } } };
 * ```
 */
export type OpenAIChatTool = {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown>; strict?: boolean };
};

export type OpenAIChatUsage = {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
};

export type OpenAIChatChunkToolCallDelta = {
  index: number;
  id?: string | null;
  type?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
};

/**
 * One `chat.completion.chunk`, as the `openai` SDK's stream yields it. Fields from
 * OpenAI-compatible servers (`reasoning_content`, `reasoning`, in-band `error`) are included.
 *
 * @example
 * ```ts
 * const last: OpenAIChatCompletionChunk = {
 *   choices: [{ index: 0, delta: { content: 'Done.' }, finish_reason: 'stop' }],
 *   usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 },
 * };
 * ```
 */
export type OpenAIChatCompletionChunk = {
  id?: string;
  object?: string;
  model?: string;
  choices?: Array<{
    index?: number;
    delta?: {
      role?: string | null;
      content?: string | null;
      refusal?: string | null;
      reasoning_content?: string | null;
      reasoning?: string | null;
      tool_calls?: OpenAIChatChunkToolCallDelta[] | null;
    } | null;
    finish_reason?: string | null;
  }>;
  usage?: OpenAIChatUsage | null;
  error?: unknown;
};

/**
 * The Chat Completions `response_format` for a JSON Schema answer (structured outputs).
 *
 * @example
 * ```ts
 * const format: OpenAIResponseFormat = { type: 'json_schema', json_schema: { name: 'report', schema: { type: 'object' }, strict: false } };
 * ```
 */
export type OpenAIResponseFormat = {
  type: 'json_schema';
  json_schema: { name: string; description?: string; schema: Record<string, unknown>; strict?: boolean };
};
