import * as restate from '@restatedev/restate-sdk';
import type { AnyStateMachine } from 'xstate';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { checkConversationId, checkEventAfterEndedRun, checkSessionData, checkUserEvent, nextRunInput } from '../../host/check-input.js';
import { hostedMachineOf } from '../../host/hosted-machine.js';
import { type ConversationView, statusOf, viewOf } from '../../host/conversation-view.js';
import type { DecodedSnapshot } from '../../host/decode-stored.js';
import { ConversationNotFoundError } from '../../host/errors/conversation-not-found-error.js';
import { EventRejectedError } from '../../host/errors/event-rejected-error.js';
import { journaledMachine } from '../../machines/restore/step-journal.js';
import type { ConversationMachine, ConversationUserEvent, RunOutput } from '../../machines/names/types.js';
import { isRecord } from '../../util/is-record.js';
import { option, resolveOptionsWith } from '../../util/option-schema.js';
import { requireNodeRuntime } from '../../util/runtime.js';
import { asHandler } from './conversation-error.js';
import { type ConversationRecord, decodeRecord, stateKeys } from './conversation-record.js';
import { processing } from './invocation.js';
import { ensurePromiseWithResolvers } from './promise-with-resolvers.js';
import { type RestateConversationEvent, runSegment, type SegmentOptions, type SegmentResult } from './run-segment.js';
import { restateWorkflowObject, type WorkflowObject } from './workflow-object.js';

/** Where the endpoint cannot run: said by the error and in docs/runtimes.md. */
export const restateElsewhere = 'serve the Restate endpoint from Node.js; callers on any runtime use actorloop/restate/client';

/**
 * What `restateConversations` takes: a conversation machine, or a workflow (any other machine of
 * yours, with conversations inside: `TMachine`).
 *
 * @example
 * ```ts
 * const options: RestateConversationsOptions = { machine, name: 'support-chat', onEvent: ({ conversationId, event }) => publish(conversationId, event) };
 * ```
 */
export type RestateConversationsOptions<TMachine extends AnyStateMachine = ConversationMachine> = {
  /**
   * One machine serves every conversation (per-conversation data goes in `sessionData`). A machine
   * that is not a conversation is a workflow: its object takes `start` (see `WorkflowHandlers`).
   */
  machine: TMachine;
  /** The virtual object's name in Restate (default `conversation`); the client must use the same. */
  name?: string;
  /**
   * Live output of the runs this worker drives: events as they happen, `text.delta` as the model
   * streams. Best effort — never replayed, and lost with a worker that dies; the conversation's
   * state (`get`, `result`) is the durable record. Errors it throws are logged, never fatal.
   */
  onEvent?: (event: RestateConversationEvent) => void;
  /** Restate options of the object: retry policy, timeouts, journal retention (see the Restate SDK's `ObjectOptions`). */
  options?: restate.ObjectOptions;
};

/**
 * What `send` takes: a caller's event, and for a `user.message` that starts a run, the
 * conversation's `sessionData` (plain JSON; `null` clears it).
 *
 * @example
 * ```ts
 * const input: SendInput = { event: { type: 'user.message', content: 'Hi' }, sessionData: { userId: 'u1' } };
 * ```
 */
export type SendInput = { event: ConversationUserEvent; sessionData?: unknown };

/**
 * The handlers of a conversation object. Callers use `send`, `get` and `result` (through
 * `restateConversationClient`, or any Restate client); `watch` and `advance` are the object's own.
 *
 * @example
 * ```ts
 * type Send = ConversationHandlers['send']; // (ctx, { event, sessionData? }) => Promise<ConversationView>
 * ```
 */
export type ConversationHandlers = {
  /** Applies the event and resolves with the conversation once the state it led to is stored; the run goes on in `advance`. */
  send: (ctx: restate.ObjectContext, input: SendInput) => Promise<ConversationView>;
  /** The conversation now, or `null` when none has this id. A shared handler: it answers while the run goes on. */
  get: (ctx: restate.ObjectSharedContext) => Promise<ConversationView | null>;
  /** The output of the run in progress once it ends, or of the last run. Shared: waiting holds no lock. */
  result: (ctx: restate.ObjectSharedContext) => Promise<RunOutput>;
  /** Registers a `result` call's awakeable, resolved when the run ends. */
  watch: (ctx: restate.ObjectContext, input: { awakeableId: string }) => Promise<void>;
  /** Runs the next segment of the run: until it ends, waits for approval, backs off, or is about to make its next request. */
  advance: (ctx: restate.ObjectContext, input: { segment: number }) => Promise<void>;
};

/**
 * The Restate virtual object `restateConversations` returns, to bind to an endpoint.
 *
 * @example
 * ```ts
 * const conversations: ConversationObject = restateConversations({ machine });
 * ```
 */
export type ConversationObject = restate.VirtualObjectDefinition<string, ConversationHandlers>;

const objectOptionsSchema = option.optional(
  option.matching('Restate ObjectOptions', (value): value is restate.ObjectOptions => isRecord(value)),
);

/** Unknown keys are ignored, not refused: restateConversations never refused them, so options that worked still do. */
const restateConversationsOptionsSchema = option.object(
  {
    machine: option.matching(
      'a conversation machine from createConversationMachine(...)',
      (value): value is ConversationMachine =>
        isRecord(value) && typeof value.restoreSnapshot === 'function' && typeof value.provide === 'function',
    ),
    name: option.orElse(
      option.matching(
        'a Restate service name: letters, digits, _ . - (not starting with a digit)',
        (value): value is string => typeof value === 'string' && /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(value),
      ),
      () => 'conversation',
    ),
    onEvent: option.optional(option.callable<(event: RestateConversationEvent) => void>('a function (event) => void')),
    // Reported as `options.options`, as always: a bare `options` would name the whole options object. The SDK checks its fields.
    options: { expected: objectOptionsSchema.expected, resolve: (value) => objectOptionsSchema.resolve(value, 'options.options') },
  },
  { expected: 'an object { machine, name?, onEvent?, options? }', unknownKeys: 'ignore' },
);

/**
 * Turns a conversation machine into a Restate virtual object keyed by conversation id: one writer
 * per conversation, its run's snapshot in the object's state after every step, each provider
 * request and tool execution a journaled step — so a worker that dies mid-run is replaced by any
 * other, which goes on without repeating a recorded request or a started non-idempotent tool call.
 * Bind it to an endpoint served by as many worker processes as you like. See
 * docs/scale-out-restate.md.
 *
 * Given a workflow (any other machine, with conversations inside), it returns a `WorkflowObject`:
 * `start` begins a run from input, `send` takes the chart's own events and relays `tool.approve` /
 * `tool.deny` to the conversation that waits, `cancel` halts the tree, `get` gives the workflow's
 * view and `result` its output — the durable host's rules, with every conversation's steps
 * journaled.
 *
 * @example
 * ```ts
 * import http2 from 'node:http2';
 * import * as restate from '@restatedev/restate-sdk';
 * import { restateConversations } from 'actorloop/restate';
 *
 * const conversations = restateConversations({ machine });
 * const orders = restateConversations({ machine: orderWorkflow, name: 'order' }); // a workflow
 * const server = http2.createServer(restate.createEndpointHandler({ services: [conversations, orders] }));
 * server.listen(9080, '127.0.0.1'); // then register http://127.0.0.1:9080 with restate-server
 * ```
 */
export function restateConversations(options: RestateConversationsOptions): ConversationObject;
export function restateConversations<TMachine extends AnyStateMachine>(options: RestateConversationsOptions<TMachine>): WorkflowObject;
export function restateConversations(options: RestateConversationsOptions<AnyStateMachine>): ConversationObject | WorkflowObject {
  requireNodeRuntime('actorloop/restate', restateElsewhere);
  ensurePromiseWithResolvers();
  const resolved = resolveOptionsWith(restateConversationsOptionsSchema, options);
  const { name, onEvent, options: objectOptions } = resolved;
  if (hostedMachineOf(resolved.machine).workflow) {
    return restateWorkflowObject({ machine: resolved.machine, name, onEvent, options: objectOptions });
  }
  const machine = resolved.machine;
  const journaled = journaledMachine(machine);

  const segment = (ctx: restate.ObjectContext, rest: Pick<SegmentOptions, 'from' | 'mode' | 'event' | 'updatedAt'>) =>
    runSegment({ ctx, conversationId: ctx.key, machine: journaled, onEvent, isProcessing: processing(ctx), ...rest });

  const sendAdvance = (ctx: restate.ObjectContext, next: number, delayMs?: number) =>
    ctx.genericSend({
      service: name,
      method: 'advance',
      key: ctx.key,
      parameter: { segment: next },
      inputSerde: restate.serde.json,
      ...(delayMs === undefined || delayMs <= 0 ? {} : { delay: delayMs }),
    });

  /** The object's state, read before anything runs: a segment may still wait for a stopped step when it ends. */
  const readState = async (ctx: restate.ObjectContext) => ({
    stored: (await ctx.get<ConversationRecord>(stateKeys.conversation)) ?? undefined,
    segment: (await ctx.get<number>(stateKeys.segment)) ?? 0,
    waiters: (await ctx.get<string[]>(stateKeys.waiters)) ?? [],
  });

  /** What follows a segment: the waiters get the output of a run that ended; a run that goes on gets its next `advance`. */
  const afterSegment = async (
    ctx: restate.ObjectContext,
    result: Extract<SegmentResult, { kind: 'ended' }>,
    state: { segment: number; waiters: string[] },
  ) => {
    const { end, snapshot } = result;
    if (end.kind === 'final') {
      if (state.waiters.length === 0 || !snapshot.output) return;
      for (const awakeableId of state.waiters) ctx.resolveAwakeable(awakeableId, snapshot.output);
      ctx.clear(stateKeys.waiters);
      return;
    }
    if (end.kind === 'approval') return;
    ctx.set(stateKeys.segment, state.segment + 1);
    // The backoff is jittered: journaled, so a replay of this invocation schedules the same `advance`.
    const delayMs = end.kind === 'retry' ? await ctx.run('backoff', () => end.delayMs) : undefined;
    sendAdvance(ctx, state.segment + 1, delayMs);
  };

  const send = async (ctx: restate.ObjectContext, input: SendInput): Promise<ConversationView> => {
    const id = ctx.key;
    checkConversationId(id);
    if (!isRecord(input)) throw new InvalidOptionsError('input', 'an object { event, sessionData? }', input);
    checkUserEvent(input.event);
    checkSessionData(input.sessionData);
    const { event, sessionData } = input;
    const state = await readState(ctx);
    const now = await ctx.date.now();
    const from = startingPoint(id, state.stored, event, sessionData);
    const result = await segment(ctx, { from, mode: 'apply', event, updatedAt: now });
    if (result.kind === 'rejected') {
      throw new EventRejectedError({ conversationId: id, eventType: event.type, code: 'rejected', message: result.message });
    }
    await afterSegment(ctx, result, state);
    return viewOf(id, result.snapshot, result.record?.updatedAt ?? now);
  };

  /** The run an event goes to: the stored one, the next run of a conversation whose last run ended, or a new one. */
  const startingPoint = (
    id: string,
    stored: ConversationRecord | undefined,
    event: ConversationUserEvent,
    sessionData: unknown,
  ): SegmentOptions['from'] => {
    if (stored === undefined) {
      if (event.type !== 'user.message')
        throw new ConversationNotFoundError(id, `${event.type} needs a conversation; a user.message starts one`);
      return { input: nextRunInput(id, undefined, sessionData) };
    }
    const decoded: DecodedSnapshot = decodeRecord(id, stored, machine);
    if (decoded.status === 'done') {
      checkEventAfterEndedRun(id, event, decoded);
      return { input: nextRunInput(id, decoded, sessionData) };
    }
    if (sessionData !== undefined) {
      throw new EventRejectedError({
        conversationId: id,
        eventType: event.type,
        code: 'rejected',
        message: `sessionData is set by the user.message that starts a run; a run is in progress (${statusOf(decoded)})`,
      });
    }
    return { snapshot: decoded };
  };

  const advance = async (ctx: restate.ObjectContext, input: { segment: number }) => {
    const state = await readState(ctx);
    const { stored } = state;
    // An `advance` of an earlier segment (a backoff's, after the run was cancelled and another started) does nothing.
    if (!isRecord(input) || input.segment !== state.segment || stored === undefined) return;
    const decoded = decodeRecord(ctx.key, stored, machine);
    if (statusOf(decoded) !== 'running') return;
    const result = await segment(ctx, { from: { snapshot: decoded }, mode: 'advance', updatedAt: stored.updatedAt });
    if (result.kind === 'ended') await afterSegment(ctx, result, state);
  };

  const get = async (ctx: restate.ObjectSharedContext): Promise<ConversationView | null> => {
    const stored = await ctx.get<ConversationRecord>(stateKeys.conversation);
    if (stored === null || stored === undefined) return null;
    return viewOf(ctx.key, decodeRecord(ctx.key, stored, machine), stored.updatedAt);
  };

  const result = async (ctx: restate.ObjectSharedContext): Promise<RunOutput> => {
    const stored = await ctx.get<ConversationRecord>(stateKeys.conversation);
    if (stored === null || stored === undefined) throw new ConversationNotFoundError(ctx.key, 'no run to wait for');
    const decoded = decodeRecord(ctx.key, stored, machine);
    if (decoded.status === 'done' && decoded.output) return decoded.output;
    // A shared handler cannot write state: the exclusive `watch` keeps the awakeable until the run ends.
    const awakeable = ctx.awakeable<RunOutput>();
    ctx.genericSend({
      service: name,
      method: 'watch',
      key: ctx.key,
      parameter: { awakeableId: awakeable.id },
      inputSerde: restate.serde.json,
    });
    return await awakeable.promise;
  };

  const watch = async (ctx: restate.ObjectContext, input: { awakeableId: string }) => {
    const stored = await ctx.get<ConversationRecord>(stateKeys.conversation);
    let decoded: DecodedSnapshot;
    try {
      if (stored === null || stored === undefined) throw new ConversationNotFoundError(ctx.key, 'no run to wait for');
      decoded = decodeRecord(ctx.key, stored, machine);
    } catch (error) {
      ctx.rejectAwakeable(input.awakeableId, error instanceof Error ? error.message : String(error));
      return;
    }
    // The run may have ended between the `result` call and this one.
    if (decoded.status === 'done' && decoded.output) return ctx.resolveAwakeable(input.awakeableId, decoded.output);
    const waiters = (await ctx.get<string[]>(stateKeys.waiters)) ?? [];
    ctx.set(stateKeys.waiters, [...waiters, input.awakeableId]);
  };

  return restate.object({
    name,
    ...(objectOptions === undefined ? {} : { options: objectOptions }),
    handlers: {
      send: restate.handlers.object.exclusive((ctx: restate.ObjectContext, input: SendInput) => asHandler(() => send(ctx, input))),
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
  }) as ConversationObject;
}
