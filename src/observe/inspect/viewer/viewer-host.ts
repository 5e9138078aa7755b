import type { ConversationHost } from '../../../host/conversation-host.js';

/**
 * The part of a `ConversationHost` the viewer uses: the conversations (`list`, `get`, at a step
 * too), their stored steps (`history`), a fork of a step, the live stream (`follow`), and `send`
 * for approvals, denials and cancels. Any `ConversationHost` is one.
 *
 * @example
 * ```ts
 * const viewed: ViewerHost = createConversationHost({ machine, store });
 * ```
 */
export type ViewerHost = Pick<ConversationHost, 'machine' | 'list' | 'get' | 'history' | 'fork' | 'send' | 'follow'>;
