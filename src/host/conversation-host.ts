import type { AnyStateMachine, EventFromLogic, InputFrom, InspectionEvent, Observer, OutputFrom } from 'xstate';
import { storedUserContent } from '../model/user-content.js';
import { hostedMachineOf, type HostedSnapshot } from './hosted-machine.js';
import type { WorkflowHaltedOutput } from './workflow-state.js';
import { mediaAwareStore } from './media-aware-store.js';
import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import type { ConversationMachine, ConversationUserEvent, RunOutput } from '../machines/hostable.js';
import { isRecord } from '../util/is-record.js';
import { option, type OptionSchema, type ResolvedOption, resolveOptionsWith } from '../util/option-schema.js';
import {
  checkConversationId as checkId,
  checkEventAfterEndedRun,
  checkSessionData,
  checkUserEvent as checkEvent,
  checkWorkflowEvent,
  nextRunInput,
  startInput,
} from './check-input.js';
import type {
  ConversationLogEvent,
  ConversationStore,
  StoredConversation,
  ConversationSummary,
  ListOptions,
} from './conversation-store.js';
import type { GetOptions } from './conversation-history.js';
import { type ConversationRelay, type FollowOptions, parseStreamId, type StreamObserver } from './conversation-stream.js';
import {
  type ConversationStep,
  type ForkOptions,
  forkedSnapshot,
  forkRecord,
  type HistoryOptions,
  loadStep,
  readHistory,
  resolveForkOptions,
  resolveGetOptions,
} from './conversation-history.js';
import { type ConversationView, statusOf } from './conversation-view.js';
import { type DecodedSnapshot, decodeStored } from './decode-stored.js';
import { ConversationConflictError } from './errors/conversation-conflict-error.js';
import { ConversationExistsError } from './errors/conversation-exists-error.js';
import { ConversationNotFoundError } from './errors/conversation-not-found-error.js';
import { EventRejectedError } from './errors/event-rejected-error.js';
import { HostClosedError } from './errors/host-closed-error.js';
import { defaultHostId } from './host-id.js';
import { HostLeases } from './host-leases.js';
import { type ConversationHostEvent, LiveRun, type LiveRunOptions } from './live-run.js';
import { StreamHub } from './stream-hub.js';

/**
 * What {@link createConversationHost} takes.
 *
 * @example
 * ```ts
 * const options: ConversationHostOptions = { machine, store: sqliteStore({ path: 'conversations.db' }), hostId: 'web-1' };
 * ```
 */
export type ConversationHostOptions<TMachine extends AnyStateMachine = ConversationMachine> = {
  /**
   * One machine serves every conversation (per-conversation data goes in `sessionData`): a
   * conversation machine, or a workflow — any machine of yours, with conversations inside
   * (DESIGN §18), whose runs begin with `host.start(id, { input })`.
   */
  machine: TMachine;
  /** Owned by the host from now on: `close()` closes it. */
  store: ConversationStore;
  /** How this host signs what it writes (`StoredConversation.owner`). Default: `<hostname>:<pid>:<random>`. */
  hostId?: string;
  /**
   * Errors no caller is waiting for: a subscriber that threw, a write that failed while a run went
   * on by itself. Default: `console.error`.
   */
  onError?: (error: unknown, conversationId: string) => void;
  /**
   * Trades live stream events with the other hosts on the same store, so `follow` works on any of
   * them (e.g. `postgresRelay` from `actorloop/postgres`). Owned by the host: `close()` closes it.
   */
  relay?: ConversationRelay;
  /**
   * On a store that hands out leases (`postgresStore`): how long a lease lasts unless renewed. The
   * host renews its leases every third of it; after a crash, another host takes the crashed one's
   * runs over once it has passed. Default 30000 ms.
   */
  leaseTtlMs?: number;
  /**
   * XState's inspection of every run this host drives (`createActor(machine, { inspect })`): an
   * observer or a function, e.g. `createStatelyInspector().inspect` to watch hosted runs in the
   * Stately inspector. A throw in it is reported to `onError`, never to the run.
   */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
};

/**
 * Options of `host.send`.
 *
 * @example
 * ```ts
 * await host.send('c-42', { type: 'user.message', content: 'Hi' }, { sessionData: { userId: 'u1', plan: 'pro' } });
 * ```
 */
export type SendOptions = {
  /**
   * The conversation's `sessionData` (plain JSON) from the run this `user.message` starts on: it
   * replaces what the conversation had and is kept for the runs after, until a `user.message`
   * sets it again (`null` clears it). Only a `user.message` that starts a run can set it.
   */
  sessionData?: unknown;
};

/**
 * What `host.recover()` did: the runs it resumes, the ones it left (another host holds them, or
 * they are no longer in flight), and the ones it cannot load (with the `ConversationLoadError`).
 *
 * @example
 * ```ts
 * const { resumed, failed } = await host.recover();
 * for (const { id, error } of failed) console.error(`not resumed: ${id}`, error);
 * ```
 */
export type RecoverReport = { resumed: string[]; skipped: string[]; failed: Array<{ id: string; error: unknown }> };

/**
 * Options of `host.start`: the run's `input` (the machine's own; plain JSON, as it is stored) and
 * `sessionData`, given to the run as `input.sessionData`.
 *
 * @example
 * ```ts
 * await host.start('review-7', { input: { topic: 'Lumen' }, sessionData: { userId: 'u1' } });
 * ```
 */
export type StartOptions<TInput = unknown> = { input?: TInput; sessionData?: unknown };

/**
 * A host of any machine, conversation or workflow: what code that serves every host takes (the
 * HTTP handler, the viewer).
 *
 * @example
 * ```ts
 * function serve(host: AnyConversationHost) { return createConversationHandler(host, { authorize }); }
 * ```
 */
export type AnyConversationHost = ConversationHost<AnyStateMachine>;

/** The events a host takes for its machine's runs: a conversation's user events, and a workflow's own events too. */
export type HostEventOf<TMachine extends AnyStateMachine> = TMachine extends ConversationMachine
  ? ConversationUserEvent
  : ConversationUserEvent | EventFromLogic<TMachine>;

/** What `host.result(id)` gives: a conversation's `RunOutput`, a workflow's own output (or how `cancel` ended it). */
export type HostOutputOf<TMachine extends AnyStateMachine> = TMachine extends ConversationMachine
  ? RunOutput
  : OutputFrom<TMachine> | WorkflowHaltedOutput;

/**
 * Keeps many conversations by id, each a run of one machine persisted in a store: it survives a
 * restart, a crash, or an approval that waits for days.
 *
 * @example
 * ```ts
 * const host: ConversationHost = createConversationHost({ machine, store: memoryStore() });
 * await host.send('c-42', { type: 'user.message', content: 'Hi' });
 * const { text } = await host.result('c-42');
 * ```
 */
export interface ConversationHost<TMachine extends AnyStateMachine = ConversationMachine> {
  /** How this host signs what it writes. */
  readonly hostId: string;
  /** The machine every conversation of this host runs (what a viewer draws). */
  readonly machine: TMachine;
  /**
   * Starts a run of the host's machine under `id` from `input` and resolves, with the run as it
   * then is, once its first state is stored: how a workflow begins (a conversation may begin so
   * too, with `conversationInput(...)`). A workflow runs until its machine reaches a final state;
   * its view's `status` is `running` (`awaitingApproval` while a conversation in it waits for one),
   * then `done` — or `halted` / `error` when its output's `status` says so, `error` when the machine
   * itself failed. A workflow's id whose last run ended starts again; a conversation's must be new
   * (`send` continues one). Rejects with `InvalidOptionsError` (bad id or options),
   * `EventRejectedError` (a run is in progress: `busy` in another host), `ConversationExistsError`.
   *
   * @example
   * ```ts
   * const host = createConversationHost({ machine: reviewWorkflow(provider), store });
   * await host.start('review-7', { input: { topic: 'Lumen' } });
   * await host.send('review-7', { type: 'review.approve' });
   * const output = await host.result('review-7');
   * ```
   */
  start(id: string, options?: StartOptions<InputFrom<TMachine>>): Promise<ConversationView>;
  /**
   * Applies a caller's event to the conversation and resolves, with the conversation as it then
   * is, once the state the event led to is stored. A `user.message` starts a new conversation, or
   * the next run of one whose last run ended (from the stored history); during a run it is rejected
   * like in the machine. Events to one conversation are applied one at a time, in call order.
   * Rejects with `EventRejectedError` (not taken: nothing stored), `ConversationNotFoundError`,
   * `ConversationLoadError` (bad stored data) or `ConversationConflictError` (another host wrote it).
   */
  send(id: string, event: HostEventOf<TMachine>, options?: SendOptions): Promise<ConversationView>;
  /**
   * The conversation now, or `undefined` when none is stored with this id. With `seq`, the
   * conversation as stored step `seq` of its history left it (time travel: its state, messages,
   * approvals and usage then); `ConversationStepNotFoundError` when the store keeps no such step,
   * `ConversationLoadError` when the step's stored data is damaged or of another machine.
   *
   * @example
   * ```ts
   * const [first] = await host.history('c-42');
   * const then = await host.get('c-42', { seq: first.seq });
   * ```
   */
  get(id: string, options?: GetOptions): Promise<ConversationView | undefined>;
  /**
   * The conversation's stored steps, oldest first: one per write (each state a run entered, each
   * tool call started or settled…), as many as the store keeps (`keepSteps`; a store without
   * steps keeps the current one only). `ConversationNotFoundError` for an unknown id.
   *
   * @example
   * ```ts
   * for (const { seq, at, state, status } of await host.history('c-42')) console.log(seq, new Date(at), status, state);
   * ```
   */
  history(id: string, options?: HistoryOptions): Promise<ConversationStep[]>;
  /**
   * A new conversation `newId` from step `seq` of conversation `id`: its snapshot (upgraded to the
   * current schema version), optionally with `messages` in place of its history. Nothing that had
   * finished by that step runs again; a step in the middle of a run resumes there (like `recover`),
   * in this host. The original is untouched. Errors, each with nothing written:
   * `ConversationNotFoundError` (unknown id), `ConversationStepNotFoundError` (unknown seq),
   * `ConversationExistsError` (`newId` in use), `ConversationLoadError` (a damaged step, or one of
   * another machine), `InvalidOptionsError` (bad options or messages).
   *
   * @example
   * ```ts
   * // What if the lookup had found the order?
   * const steps = await host.history('c-42');
   * const beforeAnswer = steps.findLast((step) => typeof step.state === 'object' && 'requesting' in step.state)!;
   * const then = await host.get('c-42', { seq: beforeAnswer.seq });
   * const messages = then!.messages.map((m) =>
   *   m.role === 'tool' ? { ...m, content: m.content.map((part) => ({ ...part, result: { status: 'shipped' } })) } : m,
   * );
   * await host.fork('c-42', { seq: beforeAnswer.seq, newId: 'c-42-shipped', messages });
   * ```
   */
  fork(id: string, options: ForkOptions): Promise<ConversationView>;
  /**
   * The output of the run in progress, once it ends, or of the last run when none is in progress.
   * Waits only for runs this host drives: a run in another host ends there.
   */
  result(id: string): Promise<HostOutputOf<TMachine>>;
  /**
   * Calls `listener` with every event the conversation's runs emit in this host, a `state` event on
   * each state change and `write.failed`. Returns the function that stops it; the run goes on.
   */
  subscribe(id: string, listener: (event: ConversationHostEvent) => void): () => void;
  /**
   * Calls `listener` with what `subscribe` delivers, for every conversation this host runs — those
   * started later included — with the conversation's id. Returns the function that stops it.
   */
  subscribeAll(listener: (event: ConversationHostEvent, conversationId: string) => void): () => void;
  /**
   * Follows a conversation's stream: every event its runs emit and every state change, each with an
   * id that is the same in every process (see `ConversationStreamItem`). With `after` (the last id a
   * reader saw, e.g. SSE's `Last-Event-ID`) it first replays what the reader missed — from this
   * host's memory and from the store, so also after a restart or from another host — then goes on
   * live; with `from: 'run'` it starts at the first event of the run in progress (or the last run).
   * Works before the conversation exists. Returns the function that stops it; the run goes on.
   * Throws `InvalidOptionsError` for an `after` that is not a stream id.
   *
   * @example
   * ```ts
   * const stop = host.follow('c-42', {
   *   next: ({ id, event }) => response.write(`id: ${id}\ndata: ${JSON.stringify(event)}\n\n`),
   *   error: () => response.end(),
   * }, { after: lastEventId });
   * ```
   */
  follow(id: string, observer: StreamObserver, options?: FollowOptions): () => void;
  /** The stored conversations, by id (the store's `list`: filter by `status`, page with `after` and `limit`). */
  list(options?: ListOptions): Promise<ConversationSummary[]>;
  /**
   * After a restart: resumes every run the store holds as in flight (`running`) that this host does
   * not already hold (see the resume semantics in docs/durable-conversations.md). Runs waiting for
   * approval need no recovery: any host takes the approval.
   */
  recover(): Promise<RecoverReport>;
  /**
   * Stops taking events, waits for the writes in progress, stops the runs in memory without
   * writing (they stay stored as they were; the next `recover()` resumes them) and closes the store.
   */
  close(): Promise<void>;
}

const storeExpected = 'a ConversationStore (e.g. memoryStore() or sqliteStore({ path }))';
const storeMethod = option.callable(storeExpected);
/** A store that is not an object at all is reported at its first method, `store.load`, as it always was. */
const storeShape = option.object(
  { load: storeMethod, save: storeMethod, readLog: storeMethod, list: storeMethod, delete: storeMethod, close: storeMethod },
  { expected: storeExpected, label: 'store.load', unknownKeys: 'ignore' },
);
/** The store itself, not the copy of its methods `option.object` makes: a class's methods need their `this`. */
const storeSchema: OptionSchema<ConversationStore> = {
  expected: storeExpected,
  resolve: (value, path) => {
    storeShape.resolve(value, path);
    return value as ConversationStore;
  },
};

const relayExpected = 'a ConversationRelay { publish, subscribe, close }';
const relayMethod = option.callable(relayExpected);
const relayShape = option.object(
  { publish: relayMethod, subscribe: relayMethod, close: relayMethod },
  { expected: relayExpected, unknownKeys: 'ignore' },
);
/** The relay itself, like the store: its methods keep their `this`. */
const relaySchema: OptionSchema<ConversationRelay> = {
  expected: relayExpected,
  resolve: (value, path) => {
    relayShape.resolve(value, path);
    return value as ConversationRelay;
  },
};

/** Unknown keys are ignored, not refused: createConversationHost never refused them, so options that worked still do. */
const conversationHostOptionsSchema = option.object(
  {
    machine: option.matching(
      'a conversation machine from createConversationMachine(...), or a state machine of yours (a workflow)',
      (value): value is AnyStateMachine =>
        isRecord(value) && typeof value.restoreSnapshot === 'function' && typeof value.getPersistedSnapshot === 'function',
    ),
    store: storeSchema,
    relay: option.optional(relaySchema),
    leaseTtlMs: option.withDefault(
      option.integer({ minimum: 100, maximum: 2_147_483_647, expected: 'an integer of milliseconds ≥ 100' }),
      30_000,
    ),
    hostId: option.orElse(option.string({ nonEmpty: true }), defaultHostId),
    inspect: option.optional(
      option.matching(
        'an inspection observer { next } or a function (event) => void',
        (value): value is Observer<InspectionEvent> | ((event: InspectionEvent) => void) =>
          typeof value === 'function' || (isRecord(value) && typeof value.next === 'function'),
      ),
    ),
    onError: option.orElse(
      option.callable<(error: unknown, conversationId: string) => void>('a function (error, conversationId) => void'),
      () => (error, id) => console.error(`actorloop host, conversation ${JSON.stringify(id)}:`, error),
    ),
  },
  { expected: 'an object { machine, store }', unknownKeys: 'ignore' },
);

const sendOptionsSchema = option.object(
  {
    sessionData: option.transform(option.unchecked('plain JSON'), (sessionData) => {
      checkSessionData(sessionData);
      return sessionData;
    }),
  },
  { expected: 'an object { sessionData? }', unknownKeys: 'ignore' },
);

type ResolvedSendOptions = ResolvedOption<typeof sendOptionsSchema>;

const observerSchema = option.object(
  {
    next: option.callable<StreamObserver['next']>('a function (item) => void'),
    error: option.optional(option.callable<NonNullable<StreamObserver['error']>>('a function (error) => void')),
  },
  { expected: 'an observer { next, error? }', unknownKeys: 'ignore' },
);

const followOptionsSchema = option.object(
  {
    after: option.optional(
      option.matching('a stream id "<revision>.<n>.<tag>" (ConversationStreamItem.id)', (value): value is string =>
        typeof value === 'string' ? parseStreamId(value) !== undefined : false,
      ),
    ),
    from: option.optional(option.choice(['now', 'run'] as const)),
  },
  { expected: 'an object { after?, from? }', unknownKeys: 'ignore' },
);

/** Runs `recover()` claims at once (one page of the store's list). */
const recoverPage = 500;

/** The event as the log keeps it: its own fields only. */
function logEventOf(event: ConversationUserEvent): ConversationLogEvent | undefined {
  switch (event.type) {
    case 'user.message':
    case 'user.interrupt':
      // As the history keeps it: bytes as base64 (JSON of a Uint8Array would be an object of a million keys).
      return { type: event.type, content: storedUserContent(event.content) };
    case 'tool.approve':
      return { type: event.type, toolCallId: event.toolCallId };
    case 'tool.deny':
      return { type: event.type, toolCallId: event.toolCallId, ...(event.reason === undefined ? {} : { reason: event.reason }) };
    case 'cancel':
      return { type: event.type, ...(event.reason === undefined ? {} : { reason: event.reason }) };
    default:
      // A workflow's own event: its steps keep what it led to.
      return undefined;
  }
}

/** Why a workflow's machine failed (an action or a guard of it threw), as `result(id)` rejects with it. */
function workflowFailure(id: string, snapshot: HostedSnapshot): Error {
  const error = (snapshot as { error?: unknown }).error;
  if (error instanceof Error) return error;
  const message = isRecord(error) && typeof error.message === 'string' ? error.message : 'its machine failed';
  return new Error(`workflow ${JSON.stringify(id)} ended in error: ${message}`);
}

const describeError = (error: unknown) =>
  error instanceof Error ? { name: error.name, message: error.message } : { name: 'Error', message: String(error) };

/**
 * Creates a durable conversation host: conversations by id, each run persisted in `store` after
 * every step that changes it, resumed after a crash without running a finished tool call again.
 * See docs/durable-conversations.md for the resume semantics and what hosts sharing a store may do.
 *
 * @example
 * ```ts
 * import { createConversationHost } from 'actorloop';
 * import { sqliteStore } from 'actorloop/sqlite';
 *
 * const host = createConversationHost({ machine, store: sqliteStore({ path: 'conversations.db' }) });
 * await host.recover();                                             // resume what a crash interrupted
 * const stop = host.subscribe('c-42', (event) => {
 *   if (event.type === 'text.delta') process.stdout.write(event.delta);
 *   if (event.type === 'tool.approval.requested') console.log('approve', event.toolCallId);
 * });
 * await host.send('c-42', { type: 'user.message', content: 'Hi' }); // resolves once stored
 * const output = await host.result('c-42');
 * stop();
 * await host.close();
 * ```
 */
export function createConversationHost<TMachine extends AnyStateMachine = ConversationMachine>(
  options: ConversationHostOptions<TMachine>,
): ConversationHost<TMachine> {
  const resolved = resolveOptionsWith(conversationHostOptionsSchema, options);
  const { hostId, onError, relay, leaseTtlMs } = resolved;
  const userInspect = resolved.inspect;
  // The user's observer for one run: its throws reported (with the run's id) rather than thrown into the run.
  const inspectFor = (id: string) =>
    userInspect &&
    ((event: InspectionEvent) => {
      try {
        if (typeof userInspect === 'function') userInspect(event);
        else userInspect.next?.(event);
      } catch (error) {
        report(error, id);
      }
    });
  const machine = resolved.machine as ConversationMachine;
  const hosted = hostedMachineOf(machine);
  // A store that keeps media once gets references in every write and gives whole parts on every read.
  const store = mediaAwareStore(resolved.store);

  /** Runs held in memory: only those in flight (finished and waiting runs are stored, not held). */
  const live = new Map<string, LiveRun>();
  const listeners = new Map<string, Set<(event: ConversationHostEvent) => void>>();
  const everyListeners = new Set<(event: ConversationHostEvent, conversationId: string) => void>();
  const resultWaiters = new Map<string, Array<{ resolve: (output: unknown) => void; reject: (error: unknown) => void }>>();
  const queues = new Map<string, { tail: Promise<void>; size: number }>();
  let closed = false;
  let closing: Promise<void> | undefined;

  const report = (error: unknown, id: string) => {
    try {
      onError(error, id);
    } catch {
      // An error handler that throws has nowhere left to report to.
    }
  };

  const leases = new HostLeases({
    store,
    owner: hostId,
    ttlMs: leaseTtlMs,
    // Stopped before its next write, which the store would refuse anyway.
    lost: (id, error) => live.get(id)?.fail(error),
    report: (error, id) => report(error, id),
  });
  /** Gives the conversation's lease up once the host neither runs it nor has an event for it waiting. */
  const letGo = (id: string) => {
    if (!live.has(id) && !queues.has(id)) leases.release(id);
  };

  const streams = new StreamHub({
    store,
    relay,
    unwritten: (id) => {
      const run = live.get(id);
      return run ? { items: run.unwrittenStream, runStartId: run.runStartId } : undefined;
    },
    report: (error, id) => report(error, id),
  });

  const publish = (id: string, event: ConversationHostEvent) => {
    const subscribed = listeners.get(id);
    if (subscribed) {
      for (const listener of [...subscribed]) {
        try {
          listener(event);
        } catch (error) {
          report(error, id);
        }
      }
    }
    if (everyListeners.size === 0) return;
    for (const listener of [...everyListeners]) {
      try {
        listener(event, id);
      } catch (error) {
        report(error, id);
      }
    }
  };

  const settleResults = (
    id: string,
    settle: (waiter: { resolve: (output: unknown) => void; reject: (error: unknown) => void }) => void,
  ) => {
    const waiting = resultWaiters.get(id);
    if (!waiting) return;
    resultWaiters.delete(id);
    for (const waiter of waiting) settle(waiter);
  };

  const waitForResult = (id: string) =>
    new Promise<HostOutputOf<TMachine>>((resolve, reject) => {
      const waiting = resultWaiters.get(id);
      const waiter = { resolve: resolve as (output: unknown) => void, reject };
      if (waiting) waiting.push(waiter);
      else resultWaiters.set(id, [waiter]);
    });

  /** Lets go of a run waiting for approval once nothing is pending for it: it is stored, and reloaded when an event comes. */
  const releaseIfWaiting = (run: LiveRun) => {
    // A workflow stays in memory until it ends: its charts may go on by themselves (a delay, another conversation).
    if (hosted.workflow) return;
    if (live.get(run.id) !== run || run.writesPending || queues.has(run.id) || run.status !== 'awaitingApproval') return;
    // A tree waiting for a child's approval still runs (the other calls, the agent call's deadline): it stays live.
    if (run.snapshot.value !== 'awaitingApproval') return;
    live.delete(run.id);
    run.detach(new Error('released: the run waits for approval and is stored'));
    letGo(run.id);
  };

  const written: LiveRunOptions['written'] = (run) => {
    const snapshot = run.snapshot as HostedSnapshot;
    if (snapshot.status !== 'done' && snapshot.status !== 'error') return releaseIfWaiting(run);
    if (live.get(run.id) === run) live.delete(run.id);
    run.detach(new Error('the run ended'));
    letGo(run.id);
    if (snapshot.status === 'error') settleResults(run.id, (waiter) => waiter.reject(workflowFailure(run.id, snapshot)));
    else if (snapshot.output !== undefined || hosted.workflow) settleResults(run.id, (waiter) => waiter.resolve(snapshot.output));
  };

  const failed: LiveRunOptions['failed'] = (run, error, awaited) => {
    if (live.get(run.id) === run) live.delete(run.id);
    // A caller waiting for that write (a send) or for the run (a result) gets the error itself.
    if (!awaited && !resultWaiters.has(run.id)) report(error, run.id);
    publish(run.id, { type: 'write.failed', error: describeError(error) });
    settleResults(run.id, (waiter) => waiter.reject(error));
    letGo(run.id);
  };

  const hold = (id: string, from: LiveRunOptions['from'], revision: number, updatedAt: number) => {
    const run = new LiveRun({
      id,
      hosted,
      store,
      ...(userInspect ? { inspect: inspectFor(id) } : {}),
      owner: hostId,
      revision,
      updatedAt,
      from,
      lease: leases.lease(id),
      publish: (event) => publish(id, event),
      streamed: (item) => streams.emitted(id, item),
      written,
      failed,
    });
    live.set(id, run);
    return run;
  };

  /** Runs `task` after every earlier task of the same conversation: one event at a time per conversation. */
  const serially = <T>(id: string, task: () => Promise<T>): Promise<T> => {
    const queue = queues.get(id) ?? { tail: Promise.resolve(), size: 0 };
    queues.set(id, queue);
    queue.size++;
    const result = queue.tail.then(task);
    queue.tail = result.then(
      () => undefined,
      () => undefined,
    );
    void queue.tail.then(() => {
      if (--queue.size > 0 || queues.get(id) !== queue) return;
      queues.delete(id);
      const run = live.get(id);
      if (run) releaseIfWaiting(run);
      else letGo(id);
    });
    return result;
  };

  const ensureOpen = (what: string) => {
    if (closed) throw new HostClosedError(what);
  };

  /** The next run of a conversation whose last run ended: from its history, with its sessionData unless the message sets it. */
  function nextRun(
    id: string,
    event: ConversationUserEvent,
    sendOptions: ResolvedSendOptions,
    last: DecodedSnapshot,
    revision: number,
    updatedAt: number,
  ) {
    checkEventAfterEndedRun(id, event, last);
    return hold(id, { input: nextRunInput(id, last, sendOptions.sessionData) }, revision, updatedAt);
  }

  /** The run an event goes to: held in memory, or loaded from the store (a waiting run, or the next run of a finished one). */
  async function runFor(id: string, event: ConversationUserEvent, sendOptions: ResolvedSendOptions): Promise<LiveRun> {
    const held = live.get(id);
    if (hosted.workflow) return workflowRunFor(id, event, held);
    if (held?.snapshot.status === 'done') {
      // Ended, its last write still under way: the next run starts from it once that is stored.
      await held.written();
      return nextRun(id, event, sendOptions, held.snapshot as DecodedSnapshot, held.revision, held.updatedAt);
    }
    if (held) {
      if (sendOptions.sessionData !== undefined) {
        throw new EventRejectedError({
          conversationId: id,
          eventType: event.type,
          code: 'rejected',
          message: `sessionData is set by the user.message that starts a run; a run is in progress (${held.status})`,
        });
      }
      return held;
    }
    if (!(await leases.claim(id))) {
      throw new EventRejectedError({
        conversationId: id,
        eventType: event.type,
        code: 'busy',
        message:
          'another host holds its lease (it runs the conversation there); send the event to that host, or again once it let the run go',
      });
    }
    const stored = await store.load(id);
    ensureOpen(`send to ${JSON.stringify(id)}`);
    if (!stored) {
      if (event.type !== 'user.message')
        throw new ConversationNotFoundError(id, `${event.type} needs a conversation; a user.message starts one`);
      return hold(id, { input: nextRunInput(id, undefined, sendOptions.sessionData) }, 0, 0);
    }
    const decoded = decodeStored(stored, machine);
    const status = statusOf(decoded);
    if (decoded.status === 'done') return nextRun(id, event, sendOptions, decoded, stored.revision, stored.updatedAt);
    if (status === 'running') {
      throw new EventRejectedError({
        conversationId: id,
        eventType: event.type,
        code: 'busy',
        message: `it is running in host ${JSON.stringify(stored.owner)}; if that process has stopped, call recover() to resume the run here`,
      });
    }
    if (sendOptions.sessionData !== undefined) {
      throw new EventRejectedError({
        conversationId: id,
        eventType: event.type,
        code: 'rejected',
        message: `sessionData is set by the user.message that starts a run; a run is in progress (${status})`,
      });
    }
    return hold(id, { snapshot: decoded }, stored.revision, stored.updatedAt);
  }

  /** A run `recover()` resumes: one that runs, or — a workflow, whose charts go on by themselves — one with a conversation waiting for approval. */
  const inFlight = (snapshot: HostedSnapshot) => {
    const status = hosted.statusOf(snapshot);
    return status === 'running' || (hosted.workflow && status === 'awaitingApproval' && snapshot.status === 'active');
  };

  /** One page of the runs `recover()` looks at, by id. */
  async function recoverable(after: string | undefined) {
    const from = after === undefined ? {} : { after };
    const running = await store.list({ status: 'running', limit: recoverPage, ...from });
    if (!hosted.workflow) return running;
    const waiting = await store.list({ status: 'awaitingApproval', limit: recoverPage, ...from });
    // Both pages in id order, cut where the shorter full one ends: the next page starts after it.
    const merged = [...running, ...waiting].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const full = [running, waiting].filter((page) => page.length === recoverPage).map((page) => page.at(-1)?.id as string);
    const cut = full.length === 0 ? undefined : full.sort()[0];
    return (cut === undefined ? merged : merged.filter((summary) => summary.id <= cut)).slice(0, recoverPage);
  }

  /** The workflow run an event goes to: held here, or one this host resumes (stored between steps, its host gone). */
  async function workflowRunFor(id: string, event: { type: string }, held: LiveRun | undefined): Promise<LiveRun> {
    const rejected = (code: 'busy' | 'rejected', message: string) =>
      new EventRejectedError({ conversationId: id, eventType: event.type, code, message });
    if (held && held.status !== 'done' && held.status !== 'halted' && held.status !== 'error') return held;
    if (!held && !(await leases.claim(id))) throw rejected('busy', 'another host holds its lease (it runs the workflow there)');
    const stored = held ? undefined : await store.load(id);
    ensureOpen(`send to ${JSON.stringify(id)}`);
    if (!held && !stored) throw new ConversationNotFoundError(id, `${event.type} needs a run; host.start(id, { input }) starts a workflow`);
    const decoded = held ? (held.snapshot as HostedSnapshot) : hosted.decode(stored as StoredConversation);
    const status = hosted.statusOf(decoded);
    if (decoded.status !== 'active') {
      throw rejected('rejected', `the workflow's run ended (${status}); host.start(${JSON.stringify(id)}, { input }) starts another`);
    }
    if (status === 'running') {
      const owner = stored ? JSON.stringify(stored.owner) : 'another';
      throw rejected('busy', `it is running in host ${owner}; if that process has stopped, call recover() to resume the run here`);
    }
    // Stored waiting for an approval, its host gone: this host takes it over and sends the event there.
    const run = hold(id, { snapshot: decoded }, (stored as StoredConversation).revision, (stored as StoredConversation).updatedAt);
    run.start();
    return run;
  }

  return {
    hostId,
    machine: resolved.machine as TMachine,

    async start(id, startOptions = {}) {
      checkId(id);
      const input = startInput(id, startOptions, hosted.workflow);
      ensureOpen(`start ${JSON.stringify(id)}`);
      return serially(id, async () => {
        ensureOpen(`start ${JSON.stringify(id)}`);
        const inProgress = (status: string) =>
          new EventRejectedError({ conversationId: id, eventType: 'start', code: 'rejected', message: `a run is in progress (${status})` });
        const held = live.get(id);
        if (held) {
          await held.written().catch(() => undefined);
          if (live.get(id) === held) throw inProgress(held.status);
        }
        if (!(await leases.claim(id))) {
          throw new EventRejectedError({
            conversationId: id,
            eventType: 'start',
            code: 'busy',
            message: 'another host holds its lease (a run is in progress there)',
          });
        }
        const stored = await store.load(id);
        ensureOpen(`start ${JSON.stringify(id)}`);
        if (stored && !hosted.workflow) {
          throw new ConversationExistsError(
            id,
            `start a conversation under an id not in use; send(${JSON.stringify(id)}, …) continues this one`,
          );
        }
        if (stored) {
          const decoded = hosted.decode(stored);
          if (decoded.status === 'active') throw inProgress(hosted.statusOf(decoded));
        }
        const run = hold(id, { input }, stored?.revision ?? 0, stored?.updatedAt ?? 0);
        run.start();
        // Stored at once, whatever its first state: the run exists from now on.
        run.store();
        await run.written();
        return hosted.viewOf(id, run.snapshot as HostedSnapshot, run.updatedAt, run.revision);
      });
    },

    async send(id, event, sendOptions = {}) {
      checkId(id);
      if (hosted.workflow) checkWorkflowEvent(event);
      else checkEvent(event);
      const resolved = resolveOptionsWith(sendOptionsSchema, sendOptions);
      if (hosted.workflow && resolved.sessionData !== undefined) {
        throw new InvalidOptionsError(
          'options.sessionData',
          'no sessionData: a workflow gets it from host.start(id, { sessionData })',
          resolved.sessionData,
        );
      }
      ensureOpen(`send to ${JSON.stringify(id)}`);
      return serially(id, async () => {
        ensureOpen(`send to ${JSON.stringify(id)}`);
        const held = live.get(id);
        const run = await runFor(id, event, resolved);
        const fresh = run !== held;
        if (fresh) run.start();
        const rejection = run.apply(event as ConversationUserEvent, logEventOf(event as ConversationUserEvent));
        if (rejection !== undefined) {
          // Loaded (or created) for this event only: nothing changed, nothing to keep in memory.
          if (fresh && !run.writesPending && live.get(id) === run) {
            live.delete(id);
            run.detach(new Error('event rejected'));
          }
          throw new EventRejectedError({ conversationId: id, eventType: event.type, code: 'rejected', message: rejection });
        }
        await run.written();
        return hosted.viewOf(id, run.snapshot as HostedSnapshot, run.updatedAt, run.revision);
      });
    },

    async get(id, getOptions) {
      checkId(id);
      const { seq } = resolveGetOptions(getOptions);
      ensureOpen(`get ${JSON.stringify(id)}`);
      if (seq !== undefined) {
        const step = await loadStep(store, id, seq);
        return hosted.viewOf(id, hosted.decode(step), step.updatedAt, step.revision);
      }
      const held = live.get(id);
      if (held) return hosted.viewOf(id, held.snapshot as HostedSnapshot, held.updatedAt, held.revision);
      const stored = await store.load(id);
      const now = live.get(id);
      if (now) return hosted.viewOf(id, now.snapshot as HostedSnapshot, now.updatedAt, now.revision);
      return stored ? hosted.viewOf(id, hosted.decode(stored), stored.updatedAt, stored.revision) : undefined;
    },

    async history(id, historyOptions) {
      checkId(id);
      ensureOpen(`history of ${JSON.stringify(id)}`);
      return readHistory(store, id, historyOptions);
    },

    async fork(id, forkOptions) {
      checkId(id);
      const { seq, newId, messages } = resolveForkOptions(forkOptions);
      ensureOpen(`fork ${JSON.stringify(id)}`);
      const step = await loadStep(store, id, seq);
      if (hosted.workflow && messages !== undefined) {
        throw new InvalidOptionsError(
          'options.messages',
          'no messages: a workflow has no one history to replace (fork it as it was)',
          '(messages)',
        );
      }
      const snapshot = hosted.workflow ? (hosted.decode(step) as DecodedSnapshot) : forkedSnapshot(step, machine, messages);
      const taken = () => new ConversationExistsError(newId, `fork ${JSON.stringify(id)} step ${seq} to an id not in use`);
      return serially(newId, async () => {
        ensureOpen(`fork ${JSON.stringify(id)}`);
        if (live.has(newId)) throw taken();
        // Another host starting a conversation under that id holds its lease.
        if (!(await leases.claim(newId))) throw taken();
        if (await store.load(newId)) throw taken();
        const record = forkRecord(newId, snapshot, hosted, hostId);
        const lease = leases.lease(newId);
        try {
          await (lease ? store.save(record, [], undefined, { lease }) : store.save(record));
        } catch (error) {
          if (ConversationConflictError.isInstance(error)) throw taken();
          throw error;
        }
        // A step in the middle of a run goes on from there, as a recovered run does.
        if (record.status === 'running' && !closed) hold(newId, { snapshot }, record.revision, record.updatedAt).start();
        return hosted.viewOf(newId, snapshot, record.updatedAt, record.revision);
      });
    },

    async result(id) {
      checkId(id);
      ensureOpen(`result of ${JSON.stringify(id)}`);
      if (live.has(id)) return waitForResult(id);
      const stored = await store.load(id);
      ensureOpen(`result of ${JSON.stringify(id)}`);
      // A send may have started a run while the store answered.
      if (live.has(id)) return waitForResult(id);
      if (!stored) throw new ConversationNotFoundError(id, 'no run to wait for');
      const decoded = hosted.decode(stored);
      if (decoded.status === 'error') throw workflowFailure(id, decoded);
      if (decoded.status === 'done' && (decoded.output !== undefined || hosted.workflow)) return decoded.output as HostOutputOf<TMachine>;
      return waitForResult(id);
    },

    subscribe(id, listener) {
      checkId(id);
      if (typeof listener !== 'function') throw new InvalidOptionsError('listener', 'a function (event) => void', listener);
      let subscribed = listeners.get(id);
      if (!subscribed) {
        subscribed = new Set();
        listeners.set(id, subscribed);
      }
      const own = (event: ConversationHostEvent) => listener(event);
      subscribed.add(own);
      return () => {
        const current = listeners.get(id);
        if (!current) return;
        current.delete(own);
        if (current.size === 0) listeners.delete(id);
      };
    },

    subscribeAll(listener) {
      if (typeof listener !== 'function') {
        throw new InvalidOptionsError('listener', 'a function (event, conversationId) => void', listener);
      }
      // A wrapper per call: subscribing the same function twice gives two deliveries and two stops.
      const own = (event: ConversationHostEvent, id: string) => listener(event, id);
      everyListeners.add(own);
      return () => {
        everyListeners.delete(own);
      };
    },

    follow(id, observer, followOptions = {}) {
      checkId(id);
      const { next, error } = resolveOptionsWith(observerSchema, observer, 'observer');
      const { after, from } = resolveOptionsWith(followOptionsSchema, followOptions, 'options');
      if (closed) {
        // Like a store failure: the reader hears it once, through its own channel.
        queueMicrotask(() => error?.(new HostClosedError(`follow ${JSON.stringify(id)}`)));
        return () => undefined;
      }
      return streams.follow(id, { next, ...(error ? { error } : {}) }, { after, from });
    },

    async list(listOptions) {
      ensureOpen('list');
      return store.list(listOptions);
    },

    async recover() {
      ensureOpen('recover');
      const outcome: RecoverReport = { resumed: [], skipped: [], failed: [] };
      let after: string | undefined;
      for (;;) {
        const page = await recoverable(after);
        await Promise.all(
          page.map(({ id }) =>
            serially(id, async () => {
              if (closed || live.has(id)) return void outcome.skipped.push(id);
              // Another host holds the run's lease: it runs it (a lease lapses only when its holder stopped renewing it).
              if (!(await leases.claim(id))) return void outcome.skipped.push(id);
              const stored = await store.load(id);
              if (stored?.status !== 'running' && !(hosted.workflow && stored?.status === 'awaitingApproval'))
                return void outcome.skipped.push(id);
              let decoded: HostedSnapshot;
              try {
                decoded = hosted.decode(stored);
              } catch (error) {
                return void outcome.failed.push({ id, error });
              }
              if (!inFlight(decoded)) return void outcome.skipped.push(id);
              // Claimed before anything runs: of two hosts recovering at once, one gets the run, the other a conflict.
              const claimed = { ...stored, revision: stored.revision + 1, owner: hostId, updatedAt: Date.now() };
              const lease = leases.lease(id);
              try {
                await (lease ? store.save(claimed, [], undefined, { lease }) : store.save(claimed));
              } catch (error) {
                if (ConversationConflictError.isInstance(error)) return void outcome.skipped.push(id);
                return void outcome.failed.push({ id, error });
              }
              if (closed) return void outcome.skipped.push(id);
              hold(id, { snapshot: decoded }, claimed.revision, claimed.updatedAt).start();
              outcome.resumed.push(id);
            }),
          ),
        );
        const last = page.at(-1);
        if (page.length < recoverPage || !last) break;
        after = last.id;
      }
      return outcome;
    },

    close() {
      closing ??= (async () => {
        closed = true;
        await Promise.all([...queues.values()].map((queue) => queue.tail));
        const runs = [...live.values()];
        await Promise.all(runs.map((run) => run.written().catch(() => undefined)));
        live.clear();
        for (const run of runs) run.detach(new HostClosedError('the run was stopped by close(); it resumes at the next recover()'));
        await leases.close();
        await streams.close(new HostClosedError('the host closed; follow the conversation on another host, or after a restart'));
        for (const id of [...resultWaiters.keys()]) {
          settleResults(id, (waiter) =>
            waiter.reject(new HostClosedError(`result of ${JSON.stringify(id)}: the run resumes at the next recover()`)),
          );
        }
        await store.close();
      })();
      return closing;
    },
  };
}
