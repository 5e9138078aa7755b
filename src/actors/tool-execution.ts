import { fromPromise } from 'xstate';
import type { Message } from '../providers/messages.js';
import type { Tool } from '../tools/define-tool.js';
import { capText } from '../tools/result-text.js';
import { serializeResult } from '../util/serialize-result.js';
import { executionGateOf } from './execution-gate.js';

/** What one tool execution needs; plain JSON so a persisted snapshot can restart it. */
export type ToolExecutionInput = {
  toolCallId: string;
  toolName: string;
  /** Arguments already validated against the tool's schema. */
  args: unknown;
  messages: Message[];
  /** The run's `input.sessionData`, handed to `execute` as it is. */
  sessionData?: unknown;
};

/** What a finished execution reports: the call it ran and the text the model will see. */
export type ToolExecutionOutput = { toolCallId: string; result: string };

/**
 * The actor logic that runs one tool's `execute`. The conversation machine stops it when the
 * call's deadline passes, on cancel and on a halt, which aborts its `signal`: a well-behaved tool
 * stops its work, one that ignores it is simply no longer awaited. Resolves with the serialised
 * result (capped at `maxResultBytes`); rejects with whatever the tool threw, for the machine to
 * classify. When a host set an execution gate on the actor system, `execute` of a tool that is not
 * `idempotent` waits for it (see `setExecutionGate`).
 */
export function createToolExecutionLogic(tools: ReadonlyMap<string, Tool>, maxResultBytes: number) {
  return fromPromise<ToolExecutionOutput, ToolExecutionInput>(async ({ input, signal, system }) => {
    const tool = tools.get(input.toolName);
    // The conversation machine only starts known tools; this guards a snapshot restored with other tools.
    if (!tool) throw new Error(`tool "${input.toolName}" is not defined on this machine`);
    // An idempotent call needs no write-ahead: should a crash lose the record that it started, running it again does no harm.
    const gate = tool.idempotent ? undefined : executionGateOf(system);
    if (gate) {
      await gate({ toolCallId: input.toolCallId, toolName: input.toolName });
      // Stopped while it waited (a timeout, a cancel, the host letting go of the run): it never runs.
      if (signal.aborted) throw signal.reason;
    }
    const result: unknown = await tool.execute(input.args, {
      signal,
      toolCallId: input.toolCallId,
      messages: input.messages,
      sessionData: input.sessionData,
    });
    return { toolCallId: input.toolCallId, result: capText(serializeResult(result), maxResultBytes) };
  });
}
