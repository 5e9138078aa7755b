import { isRecord } from '../../util/is-record.js';

/**
 * How providers say a prompt did not fit the model's context window. OpenAI (Chat and Responses)
 * and Groq send the code `context_length_exceeded`; Anthropic and most compatible servers only say
 * it in words, so the words are matched too.
 */
const contextLengthCode = 'context_length_exceeded';

const contextLengthWords: RegExp[] = [
  // Anthropic: "prompt is too long: 210000 tokens > 200000 maximum".
  /prompt is too long/i,
  // Anthropic, when the prompt and `max_tokens` together overflow: "input length and `max_tokens` exceed context limit".
  /exceeds? (?:the )?(?:available |model'?s )?context (?:window|limit|size|length)/i,
  // OpenAI Chat, vLLM, Mistral, OpenRouter: "This model's maximum context length is 128000 tokens…".
  /maximum context length/i,
  /context[_ ]length[_ ]exceeded/i,
  // Gemini's OpenAI-compatible endpoint: "The input token count (…) exceeds the maximum number of tokens allowed (…)".
  /input token count .* exceeds the maximum number of tokens/i,
  // Bedrock Converse, Nova (recorded): "Input Tokens Exceeded: Number of input tokens exceeds maximum length."
  /input tokens exceeds? (?:the )?maximum/i,
  // Bedrock Converse, Claude: "Input is too long for requested model."
  /input is too long for (?:the )?requested model/i,
];

/** The statuses a context-length error comes with; a 5xx or a 429 that mentions the words is something else. */
const contextLengthStatuses = new Set([400, 413, 422]);

/**
 * Whether an error text says the prompt is longer than the model's context window.
 *
 * @example
 * ```ts
 * mentionsContextLength('prompt is too long: 210000 tokens > 200000 maximum'); // true
 * ```
 */
export function mentionsContextLength(text: string): boolean {
  return contextLengthWords.some((pattern) => pattern.test(text));
}

/**
 * Whether an error as a provider or its SDK threw it — not yet classified — reports a prompt longer
 * than the model's context window: the OpenAI code `context_length_exceeded` on the error or its
 * body, or the words of Anthropic and compatible servers in a message, with a 400-like status or
 * none (an error inside a 200 stream).
 *
 * @example
 * ```ts
 * reportsContextLength({ status: 400, error: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } } }); // true
 * ```
 */
export function reportsContextLength(error: unknown): boolean {
  if (!isRecord(error)) return typeof error === 'string' && mentionsContextLength(error);
  if (typeof error.status === 'number' && !contextLengthStatuses.has(error.status)) return false;
  const bodies: Record<string, unknown>[] = [error];
  // OpenAI SDK: `error.error` is the body's `error`; Anthropic SDK: the whole body, whose `error` holds the message.
  if (isRecord(error.error)) {
    bodies.push(error.error);
    if (isRecord(error.error.error)) bodies.push(error.error.error);
  }
  return bodies.some(
    (body) => body.code === contextLengthCode || (typeof body.message === 'string' && mentionsContextLength(body.message)),
  );
}

/**
 * Whether a run's error or a provider error is a "context length exceeded": the prompt was longer
 * than the model's context window, so the same request fails again however often it is retried,
 * and only a shorter history helps. A classified error (a `ProviderError`, a run's `RunError`, a
 * journal's record: anything with a boolean `retryable`) is decided by its `code` alone
 * (`context_length`); anything else is read as a provider or its SDK threw it.
 *
 * @example
 * ```ts
 * const output = await toPromise(actor);
 * if (output.status === 'error' && isContextLengthError(output.error)) console.warn('the history outgrew the model');
 * ```
 */
export function isContextLengthError(error: unknown): boolean {
  if (isRecord(error) && typeof error.retryable === 'boolean') return error.code === 'context_length';
  return reportsContextLength(error);
}
