/**
 * The chunks of the Vercel AI SDK's UI message stream protocol (`ai` v5 and v6, stream version
 * `v1`) that actorloop writes. Declared here, by their shape, so actorloop needs no `ai` package:
 * the `ai` client (`useChat`, `readUIMessageStream`) parses them with its own schema.
 */

/**
 * The message starts; `messageId` names the assistant message the chunks after it build.
 *
 * @example
 * ```ts
 * const chunk: UIMessageStartChunk = { type: 'start', messageId: 'm3' };
 * ```
 */
export type UIMessageStartChunk = { type: 'start'; messageId?: string; messageMetadata?: unknown };

/**
 * The message ends. `finishReason` is the last model response's (`error` when the run failed).
 *
 * @example
 * ```ts
 * const chunk: UIMessageFinishChunk = { type: 'finish', finishReason: 'stop' };
 * ```
 */
export type UIMessageFinishChunk = {
  type: 'finish';
  finishReason?: 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other';
  messageMetadata?: unknown;
};

/**
 * One model request (a step) starts or ends.
 *
 * @example
 * ```ts
 * const chunks: UIMessageStepChunk[] = [{ type: 'start-step' }, { type: 'finish-step' }];
 * ```
 */
export type UIMessageStepChunk = { type: 'start-step' } | { type: 'finish-step' };

/**
 * A text part: started, grown by deltas, ended; `id` ties the three together.
 *
 * @example
 * ```ts
 * const chunks: UIMessageTextChunk[] = [{ type: 'text-start', id: 't1' }, { type: 'text-delta', id: 't1', delta: 'Hi' }, { type: 'text-end', id: 't1' }];
 * ```
 */
export type UIMessageTextChunk =
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string };

/**
 * A reasoning part, as a text part.
 *
 * @example
 * ```ts
 * const chunk: UIMessageReasoningChunk = { type: 'reasoning-delta', id: 'r1', delta: 'The user wants a sum.' };
 * ```
 */
export type UIMessageReasoningChunk =
  | { type: 'reasoning-start'; id: string }
  | { type: 'reasoning-delta'; id: string; delta: string }
  | { type: 'reasoning-end'; id: string };

/**
 * A tool call and what became of it: its arguments as they stream, the whole arguments, a request
 * for approval, and its result (`tool-output-denied` when a user denied it).
 *
 * @example
 * ```ts
 * const chunks: UIMessageToolChunk[] = [
 *   { type: 'tool-input-start', toolCallId: 'c1', toolName: 'add' },
 *   { type: 'tool-input-available', toolCallId: 'c1', toolName: 'add', input: { a: 2, b: 3 } },
 *   { type: 'tool-output-available', toolCallId: 'c1', output: 5 },
 * ];
 * ```
 */
export type UIMessageToolChunk =
  | { type: 'tool-input-start'; toolCallId: string; toolName: string }
  | { type: 'tool-input-delta'; toolCallId: string; inputTextDelta: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool-input-error'; toolCallId: string; toolName: string; input: unknown; errorText: string }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string }
  /** `preliminary`: a running tool's progress (`tool.progress`); the last output without it is the result. */
  | { type: 'tool-output-available'; toolCallId: string; output: unknown; preliminary?: boolean }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string }
  | { type: 'tool-output-denied'; toolCallId: string };

/**
 * Something went wrong (`errorText` is shown to the user); `abort` says the run was cancelled.
 *
 * @example
 * ```ts
 * const chunk: UIMessageErrorChunk = { type: 'error', errorText: 'the model request failed (rate_limit, status 429)' };
 * ```
 */
export type UIMessageErrorChunk = { type: 'error'; errorText: string } | { type: 'abort'; reason?: string };

/**
 * Every chunk actorloop writes to a UI message stream.
 *
 * @example
 * ```ts
 * const text = (chunks: UIMessageChunk[]) => chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.delta] : [])).join('');
 * ```
 */
export type UIMessageChunk =
  | UIMessageStartChunk
  | UIMessageFinishChunk
  | UIMessageStepChunk
  | UIMessageTextChunk
  | UIMessageReasoningChunk
  | UIMessageToolChunk
  | UIMessageErrorChunk;
