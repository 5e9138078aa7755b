import type { ConversationEmittedEvent, ConversationStateValue } from '../../machines/types.js';
import type { ConversationStateUpdate } from '../conversation-source.js';

/**
 * The state a child conversation is in, as its events tell it: the viewer sees an agent call's
 * child through the events its parent passes on (`agent.event`), the same for an actor and for a
 * host's feed, so each child's chart is lit from them. Undefined for an event that moves nothing.
 */
export function stateOfChildEvent(event: ConversationEmittedEvent): ConversationStateValue | undefined {
  switch (event.type) {
    case 'request.started':
      return { requesting: 'waiting' };
    case 'request.retry':
      return 'retrying';
    case 'tool.approval.requested':
      return 'awaitingApproval';
    case 'tool.started':
      return { executingTools: 'running' };
    case 'agent.handoff':
      return 'handingOff';
    default:
      return undefined;
  }
}

/** What the agent runs of one watched run need from the viewer: a view for each child, kept in its list. */
export type ChildRunSink = {
  /** A child started: make its view (nested under `parent`) and return how to feed it. */
  started(
    id: string,
    label: string,
    parent: string,
  ): { state(update: ConversationStateUpdate): void; emitted(event: ConversationEmittedEvent): void };
};

type ChildRun = { view: ReturnType<ChildRunSink['started']>; children: AgentRuns };

/**
 * The agent calls of one watched run, as runs of their own in the viewer, nested under the call
 * that started them: `agent.started` makes one (`<run id>/<toolCallId>`), `agent.event` feeds it
 * (and, further down, its own children), `agent.finished` ends it with its output's status.
 *
 * @example
 * ```ts
 * const agents = new AgentRuns('run-1', sink);
 * actor.on('*', (event) => agents.emitted(event));
 * ```
 */
export class AgentRuns {
  private readonly children = new Map<string, ChildRun>();

  constructor(
    private readonly runId: string,
    private readonly sink: ChildRunSink,
  ) {}

  emitted(event: ConversationEmittedEvent): void {
    if (event.type === 'agent.started') {
      const id = `${this.runId}/${event.toolCallId}`;
      const view = this.sink.started(id, `${event.agent} (${event.toolCallId})`, this.runId);
      view.state({ type: 'state', value: 'idle', status: 'running' });
      this.children.set(event.toolCallId, { view, children: new AgentRuns(id, this.sink) });
      return;
    }
    if (event.type === 'agent.finished') {
      const child = this.children.get(event.toolCallId);
      child?.view.state({
        type: 'state',
        value: event.output.status,
        status: event.output.status,
        messages: event.output.messages,
        output: event.output,
      });
      return;
    }
    if (event.type !== 'agent.event') return;
    const [toolCallId, ...rest] = event.path;
    const child = toolCallId === undefined ? undefined : this.children.get(toolCallId);
    if (!child) return;
    // Deeper down: the child's own agent runs route it on, as the child's own events would.
    const inner: ConversationEmittedEvent = rest.length === 0 ? event.event : { type: 'agent.event', path: rest, event: event.event };
    child.children.emitted(inner);
    if (rest.length > 0) return;
    child.view.emitted(inner);
    const value = stateOfChildEvent(inner);
    if (value !== undefined)
      child.view.state({ type: 'state', value, status: value === 'awaitingApproval' ? 'awaitingApproval' : 'running' });
  }
}
