import { randomUUID } from 'node:crypto';
import type { Artifact, Message, StreamResponse, Task, TaskState } from '@a2a-js/sdk';
import type { ToolExecuteContext } from '../../../tools/define-tool.js';
import { HaltError } from '../../../tools/halt-error.js';
import { A2AAgentError } from './a2a-agent-error.js';
import { classifyCallFailure, describeThrown } from './call-failure.js';
import type { A2AConnection } from './connect.js';
import type { ResolvedA2AAgentToolOptions } from './options.js';
import type { A2AAgentProgress, A2AInputRequest, A2ATaskStateName } from './progress.js';
import { artifactsText, partsText, taskStateNames } from './task-text.js';

/** States after which the remote task does nothing more on its own. */
const endStates = new Set<A2ATaskStateName>(['completed', 'failed', 'canceled', 'rejected', 'input-required', 'auth-required']);

/** What one call has learned of its remote task so far. */
type TaskView = {
  taskId?: string;
  contextId: string;
  state: A2ATaskStateName;
  /** The text of the latest status message. */
  statusText: string;
  /** Artifacts by id, in the order they first came; chunks with `append` joined. */
  artifacts: Map<string, Pick<Artifact, 'parts' | 'name'>>;
  /** The agent's answer when it replied with a message and made no task. */
  reply?: string;
};

/**
 * One call of a remote A2A agent, as a generator `execute`: sends the message with streaming,
 * yields each status change and artifact chunk as progress, and returns the answer — the text of
 * the task's artifacts, else of its final status message, else of the agent's reply message.
 *
 * The caller's signal (the parent's cancel, the call's timeout, a halt) cancels the remote task
 * with `cancelTask` — bounded by `cancelTimeoutMs`, its failure ignored: the caller has moved on —
 * and closes the stream. A signal that fires before the task id is known keeps the stream open
 * up to `cancelTimeoutMs` for it, so a task the server just made is still canceled.
 */
export async function* remoteCall(
  connection: A2AConnection,
  message: string,
  context: ToolExecuteContext,
  options: ResolvedA2AAgentToolOptions,
): AsyncGenerator<A2AAgentProgress, string, undefined> {
  const { client, sdk, card } = connection;
  const agent = card.name || 'remote agent';
  const stateName = taskStateNames(sdk);
  const { signal } = context;
  const view: TaskView = { contextId: '', state: 'unknown', statusText: '', artifacts: new Map() };
  const stream = new AbortController();
  let cancelSent = false;
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  const cancelRemote = () => {
    if (cancelSent || view.taskId === undefined || endStates.has(view.state)) return;
    cancelSent = true;
    // Best effort: the caller stopped waiting; a remote that cannot cancel is not the caller's failure.
    client
      .cancelTask({ tenant: '', id: view.taskId, metadata: undefined }, { signal: AbortSignal.timeout(options.cancelTimeoutMs) })
      .catch(() => undefined);
  };
  const onAbort = () => {
    if (view.taskId !== undefined) {
      cancelRemote();
      stream.abort(signal.reason);
    } else {
      graceTimer = setTimeout(() => stream.abort(signal.reason), options.cancelTimeoutMs);
    }
  };
  if (signal.aborted) return '';
  signal.addEventListener('abort', onAbort, { once: true });
  let outgoing = message;
  let answered = 0;
  try {
    for (;;) {
      const request = { tenant: '', message: userMessage(sdk, outgoing, view), configuration: undefined, metadata: undefined };
      let events = client.sendMessageStream(request, { signal: stream.signal });
      let resubscribed = false;
      for (;;) {
        let dropped: unknown;
        try {
          for await (const response of events) {
            const update = applyResponse(view, response, stateName);
            if (signal.aborted) {
              cancelRemote();
              return '';
            }
            if (update && view.taskId !== undefined) yield { ...update, agent, taskId: view.taskId } as A2AAgentProgress;
          }
        } catch (error) {
          dropped = error;
        }
        if (signal.aborted) return '';
        const unfinished = view.reply === undefined && view.taskId !== undefined && !endStates.has(view.state);
        // A stream that ends or drops before its task does (a proxy's idle timeout, a server restart)
        // is not the task's end: subscribe to the task again, once, and read the rest.
        if (unfinished && !resubscribed && view.taskId !== undefined && (dropped === undefined || isConnectionDrop(dropped))) {
          resubscribed = true;
          events = client.resubscribeTask({ tenant: '', id: view.taskId }, { signal: stream.signal });
          continue;
        }
        // A second drop, or a resubscription refused (the task ended meanwhile): the task's state says the rest.
        if (dropped !== undefined) {
          const settled = view.reply !== undefined || (view.taskId !== undefined && endStates.has(view.state));
          if (!settled && !resubscribed) throw dropped;
        }
        break;
      }
      if (view.reply !== undefined) return view.reply;
      if (view.taskId === undefined)
        throw new A2AAgentError(`the remote agent "${agent}" closed the stream without a task or a reply`, { kind: 'protocol', agent });
      if (!endStates.has(view.state)) await refreshTask(connection, view, stateName, options);
      const question = view.statusText;
      switch (view.state) {
        case 'completed':
          return artifactsText(view.artifacts.values()) || question || `the remote agent "${agent}" completed the task with no text`;
        case 'input-required': {
          const reply = await answerInput(options, {
            agent,
            taskId: view.taskId,
            contextId: view.contextId,
            question,
            message,
            answered,
            signal,
          });
          if (signal.aborted) return '';
          if (typeof reply === 'string' && reply !== '') {
            outgoing = reply;
            answered++;
            continue;
          }
          throw failure(agent, view, 'input-required', `the remote agent "${agent}" needs more input to go on`, question);
        }
        case 'failed':
        case 'rejected':
        case 'canceled':
        case 'auth-required':
          throw failure(agent, view, view.state, `the remote agent "${agent}" ${endText[view.state]}`, question);
        default:
          throw failure(
            agent,
            view,
            'connection',
            `the stream of the remote agent "${agent}" ended with its task still ${view.state}`,
            question,
          );
      }
    }
  } catch (thrown) {
    // Stopped by the caller: the machine has already given the call its result (timed out, canceled).
    if (signal.aborted) return '';
    const error = classifyCallFailure(thrown, agent, view.taskId);
    throw options.onFailure === 'halt' ? new HaltError(error.message, { cause: error }) : error;
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (graceTimer !== undefined) clearTimeout(graceTimer);
    if (signal.aborted) cancelRemote();
    stream.abort();
  }
}

const endText = {
  failed: 'failed',
  rejected: 'rejected the task',
  canceled: 'canceled the task',
  'auth-required': 'needs authentication to go on (auth-required)',
} as const;

/** The error of a task that ended without an answer, with what the agent said in its status message. */
function failure(
  agent: string,
  view: TaskView,
  kind: 'input-required' | 'failed' | 'rejected' | 'canceled' | 'auth-required' | 'connection',
  text: string,
  said: string,
) {
  // The agent's own words, clipped: a status message is someone else's text, of any length.
  const detail = said === '' ? '' : `: ${said.length > 1_000 ? `${said.slice(0, 999)}…` : said}`;
  const hint = kind === 'input-required' ? ' (the task is input-required; call again with a message that holds everything it needs)' : '';
  return new A2AAgentError(`${text}${detail}${hint} [task ${view.taskId ?? 'none'}]`, {
    kind,
    agent,
    ...(view.taskId === undefined ? {} : { taskId: view.taskId }),
  });
}

/** The caller's `onInputRequired`; one that throws fails the call naming it, not as an answer of the remote agent. */
async function answerInput(options: ResolvedA2AAgentToolOptions, request: A2AInputRequest): Promise<string | undefined> {
  try {
    return await options.onInputRequired?.(request);
  } catch (error) {
    throw new A2AAgentError(`onInputRequired failed to answer the remote agent "${request.agent}": ${describeThrown(error)}`, {
      kind: 'input-required',
      agent: request.agent,
      taskId: request.taskId,
      cause: error,
    });
  }
}

/** Whether a stream failed for the connection (fetch's `TypeError`, a socket closed mid-body) rather than for what the agent said. */
function isConnectionDrop(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof TypeError) return true;
  const cause = error.cause;
  return cause instanceof Error && /socket|terminated|ECONNRESET|closed/i.test(`${cause.name} ${cause.message}`);
}

/** The user message of this call; a follow-up (an answer to input-required) goes to the same task. */
function userMessage(sdk: A2AConnection['sdk'], text: string, view: TaskView): Message {
  return {
    messageId: randomUUID(),
    contextId: view.contextId,
    taskId: view.state === 'input-required' && view.taskId !== undefined ? view.taskId : '',
    role: sdk.root.Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

type Update =
  | Omit<Extract<A2AAgentProgress, { kind: 'status' }>, 'agent' | 'taskId'>
  | Omit<Extract<A2AAgentProgress, { kind: 'artifact' }>, 'agent' | 'taskId'>;

/** Folds one streamed response into the view; returns what is worth reporting as progress. */
function applyResponse(
  view: TaskView,
  response: StreamResponse,
  stateName: (state: TaskState | undefined) => A2ATaskStateName,
): Update | undefined {
  const payload = response.payload;
  if (!payload) return undefined;
  switch (payload.$case) {
    case 'message':
      view.reply = partsText(payload.value.parts);
      return undefined;
    case 'task':
      applyTask(view, payload.value, stateName);
      return statusUpdate(view);
    case 'statusUpdate': {
      const status = payload.value.status;
      view.taskId ??= payload.value.taskId;
      view.state = stateName(status?.state);
      view.statusText = partsText(status?.message?.parts);
      return statusUpdate(view);
    }
    case 'artifactUpdate': {
      const artifact = payload.value.artifact;
      if (!artifact) return undefined;
      view.taskId ??= payload.value.taskId;
      const known = view.artifacts.get(artifact.artifactId);
      if (payload.value.append && known) known.parts = [...known.parts, ...artifact.parts];
      else view.artifacts.set(artifact.artifactId, { parts: [...artifact.parts], name: artifact.name });
      return {
        kind: 'artifact',
        artifactId: artifact.artifactId,
        ...(artifact.name ? { name: artifact.name } : {}),
        text: partsText(artifact.parts),
        append: payload.value.append,
        lastChunk: payload.value.lastChunk,
      };
    }
  }
}

function statusUpdate(view: TaskView): Update {
  return { kind: 'status', state: view.state, ...(view.statusText === '' ? {} : { text: view.statusText }) };
}

function applyTask(view: TaskView, task: Task, stateName: (state: TaskState | undefined) => A2ATaskStateName) {
  view.taskId = task.id;
  view.contextId = task.contextId;
  view.state = stateName(task.status?.state);
  view.statusText = partsText(task.status?.message?.parts);
  // The task's own list is the whole truth when it comes; streamed chunks before it are part of it.
  if (task.artifacts.length > 0)
    view.artifacts = new Map(task.artifacts.map((artifact) => [artifact.artifactId, { parts: artifact.parts, name: artifact.name }]));
}

/** The task as the server holds it now, bounded by `requestTimeoutMs`. */
async function refreshTask(
  connection: A2AConnection,
  view: TaskView,
  stateName: (state: TaskState | undefined) => A2ATaskStateName,
  options: ResolvedA2AAgentToolOptions,
) {
  if (view.taskId === undefined) return;
  const task = await connection.client.getTask({ tenant: '', id: view.taskId }, { signal: AbortSignal.timeout(options.requestTimeoutMs) });
  applyTask(view, task, stateName);
}
