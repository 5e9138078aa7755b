import type { AssistantContentPart, ToolCallPart, ToolMessage, ToolResultContentPart, ToolResultPart } from '../../model/messages.js';
import type { ProviderContentPart, ProviderToolCall } from '../../model/provider.js';
import type { Tool } from '../../tools/define-tool.js';
import { interruptedText, thrownMessage, timedOutText } from '../../tools/result-text.js';
import { isHandoffTool } from '../agents/agent-profiles.js';
import { isAgentTool } from '../agents/agent-tool.js';
import { handoffResultText } from '../agents/define-agent.js';
import type { RoundCall } from '../names/types.js';
import { utf8Length } from '../../util/utf8-length.js';

/**
 * The error texts calls get when they do not run to completion; stable so hosts can match them.
 *
 * @example
 * ```ts
 * actor.on('tool.result', (event) => {
 *   if (event.result === resultTexts.iterationLimit) console.warn(`${event.name} was not run: iteration limit`);
 * });
 * ```
 */
export const resultTexts = {
  iterationLimit: 'not executed: tool iteration limit reached',
  doomLoop: 'not executed: the same tool calls kept repeating after a notice (doom loop)',
  halted: 'halted: another tool call of this round ended the run',
  cancelled: (reason: string | undefined) => `cancelled${reason ? `: ${reason}` : ''}`,
  denied: (reason: string | undefined) => `denied by user: ${reason ?? 'no reason given'}`,
  timedOut: timedOutText,
  failed: (thrown: unknown) => `Error: ${thrownMessage(thrown)}`,
  /** A call that was running when its process stopped, restored from a snapshot; its tool is not `idempotent`. */
  interrupted: interruptedText,
};

/**
 * A low-cardinality kind for an error result's text (traces use it as `error.type`): `timeout`,
 * `cancelled`, `halted`, `denied`, `not_executed`, or `tool_error` for what a tool threw or any
 * other refusal (unknown tool, invalid arguments).
 *
 * @example
 * ```ts
 * toolErrorType(resultTexts.timedOut('search', 30_000)); // 'timeout'
 * ```
 */
export function toolErrorType(text: string): 'timeout' | 'cancelled' | 'halted' | 'denied' | 'not_executed' | 'tool_error' {
  if (/^tool ".*" timed out after \d+ ms$/s.test(text)) return 'timeout';
  if (text === 'cancelled' || text.startsWith('cancelled: ')) return 'cancelled';
  if (text === resultTexts.halted) return 'halted';
  if (text.startsWith('denied by user: ')) return 'denied';
  if (text.startsWith('not executed: ')) return 'not_executed';
  return 'tool_error';
}

type ParsedArgs = { ok: true; value: unknown } | { ok: false; error: string };

/** Parses streamed argument text; no text at all means a call without arguments. */
export function parseArgs(argsText: string): ParsedArgs {
  if (argsText.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(argsText) as unknown };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

/**
 * The assistant message content of a response, and the round it asks for. Each call is checked
 * before anything runs: malformed JSON, an unknown tool and arguments that fail the schema are
 * settled at once with an error result the model can act on.
 */
export function planResponse(
  content: ProviderContentPart[],
  tools: ReadonlyMap<string, Tool>,
  maxArgsBytes: number = Number.POSITIVE_INFINITY,
  agentLimit: AgentLimit = { depth: 0, maxAgentDepth: Number.POSITIVE_INFINITY },
): { content: AssistantContentPart[]; calls: RoundCall[] } {
  const assistant: AssistantContentPart[] = [];
  const calls: RoundCall[] = [];
  for (const part of content) {
    if (part.type !== 'tool-call') {
      assistant.push(part);
      continue;
    }
    const size = part.argsText.length > maxArgsBytes / 3 ? utf8Length(part.argsText) : 0;
    if (size > maxArgsBytes) {
      // Neither parsed nor kept: a huge argument text would ride along in every later request.
      const base = { toolCallId: part.toolCallId, toolName: part.toolName };
      assistant.push({ type: 'tool-call', ...base, args: {}, ...origin(part) });
      calls.push(
        settled(
          base,
          {},
          `Error: arguments for tool "${part.toolName}" are too large: ${size} bytes (limit ${maxArgsBytes}). Send smaller arguments.`,
        ),
      );
      continue;
    }
    const parsed = parseArgs(part.argsText);
    // Unparsable arguments are kept as their raw text so the history shows what the model sent.
    const args = parsed.ok ? parsed.value : part.argsText;
    assistant.push({ type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, args, ...origin(part) });
    const call = planCall(part.toolCallId, part.toolName, parsed, tools, agentLimit);
    calls.push(handoffOnce(call, calls));
  }
  return { content: assistant, calls };
}

/** The wire's metadata of a call (the Responses item id), kept in the history when there is any. */
function origin(part: ProviderToolCall): Pick<ToolCallPart, 'providerMetadata'> {
  return part.providerMetadata === undefined ? {} : { providerMetadata: part.providerMetadata };
}

/** Why a call was not started: the tree would be deeper than `maxAgentDepth`. */
export function agentDepthText(toolName: string, depth: number, maxAgentDepth: number): string {
  return `Error: agent "${toolName}" was not started: it would run at depth ${depth + 1} of the agent tree, deeper than maxAgentDepth (${maxAgentDepth})`;
}

/** This run's depth in an agent tree, and how deep the calls it makes may go. */
export type AgentLimit = { depth: number; maxAgentDepth: number };

function planCall(
  toolCallId: string,
  toolName: string,
  parsed: ParsedArgs,
  tools: ReadonlyMap<string, Tool>,
  agentLimit: AgentLimit,
): RoundCall {
  const base = { toolCallId, toolName };
  const tool = tools.get(toolName);
  if (!tool) {
    const available = [...tools.keys()];
    return settled(
      base,
      parsed.ok ? parsed.value : {},
      `Error: unknown tool "${toolName}". Available tools: ${available.length ? available.join(', ') : 'none'}.`,
    );
  }
  if (!parsed.ok) {
    return settled(
      base,
      {},
      `Error: invalid arguments for tool "${toolName}": not valid JSON (${parsed.error}). Send the arguments as one JSON object.`,
    );
  }
  const validation = tool.validate(parsed.value);
  if (!validation.success) {
    return settled(base, parsed.value, `Error: invalid arguments for tool "${toolName}": ${validation.error}`);
  }
  if (isHandoffTool(tool)) {
    // Answered at once: the conversation goes to the agent when the round completes.
    return {
      toolCallId,
      toolName,
      args: validation.value,
      state: 'settled',
      result: toolResult(base, handoffResultText(tool.handoff)),
      handoff: tool.handoff,
    };
  }
  const agent = isAgentTool(tool);
  if (agent && agentLimit.depth + 1 > agentLimit.maxAgentDepth) {
    return settled(base, validation.value, agentDepthText(toolName, agentLimit.depth, agentLimit.maxAgentDepth));
  }
  let needsApproval: boolean;
  try {
    needsApproval = tool.needsApproval(validation.value as never);
  } catch (error) {
    return settled(base, validation.value, `Error: needsApproval of tool "${toolName}" threw: ${thrownMessage(error)}`);
  }
  // The call's fields spelled out, not `...base`: see `src/util/with-fields.ts` on Node 20's spreads.
  return {
    toolCallId,
    toolName,
    args: validation.value,
    state: needsApproval ? 'awaiting-approval' : 'queued',
    ...(agent ? { agent: true as const } : {}),
  };
}

/** A second handoff in one response is refused: the conversation can go to one agent only. */
function handoffOnce(call: RoundCall, earlier: readonly RoundCall[]): RoundCall {
  if (call.handoff === undefined) return call;
  const first = earlier.find((other) => other.handoff !== undefined);
  if (!first) return call;
  const { handoff: _handoff, ...rest } = call;
  return {
    ...rest,
    result: errorResult(call, `Error: the conversation is already being handed to ${first.handoff}; one handoff per response`),
  };
}

function settled(base: { toolCallId: string; toolName: string }, args: unknown, text: string): RoundCall {
  return { toolCallId: base.toolCallId, toolName: base.toolName, args, state: 'settled', result: errorResult(base, text) };
}

/** A call's result as the model sees it. */
export function toolResult(
  call: { toolCallId: string; toolName: string },
  text: string,
  content?: ToolResultContentPart[],
): ToolResultPart {
  const part: ToolResultPart = { type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, result: text };
  if (content !== undefined) part.content = content;
  return part;
}

export function errorResult(call: { toolCallId: string; toolName: string }, text: string): ToolResultPart {
  return { type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, result: text, isError: true };
}

/** Settles every call still without a result with the same error text. */
export function settleRemaining(calls: RoundCall[], text: string): RoundCall[] {
  return calls.map((call) => (call.state === 'settled' ? call : { ...call, state: 'settled', result: errorResult(call, text) }));
}

/** The results of a round in call order, as one tool message. */
export function toolMessage(calls: RoundCall[]): ToolMessage {
  return { role: 'tool', content: calls.map((call) => call.result ?? errorResult(call, resultTexts.cancelled(undefined))) };
}
