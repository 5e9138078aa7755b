import type { OpenAIChatMessage, OpenAIChatTool } from '../openai-wire/chat-types.js';
import type { OpenAIReasoningEffort } from './reasoning-effort.js';

/**
 * Extra Chat Completions request parameters, merged into every request. The common ones are typed;
 * anything else an OpenAI-compatible server accepts passes through as it is.
 *
 * @example
 * ```ts
 * const params: OpenAIRequestParams = { temperature: 0, max_completion_tokens: 1024, parallel_tool_calls: false };
 * ```
 */
export type OpenAIRequestParams = {
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  seed?: number;
  stop?: string | string[];
  presence_penalty?: number;
  frequency_penalty?: number;
  parallel_tool_calls?: boolean;
  tool_choice?: 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };
  user?: string;
  [parameter: string]: unknown;
};

/**
 * An assistant message carrying its reasoning back as `reasoning_content`, as DeepSeek's thinking
 * mode and llama.cpp's gpt-oss expect within a tool loop (see `sendReasoning`).
 *
 * @example
 * ```ts
 * const message: OpenAIAssistantMessageWithReasoning = { role: 'assistant', content: null, reasoning_content: 'Need the weather.', tool_calls: [] };
 * ```
 */
export type OpenAIAssistantMessageWithReasoning = Extract<OpenAIChatMessage, { role: 'assistant' }> & { reasoning_content: string };

/**
 * The Chat Completions request body this provider sends.
 *
 * @example
 * ```ts
 * const body: OpenAIChatRequestBody = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true };
 * ```
 */
export type OpenAIChatRequestBody = OpenAIRequestParams & {
  model: string;
  messages: Array<OpenAIChatMessage | OpenAIAssistantMessageWithReasoning>;
  tools?: OpenAIChatTool[];
  stream: boolean;
  stream_options?: { include_usage: boolean };
  reasoning_effort?: OpenAIReasoningEffort;
};

/**
 * The part of an `openai` client this provider uses. `new OpenAI(...)` fits it, and so does any
 * object with the same `chat.completions.create` method (a wrapper that logs, a test double).
 *
 * @example
 * ```ts
 * import OpenAI from 'openai';
 * const client: OpenAIClientLike = new OpenAI({ apiKey: process.env.OPENAI_API_KEY });
 * ```
 */
export interface OpenAIClientLike {
  chat: {
    completions: {
      create(body: OpenAIChatRequestBody, options?: { signal?: AbortSignal; maxRetries?: number }): PromiseLike<unknown>;
    };
  };
}
