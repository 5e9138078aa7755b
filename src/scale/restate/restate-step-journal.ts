import { AsyncLocalStorage } from 'node:async_hooks';
import { type ObjectContext, RestatePromise } from '@restatedev/restate-sdk';
import type { StepInfo, StepJournal, StepOutcome } from '../../machines/restore/step-journal.js';

/** What the journal records for a step: its value, or that an earlier attempt started it; and when it ended. */
type StepRecord = { value: unknown; at: number } | { interrupted: true; at: number };

type Pending = {
  id: number;
  record?: StepRecord;
  deliver: (outcome: StepOutcome<unknown>) => void;
  controller: AbortController;
};

/** A journal entry the loop waits for, and what to do with its value. */
type Watched = { promise: RestatePromise<{ key: number; value: unknown }>; take: (value: unknown) => void };

export type RestateStepJournalOptions = {
  /** Provider requests this invocation may make; the next one is declined (the segment ends there). */
  requests: number;
  /**
   * Whether this request may be made in this invocation, in place of the `requests` count: a
   * workflow lets each of its conversations make one, so conversations in parallel states ask at
   * once. Asked once per request, in the order the machine asks: the same on a replay.
   */
  requestAllowed?: (step: Extract<StepInfo, { kind: 'request' }>) => boolean;
  /** Whether tool calls may run in this invocation; declined otherwise. */
  tools: boolean;
  /** Tells which step was declined: the run waits there for the next invocation. */
  declined: (step: StepInfo) => void;
  /** Tells which step started (its events may go out). */
  started: (step: StepInfo) => void;
  /** Deltas as a request streams them (live output), with the step that streams them when it is known. */
  streamed?: (event: Parameters<NonNullable<StepJournal['streamed']>>[0], step: StepInfo | undefined) => void;
  /** A journal operation failed (the invocation attempt is over): the run must stop. */
  failed: (error: unknown) => void;
  /** A step was delivered, the run took it, and no step is outstanding now. */
  idle?: () => void;
};

const never = new Promise<never>(() => undefined);
/** The step whose action runs: a delta the action streams is told with its step (whose request it is). */
const runningStep = new AsyncLocalStorage<StepInfo>();
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The steps of a run as Restate journal entries (`ctx.run`), for one invocation attempt:
 *
 * - A provider request is `ctx.run('request')`: a replay returns the recorded response instead of
 *   asking the model again.
 * - A tool call is `ctx.run('tool <id>')`. For a tool that is not `idempotent` a first entry,
 *   `tool <id> started`, records which attempt starts it, and the execution waits until that entry
 *   is stored (write-ahead): an attempt that finds the start recorded by another attempt, and no
 *   result, knows that the call may have run and gives it the interrupted result instead.
 * - Every command a step needs is issued when the step is asked for, so the order of commands
 *   depends only on the order the machine asks — the same on a replay.
 * - One loop waits for the journal (the SDK allows one waiter at a time; a replay needs the same
 *   waits as the run): it races the entries in flight and delivers the results one at a time. When
 *   more than one step is outstanding, a `next` entry records which finished first, and a replay
 *   delivers in that order. The machine then takes the same transitions on a replay as in the run,
 *   and writes the same state.
 */
export class RestateStepJournal implements StepJournal {
  readonly streamed: StepJournal['streamed'];
  /** When the last delivered step ended (epoch ms), from the journal: the same on a replay. */
  lastStepAt: number | undefined;
  private readonly ctx: ObjectContext;
  private readonly options: RestateStepJournalOptions;
  /** Identifies this attempt in the `started` entries: a fresh value per attempt, never replayed. */
  private readonly attempt = `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  private readonly outstanding = new Map<number, Pending>();
  /** Ids of outstanding steps whose record arrived, in arrival order. */
  private readonly arrived: number[] = [];
  private readonly watched = new Map<number, Watched>();
  /** The step a `next` entry chose, while its record is still on its way (in a replay). */
  private chosen: number | undefined;
  private requestsLeft: number;
  private nextId = 0;
  private nextKey = 0;
  private looping = false;
  private wake: (() => void) | undefined;
  private closed = false;

  constructor(ctx: ObjectContext, options: RestateStepJournalOptions) {
    this.ctx = ctx;
    this.options = options;
    this.requestsLeft = options.requests;
    const { streamed } = options;
    this.streamed = streamed && ((event) => streamed(event, runningStep.getStore()));
  }

  step<T>(step: StepInfo, action: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<StepOutcome<T>> {
    if (this.closed || signal.aborted) return never;
    const { requestAllowed } = this.options;
    const allowed = step.kind !== 'request' ? this.options.tools : requestAllowed ? requestAllowed(step) : this.requestsLeft > 0;
    if (!allowed) {
      this.options.declined(step);
      return never;
    }
    if (step.kind === 'request') this.requestsLeft--;
    this.options.started(step);
    const name =
      step.kind === 'tool' ? `tool ${step.toolCallId}` : step.kind === 'guardrail' ? `guardrail ${step.phase} ${step.name}` : 'request';
    const controller = new AbortController();
    return new Promise<StepOutcome<T>>((resolve) => {
      const pending: Pending = { id: this.nextId++, deliver: resolve as Pending['deliver'], controller };
      this.outstanding.set(pending.id, pending);
      signal.addEventListener(
        'abort',
        () => {
          controller.abort(signal.reason);
          this.drop(pending.id);
        },
        { once: true },
      );
      // Both commands are issued now, in the order the machine asks for steps.
      let startedBy: string | undefined;
      const started = step.kind === 'tool' && step.atMostOnce ? this.ctx.run(`${name} started`, () => this.attempt) : undefined;
      const run = this.ctx.run<StepRecord>(name, async () => {
        if (started && startedBy !== this.attempt) return { interrupted: true, at: Date.now() };
        const value = await runningStep.run(step, () => action(controller.signal));
        return { value, at: Date.now() };
      });
      const arrive = (record: unknown) => {
        pending.record = record as StepRecord;
        if (this.outstanding.has(pending.id)) this.arrived.push(pending.id);
      };
      // The execution's closure runs once it is awaited: only after its start is stored.
      if (started) {
        this.watch(started, (attempt) => {
          startedBy = attempt as string;
          this.watch(run, arrive);
        });
      } else {
        this.watch(run, arrive);
      }
    });
  }

  /** Whether a step is outstanding: started here and not yet delivered. */
  get busy(): boolean {
    return this.outstanding.size > 0;
  }

  /** No step starts or is delivered any more (the segment ended); running steps are stopped. */
  close(reason: unknown): void {
    if (this.closed) return;
    this.closed = true;
    for (const pending of this.outstanding.values()) pending.controller.abort(reason);
    this.outstanding.clear();
    this.watched.clear();
    this.wake?.();
  }

  private watch(promise: RestatePromise<unknown>, take: (value: unknown) => void): void {
    const key = this.nextKey++;
    this.watched.set(key, { promise: promise.map((value) => ({ key, value })), take });
    this.wake?.();
    if (!this.looping) {
      this.looping = true;
      this.loop().catch((error: unknown) => {
        if (!this.closed) this.options.failed(error);
      });
    }
  }

  private drop(id: number): void {
    this.outstanding.delete(id);
    const index = this.arrived.indexOf(id);
    if (index >= 0) this.arrived.splice(index, 1);
  }

  private async loop(): Promise<void> {
    while (!this.closed) {
      if (await this.deliverNext()) {
        // The machine takes the result and asks for the steps it leads to before anything else is awaited.
        await nextTurn();
        if (!this.closed && this.outstanding.size === 0) this.options.idle?.();
        continue;
      }
      if (this.watched.size === 0) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
        continue;
      }
      const { key, value } = await RestatePromise.race([...this.watched.values()].map((watched) => watched.promise));
      const watched = this.watched.get(key);
      this.watched.delete(key);
      watched?.take(value);
    }
  }

  /**
   * Delivers one outstanding step if one is due: the only outstanding one once its record is in,
   * else the one a `next` entry chooses (the first to finish; in a replay, the recorded choice).
   */
  private async deliverNext(): Promise<boolean> {
    if (this.chosen === undefined) {
      if (this.arrived.length === 0) return false;
      if (this.outstanding.size === 1) this.chosen = this.arrived[0];
      else this.chosen = await this.ctx.run('next', () => this.arrived[0] ?? -1);
      if (this.closed) return false;
      if (!this.outstanding.has(this.chosen ?? -1)) {
        throw new Error(`the journal delivers step ${this.chosen} next, which this run does not have outstanding`);
      }
    }
    const chosen = this.outstanding.get(this.chosen ?? -1);
    const record = chosen?.record;
    // In a replay the chosen step's record may still be on its way.
    if (!chosen || record === undefined) return false;
    this.chosen = undefined;
    this.drop(chosen.id);
    this.lastStepAt = record.at;
    chosen.deliver('interrupted' in record ? { status: 'interrupted' } : { status: 'done', value: record.value });
    return true;
  }
}
