import type { PendingApproval } from '../../host/conversation-view.js';

/**
 * The `elicitation/create` form that asks the MCP client's user to approve one tool call: what is
 * called, with which arguments, and a yes/no with an optional reason (sent to the model on a denial).
 *
 * @example
 * ```ts
 * const params = approvalPrompt({ toolCallId: 'call_1', name: 'refund', args: { amount: 40 } });
 * ```
 */
export function approvalPrompt(approval: PendingApproval) {
  // Deep calls (an agent call's child, a workflow's conversation) say where they wait: the invoke and agent call ids down to it.
  const where = approval.path && approval.path.length > 0 ? ` (in ${approval.path.join(' / ')})` : '';
  return {
    message:
      `The agent wants to call the tool "${approval.name}"${where} with ${argumentsText(approval.args)} ` +
      `(call ${approval.toolCallId}). Approve it?`,
    requestedSchema: {
      type: 'object' as const,
      properties: {
        approve: { type: 'boolean' as const, title: 'Approve', description: `Run ${approval.name} with these arguments` },
        reason: { type: 'string' as const, title: 'Reason', description: 'Why not (told to the agent when you deny)' },
      },
      required: ['approve'],
    },
  };
}

/**
 * The event an elicitation answer leads to: only an accepted form with `approve: true` approves;
 * decline, cancel, `approve: false` deny (a call nobody approved never runs).
 *
 * @example
 * ```ts
 * approvalEvent('call_1', { action: 'decline' }); // { type: 'tool.deny', toolCallId: 'call_1', reason: 'the MCP client declined the approval' }
 * ```
 */
export function approvalEvent(
  toolCallId: string,
  answer: { action: string; content?: Record<string, unknown> | undefined },
): { type: 'tool.approve'; toolCallId: string } | { type: 'tool.deny'; toolCallId: string; reason: string } {
  if (answer.action === 'accept' && answer.content?.approve === true) return { type: 'tool.approve', toolCallId };
  const given = answer.content?.reason;
  const reason =
    typeof given === 'string' && given.trim() !== ''
      ? given
      : answer.action === 'accept'
        ? 'the user did not approve it'
        : `the MCP client ${answer.action === 'decline' ? 'declined' : 'cancelled'} the approval`;
  return { type: 'tool.deny', toolCallId, reason };
}

/** The arguments as the prompt shows them: JSON, cut short so a huge argument does not flood the dialog. */
function argumentsText(args: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(args) ?? 'no arguments';
  } catch {
    text = String(args);
  }
  return text.length > 2_000 ? `${text.slice(0, 2_000)}… (${text.length} characters)` : text;
}
