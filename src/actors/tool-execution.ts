import type { Message } from '../model/messages.js';
import type { Tool } from '../tools/define-tool.js';
import { HaltError } from '../tools/halt-error.js';
import { interruptedText, thrownMessage, timedOutText } from '../tools/result-text.js';
import type { ToolOutput } from '../tools/tool-content.js';
import { drainProgress, isProgressIterator } from '../tools/tool-progress.js';
import type { JsonValue } from '../model/json.js';
import type { ToolResultContentPart } from '../model/messages.js';
import { type ExecutionGate, executionGateOf } from './execution-gate.js';
import { faultInjectorOf } from './fault-injector.js';
import { fromLazySignalPromise, type LazySignalPromiseArgs } from './from-lazy-signal-promise.js';
import { type StepJournal, stepJournalOf } from './step-journal.js';

/** What one tool execution needs; plain JSON so a persisted snapshot can restart it. */
export type ToolExecutionInput = {
  toolCallId: string;
  toolName: string;
  /** Arguments already validated against the tool's schema. */
  args: unknown;
  messages: Message[];
  /** The run's `input.sessionData`, handed to `execute` as it is. */
  sessionData?: unknown;
  /** The call's timeout; a journaled execution enforces it itself (the machine's timer does otherwise). */
  timeoutMs?: number;
};

/**
 * What a finished execution reports: the call it ran and the text the model will see — an error
 * result when `isError` (a journaled execution that timed out, or that a restart interrupted) —
 * and, for a `toolContent` result, its parts.
 */
export type ToolExecutionOutput = { toolCallId: string; result: string; isError?: boolean; content?: ToolResultContentPart[] };

/** A running call's progress, sent by its execution to the conversation (never by users). */
export type ToolProgressReport = { type: 'tool.progress'; toolCallId: string; data: JsonValue };

/** What a journaled execution records: how the call ended, as plain JSON. */
export type ToolStepRecord =
  | { kind: 'result'; text: string; content?: ToolResultContentPart[] }
  | { kind: 'error'; text: string }
  | { kind: 'halt'; content: string }
  | { kind: 'timeout' }
  | { kind: 'stopped' };

/**
 * The actor logic that runs one tool's `execute`. The conversation machine stops it when the
 * call's deadline passes, on cancel and on a halt, which aborts its `signal`: a well-behaved tool
 * stops its work, one that ignores it is simply no longer awaited. Resolves with the result as
 * `outputOf` keeps it (serialised and capped, or a `toolContent`'s checked parts); rejects with whatever the tool threw, for the machine to
 * classify. When a host set an execution gate on the actor system, `execute` of a tool that is not
 * `idempotent` waits for it (see `setExecutionGate`). When a step journal is set, the execution is
 * one journaled step instead (see `StepJournal`).
 */
export function createToolExecutionLogic(tools: ReadonlyMap<string, Tool>, outputOf: (value: unknown) => ToolOutput) {
  // `actor.signal` is read only where it is used: a tool that never reads its own costs no signal.
  // Not an `async` function: a call parked in a slow tool holds one `then` callback rather than a
  // suspended frame (about 200 bytes less). What it throws at once still rejects the promise.
  return fromLazySignalPromise<ToolExecutionOutput, ToolExecutionInput>((actor) => {
    const { input, system } = actor;
    const tool = tools.get(input.toolName);
    // The conversation machine only starts known tools; this guards a snapshot restored with other tools.
    if (!tool) throw new Error(`tool "${input.toolName}" is not defined on this machine`);
    const journal = stepJournalOf(system);
    if (journal) return journaledExecution(journal, tool, actor, outputOf);
    // An idempotent call needs no write-ahead: should a crash lose the record that it started, running it again does no harm.
    const gate = tool.idempotent ? undefined : executionGateOf(system);
    const run = () => (gate ? gatedExecution(gate, tool, actor) : execute(tool, actor));
    // A fault soak decides how the execution goes; without one this is one WeakMap lookup.
    const injector = faultInjectorOf(system);
    const executed = injector
      ? injector.tool(
          {
            toolCallId: input.toolCallId,
            toolName: input.toolName,
            idempotent: tool.idempotent === true,
            ...(actor.self._parent ? { caller: actor.self._parent.id } : {}),
          },
          run,
          () => actor.signal,
        )
      : run();
    return executed.then((value) => executionOutput(input.toolCallId, outputOf(value)));
  });
}

type ExecutionActor = LazySignalPromiseArgs<ToolExecutionOutput, ToolExecutionInput>;

/** The tool's `execute`, handed a signal that is made only if the tool reads it. */
function execute(tool: Tool, actor: ExecutionActor): Promise<unknown> {
  const { input, self } = actor;
  const value = tool.execute(input.args, {
    get signal() {
      return actor.signal;
    },
    toolCallId: input.toolCallId,
    messages: input.messages,
    sessionData: input.sessionData,
  });
  if (!isProgressIterator(value)) return Promise.resolve(value);
  // A stopped actor's status is no longer active: read that, not the signal, which would be made for it.
  return drainProgress(value, progressReporter(self, input.toolCallId), () => self.getSnapshot().status !== 'active');
}

/**
 * Sends a call's progress to the conversation that runs it (the actor that spawned this one), as
 * `tool.progress`; the conversation emits it to its listeners.
 */
function progressReporter(self: { _parent?: { send(event: ToolProgressReport): void } }, toolCallId: string) {
  // `_parent` is declared on XState's public `ActorRef` type: the actor that spawned this one.
  return (data: JsonValue) => self._parent?.send({ type: 'tool.progress', toolCallId, data });
}

/** The output of a finished call; `content` only when the tool gave parts. */
function executionOutput(toolCallId: string, output: { text: string; content?: ToolResultContentPart[] }): ToolExecutionOutput {
  return output.content === undefined ? { toolCallId, result: output.text } : { toolCallId, result: output.text, content: output.content };
}

/** `execute` once the host's execution gate lets it run. */
async function gatedExecution(gate: ExecutionGate, tool: Tool, actor: ExecutionActor): Promise<unknown> {
  await gate({ toolCallId: actor.input.toolCallId, toolName: actor.input.toolName });
  // Stopped while it waited (a timeout, a cancel, the host letting go of the run): it never runs.
  if (actor.signal.aborted) throw actor.signal.reason;
  return execute(tool, actor);
}

/** The call as one journaled step: what the record says is what the machine gets, on the first run and on every replay. */
async function journaledExecution(
  journal: StepJournal,
  tool: Tool,
  actor: ExecutionActor,
  outputOf: (value: unknown) => ToolOutput,
): Promise<ToolExecutionOutput> {
  const { input, signal } = actor;
  // Progress is live only: a replayed step reports none, its record holds the result alone.
  const report = progressReporter(actor.self, input.toolCallId);
  const outcome = await journal.step<ToolStepRecord>(
    { kind: 'tool', toolCallId: input.toolCallId, toolName: input.toolName, atMostOnce: !tool.idempotent },
    (stepSignal) => runTool(tool, input, stepSignal, outputOf, report),
    signal,
  );
  const { toolCallId } = input;
  if (outcome.status === 'interrupted') return { toolCallId, result: interruptedText, isError: true };
  const record = outcome.value;
  switch (record.kind) {
    case 'result':
      return executionOutput(toolCallId, record);
    case 'timeout':
      return { toolCallId, result: timedOutText(input.toolName, input.timeoutMs ?? 0), isError: true };
    case 'halt':
      throw new HaltError(record.content);
    case 'error':
      // The text is what the tool threw, as the machine words it; a string thrown keeps it verbatim.
      throw record.text;
    case 'stopped':
      throw signal.reason;
  }
}

/**
 * Runs `execute` with the call's timeout and turns however it ends into a record: the timeout is
 * decided here, inside the step, so a replay of the step sees the same outcome as the run did.
 */
function runTool(
  tool: Tool,
  input: ToolExecutionInput,
  signal: AbortSignal,
  outputOf: (value: unknown) => ToolOutput,
  report: (data: JsonValue) => void,
): Promise<ToolStepRecord> {
  const controller = new AbortController();
  const stop = () => controller.abort(signal.reason);
  signal.addEventListener('abort', stop, { once: true });
  return new Promise<ToolStepRecord>((resolve) => {
    const deadline = input.timeoutMs === undefined ? undefined : Date.now() + input.timeoutMs;
    const timer =
      input.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            // Settled first: the abort below would otherwise settle it as stopped.
            resolve({ kind: 'timeout' });
            controller.abort(new Error(timedOutText(input.toolName, input.timeoutMs ?? 0)));
          }, input.timeoutMs);
    controller.signal.addEventListener(
      'abort',
      () => {
        if (timer !== undefined) clearTimeout(timer);
        resolve({ kind: 'stopped' });
      },
      { once: true },
    );
    if (signal.aborted) stop();
    const finish = (record: ToolStepRecord) => {
      if (timer !== undefined) clearTimeout(timer);
      signal.removeEventListener('abort', stop);
      // A stalled event loop can run the tool's end ahead of its due timer: past the deadline it is a timeout all the same.
      resolve(deadline !== undefined && Date.now() > deadline ? { kind: 'timeout' } : record);
    };
    // A tool that ignores its signal is left running; its late outcome lands in a settled promise.
    Promise.resolve()
      .then(() => {
        const value = tool.execute(input.args, {
          signal: controller.signal,
          toolCallId: input.toolCallId,
          messages: input.messages,
          sessionData: input.sessionData,
        });
        return isProgressIterator(value) ? drainProgress(value, report, () => controller.signal.aborted) : value;
      })
      .then((value: unknown) => outputOf(value))
      .then(
        (output) => finish({ kind: 'result', ...output }),
        (thrown: unknown) =>
          finish(HaltError.isInstance(thrown) ? { kind: 'halt', content: thrown.content } : { kind: 'error', text: thrownMessage(thrown) }),
      );
  });
}
