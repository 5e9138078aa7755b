import { randomUUID } from 'node:crypto';
import type { Message as A2AMessage, StreamResponse, Task } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import type { AnyConversationHost } from '../../host/conversation-host.js';
import type { ConversationView } from '../../host/conversation-view.js';
import { ConversationNotFoundError } from '../../host/errors/conversation-not-found-error.js';
import { EventRejectedError } from '../../host/errors/event-rejected-error.js';
import { HostClosedError } from '../../host/errors/host-closed-error.js';
import { isConversationMachine } from '../../machines/hostable.js';
import { isRecord } from '../../util/is-record.js';
import { approvalAnswerOf, textOfParts } from './approval-answer.js';
import { type FollowQueue, followQueue } from './follow-queue.js';
import {
  agentMessage,
  answerArtifact,
  dataPart,
  type RunEnding,
  settles,
  taskOf,
  taskStates,
  taskStatusOf,
  textPart,
  turnOf,
} from './a2a-task.js';
import { outputArtifact, workflowTaskOf, workflowTaskStatusOf } from './a2a-workflow-task.js';
import type { A2AServerSdk } from './load-sdk.js';

/** A task with only its last `length` history messages (all of them when `length` is absent). */
const withHistoryLength = (task: Task, length: number | undefined): Task =>
  length === undefined ? task : { ...task, history: length <= 0 ? [] : task.history.slice(-length) };

/** Where the Fetch handler leaves, in the call's `state`, the task id it authorized. */
export const taskIdKey = 'actorloop.a2a.taskId';
/** Set (to `true`) when that id is a new task's, made up by the server. */
export const newTaskKey = 'actorloop.a2a.newTask';
/** The request's `AbortSignal`: a client that leaves stops the streams it had. */
export const signalKey = 'actorloop.a2a.signal';

/** The first data part of a message, if it has one (`{ value }`, so a JSON `null` is one too). */
function dataOf(message: A2AMessage): { value: unknown } | undefined {
  for (const part of message.parts) if (part.content?.$case === 'data') return { value: part.content.value };
  return undefined;
}

/**
 * The A2A request handler over a conversation host: each task is a conversation (same id), its
 * state the conversation's, its events the conversation's stream. Over a host of a workflow, each
 * task is a run of the workflow (same id): started with the message's input, `input-required`
 * while a conversation in it waits for an approval, its output the task's artifact. Why not the SDK's
 * `DefaultRequestHandler` with an `AgentExecutor`: it keeps tasks in a `TaskStore` of its own and
 * streams through in-process event buses that only exist while an executor runs, so after a
 * restart a recovered run has no bus to resubscribe to and the task store has to be kept in step
 * with the host's by hand. The host already is a durable task store with a resumable stream.
 */
export function hostRequestHandler(host: AnyConversationHost, sdk: A2AServerSdk, onError: (error: unknown) => void): A2ARequestHandler {
  const { errors } = sdk;
  // Told once, as serveMcp does: a conversation machine carries a mark; any other machine is a workflow.
  const workflow = !isConversationMachine(host.machine);

  /** Host errors as A2A errors; anything else is reported and answered without its details. */
  const guard = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw asA2AError(error);
    }
  };
  const asA2AError = (error: unknown): unknown => {
    if (error instanceof errors.A2AError) return error;
    if (ConversationNotFoundError.isInstance(error)) return new errors.TaskNotFoundError(error.message);
    if (EventRejectedError.isInstance(error)) return new errors.UnsupportedOperationError(error.message);
    if (InvalidOptionsError.isInstance(error)) return new errors.RequestMalformedError(error.message);
    if (HostClosedError.isInstance(error)) return new Error('the agent is shutting down: try again');
    onError(error);
    return new Error('internal error');
  };

  const taskIdOf = (context: ServerCallContext): string => {
    const id = context.state.get(taskIdKey);
    // The Fetch handler authorizes the task id before the call gets here: without one, no task.
    if (typeof id !== 'string') throw new errors.RequestMalformedError('params: expected a task id');
    return id;
  };
  const signalOf = (context: ServerCallContext): AbortSignal | undefined => {
    const signal = context.state.get(signalKey);
    return signal instanceof AbortSignal ? signal : undefined;
  };

  const viewOf = async (id: string): Promise<ConversationView> => {
    const view = await host.get(id);
    if (!view) throw new errors.TaskNotFoundError(`no task ${JSON.stringify(id)}`);
    return view;
  };

  /** How the last run ended, for a conversation whose run has ended (the stored output). */
  const endingOf = async (view: ConversationView): Promise<RunEnding | undefined> => {
    if (view.status !== 'done' && view.status !== 'halted' && view.status !== 'error') return undefined;
    try {
      return await host.result(view.id);
    } catch {
      // A run that failed outright has no output to read: the status says `failed` without it.
      return undefined;
    }
  };
  /** Why a workflow whose machine itself failed (status `error`, no output) failed: what `host.result` rejects with. */
  const failureOf = async (view: ConversationView): Promise<string | undefined> => {
    if (view.status !== 'error' || view.output !== undefined) return undefined;
    try {
      await host.result(view.id);
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  };
  const taskNow = async (view: ConversationView): Promise<Task> =>
    workflow ? workflowTaskOf(view, await failureOf(view)) : taskOf(view, await endingOf(view));

  /** Sends an approval answer to every call it answers; the host routes each to the conversation that waits for it. */
  const answerApprovals = async (id: string, existing: ConversationView, message: A2AMessage): Promise<ConversationView> => {
    const answer = approvalAnswerOf(message);
    const pending = existing.pendingApprovals;
    if (!answer) {
      throw new errors.RequestMalformedError(
        `task ${id} waits for approval of ${pending.map((call) => call.toolCallId).join(', ')}: answer with a data part ` +
          '{ "approve": true | false, "reason"?: string, "toolCallId"?: string } or the text "approve" or "deny"',
      );
    }
    const targets = answer.toolCallId === undefined ? pending : pending.filter((call) => call.toolCallId === answer.toolCallId);
    if (targets.length === 0) throw new errors.RequestMalformedError(`toolCallId: no pending call ${JSON.stringify(answer.toolCallId)}`);
    let view = existing;
    for (const { toolCallId } of targets) {
      view = await host.send(
        id,
        answer.approve
          ? { type: 'tool.approve', toolCallId }
          : { type: 'tool.deny', toolCallId, ...(answer.reason === undefined ? {} : { reason: answer.reason }) },
      );
    }
    return view;
  };

  /**
   * A message to a workflow's task. A new task starts a run: a data part is its input (any JSON),
   * else the text is, as `{ message: text }`. On a run in progress, a data part `{ event: { type, … } }`
   * is one of the workflow's own events (a person's decision its chart waits for) and goes to it;
   * an approval answer goes to the conversation that waits. A finished run takes nothing: a run
   * does not take turns, a new task runs the workflow again.
   */
  const deliverToWorkflow = async (id: string, isNew: boolean, message: A2AMessage): Promise<ConversationView> => {
    const data = dataOf(message);
    if (isNew) {
      if (data) return host.start(id, { input: data.value });
      const text = textOfParts(message);
      if (text.trim() === '') {
        throw new errors.RequestMalformedError(
          'message.parts: a workflow task starts with its input: a data part (any JSON), or a text part (the input { "message": text })',
        );
      }
      return host.start(id, { input: { message: text } });
    }
    const existing = await viewOf(id);
    if (existing.status !== 'running' && existing.status !== 'awaitingApproval') {
      throw new errors.UnsupportedOperationError(
        `task ${id} has ended (${existing.status}): a workflow run does not take further messages; send a message without taskId to run the workflow again`,
      );
    }
    const event = data && isRecord(data.value) && isRecord(data.value.event) ? data.value.event : undefined;
    if (event !== undefined) {
      if (typeof event.type !== 'string' || event.type === '') {
        throw new errors.RequestMalformedError(
          'message.parts: an event for the workflow is a data part { "event": { "type": string, … } }',
        );
      }
      // The host checks it (plain JSON, a type) and whether the chart takes it now: the workflow's own event type is not known here.
      return host.send(id, event as never);
    }
    if (existing.status === 'awaitingApproval') return answerApprovals(id, existing, message);
    throw new errors.UnsupportedOperationError(
      `task ${id} is working: wait until it needs input or ends, cancel it, or send one of the workflow's own events as a data part { "event": { "type": "…" } }`,
    );
  };

  /** Applies a client's message to the task: a new turn, or the answer to the approvals it waits for. */
  const deliver = async (id: string, isNew: boolean, message: A2AMessage): Promise<ConversationView> => {
    if (workflow) return deliverToWorkflow(id, isNew, message);
    const existing = isNew ? undefined : await viewOf(id);
    if (existing?.status === 'awaitingApproval') return answerApprovals(id, existing, message);
    if (existing?.status === 'running') {
      throw new errors.UnsupportedOperationError(`task ${id} is working: wait until it needs input or ends, or cancel it`);
    }
    const text = textOfParts(message);
    if (text.trim() === '') throw new errors.RequestMalformedError('message.parts: expected a text part');
    return host.send(id, { type: 'user.message', content: text });
  };

  /** Waits, on `queue`, until the task needs input or its run ended; the view then. */
  const settle = async (id: string, view: ConversationView, queue: FollowQueue): Promise<ConversationView> => {
    if (settles(view.status)) return view;
    for (;;) {
      const event = await queue.next();
      if (!event) break;
      if (event.type === 'state' && settles(event.status)) break;
    }
    return viewOf(id);
  };

  const statusUpdate = (id: string, status: ReturnType<typeof taskStatusOf>): StreamResponse => ({
    payload: { $case: 'statusUpdate', value: { taskId: id, contextId: id, status, metadata: undefined } },
  });
  /** `working`, now, with what the agent says if anything. */
  const working = (id: string, message?: A2AMessage): StreamResponse =>
    statusUpdate(id, { state: taskStates.working, message, timestamp: new Date().toISOString() });

  /**
   * The rest of a run as A2A stream events: `working` again after an approval, the answer's text as
   * it comes (appended to the turn's artifact), then the full answer (replacing it, so a client
   * that joined late has all of it) and the status the run settled in, which ends the stream.
   */
  async function* streamRun(id: string, from: ConversationView, queue: FollowQueue): AsyncGenerator<StreamResponse, void, undefined> {
    if (workflow) {
      yield* streamWorkflowRun(id, from, queue);
      return;
    }
    let last = from.status;
    const turn = turnOf(from);
    let streamed = false;
    for (;;) {
      const event = await queue.next();
      if (!event) return;
      if (event.type === 'text.delta') {
        const artifact = answerArtifact(turn, event.delta);
        yield {
          payload: {
            $case: 'artifactUpdate',
            value: { taskId: id, contextId: id, artifact, append: streamed, lastChunk: false, metadata: undefined },
          },
        };
        streamed = true;
        continue;
      }
      if (event.type !== 'state' || event.status === last) continue;
      last = event.status;
      if (event.status === 'running') {
        yield working(id);
        continue;
      }
      const view = await viewOf(id);
      const ending = event.output ?? (await endingOf(view));
      if (view.status === 'done') {
        const artifact = answerArtifact(turn, ending?.text ?? '');
        yield {
          payload: {
            $case: 'artifactUpdate',
            value: { taskId: id, contextId: id, artifact, append: false, lastChunk: true, metadata: undefined },
          },
        };
      }
      yield statusUpdate(id, taskStatusOf(view, ending));
      return;
    }
  }

  /**
   * The rest of a workflow run as A2A stream events: `working` again after an approval; each reply
   * a conversation inside writes, once its request is answered, as a `working` status update that
   * names the conversation (progress — not an artifact, so a client's result is the output alone);
   * then the output artifact and the status the run settled in, which ends the stream.
   */
  async function* streamWorkflowRun(
    id: string,
    from: ConversationView,
    queue: FollowQueue,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    let last = from.status;
    // Per conversation (its path), the text its current request has streamed so far.
    const replies = new Map<string, string>();
    for (;;) {
      const event = await queue.next();
      if (!event) return;
      if (event.type === 'agent.event') {
        const key = event.path.join('/');
        const inner = event.event;
        if (inner.type === 'text.delta') replies.set(key, (replies.get(key) ?? '') + inner.delta);
        else if (inner.type === 'request.finished' || inner.type === 'request.retry') {
          const reply = replies.get(key) ?? '';
          replies.delete(key);
          // A retried request's partial text is not a reply.
          if (inner.type === 'request.finished' && reply.trim() !== '') {
            const message = workflowProgressMessage(id, event.path, reply);
            yield working(id, message);
          }
        }
        continue;
      }
      if (event.type !== 'state' || event.status === last) continue;
      last = event.status;
      if (event.status === 'running') {
        yield working(id);
        continue;
      }
      const view = await viewOf(id);
      if (view.status === 'done') {
        yield {
          payload: {
            $case: 'artifactUpdate',
            value: {
              taskId: id,
              contextId: id,
              artifact: outputArtifact(view.output),
              append: false,
              lastChunk: true,
              metadata: undefined,
            },
          },
        };
      }
      yield statusUpdate(id, workflowTaskStatusOf(view, await failureOf(view)));
      return;
    }
  }

  const unsupported = (what: string) => () => Promise.reject(new errors.UnsupportedOperationError(`${what}: not supported by this agent`));
  const noPush = () => Promise.reject(new errors.PushNotificationNotSupportedError());

  return {
    getAgentCard: () => Promise.reject(new errors.UnsupportedOperationError('the agent card is served at /.well-known/agent-card.json')),
    getAuthenticatedExtendedAgentCard: () => Promise.reject(new errors.ExtendedAgentCardNotConfiguredError()),

    sendMessage: (params, context) =>
      guard(async () => {
        const id = taskIdOf(context);
        if (!params.message) throw new errors.RequestMalformedError('params.message: required');
        const queue = followQueue(host, id, signalOf(context));
        try {
          let view = await deliver(id, context.state.get(newTaskKey) === true, params.message);
          if (params.configuration?.returnImmediately !== true) view = await settle(id, view, queue);
          return withHistoryLength(await taskNow(view), params.configuration?.historyLength);
        } finally {
          queue.stop();
        }
      }),

    async *sendMessageStream(params, context) {
      const id = taskIdOf(context);
      if (!params.message) throw new errors.RequestMalformedError('params.message: required');
      const message = params.message;
      // Followed before the message is delivered, so nothing its run does is missed.
      const queue = followQueue(host, id, signalOf(context));
      try {
        const view = await guard(() => deliver(id, context.state.get(newTaskKey) === true, message));
        yield { payload: { $case: 'task', value: await guard(() => taskNow(view)) } };
        if (settles(view.status)) return;
        yield* guardStream(streamRun(id, view, queue));
      } finally {
        queue.stop();
      }
    },

    async *resubscribe(_params, context) {
      const id = taskIdOf(context);
      const queue = followQueue(host, id, signalOf(context));
      try {
        const view = await guard(() => viewOf(id));
        yield { payload: { $case: 'task', value: await guard(() => taskNow(view)) } };
        // A task that needs input or has ended has nothing more to stream until a client sends something.
        if (settles(view.status)) return;
        yield* guardStream(streamRun(id, view, queue));
      } finally {
        queue.stop();
      }
    },

    getTask: (params, context) =>
      guard(async () => {
        return withHistoryLength(await taskNow(await viewOf(taskIdOf(context))), params.historyLength);
      }),

    cancelTask: (params, context) =>
      guard(async () => {
        const id = taskIdOf(context);
        const before = await viewOf(id);
        if (before.status !== 'running' && before.status !== 'awaitingApproval') {
          throw new errors.TaskNotCancelableError(`task ${id} is not running (${before.status})`);
        }
        const queue = followQueue(host, id, signalOf(context));
        try {
          const reason = params.metadata?.reason;
          const view = await host
            .send(id, { type: 'cancel', ...(typeof reason === 'string' ? { reason } : {}) })
            .catch((error: unknown) => {
              throw EventRejectedError.isInstance(error) ? new errors.TaskNotCancelableError(error.message) : error;
            });
          return await taskNow(await settle(id, view, queue));
        } finally {
          queue.stop();
        }
      }),

    listTasks: unsupported('ListTasks'),
    createTaskPushNotificationConfig: noPush,
    getTaskPushNotificationConfig: noPush,
    listTaskPushNotificationConfigs: noPush,
    deleteTaskPushNotificationConfig: noPush,
  };

  async function* guardStream(stream: AsyncGenerator<StreamResponse, void, undefined>): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      yield* stream;
    } catch (error) {
      throw asA2AError(error);
    }
  }
}

/** A reply of a conversation inside a workflow, as a progress message: `[path] text`, and the path as data. */
function workflowProgressMessage(taskId: string, path: string[], text: string): A2AMessage {
  return agentMessage(taskId, `${taskId}-progress-${randomUUID()}`, [
    textPart(`[${path.join('/')}] ${text}`),
    dataPart({ conversation: path }),
  ]);
}
