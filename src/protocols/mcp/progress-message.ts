import type { ConversationHostEvent } from '../../host/live-run.js';

/**
 * What an MCP progress notification says of a host event, or `undefined` for events too small to
 * report (text deltas, usage): a client shows these lines while the call runs, so each says what
 * the agent is doing now. A workflow's state changes are reported too (`workflow` true): its steps
 * are what a caller follows; a conversation's are already told by its rounds and tool calls.
 *
 * @example
 * ```ts
 * progressMessage({ type: 'tool.started', toolCallId: 'c1', name: 'lookup' }, false); // 'calling tool lookup'
 * ```
 */
export function progressMessage(event: ConversationHostEvent, workflow: boolean): string | undefined {
  switch (event.type) {
    case 'request.started':
      return event.attempt > 1
        ? `round ${event.iteration + 1}: asking the model again (attempt ${event.attempt})`
        : `round ${event.iteration + 1}: asking the model`;
    case 'tool.started':
      return `calling tool ${event.name}`;
    case 'tool.result':
      return event.isError ? `tool ${event.name} failed` : `tool ${event.name} answered`;
    case 'tool.approval.requested':
      return `waiting for approval of tool ${event.name} (call ${event.toolCallId})`;
    case 'agent.started':
      return `agent ${event.agent} started`;
    case 'agent.finished':
      return `agent ${event.agent} finished (${event.output.status})`;
    case 'state':
      return workflow ? `workflow state ${JSON.stringify(event.value)} (${event.status})` : undefined;
    default:
      return undefined;
  }
}
