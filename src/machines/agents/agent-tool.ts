import type { AnyStateMachine } from 'xstate';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { createTool, type InferArgs, type Tool } from '../../tools/define-tool.js';
import type { StandardSchemaV1 } from '../../tools/standard-schema.js';
import type { JSONSchema } from '../../tools/validate.js';
import { option } from '../../util/option-schema.js';

/** The arguments of an agent tool without `parameters`: one question for the child. */
const promptParameters = {
  type: 'object',
  properties: { prompt: { type: 'string', minLength: 1, description: 'What to ask the agent, in full: it sees nothing else.' } },
  required: ['prompt'],
  additionalProperties: false,
} as const satisfies JSONSchema;

/**
 * Options of {@link agentTool}.
 *
 * @example
 * ```ts
 * const options: AgentToolOptions = { name: 'research', description: 'Ask the researcher one question', onChildFailure: 'halt' };
 * ```
 */
export type AgentToolOptions<TParameters extends StandardSchemaV1 | JSONSchema = JSONSchema> = {
  /** The tool's name (what the model calls), and the agent's name in events and `usageByAgent`. */
  name: string;
  description?: string;
  /**
   * The call's argument schema. Default `{ prompt: string }`, whose `prompt` becomes the child's
   * `user.message`; with other parameters the child's `user.message` is the JSON of the arguments.
   */
  parameters?: TParameters;
  /**
   * A child ending `halted` or `error`: `'result'` (default) gives the call an error result naming
   * the status and reason, for the parent's model to decide; `'halt'` ends the parent `halted`
   * (`agent_failed`).
   */
  onChildFailure?: 'result' | 'halt';
  /** Overrides the parent's `toolTimeoutMs` for this call; the parent stops the child when it is up. */
  timeoutMs?: number;
  /** Ask the user (`tool.approve` / `tool.deny`) before the child starts. */
  needsApproval?: boolean | ((args: InferArgs<TParameters>) => boolean);
};

/** What makes a tool an agent call: the machine it starts, and how its failure counts. */
export type AgentCallSpec = {
  /** The child conversation machine. */
  machine: AnyStateMachine;
  onChildFailure: 'result' | 'halt';
  /** Whether the child's `user.message` is the `prompt` argument (default parameters) or the arguments' JSON. */
  promptArgument: boolean;
};

/**
 * A tool whose call runs another conversation machine as a child actor (see {@link agentTool}).
 *
 * @example
 * ```ts
 * const research: AgentTool = agentTool(researcher, { name: 'research', description: 'Ask the researcher' });
 * ```
 */
export interface AgentTool<TArgs = unknown> extends Tool<TArgs, string> {
  readonly agent: AgentCallSpec;
}

const isConversationMachine = (value: unknown): value is AnyStateMachine =>
  typeof value === 'object' &&
  value !== null &&
  (value as { id?: unknown }).id === 'conversation' &&
  typeof (value as AnyStateMachine).getInitialSnapshot === 'function' &&
  typeof (value as AnyStateMachine).restoreSnapshot === 'function' &&
  typeof (value as AnyStateMachine).provide === 'function';

const agentToolOptionsSchema = option.object(
  {
    name: option.unchecked<string>(),
    description: option.unchecked<string | undefined>(),
    parameters: option.unchecked<StandardSchemaV1 | JSONSchema | undefined>(),
    onChildFailure: option.withDefault(option.choice(['result', 'halt']), 'result'),
    timeoutMs: option.unchecked<number | undefined>(),
    needsApproval: option.unchecked<boolean | ((args: never) => boolean) | undefined>(),
  },
  { label: 'agentTool(machine, options)', expected: 'an object { name, description?, parameters?, onChildFailure? }' },
);

/**
 * Makes a conversation machine callable as a tool: each call runs it as a child conversation
 * actor of the caller's tool round (id `agent:<toolCallId>`), started with the caller's
 * `sessionData` and the call's `prompt` as its `user.message`. The call's result is the child's
 * final text (its `object`, as JSON, when it has structured output). The caller's tool timeout,
 * `cancel` and doom-loop rules treat the child as one call: a timeout or `cancel` stops it, its
 * HTTP request and tools aborted. The caller emits `agent.started`, `agent.event` (every event of
 * the child, and of its own children, with their `path`) and `agent.finished`; its usage counts
 * the whole tree.
 *
 * @example
 * ```ts
 * const researcher = createConversationMachine({ provider, tools: [search], system: 'You research.' });
 * const writer = createConversationMachine({
 *   provider,
 *   tools: [agentTool(researcher, { name: 'research', description: 'Ask the researcher one question' })],
 * });
 * ```
 */
export function agentTool<TParameters extends StandardSchemaV1 | JSONSchema = JSONSchema>(
  machine: AnyStateMachine,
  options: AgentToolOptions<TParameters>,
): AgentTool<TParameters extends StandardSchemaV1 ? InferArgs<TParameters> : { prompt: string }> {
  if (!isConversationMachine(machine)) {
    throw new InvalidOptionsError('agentTool(machine)', 'a conversation machine from createConversationMachine(...)', machine);
  }
  const checked = agentToolOptionsSchema.resolve(options, 'agentTool');
  const tool = createTool(
    {
      name: checked.name,
      description: checked.description ?? `Ask the ${String(checked.name)} agent`,
      parameters: checked.parameters ?? promptParameters,
      // Never called: the machine runs the child itself. Kept so an agent tool is a complete Tool.
      execute: () => {
        throw new Error(`the agent tool "${checked.name}" runs as a child actor of a conversation machine, not on its own`);
      },
      ...(checked.timeoutMs === undefined ? {} : { timeoutMs: checked.timeoutMs }),
      ...(checked.needsApproval === undefined ? {} : { needsApproval: checked.needsApproval as boolean | ((args: unknown) => boolean) }),
    },
    'agentTool',
  );
  const agent: AgentCallSpec = { machine, onChildFailure: checked.onChildFailure, promptArgument: checked.parameters === undefined };
  return { ...tool, agent } as AgentTool<TParameters extends StandardSchemaV1 ? InferArgs<TParameters> : { prompt: string }>;
}

/** Whether a tool is an agent call. */
export function isAgentTool(tool: Tool | undefined): tool is AgentTool {
  return tool !== undefined && 'agent' in tool && typeof (tool as AgentTool).agent === 'object';
}
