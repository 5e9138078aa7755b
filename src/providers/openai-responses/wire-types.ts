/**
 * The parts of the OpenAI Responses wire (`POST /v1/responses`) that actorloop writes and reads.
 * Declared here, structurally, so the package's types never import the `openai` package; the
 * SDK's own values fit them. Fields actorloop does not use are left out of the response types
 * (the objects carry them all the same).
 */

/**
 * The `phase` of an assistant message (gpt-5.x): commentary before a tool call, or the final answer.
 *
 * @example
 * ```ts
 * const phase: OpenAIResponsesPhase = 'final_answer';
 * ```
 */
export type OpenAIResponsesPhase = 'commentary' | 'final_answer' | (string & {});

/**
 * One item of a request's `input`: messages, function calls and their outputs, reasoning items.
 * An assistant message goes in the short form (`{ role, content }`) unless the server must find it
 * by its id, which needs the full output-message form.
 *
 * @example
 * ```ts
 * const items: OpenAIResponsesInputItem[] = [
 *   { role: 'user', content: 'What is 2+3?' },
 *   { type: 'function_call', call_id: 'call_1', name: 'add', arguments: '{"a":2,"b":3}' },
 *   { type: 'function_call_output', call_id: 'call_1', output: '5' },
 * ];
 * ```
 */
/**
 * One part of a Responses user message: text, an image (inline as a `data:` URL, or by URL) or a
 * PDF (inline with its filename, or by URL).
 *
 * @example
 * ```ts
 * const part: OpenAIResponsesUserPart = { type: 'input_file', file_url: 'https://example.com/q3.pdf' };
 * ```
 */
export type OpenAIResponsesUserPart =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string; detail: 'auto' }
  | { type: 'input_file'; file_data: string; filename: string }
  | { type: 'input_file'; file_url: string };

export type OpenAIResponsesInputItem =
  | { role: 'system' | 'developer'; content: string }
  | { role: 'user'; content: string | OpenAIResponsesUserPart[] }
  | { role: 'assistant'; content: string; phase?: OpenAIResponsesPhase }
  | {
      type: 'message';
      id: string;
      role: 'assistant';
      status: 'completed';
      content: Array<{ type: 'output_text'; text: string; annotations: [] }>;
      phase?: OpenAIResponsesPhase;
    }
  | { type: 'reasoning'; id?: string; summary: Array<{ type: 'summary_text'; text: string }>; encrypted_content?: string }
  | { type: 'function_call'; id?: string; call_id: string; name: string; arguments: string }
  /** `output` is text, or text, image and file items for a `toolContent` result. */
  | { type: 'function_call_output'; call_id: string; output: string | OpenAIResponsesUserPart[] };

/**
 * A function tool in the Responses format (flat: no nested `function` object as on Chat Completions).
 *
 * @example
 * ```ts
 * const tool: OpenAIResponsesFunctionTool = { type: 'function', name: 'add', parameters: { type: 'object', properties: {} }, strict: false };
 * ```
 */
export type OpenAIResponsesFunctionTool = {
  type: 'function';
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
  strict: boolean;
};

/**
 * Reasoning settings of a request: effort, and whether to stream a summary of the reasoning.
 *
 * @example
 * ```ts
 * const reasoning: OpenAIResponsesReasoning = { effort: 'low', summary: 'auto' };
 * ```
 */
export type OpenAIResponsesReasoning = {
  effort?: string | null;
  summary?: 'auto' | 'concise' | 'detailed' | null;
  [setting: string]: unknown;
};

/**
 * Extra Responses request parameters, merged into every request. The common ones are typed;
 * anything else the API accepts passes through as it is. `include` and `reasoning` are merged
 * with what the provider sets itself.
 *
 * @example
 * ```ts
 * const params: OpenAIResponsesRequestParams = { max_output_tokens: 2048, parallel_tool_calls: false, text: { verbosity: 'low' } };
 * ```
 */
export type OpenAIResponsesRequestParams = {
  temperature?: number;
  top_p?: number;
  max_output_tokens?: number;
  max_tool_calls?: number;
  parallel_tool_calls?: boolean;
  tool_choice?: 'auto' | 'none' | 'required' | { type: 'function'; name: string };
  truncation?: 'auto' | 'disabled';
  text?: { verbosity?: 'low' | 'medium' | 'high'; format?: Record<string, unknown>; [setting: string]: unknown };
  reasoning?: OpenAIResponsesReasoning;
  include?: string[];
  metadata?: Record<string, string>;
  user?: string;
  safety_identifier?: string;
  prompt_cache_key?: string;
  service_tier?: string;
  [parameter: string]: unknown;
};

/**
 * The Responses request body this provider sends.
 *
 * @example
 * ```ts
 * const body: OpenAIResponsesRequestBody = { model: 'gpt-5-mini', input: [{ role: 'user', content: 'hi' }], store: false, stream: true };
 * ```
 */
export type OpenAIResponsesRequestBody = OpenAIResponsesRequestParams & {
  model: string;
  input: OpenAIResponsesInputItem[];
  instructions?: string;
  tools?: OpenAIResponsesFunctionTool[];
  store: boolean;
  previous_response_id?: string;
  stream: boolean;
};

/**
 * The part of an `openai` client the Responses provider uses. `new OpenAI(...)` fits it, and so
 * does any object with the same `responses.create` method (a wrapper that logs, a test double).
 * The body it receives is an {@link OpenAIResponsesRequestBody}; the parameter is typed `object`
 * because each `openai` SDK version types the body its own way (literal unions that change from
 * release to release), and every one of them must fit.
 *
 * @example
 * ```ts
 * import OpenAI from 'openai';
 * const client: OpenAIResponsesClientLike = new OpenAI({ apiKey: process.env.OPENAI_API_KEY });
 * const logged: OpenAIResponsesClientLike = {
 *   responses: {
 *     create(body, options) {
 *       console.log((body as OpenAIResponsesRequestBody).input.length, 'input items');
 *       return client.responses.create(body, options);
 *     },
 *   },
 * };
 * ```
 */
export interface OpenAIResponsesClientLike {
  responses: {
    create(body: object, options?: { signal?: AbortSignal; maxRetries?: number }): PromiseLike<unknown>;
  };
}

/**
 * Token usage of a response, on its terminal event (or the non-streamed body).
 *
 * @example
 * ```ts
 * const usage: OpenAIResponsesUsage = { input_tokens: 58, output_tokens: 248, total_tokens: 306, output_tokens_details: { reasoning_tokens: 192 } };
 * ```
 */
export type OpenAIResponsesUsage = {
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
  input_tokens_details?: { cached_tokens?: number | null; cache_write_tokens?: number | null } | null;
  output_tokens_details?: { reasoning_tokens?: number | null } | null;
};

/**
 * An output item, as `response.output_item.added` / `.done` and a response's `output` carry it.
 * Item types actorloop does not handle (built-in tools) are read as `{ type }` and skipped.
 *
 * @example
 * ```ts
 * const call: OpenAIResponsesOutputItem = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'add', arguments: '{}', status: 'completed' };
 * ```
 */
export type OpenAIResponsesOutputItem = {
  type: string;
  id?: string;
  status?: string | null;
  /** `message`: its content parts (`output_text`, `refusal`). */
  content?: Array<{ type: string; text?: string; refusal?: string }> | null;
  role?: string;
  phase?: OpenAIResponsesPhase | null;
  /** `reasoning`: summary parts and the encrypted reasoning. */
  summary?: Array<{ type: string; text?: string }> | null;
  encrypted_content?: string | null;
  /** `function_call`. */
  call_id?: string;
  name?: string;
  arguments?: string;
};

/**
 * A response object: the non-streamed body, and the payload of the stream's lifecycle events.
 *
 * @example
 * ```ts
 * const done: OpenAIResponsesResponse = { id: 'resp_1', status: 'completed', output: [], usage: { input_tokens: 5, output_tokens: 1, total_tokens: 6 } };
 * ```
 */
export type OpenAIResponsesResponse = {
  id?: string;
  object?: string;
  /** The model that answered, e.g. `gpt-5-nano-2025-08-07`. */
  model?: string;
  status?: string | null;
  output?: OpenAIResponsesOutputItem[] | null;
  usage?: OpenAIResponsesUsage | null;
  incomplete_details?: { reason?: string | null } | null;
  error?: { code?: string | null; message?: string | null; type?: string } | null;
};

/**
 * One event of a streamed response (`event: <type>` + `data: <json>`), as the `openai` SDK's
 * stream yields it. Only the fields actorloop reads are listed; unknown event types are skipped.
 *
 * @example
 * ```ts
 * const delta: OpenAIResponsesStreamEvent = { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hi' };
 * ```
 */
export type OpenAIResponsesStreamEvent = {
  type: string;
  sequence_number?: number;
  response?: OpenAIResponsesResponse;
  item?: OpenAIResponsesOutputItem;
  item_id?: string;
  output_index?: number;
  content_index?: number;
  summary_index?: number;
  delta?: string;
  text?: string;
  arguments?: string;
  /** `error` events: the current form nests the error, the older form has these at the top. */
  error?: { type?: string; code?: string | null; message?: string; param?: string | null } | null;
  code?: string | null;
  message?: string;
  param?: string | null;
};
