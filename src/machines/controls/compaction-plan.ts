import type { MediaTokenRule } from '../../model/media-tokens.js';
import { estimateMessageTokens, estimateTokens } from '../../model/estimate-tokens.js';
import type { Message, SystemMessage, UserMessage } from '../../model/messages.js';
import type { ToolDescription } from '../../model/provider.js';

/**
 * Context compaction as pure functions over the history: how big the next prompt is, which messages
 * give way, and the history that replaces them. The chart decides when; these decide what, so each
 * rule is testable without a run.
 */

// The summarize and strategy actors, a layer below, build the summary request and check a strategy's result:
// those live with them and are offered here with the rest.
export { strategyResultProblem, summaryRequest, summarySystemPrompt } from '../../actors/compaction-messages.js';

/**
 * What the next prompt is estimated from.
 *
 * @example
 * ```ts
 * const input: PromptTokensInput = { messages, lastInputTokens: 41_250, lastMessageCount: 38, system, tools };
 * ```
 */
export type PromptTokensInput = {
  /** The history the next request sends. */
  messages: readonly Message[];
  /** `inputTokens` the last response reported (0 or absent: not reported). */
  lastInputTokens?: number;
  /** How many messages the prompt of that response had. */
  lastMessageCount?: number;
  system?: string;
  tools?: readonly ToolDescription[];
  /** How the wire counts media (the provider's `mediaTokens`). */
  mediaRule?: MediaTokenRule;
};

/**
 * The estimated input tokens of the next request. When the last response reported its
 * `inputTokens`, that count is the base — the provider's own tokenizer counted the system prompt,
 * the tools and the first `lastMessageCount` messages — and only the messages added since (the
 * answer, tool results, new user messages) are estimated with {@link estimateTokens}. Without a
 * reported count, or when the history is shorter than that prompt was (it was compacted or
 * replaced), the whole prompt is estimated.
 *
 * The count belongs to the history it was reported for: after compacting, pass no
 * `lastInputTokens` until a response reports one for the new history, since a compacted history can
 * have as many messages as the old one had.
 *
 * @example
 * ```ts
 * const tokens = promptTokens({ messages, lastInputTokens: usage.inputTokens, lastMessageCount: 38, system, tools });
 * if (tokens > maxInputTokens) console.log('compact first');
 * ```
 */
export function promptTokens(input: PromptTokensInput): number {
  const { messages, lastInputTokens, lastMessageCount } = input;
  if (lastInputTokens !== undefined && lastInputTokens > 0 && lastMessageCount !== undefined && lastMessageCount <= messages.length) {
    let tokens = lastInputTokens;
    for (let index = Math.max(0, lastMessageCount); index < messages.length; index++) {
      tokens += estimateMessageTokens(messages[index] as Message, input.mediaRule);
    }
    return tokens;
  }
  return estimateTokens(messages, {
    ...(input.system === undefined ? {} : { system: input.system }),
    ...(input.tools === undefined ? {} : { tools: input.tools }),
    ...(input.mediaRule === undefined ? {} : { mediaRule: input.mediaRule }),
  });
}

/**
 * How a history splits for compaction: the system messages that stay, the oldest messages that give
 * way, and the tail that stays as it is.
 *
 * @example
 * ```ts
 * const plan: CompactionPlan = { system: [], oldest: history.slice(0, 30), kept: history.slice(30) };
 * ```
 */
export type CompactionPlan = {
  /** The system messages among the oldest: instructions, not conversation, so they stay, in order. */
  system: SystemMessage[];
  /** The messages before the kept tail, system messages left out: what is summarized, dropped or handed to a strategy. */
  oldest: Message[];
  /** The tail: at least the last `keepLast` messages, starting where no tool call is cut from its result. */
  kept: Message[];
};

/**
 * What {@link planCompaction} splits by.
 *
 * @example
 * ```ts
 * const options: CompactionPlanOptions = { keepLast: 6, maxInputTokens: 100_000, promptTokens: 104_200 };
 * ```
 */
export type CompactionPlanOptions = {
  /** How many of the latest messages stay as they are, at least (a non-negative integer). */
  keepLast: number;
  /** The limit the prompt is held to. */
  maxInputTokens?: number;
  /**
   * The next prompt's estimated size ({@link promptTokens}). When given and within `maxInputTokens`,
   * there is nothing to compact; absent, the history is compacted whatever its size (after the
   * provider said the prompt is too long).
   */
  promptTokens?: number;
};

/**
 * Splits a history for compaction, or says there is nothing to compact (`null`): the prompt fits,
 * or nothing before the kept tail can go.
 *
 * - The tail is at least the last `keepLast` messages. When it would start with a tool message,
 *   it starts earlier, at the assistant message whose calls that message answers: a tool call and its
 *   results stay together, on either side, as both wires require.
 * - Every system message before the tail stays (in `system`): the wires send them as instructions,
 *   and the design keeps the system prompt.
 * - The rest before the tail is `oldest`. When it is empty, the plan is `null`.
 *
 * @example
 * ```ts
 * const plan = planCompaction(messages, { keepLast: 6, maxInputTokens: 100_000, promptTokens: promptTokens({ messages }) });
 * if (plan) console.log(`${plan.oldest.length} messages to summarize`);
 * ```
 */
export function planCompaction(messages: readonly Message[], options: CompactionPlanOptions): CompactionPlan | null {
  const { keepLast, maxInputTokens, promptTokens: tokens } = options;
  if (tokens !== undefined && maxInputTokens !== undefined && tokens <= maxInputTokens) return null;
  let start = Math.max(0, messages.length - Math.max(0, keepLast));
  while (start > 0 && messages[start]?.role === 'tool') start--;
  const system: SystemMessage[] = [];
  const oldest: Message[] = [];
  for (let index = 0; index < start; index++) {
    const message = messages[index] as Message;
    if (message.role === 'system') system.push(message);
    else oldest.push(message);
  }
  if (oldest.length === 0) return null;
  return { system, oldest, kept: messages.slice(start) };
}

/**
 * The user message that says earlier messages were removed, put first when what follows the system
 * messages would not start with a user message: Anthropic requires the first message to be the
 * user's, and the model should know the conversation did not start where its history does.
 */
export const droppedMessagesNotice: UserMessage = {
  role: 'user',
  content: '(Earlier messages of this conversation were removed to fit the context window.)',
};

/**
 * The history after compaction: the plan's system messages, the `replacement` (a summary, what a
 * strategy returned, or nothing for `drop`), then the kept tail. It stays valid for both wires:
 *
 * - No tool call is cut from its result: the plan's tail starts at a message boundary that keeps
 *   them together, and a replacement is checked with {@link strategyResultProblem}.
 * - The first message after the system messages is a user message (Anthropic requires it): when the
 *   replacement and the tail start otherwise — `drop` with a tail that starts with the assistant, a
 *   strategy that returns an assistant message first — {@link droppedMessagesNotice} goes first.
 * - A summary (a user message) followed by a tail that starts with a user message is two user
 *   messages in a row: OpenAI takes them as they are, and Anthropic's wire joins them into one turn.
 *
 * @example
 * ```ts
 * const next = compactedMessages(plan, [summaryMessage(text)]);
 * const dropped = compactedMessages(plan, []);
 * ```
 */
export function compactedMessages(plan: CompactionPlan, replacement: readonly Message[]): Message[] {
  const history: Message[] = [...plan.system, ...replacement, ...plan.kept];
  const first = history.findIndex((message) => message.role !== 'system');
  if (first === -1) history.push(droppedMessagesNotice);
  else if (history[first]?.role !== 'user') history.splice(first, 0, droppedMessagesNotice);
  return history;
}

/** How a summary starts, so the model reads it as a record of the past rather than the user's words now. */
export const summaryHeading = 'Summary of the earlier conversation (its messages were replaced by this summary to fit the context window):';

/**
 * The message that replaces the oldest messages: a user message holding the summary under
 * {@link summaryHeading}. A user message because every wire accepts one first and in a row with
 * another; an assistant message first is invalid for Anthropic.
 *
 * @example
 * ```ts
 * const next = compactedMessages(plan, [summaryMessage('The user is planning a trip to Lisbon in May; flights are booked.')]);
 * ```
 */
export function summaryMessage(text: string): UserMessage {
  return { role: 'user', content: `${summaryHeading}\n${text.trim()}` };
}

/**
 * What makes a summary unusable, or `undefined` when it is usable: a summary must be text with
 * something in it besides white space.
 *
 * @example
 * ```ts
 * summaryProblem('  '); // 'the summary is empty: the model answered with no text'
 * ```
 */
export function summaryProblem(text: unknown): string | undefined {
  if (typeof text !== 'string') return `the summary must be text, got ${text === null ? 'null' : typeof text}`;
  if (text.trim() === '') return 'the summary is empty: the model answered with no text';
  return undefined;
}
