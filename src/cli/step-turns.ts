import type { AnyConversationHost } from '../host/conversation-host.js';
import type { ConversationStep } from '../host/conversation-history.js';
import { ConversationLoadError } from '../host/errors/conversation-load-error.js';
import { ConversationStepNotFoundError } from '../host/errors/conversation-step-not-found-error.js';

/**
 * The turn of each step from the number of user messages in its history (`undefined` for a step
 * that cannot be read): turn n is everything after the n-th user message. The first step counts
 * its user messages; each later one adds the user messages it gained — a compaction that summarizes
 * old user messages away lowers the count without starting a turn. An unreadable step has no turn.
 *
 * @example
 * ```ts
 * stepTurns([1, 1, 2, 2, 1, undefined, 2]); // [1, 1, 2, 2, 2, null, 3]
 * ```
 */
export function stepTurns(userMessages: ReadonlyArray<number | undefined>): Array<number | null> {
  let last: { users: number; turn: number } | undefined;
  return userMessages.map((users) => {
    if (users === undefined) return null;
    last = { users, turn: last === undefined ? users : last.turn + Math.max(0, users - last.users) };
    return last.turn;
  });
}

/** Each step of `steps` with its turn (see `stepTurns`), read from the history each step stored. */
export async function withTurns(
  host: AnyConversationHost,
  id: string,
  steps: ConversationStep[],
): Promise<Array<ConversationStep & { turn: number | null }>> {
  const counts: Array<number | undefined> = [];
  for (const { seq } of steps) {
    try {
      const view = await host.get(id, { seq });
      counts.push(view?.messages.filter((message) => message.role === 'user').length);
    } catch (error) {
      // A damaged step (history lists it all the same), or one the store let go meanwhile: no turn to tell.
      if (!ConversationLoadError.isInstance(error) && !ConversationStepNotFoundError.isInstance(error)) throw error;
      counts.push(undefined);
    }
  }
  const turns = stepTurns(counts);
  return steps.map((step, index) => ({ ...step, turn: turns[index] ?? null }));
}
