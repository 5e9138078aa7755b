import type { ConversationHost } from '../../../host/conversation-host.js';
import type { ConversationStatus, ConversationSummary, ListOptions } from '../../../host/conversation-store.js';
import type { ConversationView } from '../../../host/conversation-view.js';
import type { ConversationStateValue } from '../../../machines/types.js';
import type { Message } from '../../../model/messages.js';
import type { Usage } from '../../../model/usage.js';

/**
 * One stored step of a conversation, as `host.history(id)` lists it.
 *
 * @example
 * ```ts
 * const steps: ViewerStep[] = await host.history('c-42');
 * ```
 */
export type ViewerStep = { seq: number; at: number; state: ConversationStateValue; status: ConversationStatus };

/**
 * A conversation as the viewer shows it: `host.get(id)`'s view, at a stored step when asked for one.
 *
 * @example
 * ```ts
 * const view: ViewerConversation | undefined = await host.get('c-42', { seq: 3 });
 * ```
 */
export type ViewerConversation = ConversationView & { seq?: number; usage?: Usage };

/**
 * The part of a `ConversationHost` the viewer uses: the conversations, their stored steps, a fork
 * of a step, the live stream, and `send` for approvals, denials and cancels.
 *
 * @example
 * ```ts
 * const viewed: ViewerHost = createConversationHost({ machine, store });
 * ```
 */
export type ViewerHost = Pick<ConversationHost, 'machine' | 'send' | 'follow'> & {
  list(options?: ListOptions): Promise<ConversationSummary[]>;
  get(id: string, options?: { seq?: number }): Promise<ViewerConversation | undefined>;
  history(id: string, options?: { afterSeq?: number; limit?: number }): Promise<ViewerStep[]>;
  fork(id: string, options: { seq: number; newId: string; messages?: Message[] }): Promise<ViewerConversation>;
};
