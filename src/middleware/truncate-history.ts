import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import type { Message } from '../model/messages.js';
import { estimateMessageTokens } from '../model/estimate-tokens.js';
import type { RequestMiddleware } from './request-middleware.js';
import { childPath, option, resolveOptionsWith } from '../util/option-schema.js';

/**
 * Options of {@link truncateHistory}: a message budget, a token budget, or both.
 *
 * @example
 * ```ts
 * const options: TruncateHistoryOptions = { maxTokens: 24_000, countTokens: (message) => myTokenizer(JSON.stringify(message)) };
 * ```
 */
export type TruncateHistoryOptions = {
  /** Most messages sent (system messages not counted). */
  maxMessages?: number;
  /** Most tokens sent (system messages not counted), as `countTokens` counts them. */
  maxTokens?: number;
  /** Tokens of one message. Default: a rough estimate, a quarter of its JSON length. */
  countTokens?: (message: Message) => number;
};

/**
 * A rough token count of one message: the library's one estimate (about four characters a token,
 * plus the message's framing), the same the context window's compaction uses.
 */
export const estimateTokens = (message: Message): number => estimateMessageTokens(message);

/**
 * The tail of a history that fits the budget. It keeps every system message, and it starts at a
 * user message, so a tool call is never separated from its result and both wires accept the
 * history (Anthropic wants a user message first). The latest user turn is always kept, even when
 * it alone is over the budget: dropping the question would answer nothing.
 *
 * @example
 * ```ts
 * truncateMessages(history, { maxMessages: 20 }); // system messages + the last turns that fit in 20
 * ```
 */
export function truncateMessages(messages: Message[], options: TruncateHistoryOptions): Message[] {
  const { maxMessages = Number.POSITIVE_INFINITY, maxTokens = Number.POSITIVE_INFINITY, countTokens = estimateTokens } = options;
  let keepFrom = -1;
  let count = 0;
  let tokens = 0;
  // Walk back from the end; every user message passed is a place the history may start.
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as Message;
    if (message.role === 'system') continue;
    count += 1;
    tokens += countTokens(message);
    const fits = count <= maxMessages && tokens <= maxTokens;
    if (!fits && keepFrom !== -1) break;
    if (message.role === 'user') keepFrom = index;
  }
  // Nothing to drop (only system messages before the cut): the history goes as it is.
  if (keepFrom <= 0 || messages.slice(0, keepFrom).every((message) => message.role === 'system')) return messages;
  return messages.filter((message, index) => index >= keepFrom || message.role === 'system');
}

const budget = option.optional(option.integer({ minimum: 1 }));
const countTokensSchema = option.withDefault(
  option.callable<(message: Message) => number>('a function (message) => number'),
  estimateTokens,
);

// Unknown keys are ignored, not refused: truncateHistory never refused them. `countTokens` is
// checked after the budgets are, as it always was, so the same mistake is named first.
const truncateHistoryOptionsSchema = option.transform(
  option.object(
    { maxMessages: budget, maxTokens: budget, countTokens: option.unchecked() },
    { label: 'truncateHistory(options)', expected: 'an object { maxMessages?, maxTokens?, countTokens? }', unknownKeys: 'ignore' },
  ),
  (resolved, path) => {
    // Each budget is optional on its own, but with neither, nothing would ever be cut.
    if (resolved.maxMessages === undefined && resolved.maxTokens === undefined) {
      throw new InvalidOptionsError('truncateHistory(options)', 'maxMessages or maxTokens');
    }
    return { ...resolved, countTokens: countTokensSchema.resolve(resolved.countTokens, childPath(path, 'countTokens')) };
  },
);

/**
 * Middleware that sends only the tail of the history that fits a message or token budget (see
 * {@link truncateMessages}). The run's own history is untouched: only the request is shortened.
 *
 * @example
 * ```ts
 * createConversationMachine({ provider, tools, middleware: [truncateHistory({ maxTokens: 24_000 })] });
 * ```
 */
export function truncateHistory(options: TruncateHistoryOptions): RequestMiddleware {
  const resolved = resolveOptionsWith(truncateHistoryOptionsSchema, options, 'truncateHistory');
  return (request, next) => next({ ...request, messages: truncateMessages(request.messages, resolved) });
}
