import type { ConversationEmittedEvent, ConversationStateValue, ConversationUserEvent } from '../../machines/types.js';
import type { Message } from '../../model/messages.js';
import type { WriteFailedEvent } from '../../host/live-run.js';
import type { ConversationStateUpdate, ObservedStatus } from '../conversation-source.js';
import { isEndStatus } from '../state-update.js';
import { nextText } from '../text-so-far.js';
import { activePaths, logOfEmitted, logOfReceived, type RunLogEntry, stateLabel } from './run-log.js';

/**
 * A run in the viewer's list.
 *
 * @example
 * ```ts
 * const runs: RunSummary[] = await (await fetch(`${viewer.url}api/runs`)).json();
 * ```
 */
export type RunSummary = {
  id: string;
  label: string;
  /** For an agent call's child: the run whose call started it (the viewer nests it there). */
  parent?: string;
  /** The chart drawn for its machine (`null` when its machine is not known). */
  chart: string | null;
  value: ConversationStateValue;
  /** The innermost active state, e.g. `requesting.waiting`. */
  state: string;
  /**
   * `idle`, `running` or `awaitingApproval` while it goes on, then how it ended (`done`, `halted`,
   * `error`, or `stopped` for an actor stopped before its end). A host conversation goes on to
   * `running` again with its next run.
   */
  status: ObservedStatus;
  startedAt: number;
  updatedAt: number;
};

/**
 * Everything the viewer shows of one run.
 *
 * @example
 * ```ts
 * const run: RunDetail = await (await fetch(`${viewer.url}api/runs/c-42`)).json();
 * console.log(run.state, run.log.length, run.messages.length);
 * ```
 */
export type RunDetail = RunSummary & {
  activePaths: string[];
  /** The active states before the last state change (to mark the arrow just taken). */
  previousPaths: string[];
  /** The user event that caused the last state change, when one did (`cancel`). */
  cause?: string;
  /** The response being streamed so far. */
  text: string;
  log: RunLogEntry[];
  messages: readonly Message[];
};

/** What changed in a run, as the page is told. */
export type RunChange =
  | { type: 'state'; run: RunSummary; activePaths: string[]; previousPaths: string[]; cause?: string }
  | { type: 'log'; entry: RunLogEntry }
  | { type: 'text'; text: string }
  | { type: 'messages'; messages: readonly Message[] };

/** One watched run: its state, log, streamed text and messages, kept up to date from its updates. */
export class RunView {
  private value: ConversationStateValue = 'idle';
  private stateName = 'idle';
  private status: ObservedStatus = 'idle';
  private paths: string[] = ['idle'];
  private previousPaths: string[] = [];
  private cause: string | undefined;
  /** The user event just received, until the state change it causes. */
  private lastReceived: string | undefined;
  private text = '';
  private messages: readonly Message[] = [];
  private readonly log: RunLogEntry[] = [];
  private seq = 0;
  private readonly toolNames = new Map<string, string>();
  private readonly startedAt = Date.now();
  private updatedAt = this.startedAt;

  constructor(
    readonly id: string,
    readonly label: string,
    readonly chart: string | null,
    private readonly maxLogEntries: number,
    private readonly changed: (change: RunChange) => void,
    readonly parent?: string,
  ) {}

  summary(): RunSummary {
    return {
      id: this.id,
      label: this.label,
      ...(this.parent === undefined ? {} : { parent: this.parent }),
      chart: this.chart,
      value: this.value,
      state: this.stateName,
      status: this.status,
      startedAt: this.startedAt,
      updatedAt: this.updatedAt,
    };
  }

  detail(): RunDetail {
    return {
      ...this.summary(),
      activePaths: this.paths,
      previousPaths: this.previousPaths,
      ...(this.cause ? { cause: this.cause } : {}),
      text: this.text,
      log: [...this.log],
      messages: this.messages,
    };
  }

  get ended(): boolean {
    return isEndStatus(this.status);
  }

  state(update: ConversationStateUpdate): void {
    if (update.messages && update.messages !== this.messages) {
      this.messages = update.messages;
      this.changed({ type: 'messages', messages: this.messages });
    }
    // A user event is relayed before the actor processes it: the change right after it is its doing.
    const received = this.lastReceived;
    this.lastReceived = undefined;
    // Most snapshots (a streamed delta) leave the state as it was: XState then keeps the same value object.
    if (update.value === this.value && update.status === this.status) return;
    const label = stateLabel(update.value);
    if (label === this.stateName && update.status === this.status) return;
    this.stateName = label;
    this.cause = received;
    const previousPaths = this.paths;
    this.previousPaths = previousPaths;
    this.value = update.value;
    this.status = update.status;
    this.paths = activePaths(update.value);
    this.updatedAt = Date.now();
    this.append({ kind: 'state', text: `→ ${label}${isEndStatus(update.status) ? ` (${update.status})` : ''}` });
    this.changed({ type: 'state', run: this.summary(), activePaths: this.paths, previousPaths, ...(received ? { cause: received } : {}) });
  }

  emitted(event: ConversationEmittedEvent): void {
    if (event.type === 'text.delta' || event.type === 'request.started' || event.type === 'request.retry') {
      const text = nextText(this.text, event);
      if (text !== undefined && text !== this.text) {
        this.text = text;
        this.changed({ type: 'text', text });
      }
    }
    const entry = logOfEmitted(event, this.toolNames);
    if (entry) this.append(entry);
  }

  writeFailed(event: WriteFailedEvent): void {
    this.append({ kind: 'error', isError: true, text: `not stored, so the host stopped the run: ${event.error.message}` });
  }

  /** The feed failed: nothing more comes for this run. */
  failed(error: unknown): void {
    this.append({ kind: 'error', isError: true, text: `cannot follow it: ${error instanceof Error ? error.message : String(error)}` });
  }

  received(event: ConversationUserEvent): void {
    this.lastReceived = event.type;
    this.append(logOfReceived(event, this.toolNames));
  }

  private append(entry: Omit<RunLogEntry, 'seq' | 'at'>): void {
    const full: RunLogEntry = { seq: ++this.seq, at: Date.now(), ...entry };
    this.log.push(full);
    if (this.log.length > this.maxLogEntries) this.log.shift();
    this.updatedAt = full.at;
    this.changed({ type: 'log', entry: full });
  }
}
