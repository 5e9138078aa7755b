import type { Message } from '../../model/messages.js';
import type { UserContent } from '../../model/user-content.js';
import type { ConversationInput } from '../names/types.js';

/** What {@link conversationInput} takes besides the prompt or the history. */
export type ConversationInputOptions = Pick<ConversationInput, 'sessionData' | 'agent' | 'conversationId'> & {
  /** The history before the prompt (when the first argument is a prompt). */
  messages?: Message[];
  /**
   * What the conversation may still spend of the workflow's budget (`deadline` in epoch ms), the
   * tighter of this and the machine's own `budget` applying — as an agent call's child inherits its
   * caller's rest. E.g. `{ maxTotalTokens: limit - context.tokensSpent, deadline: context.deadline }`.
   */
  budget?: ConversationInput['budget'];
};

/**
 * The input a workflow gives a conversation it invokes or spawns. Given a prompt (a string or
 * content parts), the conversation starts with it at once — no `user.message` to send — and its
 * `RunOutput` comes to the workflow's `onDone`. Given a history (messages), it waits for a
 * `user.message` as a conversation created with that history does.
 *
 * The result is plain data (`ConversationInput`); nothing is checked here: a conversation given a
 * bad prompt ends in `error`, naming what was wrong, and the workflow's `onDone` sees it.
 *
 * @example
 * ```ts
 * import { conversationInput, createConversationMachine, type RunOutput } from 'actorloop';
 * import { assign, setup } from 'xstate';
 *
 * const summarize = setup({
 *   actors: { writer: createConversationMachine({ provider }) },
 * }).createMachine({
 *   context: { summary: '' },
 *   initial: 'writing',
 *   states: {
 *     writing: {
 *       invoke: {
 *         src: 'writer',
 *         input: conversationInput('Summarize the report in three lines.', { sessionData: { userId: 'u1' } }),
 *         onDone: { target: 'done', actions: assign({ summary: ({ event }) => (event.output as RunOutput).text }) },
 *       },
 *     },
 *     done: { type: 'final' },
 *   },
 * });
 * ```
 */
export function conversationInput(promptOrMessages: UserContent | Message[], options: ConversationInputOptions = {}): ConversationInput {
  const { messages, ...rest } = options;
  if (isHistory(promptOrMessages)) return { ...rest, messages: [...(messages ?? []), ...promptOrMessages] };
  return { ...rest, ...(messages === undefined ? {} : { messages }), prompt: promptOrMessages };
}

/** Messages have a `role`; content parts have a `type`. An empty array is an empty history. */
function isHistory(value: UserContent | Message[]): value is Message[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'object' && item !== null && 'role' in item);
}
