import type { ConversationContext, ConversationStateValue } from '../machines/hostable.js';
import type { Message } from '../model/messages.js';
import { emptyUsage, type Usage } from '../model/usage.js';
import type { ConversationStatus } from './conversation-store.js';

/**
 * A tool call waiting for `tool.approve` or `tool.deny`.
 *
 * @example
 * ```ts
 * for (const { toolCallId, name, args } of view.pendingApprovals) console.log(`${name}(${JSON.stringify(args)}) needs approval: ${toolCallId}`);
 * ```
 */
export type PendingApproval = {
  toolCallId: string;
  name: string;
  args: unknown;
  /** For a call of an agent call's child: the `toolCallId`s of the agent calls down to it (see `tool.approval.requested`). */
  path?: string[];
};

/**
 * A conversation as `host.get(id)` shows it.
 *
 * @example
 * ```ts
 * const view: ConversationView | undefined = await host.get('c-42');
 * if (view?.status === 'done') console.log(view.messages.at(-1));
 * ```
 */
export type ConversationView = {
  id: string;
  status: ConversationStatus;
  /** The state of its current (or last) run. */
  value: ConversationStateValue;
  /** The whole history so far. */
  messages: Message[];
  pendingApprovals: PendingApproval[];
  /** Tokens its current (or last) run has used so far. */
  usage: Usage;
  /** When it was last stored (epoch milliseconds). */
  updatedAt: number;
  /**
   * The last stored step (a `seq` of `host.history(id)`; 0 before the first write). A run in
   * memory may be a step ahead of it for the moment its next write takes. Absent where
   * conversations are not stored step by step (the Restate object).
   */
  seq?: number;
  /** For a hosted workflow (any machine other than a conversation): the conversations running in it now. */
  conversations?: WorkflowConversation[];
  /** For a hosted workflow that reached a final state: its machine's output (what `host.result(id)` gives). */
  output?: unknown;
};

/**
 * One conversation running inside a hosted workflow, as its view lists it.
 *
 * @example
 * ```ts
 * const view = await host.get('wf-1');
 * for (const { path, status } of view?.conversations ?? []) console.log(path.join('/'), status);
 * ```
 */
export type WorkflowConversation = {
  /** The invoke or spawn ids from the workflow down to it (`['review', 'writer']` for one in a nested workflow). */
  path: string[];
  status: ConversationStatus;
  value: ConversationStateValue;
  messages: Message[];
  usage: Usage;
  /** Its calls waiting for approval, `path` from the workflow down (agent calls' `toolCallId`s after the invoke ids). */
  pendingApprovals: PendingApproval[];
};

/** What the status and view are computed from: a live snapshot or a stored one. */
export type RunState = {
  value: unknown;
  context: Pick<ConversationContext, 'messages' | 'round' | 'outcome'> & {
    usage?: Usage;
    agents?: Pick<ConversationContext['agents'], 'approvals'>;
  };
};

/**
 * The conversation status of a run's state.
 *
 * @example
 * ```ts
 * statusOf({ value: { executingTools: 'running' }, context }); // 'running'
 * ```
 */
export function statusOf({ value, context }: RunState): ConversationStatus {
  if (value === 'idle') return 'idle';
  if (value === 'awaitingApproval') return 'awaitingApproval';
  // Tools run, but the run cannot go on until someone answers a child's approval.
  if ((context.agents?.approvals.length ?? 0) > 0 && typeof value === 'object' && value !== null && 'executingTools' in value) {
    return 'awaitingApproval';
  }
  if (value === 'done' || value === 'halted' || value === 'error') return context.outcome.status ?? value;
  return 'running';
}

/** The calls of the round that wait for approval. */
export function pendingApprovalsOf(context: RunState['context']): PendingApproval[] {
  const own = (context.round ?? [])
    .filter((call) => call.state === 'awaiting-approval')
    .map((call) => ({ toolCallId: call.toolCallId, name: call.toolName, args: call.args }));
  const deep = context.agents?.approvals ?? [];
  return deep.length === 0 ? own : [...own, ...deep.map(({ toolCallId, name, args, path }) => ({ toolCallId, name, args, path }))];
}

/** The view of a run's state, stored at `updatedAt` as step `seq` (when it is stored step by step). */
export function viewOf(id: string, state: RunState, updatedAt: number, seq?: number): ConversationView {
  return {
    id,
    status: statusOf(state),
    value: state.value as ConversationStateValue,
    messages: state.context.messages,
    pendingApprovals: pendingApprovalsOf(state.context),
    usage: state.context.usage ?? emptyUsage(),
    updatedAt,
    ...(seq === undefined ? {} : { seq }),
  };
}
