import { statusOf } from '../host/conversation-view.js';
import type { ConversationStateValue, RunOutput } from '../machines/names/types.js';
import type { Message } from '../model/messages.js';
import type { ConversationStateUpdate, ConversationUpdate, ObservedStatus, SnapshotLike } from './conversation-source.js';

/** The statuses after which a run takes no more events: it ended, or its actor was stopped. */
const endStatuses: ReadonlySet<string> = new Set<ObservedStatus>(['done', 'halted', 'error', 'stopped']);

/**
 * Whether a status says the run ended (`done`, `halted`, `error`) or its actor was stopped. A host
 * conversation in one of these still takes the next `user.message`, which starts its next run.
 */
export function isEndStatus(status: string): boolean {
  return endStatuses.has(status);
}

/**
 * Whether an update ends a run: a state update whose status is `done`, `halted`, `error` (or
 * `stopped`). Streams over a host conversation do not complete when a run ends — the conversation
 * takes the next message — so end one there with `takeWhile((update) => !isRunEnd(update), true)`.
 *
 * @example
 * ```ts
 * import { conversation$, hostFeed, isRunEnd } from 'actorloop/rx';
 * import { takeWhile } from 'rxjs';
 *
 * conversation$(hostFeed(host, 'c-42'))
 *   .pipe(takeWhile((update) => !isRunEnd(update), true)) // the last update is the run's end
 *   .subscribe((update) => console.log(update.type));
 * ```
 */
export function isRunEnd(update: ConversationUpdate): update is ConversationStateUpdate {
  return update.type === 'state' && isEndStatus(update.status);
}

/**
 * A snapshot in the host's vocabulary: `{ type: 'state', value, status, messages }`, the status
 * computed as the host computes it (`running`, `awaitingApproval`, … then the run's own status at
 * its end, with its `output`); `stopped` for an actor stopped before its end.
 */
export function stateUpdateOf(snapshot: SnapshotLike): ConversationStateUpdate {
  const {
    value = 'idle',
    context,
    output,
  } = snapshot as SnapshotLike & {
    value?: ConversationStateValue;
    context?: { messages?: Message[] };
    output?: RunOutput;
  };
  const status: ObservedStatus =
    snapshot.status === 'stopped' || snapshot.status === 'error'
      ? snapshot.status
      : statusOf({
          value,
          context: {
            messages: [],
            round: null,
            outcome: { status: output?.status ?? null, reason: null, finalText: null, finishReason: null },
          },
        });
  const messages = context?.messages;
  return {
    type: 'state',
    value,
    status,
    ...(messages ? { messages } : {}),
    ...(snapshot.status === 'done' && output ? { output } : {}),
  };
}
