/**
 * The parts of Anthropic's Messages API wire that actorloop writes and reads, declared here so the
 * package's types never depend on `@anthropic-ai/sdk` (an optional peer): a project that has not
 * installed it still type-checks. They are structural: the SDK's own values fit them.
 */

/**
 * A text block of a request.
 *
 * @example
 * ```ts
 * const block: AnthropicTextBlockParam = { type: 'text', text: 'What is 2+3?' };
 * ```
 */
export type AnthropicTextBlockParam = { type: 'text'; text: string; cache_control?: AnthropicCacheControl };
/**
 * A prompt-cache breakpoint: the prefix up to and including the block it is on is cached, for five
 * minutes unless `ttl` says an hour.
 *
 * @example
 * ```ts
 * const block: AnthropicTextBlockParam = { type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral', ttl: '1h' } };
 * ```
 */
export type AnthropicCacheControl = { type: 'ephemeral'; ttl?: '5m' | '1h' };
/**
 * A thinking block sent back verbatim, signature included.
 *
 * @example
 * ```ts
 * const block: AnthropicThinkingBlockParam = { type: 'thinking', thinking: 'Add them.', signature: 'EqQBCkgIAR…' };
 * ```
 */
export type AnthropicThinkingBlockParam = { type: 'thinking'; thinking: string; signature: string };
/**
 * A redacted thinking block sent back verbatim.
 *
 * @example
 * ```ts
 * const block: AnthropicRedactedThinkingBlockParam = { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va…' };
 * ```
 */
export type AnthropicRedactedThinkingBlockParam = { type: 'redacted_thinking'; data: string };
/**
 * A tool call of an earlier assistant turn.
 *
 * @example
 * ```ts
 * const block: AnthropicToolUseBlockParam = { type: 'tool_use', id: 'toolu_01', name: 'add', input: { a: 2, b: 3 } };
 * ```
 */
export type AnthropicToolUseBlockParam = {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
  cache_control?: AnthropicCacheControl;
};
/**
 * A tool's result, in the user turn after the call.
 *
 * @example
 * ```ts
 * const block: AnthropicToolResultBlockParam = { type: 'tool_result', tool_use_id: 'toolu_01', content: '5' };
 * ```
 */
export type AnthropicToolResultBlockParam = {
  type: 'tool_result';
  tool_use_id: string;
  /** Text, or text, image and document blocks (a `toolContent` result). */
  content: string | Array<AnthropicTextBlockParam | AnthropicImageBlockParam | AnthropicDocumentBlockParam>;
  is_error?: boolean;
  cache_control?: AnthropicCacheControl;
};

/**
 * An image in a user turn: inline (base64 with its media type) or by URL.
 *
 * @example
 * ```ts
 * const block: AnthropicImageBlockParam = { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } };
 * ```
 */
export type AnthropicImageBlockParam = {
  type: 'image';
  source: { type: 'base64'; media_type: AnthropicImageMediaType; data: string } | { type: 'url'; url: string };
  cache_control?: AnthropicCacheControl;
};
/** The image types the Messages API takes inline. */
export type AnthropicImageMediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';
/**
 * A document in a user turn: a PDF inline or by URL, or plain text.
 *
 * @example
 * ```ts
 * const block: AnthropicDocumentBlockParam = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Q3 was good.' }, title: 'q3.txt' };
 * ```
 */
export type AnthropicDocumentBlockParam = {
  type: 'document';
  source:
    | { type: 'base64'; media_type: 'application/pdf'; data: string }
    | { type: 'url'; url: string }
    | { type: 'text'; media_type: 'text/plain'; data: string };
  title?: string;
  cache_control?: AnthropicCacheControl;
};

/**
 * One message of a Messages API request.
 *
 * @example
 * ```ts
 * const message: AnthropicMessageParam = { role: 'user', content: 'What is 2+3?' };
 * ```
 */
export type AnthropicMessageParam =
  | {
      role: 'user';
      content:
        | string
        | Array<AnthropicTextBlockParam | AnthropicImageBlockParam | AnthropicDocumentBlockParam | AnthropicToolResultBlockParam>;
    }
  | {
      role: 'assistant';
      content: Array<
        AnthropicTextBlockParam | AnthropicThinkingBlockParam | AnthropicRedactedThinkingBlockParam | AnthropicToolUseBlockParam
      >;
    };

/**
 * A tool as the Messages API takes it.
 *
 * @example
 * ```ts
 * const tool: AnthropicTool = { name: 'add', input_schema: { type: 'object', properties: { a: { type: 'number' } } } };
 * ```
 */
export type AnthropicTool = {
  name: string;
  description?: string;
  input_schema: { type: 'object'; [key: string]: unknown };
  cache_control?: AnthropicCacheControl;
};

/**
 * Extended thinking (`thinking` request field), passed through as it is.
 *
 * @example
 * ```ts
 * const thinking: AnthropicThinkingConfig = { type: 'enabled', budget_tokens: 2048 };
 * ```
 */
export type AnthropicThinkingConfig =
  | { type: 'enabled'; budget_tokens: number }
  | { type: 'disabled' }
  | { type: 'adaptive'; [key: string]: unknown };

/**
 * The usage counters of `message_start`, `message_delta` and non-stream responses.
 *
 * @example
 * ```ts
 * const counters: AnthropicUsageCounters = { input_tokens: 12, output_tokens: 30, cache_read_input_tokens: null };
 * ```
 */
export type AnthropicUsageCounters = {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  /** The cache write split by lifetime (an hour's write is priced higher). */
  cache_creation?: { ephemeral_5m_input_tokens?: number | null; ephemeral_1h_input_tokens?: number | null } | null;
};

/**
 * A whole (non-streamed) Messages API response.
 *
 * @example
 * ```ts
 * const message: AnthropicMessage = { content: [{ type: 'text', text: '5' }], stop_reason: 'end_turn', usage: { input_tokens: 9, output_tokens: 1 } };
 * ```
 */
export type AnthropicMessage = {
  id?: string;
  model?: string;
  /** Content blocks (`text`, `thinking`, `redacted_thinking`, `tool_use`, and types without a neutral form), read defensively. */
  content: unknown[];
  stop_reason?: string | null;
  usage?: AnthropicUsageCounters | null;
};

/**
 * One server-sent event of a streamed Messages API response (`messages.create({ stream: true })`).
 *
 * @example
 * ```ts
 * const event: AnthropicStreamEvent = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } };
 * ```
 */
export type AnthropicStreamEvent =
  | { type: 'message_start'; message?: { id?: string; model?: string; usage?: AnthropicUsageCounters | null } | null }
  | { type: 'content_block_start'; index: number; content_block: unknown }
  | { type: 'content_block_delta'; index: number; delta: unknown }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta?: { stop_reason?: string | null } | null; usage?: AnthropicUsageCounters | null }
  | { type: 'message_stop' };

/**
 * What the provider needs of an `@anthropic-ai/sdk` client (`new Anthropic(...)` fits it).
 *
 * @example
 * ```ts
 * import Anthropic from '@anthropic-ai/sdk';
 * const client: AnthropicClientLike = new Anthropic({ apiKey: process.env.ANTHROPIC_API_KEY });
 * ```
 */
export interface AnthropicClientLike {
  messages: {
    create(
      body: AnthropicRequestBody & { stream: true },
      options?: { signal?: AbortSignal; maxRetries?: number; timeout?: number },
    ): PromiseLike<AsyncIterable<AnthropicStreamEvent>>;
    create(
      body: AnthropicRequestBody & { stream: false },
      options?: { signal?: AbortSignal; maxRetries?: number; timeout?: number },
    ): PromiseLike<AnthropicMessage>;
  };
}

/**
 * Extra Messages API parameters sent with every request (`temperature`, `top_k`,
 * `stop_sequences`, `tool_choice`, `metadata`, …). The fields the provider builds itself from the
 * conversation and its own options are left out.
 *
 * @example
 * ```ts
 * const params: AnthropicRequestParams = { temperature: 0, stop_sequences: ['STOP'], tool_choice: { type: 'auto' } };
 * anthropicProvider({ model: 'claude-haiku-4-5', maxTokens: 1024, params });
 * ```
 */
export type AnthropicRequestParams = {
  temperature?: number;
  top_k?: number;
  top_p?: number;
  stop_sequences?: string[];
  tool_choice?:
    | { type: 'auto' | 'any' | 'none'; disable_parallel_tool_use?: boolean }
    | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean };
  metadata?: { user_id?: string | null };
  service_tier?: 'auto' | 'standard_only';
  [key: string]: unknown;
} & { model?: never; messages?: never; system?: never; tools?: never; max_tokens?: never; stream?: never; thinking?: never };

/**
 * The body the provider sends.
 *
 * @example
 * ```ts
 * const body: AnthropicRequestBody = { model: 'claude-haiku-4-5', max_tokens: 1024, messages: [{ role: 'user', content: 'Hi' }] };
 * ```
 */
export type AnthropicRequestBody = {
  model: string;
  max_tokens: number;
  messages: AnthropicMessageParam[];
  system?: string;
  tools?: AnthropicTool[];
  thinking?: AnthropicThinkingConfig;
  [key: string]: unknown;
};
