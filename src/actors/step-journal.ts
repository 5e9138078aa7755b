import type { ProviderEvent } from '../model/provider.js';

/** The step a provider call, a tool execution or a guardrail check asks the journal to run. */
export type StepInfo =
  | {
      kind: 'request';
      /**
       * The id of the conversation actor that makes the request (an agent call's child is
       * `agent:<toolCallId>`): in an agent tree, it tells whose request a step is.
       */
      caller?: string;
    }
  | { kind: 'guardrail'; phase: 'input' | 'output'; name: string }
  | {
      kind: 'tool';
      toolCallId: string;
      toolName: string;
      /** The tool is not `idempotent`: a step an earlier attempt started and did not finish must not run again. */
      atMostOnce: boolean;
    };

/** What a journaled step resolves with: its recorded value, or that an earlier attempt started it and did not finish. */
export type StepOutcome<T> = { status: 'done'; value: T } | { status: 'interrupted' };

/**
 * Where a run's effects are recorded so a replay of the run does not repeat them (a durable
 * execution engine's journal, e.g. Restate's `ctx.run`). When an actor system has one, every
 * provider request and every tool execution of the conversation machine is one step: `action`
 * runs once, its result (plain JSON) is recorded, and a replay gets the record instead of running it
 * again. The request and tool timeouts are enforced inside the steps then, so that a replay sees the
 * same outcome (see `journaledMachine`).
 *
 * Steps outstanding at once resolve one at a time, in an order the journal records, so a replay
 * delivers the results in the same order as the run it replays. A step may never resolve: the
 * journal may decline to start it (the step is then left for another attempt), and a step whose
 * `signal` aborted is dropped.
 */
export interface StepJournal {
  step<T>(step: StepInfo, action: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<StepOutcome<T>>;
  /** A delta as a request streams it, before the step is recorded: for live display only (never replayed). */
  streamed?(event: Exclude<ProviderEvent, { type: 'finish' }>): void;
}

const journals = new WeakMap<object, StepJournal>();

/**
 * Makes the provider calls and tool executions of an actor system go through `journal`. Set it
 * before the actor starts; an actor system without one runs its steps directly.
 */
export function setStepJournal(system: object, journal: StepJournal): void {
  journals.set(system, journal);
}

/** The journal of an actor system, if one was set. */
export function stepJournalOf(system: object): StepJournal | undefined {
  return journals.get(system);
}
