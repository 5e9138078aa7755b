import type { Provider } from '../../model/provider.js';
import type { Tool } from '../../tools/define-tool.js';
import { option } from '../../util/option-schema.js';

/**
 * What {@link defineAgent} takes: one agent of a machine with handoffs.
 *
 * @example
 * ```ts
 * const definition: AgentDefinition = { name: 'billing', system: 'You handle refunds.', tools: [refund], handoffs: ['triage'] };
 * ```
 */
export type AgentDefinition = {
  /** Unique among the machine's agents; the handoff tool to it is `transfer_to_<name>`. */
  name: string;
  /** This agent's system prompt: it replaces the previous agent's when the conversation is handed to it. */
  system?: string;
  /** What the model is told this agent does, in the `transfer_to_<name>` tool of the agents that hand off to it. */
  description?: string;
  // Tools differ in argument types; the machine only hands each tool the arguments its own schema validated.
  tools?: ReadonlyArray<Tool<never, unknown>>;
  /** This agent's provider; default the machine's `provider`. */
  provider?: Provider;
  /** The agents this one may hand the conversation to: each becomes a tool `transfer_to_<name>`. */
  handoffs?: readonly string[];
};

/**
 * An agent as {@link defineAgent} returns it: checked, with defaults applied.
 *
 * @example
 * ```ts
 * const agents: Agent[] = [triage, billing];
 * ```
 */
export type Agent = {
  readonly name: string;
  readonly system: string | undefined;
  readonly description: string | undefined;
  readonly tools: ReadonlyArray<Tool<never, unknown>>;
  readonly provider: Provider | undefined;
  readonly handoffs: readonly string[];
};

const agentNamePattern = /^[a-zA-Z0-9_-]{1,52}$/;

const agentDefinitionSchema = option.object(
  {
    name: option.matching(
      'an agent name of 1 to 52 letters, digits, "_" or "-" (its handoff tool is transfer_to_<name>)',
      (value): value is string => typeof value === 'string' && agentNamePattern.test(value),
    ),
    system: option.optional(option.string()),
    description: option.optional(option.string()),
    tools: option.withDefault(option.array(option.unchecked<Tool<never, unknown>>(), 'an array of tools made with defineTool'), []),
    provider: option.optional(
      option.matching(
        'a Provider (e.g. openaiProvider(...), anthropicProvider(...), handlerProvider(fn))',
        (value): value is Provider => typeof value === 'object' && value !== null && typeof (value as Provider).stream === 'function',
      ),
    ),
    handoffs: option.withDefault(option.array(option.string({ nonEmpty: true }), 'an array of agent names'), []),
  },
  { label: 'defineAgent(definition)', expected: 'an object { name, system?, tools?, provider?, handoffs? }' },
);

/**
 * Defines an agent for a machine with handoffs: `createConversationMachine({ agents, startAgent })`
 * makes one conversation whose context holds the active agent. Each name in `handoffs` becomes a
 * tool `transfer_to_<name>`; when the model calls it, the next request uses that agent's system
 * prompt, tools and provider over the same history, and the run emits `agent.handoff`.
 *
 * @example
 * ```ts
 * const triage = defineAgent({ name: 'triage', system: 'Route the customer.', handoffs: ['billing'] });
 * const billing = defineAgent({ name: 'billing', system: 'You handle refunds.', tools: [refund], handoffs: ['triage'] });
 * const desk = createConversationMachine({ provider, agents: [triage, billing], startAgent: 'triage' });
 * ```
 */
export function defineAgent(definition: AgentDefinition): Agent {
  return Object.freeze(agentDefinitionSchema.resolve(definition, 'defineAgent'));
}

/** The tool name that hands the conversation to `agent`. */
export const handoffToolName = (agent: string) => `transfer_to_${agent}`;

/** The result a handoff call gets. */
export const handoffResultText = (agent: string) => `transferred to ${agent}`;
