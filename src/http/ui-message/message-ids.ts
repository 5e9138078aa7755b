import type { Message } from '../../model/messages.js';

/**
 * UI message ids come from the history: `m<index>`, the index of the message (for an answer: of
 * its first assistant message) in the conversation's history. A page that loads the history
 * (`toUIMessages`) and a stream that answers or resumes a run then name the run's answer alike,
 * in any process, so a resumed stream replaces the answer it replays instead of adding a second.
 *
 * @example
 * ```ts
 * uiMessageIdAt(3); // 'm3'
 * ```
 */
export const uiMessageIdAt = (index: number): string => `m${index}`;

const isAnswer = (message: Message) => message.role === 'assistant' || message.role === 'tool';

/**
 * The index where the answer at the end of `messages` starts (its assistant and tool messages), or
 * `messages.length` when the history ends with no answer yet: where the answer of a run in
 * progress goes.
 *
 * @example
 * ```ts
 * trailingAnswerIndex([{ role: 'user', content: 'Hi' }]); // 1
 * ```
 */
export function trailingAnswerIndex(messages: readonly Message[]): number {
  let index = messages.length;
  while (index > 0 && isAnswer(messages[index - 1] as Message)) index--;
  return index;
}
