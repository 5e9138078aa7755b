import type { AnyStateMachine } from 'xstate';
import type { ConversationStore } from '../host/conversation-store.js';
import type { ActorWatch } from './actor-watch.js';
import type { RunFaults } from './run-faults.js';
import type { Problem } from './soak-checks.js';

/**
 * How a run of the soak ended: its output's status (`done`, `halted`, `error`; a workflow whose
 * output has none counts `done`), `waiting` (a workflow resting in a state one of `externalEvents`
 * leaves), `stuck` (not ended in time) or `failed` (the actor itself errored).
 *
 * @example
 * ```ts
 * const outcome: SoakOutcome = 'halted';
 * ```
 */
export type SoakOutcome = 'done' | 'halted' | 'error' | 'waiting' | 'stuck' | 'failed';

/** How the soak runs a machine in a host (the `host` option, resolved). */
export type HostSettings = {
  /** A new store for each run. */
  store: () => Promise<ConversationStore>;
  leaseTtlMs: number;
  /** The user gave the store factory (a reproduction then names it). */
  custom: boolean;
};

/** The soak's options, checked and with their defaults. */
export type Settings = {
  runs: number;
  seed: number;
  concurrency: number;
  runTimeoutMs: number;
  shrink: number;
  externalEvents: string[];
  conversation: boolean;
  inputOf: (seed: number) => unknown;
  host: HostSettings | undefined;
};

export type RunResult = { outcome: SoakOutcome; problems: Problem[]; injected: Map<string, number> };

/** How a run ended, as its driver saw it. */
export type Ending = { output: unknown } | { error: unknown } | { stuck: true };

/** A snapshot that can say whether it takes an event where it rests. */
export type RestingSnapshot = { value?: unknown; can(event: { type: string }): boolean };

/** What a driver of one run is given: the machine and its input, the faults, the watch over its actors, and how to end it. */
export type RunControl = {
  machine: AnyStateMachine;
  seed: number;
  input: unknown;
  faults: RunFaults;
  watch: ActorWatch;
  /** Ends the run; the first ending counts. */
  settle(ending: Ending): void;
  settled(): boolean;
  /** Something happened that a run answers in time: it has `runTimeoutMs` from now to end. */
  touch(): void;
};

/** Runs the machine one way — as an actor, or in a host — through the plan's cancel and restore. */
export type RunDriver = {
  /** Starts the run; a throw is the machine's failure to start. */
  start(): Promise<void>;
  /** The plan's cancel moment. */
  cancel(): void;
  /** The plan's restore moment: a restore from the persisted snapshot, or a kill of the host. */
  restore(): void;
  /** A cancel reached the run while it was active: a conversation must end `halted` / `cancelled`. */
  cancelledWhileActive(): boolean;
  /** The root's snapshot where a run that did not end rests. */
  resting(): Promise<RestingSnapshot | undefined>;
  /** After the checks: stops what still runs (a stuck run) and lets go of what the driver holds. */
  finish(): Promise<void>;
};
