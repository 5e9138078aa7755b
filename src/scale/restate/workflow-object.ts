import * as restate from '@restatedev/restate-sdk';
import type { AnyStateMachine } from 'xstate';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { checkConversationId, checkWorkflowEvent, startInput } from '../../host/check-input.js';
import type { ConversationView } from '../../host/conversation-view.js';
import { ConversationNotFoundError } from '../../host/errors/conversation-not-found-error.js';
import { EventRejectedError } from '../../host/errors/event-rejected-error.js';
import { type HostedMachine, type HostedSnapshot, hostedMachineOf } from '../../host/hosted-machine.js';
import { isRecord } from '../../util/is-record.js';
import { asHandler } from './conversation-error.js';
import { type ConversationRecord, decodeHostedRecord, stateKeys } from './conversation-record.js';
import { processing } from './invocation.js';
import { journaledWorkflow } from './journaled-workflow.js';
import type { RestateConversationEvent } from './run-segment.js';
import { runWorkflowSegment, type WorkflowSegmentOptions, type WorkflowSegmentResult, type WorkflowTimer } from './workflow-segment.js';

/**
 * What a workflow object's `start` takes: the workflow machine's own `input` (plain JSON) and
 * `sessionData`, given to the run as `input.sessionData` — as `host.start(id, options)` takes them.
 *
 * @example
 * ```ts
 * const input: WorkflowStartInput = { input: { item: 'lamp' }, sessionData: { userId: 'u1' } };
 * ```
 */
export type WorkflowStartInput = { input?: unknown; sessionData?: unknown };

/**
 * What a workflow object's `send` takes: an event of the workflow's chart, or a user event
 * (`tool.approve` / `tool.deny` for a conversation in it, `cancel`).
 *
 * @example
 * ```ts
 * const input: WorkflowSendInput = { event: { type: 'tool.approve', toolCallId: 'charge-1' } };
 * ```
 */
export type WorkflowSendInput = { event: { type: string; [field: string]: unknown } };

/**
 * The handlers of a workflow's object (`restateConversations({ machine })` with a machine that is
 * not a conversation). Callers use `start`, `send`, `get` and `result` (through
 * `restateConversationClient`, or any Restate client); `watch` and `advance` are the object's own.
 *
 * @example
 * ```ts
 * type Start = WorkflowHandlers['start']; // (ctx, { input?, sessionData? }) => Promise<ConversationView>
 * ```
 */
export type WorkflowHandlers = {
  /** Starts a run of the workflow from its input (a new id, or one whose last run ended) and resolves once its first state is stored. */
  start: (ctx: restate.ObjectContext, input: WorkflowStartInput) => Promise<ConversationView>;
  /** Applies the event and resolves with the workflow once the state it led to is stored; the run goes on in `advance`. */
  send: (ctx: restate.ObjectContext, input: WorkflowSendInput) => Promise<ConversationView>;
  /** The workflow now (its `conversations`, their `pendingApprovals` with `path`), or `null` when none has this id. Shared. */
  get: (ctx: restate.ObjectSharedContext) => Promise<ConversationView | null>;
  /** The workflow's output once it reaches a final state (or how `cancel` ended it). Shared: waiting holds no lock. */
  result: (ctx: restate.ObjectSharedContext) => Promise<unknown>;
  /** Registers a `result` call's awakeable, resolved when the run ends. */
  watch: (ctx: restate.ObjectContext, input: { awakeableId: string }) => Promise<void>;
  /** Runs the next segment: until nothing is left to run in it (each conversation makes at most one request). */
  advance: (ctx: restate.ObjectContext, input: { segment: number }) => Promise<void>;
};

/**
 * The Restate virtual object `restateConversations` returns for a workflow, to bind to an endpoint.
 *
 * @example
 * ```ts
 * const orders: WorkflowObject = restateConversations({ machine: orderWorkflow, name: 'order' });
 * ```
 */
export type WorkflowObject = restate.VirtualObjectDefinition<string, WorkflowHandlers>;

export type WorkflowObjectOptions = {
  machine: AnyStateMachine;
  name: string;
  onEvent: ((event: RestateConversationEvent) => void) | undefined;
  options: restate.ObjectOptions | undefined;
};

/** Why a workflow's machine failed (an action or a guard of it threw): terminal, so `result` rejects with it and is not retried. */
function workflowFailure(id: string, snapshot: HostedSnapshot): restate.TerminalError {
  const error = (snapshot as { error?: unknown }).error;
  const said = isRecord(error) && typeof error.message === 'string' ? error.message : 'its machine failed';
  return new restate.TerminalError(`workflow ${JSON.stringify(id)} ended in error: ${said}`, {
    errorCode: 500,
    metadata: { error: 'WorkflowError', conversationId: id },
  });
}

/**
 * The object for a workflow: the conversation object's rules (one writer per id, the snapshot in
 * the object's state after each change, segments chained by `advance`, approvals that end the
 * invocation) with the durable host's workflow semantics — `start` from input, the chart's own
 * events, approvals relayed to the conversation that waits, `cancel` that halts the tree.
 */
export function restateWorkflowObject({ machine, name, onEvent, options: objectOptions }: WorkflowObjectOptions): WorkflowObject {
  const hosted: HostedMachine = hostedMachineOf(machine);
  const workflow = journaledWorkflow(machine);

  const segment = (
    ctx: restate.ObjectContext,
    rest: Pick<WorkflowSegmentOptions, 'from' | 'mode' | 'event' | 'updatedAt' | 'now' | 'timers'>,
  ) => runWorkflowSegment({ ctx, id: ctx.key, workflow, hosted, onEvent, isProcessing: processing(ctx), ...rest });

  const sendAdvance = (ctx: restate.ObjectContext, next: number, delayMs?: number) =>
    ctx.genericSend({
      service: name,
      method: 'advance',
      key: ctx.key,
      parameter: { segment: next },
      inputSerde: restate.serde.json,
      ...(delayMs === undefined || delayMs <= 0 ? {} : { delay: delayMs }),
    });

  const readState = async (ctx: restate.ObjectContext) => ({
    stored: (await ctx.get<ConversationRecord>(stateKeys.conversation)) ?? undefined,
    segment: (await ctx.get<number>(stateKeys.segment)) ?? 0,
    waiters: (await ctx.get<string[]>(stateKeys.waiters)) ?? [],
    timers: (await ctx.get<WorkflowTimer[]>(stateKeys.timers)) ?? [],
  });

  const decode = (ctx: { key: string }, stored: ConversationRecord) => decodeHostedRecord(ctx.key, stored, hosted);

  /** What follows a segment: the waiters get the output of a workflow that ended; one that goes on gets its next `advance`. */
  const afterSegment = async (
    ctx: restate.ObjectContext,
    result: Extract<WorkflowSegmentResult, { kind: 'ended' }>,
    state: { segment: number; waiters: string[] },
  ) => {
    const { end, snapshot, timers } = result;
    if (timers.length > 0) ctx.set(stateKeys.timers, timers);
    else ctx.clear(stateKeys.timers);
    if (end.kind === 'final') {
      if (state.waiters.length === 0) return;
      for (const awakeableId of state.waiters) {
        if (snapshot.status === 'error') ctx.rejectAwakeable(awakeableId, workflowFailure(ctx.key, snapshot).message);
        else ctx.resolveAwakeable(awakeableId, snapshot.output ?? null);
      }
      ctx.clear(stateKeys.waiters);
      return;
    }
    if (end.kind === 'wait') return;
    ctx.set(stateKeys.segment, state.segment + 1);
    // The delay depends on the clock or on chance (a jittered backoff): journaled, so a replay schedules the same `advance`.
    const delayMs = end.kind === 'retry' ? await ctx.run('backoff', () => end.delayMs) : undefined;
    sendAdvance(ctx, state.segment + 1, delayMs);
  };

  const start = async (ctx: restate.ObjectContext, input: WorkflowStartInput): Promise<ConversationView> => {
    const id = ctx.key;
    checkConversationId(id);
    const runInput = startInput(id, input, true);
    const state = await readState(ctx);
    if (state.stored !== undefined) {
      const decoded = decode(ctx, state.stored);
      if (decoded.status === 'active') {
        throw new EventRejectedError({
          conversationId: id,
          eventType: 'start',
          code: 'rejected',
          message: `a run is in progress (${hosted.statusOf(decoded)}); send(${JSON.stringify(id)}, { type: 'cancel' }) ends it`,
        });
      }
    }
    const now = await ctx.date.now();
    // A new run has no timer of the last one's.
    const result = await segment(ctx, { from: { input: runInput }, mode: 'apply', updatedAt: now, now, timers: [] });
    // Nothing is sent to a run that only starts: it cannot be rejected.
    if (result.kind === 'rejected') throw new restate.TerminalError(`workflow ${JSON.stringify(id)} could not start: ${result.message}`);
    await afterSegment(ctx, result, state);
    return hosted.viewOf(id, result.snapshot, result.record?.updatedAt ?? now);
  };

  const send = async (ctx: restate.ObjectContext, input: WorkflowSendInput): Promise<ConversationView> => {
    const id = ctx.key;
    checkConversationId(id);
    if (!isRecord(input)) throw new InvalidOptionsError('input', 'an object { event }', input);
    checkWorkflowEvent(input.event);
    if ((input as { sessionData?: unknown }).sessionData !== undefined) {
      throw new InvalidOptionsError(
        'options.sessionData',
        'no sessionData: a workflow gets it from start(id, { sessionData })',
        (input as { sessionData?: unknown }).sessionData,
      );
    }
    const { event } = input;
    const state = await readState(ctx);
    if (state.stored === undefined) {
      throw new ConversationNotFoundError(id, `${event.type} needs a run; start(${JSON.stringify(id)}, { input }) starts a workflow`);
    }
    const decoded = decode(ctx, state.stored);
    if (decoded.status !== 'active') {
      throw new EventRejectedError({
        conversationId: id,
        eventType: event.type,
        code: 'rejected',
        message: `the workflow's run ended (${hosted.statusOf(decoded)}); start(${JSON.stringify(id)}, { input }) starts another`,
      });
    }
    const now = await ctx.date.now();
    const result = await segment(ctx, { from: { snapshot: decoded }, mode: 'apply', event, updatedAt: now, now, timers: state.timers });
    if (result.kind === 'rejected') {
      throw new EventRejectedError({ conversationId: id, eventType: event.type, code: 'rejected', message: result.message });
    }
    await afterSegment(ctx, result, state);
    return hosted.viewOf(id, result.snapshot, result.record?.updatedAt ?? now);
  };

  const advance = async (ctx: restate.ObjectContext, input: { segment: number }) => {
    const state = await readState(ctx);
    const { stored } = state;
    // An `advance` of an earlier segment (a backoff's, after the run was cancelled and another started) does nothing.
    if (!isRecord(input) || input.segment !== state.segment || stored === undefined) return;
    const decoded = decode(ctx, stored);
    // A workflow with a conversation waiting for approval may have others running beside it.
    if (decoded.status !== 'active') return;
    const now = await ctx.date.now();
    const result = await segment(ctx, {
      from: { snapshot: decoded },
      mode: 'advance',
      updatedAt: stored.updatedAt,
      now,
      timers: state.timers,
    });
    if (result.kind === 'ended') await afterSegment(ctx, result, state);
  };

  const get = async (ctx: restate.ObjectSharedContext): Promise<ConversationView | null> => {
    const stored = await ctx.get<ConversationRecord>(stateKeys.conversation);
    if (stored === null || stored === undefined) return null;
    return hosted.viewOf(ctx.key, decode(ctx, stored), stored.updatedAt);
  };

  const result = async (ctx: restate.ObjectSharedContext): Promise<unknown> => {
    const stored = await ctx.get<ConversationRecord>(stateKeys.conversation);
    if (stored === null || stored === undefined) throw new ConversationNotFoundError(ctx.key, 'no run to wait for');
    const decoded = decode(ctx, stored);
    if (decoded.status === 'error') throw workflowFailure(ctx.key, decoded);
    if (decoded.status === 'done') return decoded.output ?? null;
    // A shared handler cannot write state: the exclusive `watch` keeps the awakeable until the run ends.
    const awakeable = ctx.awakeable<unknown>();
    ctx.genericSend({
      service: name,
      method: 'watch',
      key: ctx.key,
      parameter: { awakeableId: awakeable.id },
      inputSerde: restate.serde.json,
    });
    try {
      return await awakeable.promise;
    } catch (error) {
      // The run ended in error: rejected with its message, told to the caller as the failure it is.
      if (error instanceof restate.TerminalError) {
        throw new restate.TerminalError(error.message, { errorCode: 500, metadata: { error: 'WorkflowError', conversationId: ctx.key } });
      }
      throw error;
    }
  };

  const watch = async (ctx: restate.ObjectContext, input: { awakeableId: string }) => {
    const stored = await ctx.get<ConversationRecord>(stateKeys.conversation);
    let decoded: HostedSnapshot;
    try {
      if (stored === null || stored === undefined) throw new ConversationNotFoundError(ctx.key, 'no run to wait for');
      decoded = decode(ctx, stored);
    } catch (error) {
      ctx.rejectAwakeable(input.awakeableId, error instanceof Error ? error.message : String(error));
      return;
    }
    // The run may have ended between the `result` call and this one.
    if (decoded.status === 'error') return ctx.rejectAwakeable(input.awakeableId, workflowFailure(ctx.key, decoded).message);
    if (decoded.status === 'done') return ctx.resolveAwakeable(input.awakeableId, decoded.output ?? null);
    const waiters = (await ctx.get<string[]>(stateKeys.waiters)) ?? [];
    ctx.set(stateKeys.waiters, [...waiters, input.awakeableId]);
  };

  return restate.object({
    name,
    ...(objectOptions === undefined ? {} : { options: objectOptions }),
    handlers: {
      start: restate.handlers.object.exclusive((ctx: restate.ObjectContext, input: WorkflowStartInput) =>
        asHandler(() => start(ctx, input)),
      ),
      send: restate.handlers.object.exclusive((ctx: restate.ObjectContext, input: WorkflowSendInput) => asHandler(() => send(ctx, input))),
      get: restate.handlers.object.shared((ctx: restate.ObjectSharedContext) => asHandler(() => get(ctx))),
      result: restate.handlers.object.shared((ctx: restate.ObjectSharedContext) => asHandler(() => result(ctx))),
      watch: restate.handlers.object.exclusive({ ingressPrivate: true }, (ctx: restate.ObjectContext, input: { awakeableId: string }) =>
        asHandler(() => watch(ctx, input)),
      ),
      // Bad stored data fails the invocation for good (it says why) instead of retrying it forever.
      advance: restate.handlers.object.exclusive({ ingressPrivate: true }, (ctx: restate.ObjectContext, input: { segment: number }) =>
        asHandler(() => advance(ctx, input)),
      ),
    },
  }) as WorkflowObject;
}
