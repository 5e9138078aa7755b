import type { Artifact, Message as A2AMessage, Part, Task, TaskState, TaskStatus } from '@a2a-js/sdk';
import type { ConversationView, PendingApproval } from '../../host/conversation-view.js';
import type { ConversationStatus } from '../../host/conversation-status.js';
import type { RunOutput } from '../../machines/hostable.js';
import { textOf } from '../../model/messages.js';

// The SDK's enums are runtime objects of a module that is only imported on use (it is an optional
// peer): the protocol's own numbers stand in for them here.
const state = {
  submitted: 1 as TaskState,
  working: 2 as TaskState,
  completed: 3 as TaskState,
  failed: 4 as TaskState,
  canceled: 5 as TaskState,
  inputRequired: 6 as TaskState,
};
/** The task states, as the protocol numbers them (shared with the workflow tasks). */
export const taskStates = state;
const roleUser = 1 as A2AMessage['role'];
const roleAgent = 2 as A2AMessage['role'];

/** How a run ended, as far as a task's status needs it. */
export type RunEnding = Pick<RunOutput, 'reason' | 'error' | 'text'>;

/** Whether a task in this state takes no more events until a client sends something. */
export const settles = (status: ConversationStatus): boolean => status !== 'running';

export const textPart = (text: string): Part => ({
  content: { $case: 'text', value: text },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});
export const dataPart = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});

export const agentMessage = (taskId: string, messageId: string, parts: Part[]): A2AMessage => ({
  messageId,
  contextId: taskId,
  taskId,
  role: roleAgent,
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

/** What an `input-required` status says: the calls that wait, and how to answer them (docs/a2a.md). */
export function approvalMessage(taskId: string, pending: PendingApproval[], seq: number | undefined): A2AMessage {
  const calls = pending.map(({ toolCallId, name, args }) => `${name}(${JSON.stringify(args)}) [${toolCallId}]`).join(', ');
  const text =
    `Approval needed for ${calls}. Answer on this task with a data part { "approve": true } or { "approve": false, "reason": "…" } ` +
    '(add "toolCallId" to answer one call only), or the text "approve" or "deny".';
  const approvals = pending.map(({ toolCallId, name, args, path }) => ({ toolCallId, name, args, ...(path ? { path } : {}) }));
  return agentMessage(taskId, `${taskId}-approval-${seq ?? 0}`, [textPart(text), dataPart({ pendingApprovals: approvals })]);
}

/** The status of a task whose conversation is in `view`; `ending` is how its last run ended, for an ended run. */
export function taskStatusOf(view: ConversationView, ending: RunEnding | undefined): TaskStatus {
  const timestamp = new Date(view.updatedAt).toISOString();
  const at = (taskState: TaskState, message?: A2AMessage): TaskStatus => ({ state: taskState, message, timestamp });
  const suffix = `${view.seq ?? 0}`;
  switch (view.status) {
    case 'idle':
      return at(state.submitted);
    case 'running':
      return at(state.working);
    case 'awaitingApproval':
      return at(state.inputRequired, approvalMessage(view.id, view.pendingApprovals, view.seq));
    case 'done':
      return at(state.completed, agentMessage(view.id, `${view.id}-status-${suffix}`, [textPart(ending?.text ?? lastAnswer(view))]));
    case 'halted': {
      if (ending?.reason === 'cancelled')
        return at(state.canceled, agentMessage(view.id, `${view.id}-status-${suffix}`, [textPart('cancelled')]));
      const why = `halted: ${ending?.reason ?? 'unknown reason'}${ending?.error ? ` (${ending.error.message})` : ''}`;
      return at(state.failed, agentMessage(view.id, `${view.id}-status-${suffix}`, [textPart(why)]));
    }
    case 'error': {
      const why = `error: ${ending?.error?.message ?? 'the run failed'}`;
      return at(state.failed, agentMessage(view.id, `${view.id}-status-${suffix}`, [textPart(why)]));
    }
  }
}

/** The text of the last assistant message of the conversation ('' if none). */
function lastAnswer(view: ConversationView): string {
  const last = view.messages.findLast((message) => message.role === 'assistant' && textOf(message) !== '');
  return last ? textOf(last) : '';
}

/** The id of the artifact that carries the answer of the conversation's `turn`-th user message. */
export const answerArtifactId = (turn: number): string => `answer-${turn}`;

/** The answer of a turn as an artifact. */
export const answerArtifact = (turn: number, text: string): Artifact => ({
  artifactId: answerArtifactId(turn),
  name: `answer ${turn}`,
  description: `The answer to message ${turn} of the conversation`,
  parts: [textPart(text)],
  metadata: undefined,
  extensions: [],
});

/** How many user messages the conversation has: the turn its current (or last) run answers. */
export const turnOf = (view: ConversationView): number => view.messages.filter((message) => message.role === 'user').length;

/**
 * The conversation as an A2A task: its id is the conversation id (its context id too), its history
 * the user and assistant texts, and its artifacts the final answer of each turn that has one (the
 * current turn's once its run is done).
 */
export function taskOf(view: ConversationView, ending: RunEnding | undefined): Task {
  const history: A2AMessage[] = [];
  const artifacts: Artifact[] = [];
  let turn = 0;
  let answer = '';
  const closeTurn = () => {
    if (turn > 0 && answer !== '') artifacts.push(answerArtifact(turn, answer));
  };
  view.messages.forEach((message, index) => {
    if (message.role === 'user') {
      closeTurn();
      turn++;
      answer = '';
      history.push({ ...agentMessage(view.id, `${view.id}-m${index}`, [textPart(textOf(message))]), role: roleUser });
    } else if (message.role === 'assistant') {
      const text = textOf(message);
      if (text === '') return;
      answer = text;
      history.push(agentMessage(view.id, `${view.id}-m${index}`, [textPart(text)]));
    }
  });
  // The current turn's answer is an artifact once the run has given it.
  if (view.status === 'done') closeTurn();
  return { id: view.id, contextId: view.id, status: taskStatusOf(view, ending), artifacts, history, metadata: undefined };
}
