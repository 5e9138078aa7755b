import type { AnyConversationHost } from '../../../host/conversation-host.js';

/**
 * The part of a `ConversationHost` the viewer uses: the conversations or workflow runs (`list`,
 * `get`, at a step too), their stored steps (`history`), a fork of a step, the live stream
 * (`follow`), and `send` for approvals, denials and cancels. Any `ConversationHost` is one, of a
 * conversation machine or of a workflow.
 *
 * @example
 * ```ts
 * const viewed: ViewerHost = createConversationHost({ machine: orderWorkflow, store });
 * ```
 */
export type ViewerHost = Pick<AnyConversationHost, 'machine' | 'list' | 'get' | 'history' | 'fork' | 'send' | 'follow'>;
