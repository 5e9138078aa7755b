import { type AnyActorRef, type AnyStateMachine, createActor, type InspectionEvent } from 'xstate';
import { ConversationStepNotFoundError } from '../../../host/errors/conversation-step-not-found-error.js';
import { EventRejectedError } from '../../../host/errors/event-rejected-error.js';
import type { ConversationStep, HistoryOptions } from '../../../host/conversation-history.js';
import type { ConversationSummary } from '../../../host/conversation-store.js';
import {
  type ConversationStreamEvent,
  type ConversationStreamItem,
  type FollowOptions,
  parseStreamId,
  type StreamObserver,
} from '../../../host/conversation-stream.js';
import type { ConversationView } from '../../../host/conversation-view.js';
import { type HostedMachine, type HostedSnapshot, hostedMachineOf } from '../../../host/hosted-machine.js';
import { actorAt, routeWorkflowEvent } from '../../../host/route-workflow-event.js';
import { workflowConversations } from '../../../host/workflow-state.js';
import type { ConversationEmittedEvent, ConversationStateValue, ConversationUserEvent } from '../../../machines/names/types.js';
import type { Message } from '../../../model/messages.js';
import { emptyUsage } from '../../../model/usage.js';
import { isRecord } from '../../../util/is-record.js';
import type { ConversationFeed, ConversationUpdate } from '../../conversation-source.js';

/** One step as the viewer keeps it: what `history` lists, the view `get({ seq })` gives, and (actors) the snapshot a fork starts from. */
type RecordedStep = ConversationStep & { view: ConversationView; persisted?: unknown };

/** What a watched run's summary adds to a stored conversation's: the label the run list shows. */
export type WatchedSummary = ConversationSummary & { label: string };

/**
 * An actor the viewer can watch: a conversation's or a workflow's — any XState actor.
 *
 * @example
 * ```ts
 * const watched: WatchableActor = createActor(reviewWorkflow, { input }).start();
 * ```
 */
export type WatchableActor = {
  getSnapshot(): unknown;
  subscribe(observer: { next?: (snapshot: never) => void; error?: (error: unknown) => void; complete?: () => void }): {
    unsubscribe(): void;
  };
  on(type: string, handler: (event: { type: string }) => void): { unsubscribe(): void };
};

/** An actor the viewer can also act on and fork: a real XState actor. */
type OperableActor = WatchableActor & {
  logic?: unknown;
  system?: { inspect?: (observer: (event: InspectionEvent) => void) => { unsubscribe(): void } };
  send?: (event: unknown) => void;
  getPersistedSnapshot?: () => unknown;
};

let runSerial = 0;

/**
 * One run the viewer watches in this process — an actor (a conversation or a workflow) or a feed —
 * recorded as a host stores one: a step each time what a store would keep changes (its view, its
 * state and status, and for an actor the persisted snapshot a fork starts from), and its stream
 * (every emitted event and state change, with ids like a host's). Steps and stream items beyond
 * their caps go oldest first.
 */
export class WatchedRun {
  readonly hosted: HostedMachine | undefined;
  private readonly steps: RecordedStep[] = [];
  private readonly items: ConversationStreamItem[] = [];
  private readonly observers = new Set<StreamObserver>();
  private readonly stops: Array<() => void> = [];
  private readonly tag = `w${(++runSerial).toString(36)}`;
  private seq = 0;
  private n = 0;
  private shape: unknown;
  // A feed's run: what its last state update said.
  private messages: Message[] = [];
  ended = false;

  constructor(
    readonly id: string,
    readonly label: string,
    readonly machine: AnyStateMachine | undefined,
    private readonly source: WatchableActor | ConversationFeed,
    private readonly limits: { maxSteps: number; maxItems: number },
  ) {
    this.hosted = machine ? hostedMachineOf(machine) : undefined;
  }

  /** Starts recording: the actor's snapshots (its whole system's, so a workflow's conversations count) and events, or the feed's updates. */
  start(actor: OperableActor | undefined): void {
    if (actor) {
      const record = () => this.recordSnapshot(actor.getSnapshot() as unknown as HostedSnapshot, actor);
      // Every actor of the system: a conversation inside a workflow moves without its parent's snapshot changing.
      const inspection = actor.system?.inspect?.((event) => {
        if (event.type === '@xstate.snapshot') record();
      });
      if (inspection) this.stops.push(() => inspection.unsubscribe());
      const subscription = actor.subscribe({
        // The inspection already reports the root's own snapshots: recording them twice would compare every one twice.
        ...(inspection ? {} : { next: record }),
        error: () => {
          record();
          this.ended = true;
        },
        complete: () => {
          record();
          this.ended = true;
        },
      });
      const emitted = actor.on('*', (event) => this.push(event as ConversationEmittedEvent));
      this.stops.push(
        () => subscription.unsubscribe(),
        () => emitted.unsubscribe(),
      );
      record();
      return;
    }
    const feed = this.source as ConversationFeed;
    this.stops.push(
      feed.subscribe(
        (update) => this.fromFeed(update),
        () => {
          this.ended = true;
        },
      ),
    );
  }

  stop(): void {
    for (const stop of this.stops.splice(0)) stop();
    this.ended = true;
  }

  summary(): WatchedSummary {
    const last = this.steps.at(-1);
    return {
      id: this.id,
      label: this.label,
      status: last?.status ?? 'idle',
      revision: this.seq,
      owner: 'viewer',
      updatedAt: last?.at ?? 0,
    };
  }

  view(seq?: number): ConversationView | undefined {
    if (seq === undefined) return this.steps.at(-1)?.view;
    const step = this.steps.find((one) => one.seq === seq);
    if (!step) throw this.noStep(seq);
    return step.view;
  }

  history({ afterSeq, limit = 1000 }: HistoryOptions = {}): ConversationStep[] {
    return this.steps
      .filter((step) => afterSeq === undefined || step.seq > afterSeq)
      .slice(0, limit)
      .map(({ seq, at, state, status }) => ({ seq, at, state, status }));
  }

  /** The persisted snapshot of a step, for a fork; the step must exist and be an actor's. */
  persistedAt(seq: number): unknown {
    const step = this.steps.find((one) => one.seq === seq);
    if (!step) throw this.noStep(seq);
    if (step.persisted === undefined)
      throw new EventRejectedError({
        conversationId: this.id,
        eventType: 'fork',
        code: 'rejected',
        message: 'only a watched actor can be forked (a feed brings no snapshot to start from)',
      });
    return step.persisted;
  }

  /**
   * Applies a user's event as a host would: refused (nothing applied) when the run cannot take it;
   * an approval in a workflow goes to the conversation that waits for it; a `cancel` the workflow
   * itself does not take stops each conversation running in it.
   */
  send(event: ConversationUserEvent): void {
    const actor = this.source as OperableActor;
    const refuse = (message: string) =>
      new EventRejectedError({ conversationId: this.id, eventType: event.type, code: 'rejected', message });
    if (typeof actor.send !== 'function' || !('getSnapshot' in actor))
      throw refuse('a feed is read-only: send events to where it comes from');
    if (this.ended) throw refuse('its run has ended');
    const snapshot = actor.getSnapshot() as unknown as HostedSnapshot & { can?: (event: unknown) => boolean };
    if (!this.hosted?.workflow) {
      if (snapshot.can && !snapshot.can(event)) throw refuse(`the run cannot take ${event.type} in its state now`);
      const rejection = sendTaken(actor as { send(event: unknown): void }, event);
      if (rejection !== undefined) throw refuse(rejection);
      return;
    }
    // Where the host would send it; a `cancel` the chart does not take stops each conversation (the viewer cannot store a halted workflow).
    const route = routeWorkflowEvent(actor as unknown as AnyActorRef, event);
    if ('refused' in route) throw refuse(route.refused);
    if ('send' in route) {
      const rejection = sendTaken(route.send, event);
      if (rejection !== undefined) throw refuse(rejection);
      return;
    }
    const running = workflowConversations(snapshot);
    if (running.length === 0) throw refuse('no conversation is running in it to cancel');
    for (const { path } of running) actorAt(actor as unknown as AnyActorRef, path)?.send(event);
  }

  /** Follows the stream as a host does: after an id it handed out, from the kept start (`from: 'run'`), or from now. */
  follow(observer: StreamObserver, { after, from }: FollowOptions = {}): () => void {
    const last = after === undefined ? undefined : parseStreamId(after);
    const replay =
      last && last[2] === this.tag
        ? this.items.filter((item) => {
            const position = parseStreamId(item.id);
            return position !== undefined && (position[0] > last[0] || (position[0] === last[0] && position[1] > last[1]));
          })
        : after !== undefined || from === 'run'
          ? [...this.items]
          : [];
    for (const item of replay) observer.next(item);
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /** A fork's actor: the machine from the step's persisted snapshot, resumed by the machine's own restore rules. */
  forkActor(seq: number): OperableActor {
    if (!this.machine) throw this.noStep(seq);
    return createActor(this.machine, { snapshot: this.persistedAt(seq) as never }) as unknown as OperableActor;
  }

  private noStep(seq: number): ConversationStepNotFoundError {
    const first = this.steps[0]?.seq;
    const last = this.steps.at(-1)?.seq;
    return new ConversationStepNotFoundError(this.id, seq, first === undefined || last === undefined ? undefined : [first, last]);
  }

  private recordSnapshot(snapshot: HostedSnapshot, actor: OperableActor): void {
    const hosted = this.hosted;
    if (!hosted) return;
    const shape = hosted.shapeOf(snapshot);
    if (this.shape !== undefined && !hosted.changed(this.shape, shape)) return;
    this.shape = shape;
    const at = Date.now();
    const seq = this.seq + 1;
    const view = hosted.viewOf(this.id, snapshot, at, seq);
    const persisted = actor.getPersistedSnapshot?.();
    this.addStep({ seq, at, state: view.value, status: view.status, view, ...(persisted === undefined ? {} : { persisted }) });
    const output = isRecord(snapshot.output) ? withoutMessages(snapshot.output) : undefined;
    this.push({ type: 'state', value: view.value, status: view.status, ...(output ? { output } : {}) } as ConversationStreamEvent);
  }

  private fromFeed(update: ConversationUpdate): void {
    if (update.type === 'write.failed') return;
    if (update.type !== 'state') {
      this.push(update);
      return;
    }
    if (update.messages) this.messages = [...update.messages];
    const status = update.status === 'stopped' ? 'done' : update.status;
    const at = Date.now();
    const seq = this.seq + 1;
    const last = this.steps.at(-1)?.view;
    const view: ConversationView = {
      id: this.id,
      status,
      value: update.value,
      messages: this.messages,
      pendingApprovals: status === 'awaitingApproval' ? (last?.pendingApprovals ?? []) : [],
      usage: update.output?.usage ?? last?.usage ?? emptyUsage(),
      updatedAt: at,
      seq,
    };
    this.addStep({ seq, at, state: update.value as ConversationStateValue, status, view });
    const output = update.output ? withoutMessages(update.output as unknown as Record<string, unknown>) : undefined;
    this.push({ type: 'state', value: update.value, status, ...(output ? { output } : {}) } as ConversationStreamEvent);
  }

  private addStep(step: RecordedStep): void {
    this.seq = step.seq;
    this.steps.push(step);
    if (this.steps.length > this.limits.maxSteps) this.steps.splice(0, this.steps.length - this.limits.maxSteps);
  }

  /**
   * One item of the stream. Its revision is the step it belongs to, as a host's: a state change is
   * the step it made; what streams while step n is the newest belongs to step n + 1.
   */
  private push(event: ConversationStreamEvent | ConversationEmittedEvent): void {
    const revision = event.type === 'state' ? this.seq : this.seq + 1;
    const item: ConversationStreamItem = { id: `${revision}.${++this.n}.${this.tag}`, event: event as ConversationStreamEvent };
    this.items.push(item);
    if (this.items.length > this.limits.maxItems) this.items.splice(0, this.items.length - this.limits.maxItems);
    for (const observer of this.observers) {
      try {
        observer.next(item);
      } catch {
        // A reader that throws is its own problem; the others and the run go on.
      }
    }
  }
}

function withoutMessages(output: Record<string, unknown>): Record<string, unknown> {
  const { messages: _messages, ...rest } = output;
  return rest;
}

/**
 * Sends a user's event and returns the message of the `event.rejected` the actor answered it with,
 * if it did (a conversation takes every event and rejects one out of turn so: the host refuses
 * those, and so does the viewer). XState handles a send from outside the actor at once.
 */
function sendTaken(target: { send(event: unknown): void; on?: unknown }, event: ConversationUserEvent): string | undefined {
  let rejection: string | undefined;
  const listening =
    typeof target.on === 'function'
      ? (target.on as OperableActor['on'])('event.rejected', (rejected) => {
          const emitted = rejected as ConversationEmittedEvent;
          if (emitted.type === 'event.rejected' && emitted.eventType === event.type) rejection ??= emitted.message;
        })
      : undefined;
  try {
    target.send(event);
  } finally {
    listening?.unsubscribe();
  }
  return rejection;
}
