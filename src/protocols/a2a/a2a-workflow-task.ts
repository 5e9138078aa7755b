import type { Artifact, Message as A2AMessage, Part, Task, TaskState, TaskStatus } from '@a2a-js/sdk';
import type { ConversationView } from '../../host/conversation-view.js';
import { isRecord } from '../../util/is-record.js';
import { agentMessage, dataPart, taskStates as state, textPart } from './a2a-task.js';

/** The id of the artifact that carries a workflow run's output. */
export const outputArtifactId = 'output';

/** A workflow's output as parts: a data part always (any JSON), and a text part too when it is a string. */
const outputParts = (output: unknown): Part[] => [
  ...(typeof output === 'string' ? [textPart(output)] : []),
  dataPart(output === undefined ? null : output),
];

/** The output of a finished workflow run as the task's artifact. */
export const outputArtifact = (output: unknown): Artifact => ({
  artifactId: outputArtifactId,
  name: 'output',
  description: "The workflow's output",
  parts: outputParts(output),
  metadata: undefined,
  extensions: [],
});

/**
 * What an `input-required` status of a workflow says: each call that waits, the conversation in the
 * workflow that holds it (its invoke or spawn ids), and how to answer — the same answers as a
 * conversation's task takes; the host routes each to the conversation that waits.
 */
export function workflowApprovalMessage(view: ConversationView): A2AMessage {
  const approvals = (view.conversations ?? []).flatMap((conversation) =>
    conversation.pendingApprovals.map(({ toolCallId, name, args, path }) => ({
      toolCallId,
      name,
      args,
      conversation: conversation.path,
      ...(path ? { path } : {}),
    })),
  );
  const calls = approvals
    .map(
      ({ toolCallId, name, args, conversation }) =>
        `${name}(${JSON.stringify(args)}) [${toolCallId}] in conversation ${conversation.join('/')}`,
    )
    .join(', ');
  const text =
    `Approval needed for ${calls}. Answer on this task with a data part { "approve": true } or { "approve": false, "reason": "…" } ` +
    '(add "toolCallId" to answer one call only), or the text "approve" or "deny".';
  return agentMessage(view.id, `${view.id}-approval-${view.seq ?? 0}`, [textPart(text), dataPart({ pendingApprovals: approvals })]);
}

/** Why a workflow output that says `halted` or `error` ended so (its `message`, `reason`, `failure` or `error.message`). */
function whyOf(output: unknown): string | undefined {
  if (!isRecord(output)) return undefined;
  const error = isRecord(output.error) && typeof output.error.message === 'string' ? output.error.message : undefined;
  const said = [output.reason, output.message, output.failure, error].filter((value): value is string => typeof value === 'string');
  return said.length > 0 ? said.join(': ') : undefined;
}

/**
 * The status of a task whose workflow run is in `view`. `failure` is the message `host.result`
 * rejected with, for a run whose machine itself failed (it has no output).
 */
export function workflowTaskStatusOf(view: ConversationView, failure: string | undefined): TaskStatus {
  const timestamp = new Date(view.updatedAt).toISOString();
  const at = (taskState: TaskState, message?: A2AMessage): TaskStatus => ({ state: taskState, message, timestamp });
  const said = (parts: Part[]) => agentMessage(view.id, `${view.id}-status-${view.seq ?? 0}`, parts);
  switch (view.status) {
    case 'idle':
      return at(state.submitted);
    case 'running':
      return at(state.working);
    case 'awaitingApproval':
      return at(state.inputRequired, workflowApprovalMessage(view));
    case 'done':
      return at(state.completed, said(outputParts(view.output)));
    case 'halted': {
      const output = view.output;
      // `cancel` (CancelTask) ends a workflow with the host's WorkflowHaltedOutput.
      if (isRecord(output) && output.reason === 'cancelled') return at(state.canceled, said([textPart('cancelled'), dataPart(output)]));
      return at(state.failed, said([textPart(`halted: ${whyOf(output) ?? 'unknown reason'}`), dataPart(output ?? null)]));
    }
    case 'error': {
      const output = view.output;
      const why = output === undefined ? (failure ?? 'the workflow failed') : (whyOf(output) ?? 'the workflow failed');
      return at(state.failed, said([textPart(`error: ${why}`), ...(output === undefined ? [] : [dataPart(output)])]));
    }
  }
}

/**
 * A workflow run as an A2A task: its id is the run's id (its context id too); no history (a run
 * takes no turns: its input started it), and, once it is done, its output as the artifact `output`.
 */
export function workflowTaskOf(view: ConversationView, failure: string | undefined): Task {
  return {
    id: view.id,
    contextId: view.id,
    status: workflowTaskStatusOf(view, failure),
    artifacts: view.status === 'done' ? [outputArtifact(view.output)] : [],
    history: [],
    metadata: undefined,
  };
}
