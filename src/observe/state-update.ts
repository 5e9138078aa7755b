import type { ConversationStateValue } from '../machines/types.js';
import type { Message } from '../providers/messages.js';
import type { ConversationStateUpdate, SnapshotLike } from './conversation-source.js';

/**
 * A snapshot in the host's vocabulary: `{ type: 'state', value, status, messages }`, where status
 * is `active` during the run and the run's own status (`done`, `halted`, `error`) at its end.
 */
export function stateUpdateOf(snapshot: SnapshotLike): ConversationStateUpdate {
  const { value, context, output } = snapshot as SnapshotLike & {
    value?: ConversationStateValue;
    context?: { messages?: Message[] };
    output?: { status?: string };
  };
  const status = snapshot.status === 'done' && typeof output?.status === 'string' ? output.status : snapshot.status;
  const messages = context?.messages;
  return { type: 'state', value: value ?? 'idle', status, ...(messages ? { messages } : {}) };
}
