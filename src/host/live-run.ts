import { mediaCodecOf } from './media-aware-store.js';
import { isRecord } from '../util/is-record.js';
import { type AnyActorRef, createActor, type InspectionEvent, type Subscription } from 'xstate';
import {
  type ContextCompactedEvent,
  type ConversationActor,
  type ConversationEmittedEvent,
  type ConversationInput,
  type ConversationMachine,
  type ConversationSnapshot,
  type ConversationStateValue,
  type ConversationUserEvent,
  currentSchemaVersion,
  type RunOutput,
  setExecutionGate,
} from '../machines/hostable.js';
import type { Message } from '../model/messages.js';
import type {
  ConversationLogEvent,
  ConversationStatus,
  ConversationStore,
  LogAppend,
  StoredConversation,
  StreamAppend,
} from './conversation-store.js';
import type { ConversationLease } from './conversation-lease.js';
import type { ConversationStreamItem, StreamStateEvent } from './conversation-stream.js';
import type { HostedMachine, HostedSnapshot } from './hosted-machine.js';
import { routeWorkflowEvent } from './route-workflow-event.js';
import { haltedSnapshot } from './workflow-state.js';

/**
 * A state change, as `host.subscribe` reports it beside the run's own events: the run's state, the
 * conversation's status, the history at that state, and — once the run ended (`done`, `halted`,
 * `error`) — its `RunOutput`.
 *
 * @example
 * ```ts
 * host.subscribe('c-42', (event) => {
 *   if (event.type === 'state') console.log(event.status, JSON.stringify(event.value), event.messages.length);
 *   if (event.type === 'state' && event.output) console.log('run ended:', event.output.text);
 * });
 * ```
 */
export type ConversationStateEvent = {
  type: 'state';
  value: ConversationStateValue;
  status: ConversationStatus;
  /** The whole history at this state (the same array the run holds: read it, do not change it). */
  messages: Message[];
  /** The run's output, on the state change that ends it. */
  output?: RunOutput;
};

/**
 * This host could not store the run (the store failed, or another host wrote the conversation in
 * between): it stopped its copy of the run. The stored state is the last one written; `recover()`
 * (here or in another process) resumes from it.
 *
 * @example
 * ```ts
 * host.subscribe('c-42', (event) => {
 *   if (event.type === 'write.failed') console.error(event.error.message);
 * });
 * ```
 */
export type WriteFailedEvent = { type: 'write.failed'; error: { name: string; message: string } };

/**
 * What `host.subscribe` delivers: every event the run emits, a `state` event on each state change,
 * and `write.failed`.
 *
 * @example
 * ```ts
 * const stop = host.subscribe('c-42', (event: ConversationHostEvent) => {
 *   if (event.type === 'text.delta') process.stdout.write(event.delta);
 * });
 * ```
 */
export type ConversationHostEvent = ConversationEmittedEvent | ConversationStateEvent | WriteFailedEvent;

export type LiveRunOptions = {
  id: string;
  /** The machine every run of the host runs: a conversation machine, or a workflow. */
  hosted: HostedMachine;
  /** The host's `inspect` option: sees every inspection event of the run's actors. */
  inspect?: (event: InspectionEvent) => void;
  store: ConversationStore;
  owner: string;
  /** The stored revision the run continues from (0: not stored yet). */
  revision: number;
  updatedAt: number;
  from: { input: unknown } | { snapshot: unknown };
  /** The conversation's lease, on a store that hands them out: every write carries it. */
  lease?: ConversationLease | undefined;
  publish: (event: ConversationHostEvent) => void;
  /** Each stream item as it is emitted (ids: see `ConversationStreamItem`). */
  streamed: (item: ConversationStreamItem) => void;
  /** After each successful write. */
  written: (run: LiveRun) => void;
  /** A write failed: the run is already detached; `awaited` says whether a caller was waiting for that write. */
  failed: (run: LiveRun, error: unknown, awaited: boolean) => void;
};

/** Waits for the write of a generation: a caller's (`written()`) or a tool call's gate. */
type Waiter = { generation: number; caller: boolean; resolve: () => void; reject: (error: unknown) => void };

/**
 * One conversation's run while a host holds it in memory: the actor, and the writes that keep the
 * store in step with it. Every change that matters (see `changesStoredState`) is written in order,
 * the latest snapshot at a time, with the log entries of the events that led to it, in one
 * conditional save. A tool's `execute` waits until the snapshot in which its call runs is written
 * (the execution gate): a crash can then never leave a call executed that the store does not know
 * was started.
 */
export class LiveRun {
  readonly id: string;
  readonly actor: ConversationActor;
  revision: number;
  updatedAt: number;
  private readonly options: LiveRunOptions;
  private readonly subscriptions: Subscription[] = [];
  private readonly pendingLog: LogAppend[] = [];
  private lastShape: unknown;
  private lastPublished: { value: string; status: ConversationStatus };
  /** Counts changes that must be written; `writtenGeneration` says how far the store has caught up. */
  private generation = 0;
  private writtenGeneration = 0;
  private writing = false;
  private waiters: Waiter[] = [];
  private unassignedGates: Array<Pick<Waiter, 'resolve' | 'reject'>> = [];
  private rejections: Array<{ eventType: string; message: string }> | undefined;
  /** Stream items waiting for the write that stores them, and those a write in progress carries. */
  private unwrittenItems: ConversationStreamItem[] = [];
  private writingItems: ConversationStreamItem[] = [];
  /** The revision of the write that will store the next stream item, and how many items that write carries so far. */
  private streamRevision: number;
  private streamCount = 0;
  /** Tells this run's stream ids from those of an earlier run of the conversation that stopped before its write. */
  private readonly streamTag = crypto.getRandomValues(new Uint32Array(1))[0]?.toString(36) ?? '0';
  /** A run started from input marks its first write as the start of a run (`follow(…, { from: 'run' })`). */
  private runStartUnwritten: boolean;
  /** The id of this run's first stream item, when this run started here from input. */
  runStartId: string | undefined;
  private detachedWith: unknown;
  detached = false;
  /** A workflow that `cancel` ended: its final snapshot, written in place of the stopped actor's. */
  private halted: Record<string, unknown> | undefined;

  constructor(options: LiveRunOptions) {
    this.options = options;
    this.id = options.id;
    this.revision = options.revision;
    this.updatedAt = options.updatedAt;
    this.streamRevision = options.revision + 1;
    this.runStartUnwritten = !('snapshot' in options.from);
    const { hosted } = options;
    // A conversation inside a workflow changes nothing in the workflow's snapshot: every actor's is watched.
    const own = hosted.workflow
      ? (event: InspectionEvent) => {
          // A machine's step (the workflow's, a conversation's): what a promise or callback actor does shows in its parent's.
          if (event.type === '@xstate.snapshot' && isRecord(event.snapshot) && 'value' in event.snapshot)
            this.onSnapshot(this.actor.getSnapshot());
        }
      : undefined;
    const theirs = options.inspect;
    const inspect =
      own && theirs
        ? (event: InspectionEvent) => {
            theirs(event);
            own(event);
          }
        : (own ?? theirs);
    const machine = hosted.machine as ConversationMachine;
    this.actor =
      'snapshot' in options.from
        ? createActor(machine, { snapshot: options.from.snapshot as ConversationSnapshot, input: {}, ...(inspect ? { inspect } : {}) })
        : createActor(machine, { input: options.from.input as ConversationInput, ...(inspect ? { inspect } : {}) });
    const initial = this.actor.getSnapshot();
    if (!hosted.workflow) this.lastMessages = initial.context.messages;
    this.lastShape = hosted.shapeOf(initial);
    this.lastPublished = { value: keyOf(this.lastShape), status: hosted.statusOf(initial) };
    setExecutionGate(this.actor.system, () => this.gate());
    this.subscriptions.push(
      this.actor.on('*', (event) => this.onEmitted(event)),
      this.actor.subscribe(
        hosted.workflow
          ? // A workflow's own failure (an action that threw) is its outcome, `error`, stored as any other state
            // (XState reports it to observers only: no inspection event carries it).
            {
              error: () => {
                this.onSnapshot(this.actor.getSnapshot());
                this.stopChildren();
              },
            }
          : {
              next: (snapshot) => this.onSnapshot(snapshot),
              // The machine routes every failure to a final state; an actor error would be a bug, not a run outcome.
              error: (error) => this.fail(error),
            },
      ),
    );
  }

  /** Starts the actor (a restored run resumes here: see `restoreOnXState`). */
  start(): void {
    this.actor.start();
  }

  /** The run's snapshot now (a workflow's is not a conversation's: read it through `options.hosted`). */
  get snapshot(): ConversationSnapshot {
    return (this.halted ?? this.actor.getSnapshot()) as ConversationSnapshot;
  }

  get status(): ConversationStatus {
    return this.options.hosted.statusOf(this.snapshot as HostedSnapshot);
  }

  /**
   * Sends a caller's event and logs it when the run takes it. Returns the machine's rejection
   * message when it does not (the machine answers those with `event.rejected`).
   */
  apply(event: ConversationUserEvent, log: ConversationLogEvent | undefined): string | undefined {
    const entry: LogAppend | undefined = log && { at: Date.now(), event: log };
    // Logged before the send so it goes out with the write of the state the event leads to.
    if (entry) this.pendingLog.push(entry);
    const rejections: Array<{ eventType: string; message: string }> = [];
    this.rejections = rejections;
    try {
      if (this.options.hosted.workflow) {
        const refused = this.sendToWorkflow(event);
        if (refused !== undefined) rejections.push({ eventType: event.type, message: refused });
      }
      // Handled at once: the host never sends from inside the actor's own callbacks.
      else this.actor.send(event);
    } finally {
      this.rejections = undefined;
    }
    const rejection = rejections.find((rejected) => rejected.eventType === event.type);
    if (!rejection) return undefined;
    if (entry) this.pendingLog.splice(this.pendingLog.indexOf(entry), 1);
    return rejection.message;
  }

  /**
   * A workflow takes an approval where it is waited for (the conversation that holds the call, told
   * by the view's `path`), a `cancel` its chart does not handle as the end of the whole workflow,
   * and any other event when its chart takes it now. Returns why it did not take it.
   */
  private sendToWorkflow(event: ConversationUserEvent | { type: string }): string | undefined {
    const route = routeWorkflowEvent(this.actor, event);
    if ('refused' in route) return route.refused;
    if ('halt' in route) this.halt((event as { reason?: string }).reason);
    else route.send.send(event);
    return undefined;
  }

  /** Ends a workflow `halted`: every conversation in it stops (its request and tools aborted), and the final snapshot is stored. */
  private halt(reason: string | undefined): void {
    const halted = haltedSnapshot(this.actor.getPersistedSnapshot(), reason);
    // The stop below must not reach the store as a change of its own.
    for (const subscription of this.subscriptions.splice(0)) subscription.unsubscribe();
    this.stopping = true;
    this.actor.stop();
    this.halted = halted;
    this.onSnapshot(halted as unknown as ConversationSnapshot);
  }

  /** Set while `halt` stops the actor: its last inspection events are not the run's. */
  private stopping = false;

  /**
   * XState stops a root's children when it reaches a final state, not when it fails: a failed
   * workflow's conversations would go on unseen, their requests and tools running. Stopped here,
   * once the failed state is recorded, as a halt stops them.
   */
  private stopChildren(): void {
    this.stopping = true;
    // `stop()` refuses a child ("a non-root actor cannot be stopped directly"); `_stop` is what XState's
    // own `stopChild` calls: the child takes `xstate.stop`, stopping its own children (requests, tools).
    for (const child of Object.values(this.actor.getSnapshot().children as Record<string, AnyActorRef | undefined>))
      (child as { _stop?: () => void } | undefined)?._stop?.();
  }

  /** Stores the run's state as it is now, changed or not (a run `host.start` began is stored at once). */
  store(): void {
    this.generation++;
    if (this.writing) return;
    this.writing = true;
    queueMicrotask(() => void this.writeChanges());
  }

  /** Resolves once every change so far is stored; rejects if the run was let go before that. */
  written(): Promise<void> {
    if (this.detached) return Promise.reject(this.detachedWith);
    if (this.writtenGeneration >= this.generation) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ generation: this.generation, caller: true, resolve, reject }));
  }

  /** The stream items emitted and not yet stored, in order (a write in progress included). */
  get unwrittenStream(): readonly ConversationStreamItem[] {
    return this.writingItems.length === 0 ? this.unwrittenItems : [...this.writingItems, ...this.unwrittenItems];
  }

  /** Whether a write is pending or in progress. */
  get writesPending(): boolean {
    return this.writing || this.writtenGeneration < this.generation;
  }

  /** Stops the actor without writing anything: the store keeps the last state written. */
  detach(reason: unknown): void {
    if (this.detached) return;
    this.detached = true;
    this.detachedWith = reason;
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.stopping = true;
    this.actor.stop();
    const waiting = [...this.waiters, ...this.unassignedGates];
    this.waiters = [];
    this.unassignedGates = [];
    for (const waiter of waiting) waiter.reject(reason);
  }

  private gate(): Promise<void> {
    if (this.detached) return Promise.reject(this.detachedWith);
    return new Promise((resolve, reject) => {
      this.unassignedGates.push({ resolve, reject });
      // XState starts a spawned child just before its parent's observers see the snapshot that
      // holds it; `onSnapshot` assigns the gate to that snapshot's write. Should no snapshot follow,
      // the gate waits for what is changed so far.
      queueMicrotask(() => this.assignGates());
    });
  }

  private assignGates(): void {
    const gates = this.unassignedGates;
    if (gates.length === 0) return;
    this.unassignedGates = [];
    for (const gate of gates) {
      if (this.writtenGeneration >= this.generation) gate.resolve();
      else this.waiters.push({ ...gate, generation: this.generation, caller: false });
    }
  }

  /** The history as the last snapshot had it: a compaction's event comes before the snapshot that drops its messages. */
  private lastMessages: readonly Message[] = [];

  private onEmitted(event: ConversationEmittedEvent): void {
    if (this.detached || this.stopping) return;
    // A conversation inside a workflow refused an approval the host sent it.
    if (event.type === 'agent.event' && event.event.type === 'event.rejected' && this.rejections && this.options.hosted.workflow) {
      this.rejections.push(event.event);
    }
    if (event.type === 'tool.call' || event.type === 'tool.result') this.pendingLog.push({ at: Date.now(), event });
    // The snapshot is still the one before the compaction: the messages it removed are logged, so nothing is lost.
    if (event.type === 'context.compacted')
      this.pendingLog.push({ at: Date.now(), event: { ...event, removed: removedBy(this.lastMessages, event) } });
    if (event.type === 'event.rejected' && this.rejections) this.rejections.push(event);
    this.options.publish(event);
    // A rejection answers its sender; it is not part of the conversation's stream.
    if (event.type !== 'event.rejected') this.stream(event);
  }

  private stream(event: ConversationStreamItem['event']): void {
    const item: ConversationStreamItem = { id: `${this.streamRevision}.${++this.streamCount}.${this.streamTag}`, event };
    if (this.runStartUnwritten && this.runStartId === undefined) this.runStartId = item.id;
    this.unwrittenItems.push(item);
    this.options.streamed(item);
  }

  private onSnapshot(snapshot: ConversationSnapshot): void {
    if (this.detached || (this.stopping && !this.halted)) return;
    const { hosted } = this.options;
    if (!hosted.workflow) this.lastMessages = snapshot.context.messages;
    const shape = hosted.shapeOf(snapshot);
    const changed = hosted.changed(this.lastShape, shape);
    if (changed) {
      this.lastShape = shape;
      if (!hosted.workflow && snapshot.status === 'done' && snapshot.output) {
        const { messages: _messages, ...outcome } = snapshot.output;
        this.pendingLog.push({ at: Date.now(), event: { type: 'run.ended', ...outcome } });
      }
      this.generation++;
      if (!this.writing) {
        this.writing = true;
        // After the current macrostep and the caller's bookkeeping: one write can then take several changes.
        queueMicrotask(() => void this.writeChanges());
      }
    }
    const status = hosted.statusOf(snapshot);
    // The shape has the state as one string already (both shapes do): not made twice a snapshot.
    const value = keyOf(shape);
    if (value !== this.lastPublished.value || status !== this.lastPublished.status) {
      this.lastPublished = { value, status };
      const output = snapshot.status === 'done' ? snapshot.output : undefined;
      const context = snapshot.context as { messages?: unknown } | undefined;
      this.options.publish({
        type: 'state',
        value: snapshot.value,
        status,
        messages: Array.isArray(context?.messages) ? (context.messages as Message[]) : [],
        ...(output !== undefined ? { output } : {}),
      });
      this.stream(streamStateOf(snapshot.value, status, output));
    }
    // In a workflow every actor's snapshot comes here, a tool's own start among them — before the
    // conversation that started it has the call in its round: its gate waits for the change that has
    // it (else for the microtask after, by when that change is in).
    if (changed || !hosted.workflow) this.assignGates();
  }

  private async writeChanges(): Promise<void> {
    try {
      while (!this.detached && this.writtenGeneration < this.generation) {
        const generation = this.generation;
        const snapshot = this.snapshot;
        const persisted = withReadableError(this.halted ?? this.actor.getPersistedSnapshot());
        // A store that keeps media once: the snapshot refers to them, found in the objects (no parse).
        const codec = mediaCodecOf(this.options.store);
        const json = codec ? '' : JSON.stringify(persisted);
        const stored: StoredConversation = {
          id: this.id,
          schemaVersion: currentSchemaVersion,
          machineId: this.options.hosted.machine.id,
          status: this.options.hosted.statusOf(snapshot as HostedSnapshot),
          snapshot: json,
          revision: this.revision + 1,
          owner: this.options.owner,
          updatedAt: Date.now(),
          state: JSON.stringify(snapshot.value),
        };
        const log = this.pendingLog.splice(0);
        this.writingItems = this.unwrittenItems;
        this.unwrittenItems = [];
        let stream: StreamAppend | undefined;
        if (this.writingItems.length > 0) {
          stream = { items: this.writingItems, ...(this.runStartUnwritten ? { runStart: true as const } : {}) };
          this.runStartUnwritten = false;
        }
        // Items emitted from now on go with the next write.
        this.streamRevision = stored.revision + 1;
        this.streamCount = 0;
        const { lease, store } = this.options;
        // What this write holds was taken above, before this await.
        if (codec) {
          const encoded = await codec.encode(persisted);
          await store.save({ ...stored, snapshot: encoded.text }, log, stream, { ...(lease ? { lease } : {}), media: encoded.media });
        }
        // Without a stream or a lease, the call stays as it was for stores written before they existed.
        else if (lease) await store.save(stored, log, stream, { lease });
        else await (stream ? store.save(stored, log, stream) : store.save(stored, log));
        this.writingItems = [];
        this.revision = stored.revision;
        this.updatedAt = stored.updatedAt;
        this.writtenGeneration = generation;
        const done = this.waiters.filter((waiter) => waiter.generation <= generation);
        this.waiters = this.waiters.filter((waiter) => waiter.generation > generation);
        for (const waiter of done) waiter.resolve();
      }
    } catch (error) {
      this.fail(error);
      return;
    } finally {
      this.writing = false;
    }
    if (!this.detached) this.options.written(this);
  }

  /** Stops the run because it cannot be stored (a write failed, the lease was lost): `failed` tells the host. */
  fail(error: unknown): void {
    if (this.detached) return;
    // Only callers' waits count: the gates of tool calls are the run's own.
    const awaited = this.waiters.some((waiter) => waiter.caller);
    this.detach(error);
    this.options.failed(this, error, awaited);
  }
}

/** A failed machine's error as JSON keeps it (an `Error` would be stored as `{}`). */
function withReadableError(persisted: unknown): unknown {
  if (!isRecord(persisted) || persisted.status !== 'error' || !(persisted.error instanceof Error)) return persisted;
  const { name, message } = persisted.error;
  return { ...persisted, error: { name, message } };
}

/** The state value as one string that every stored shape (a conversation's, a workflow's) carries. */
const keyOf = (shape: unknown) => (shape as { value: string }).value;

/** A state change as the stream carries it: no history (the store has it), the output without it. */
function streamStateOf(value: ConversationStateValue, status: ConversationStatus, output: RunOutput | undefined): StreamStateEvent {
  if (output === undefined) return { type: 'state', value, status };
  // A workflow's output is its machine's own: carried as it is.
  if (!isRecord(output) || !Array.isArray(output.messages))
    return { type: 'state', value, status, output: output as StreamStateEvent['output'] };
  const { messages: _messages, ...outcome } = output;
  return { type: 'state', value, status, output: outcome };
}

/** The messages a compaction removed from `before`: those ahead of the kept tail, system messages aside (they stay). */
function removedBy(before: readonly Message[], event: ContextCompactedEvent): Message[] {
  return before.slice(0, Math.max(0, before.length - event.keptMessages)).filter((message) => message.role !== 'system');
}
