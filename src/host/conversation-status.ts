/**
 * Where a conversation stands: `idle` before its first message, `running` while a run requests or
 * executes tools (or waits to retry), `awaitingApproval` while tool calls wait for `tool.approve` /
 * `tool.deny`, and the outcome of its last run once that run ended.
 *
 * @example
 * ```ts
 * const view = await host.get('c-42');
 * if (view?.status === 'awaitingApproval') showApprovals(view.pendingApprovals);
 * ```
 */
export type ConversationStatus = 'idle' | 'running' | 'awaitingApproval' | 'done' | 'halted' | 'error';
