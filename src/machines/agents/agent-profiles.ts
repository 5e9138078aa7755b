import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import type { Provider, ToolDescription } from '../../model/provider.js';
import { createTool, isTool, type Tool } from '../../tools/define-tool.js';
import type { Agent } from './define-agent.js';
import { handoffResultText, handoffToolName } from './define-agent.js';

/**
 * What one request is made with: the active agent's provider, system prompt and tools. A machine
 * without `agents` has one profile, named by its `name` option.
 */
export type AgentProfile = {
  name: string;
  /** The first of `providers`: the one each request starts with. */
  provider: Provider;
  /** The provider and its fallbacks, in order. */
  providers: readonly Provider[];
  system: string | undefined;
  /** The tools the model may call now, by name (handoff tools included). */
  tools: ReadonlyMap<string, Tool>;
  toolDescriptions: ToolDescription[];
};

/** A `transfer_to_<name>` tool: its call is answered at once and hands the conversation on. */
export interface HandoffTool extends Tool {
  readonly handoff: string;
}

/** Whether a tool hands the conversation to another agent. */
export function isHandoffTool(tool: Tool | undefined): tool is HandoffTool {
  return tool !== undefined && typeof (tool as HandoffTool).handoff === 'string';
}

const noArguments = { type: 'object', properties: {}, additionalProperties: false } as const;

function handoffTool(target: Agent): HandoffTool {
  const tool = createTool(
    {
      name: handoffToolName(target.name),
      description: `Hand the conversation to the ${target.name} agent${target.description ? `: ${target.description}` : ''}.`,
      parameters: noArguments,
      // Never called: the machine answers a handoff call itself (`transferred to <name>`).
      execute: () => handoffResultText(target.name),
    },
    'handoff',
  );
  return { ...tool, handoff: target.name };
}

/** The tools of a list, by name; a plain definition object is accepted too, so a typo surfaces with its position in the list. */
export function toolsByName(list: readonly unknown[], path: string, into = new Map<string, Tool>()): Map<string, Tool> {
  const named = new Set<string>();
  list.forEach((raw, index) => {
    const tool = (isTool(raw) ? raw : createTool(raw as Parameters<typeof createTool>[0], `${path}[${index}]`)) as Tool;
    // The same tool may come again from another list (shared and an agent's own), never twice in one.
    if (named.has(tool.name) || (into.has(tool.name) && into.get(tool.name) !== tool)) {
      throw new InvalidOptionsError(`${path}[${index}].name`, 'a tool name not used by another tool', tool.name);
    }
    named.add(tool.name);
    into.set(tool.name, tool);
  });
  return into;
}

const describe = (tools: ReadonlyMap<string, Tool>): ToolDescription[] =>
  [...tools.values()].map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }));

/** The profile of a machine without agents. */
export function singleProfile(
  name: string,
  providers: readonly Provider[],
  system: string | undefined,
  tools: ReadonlyMap<string, Tool>,
): AgentProfile {
  return { name, provider: providers[0] as Provider, providers, system, tools, toolDescriptions: describe(tools) };
}

/**
 * The profiles of a machine with handoffs, checked: agent names are unique, every handoff names
 * an agent, the start agent is one of them, every agent has a provider (its own or the machine's),
 * and no two different tools share a name. Each agent's tools are the machine's shared `tools`,
 * its own, and a `transfer_to_<name>` per handoff. `allTools` collects every tool, for execution.
 */
export function agentProfiles(
  agents: readonly Agent[],
  startAgent: string | undefined,
  shared: ReadonlyMap<string, Tool>,
  providerOf: (agent: Agent, index: number) => readonly Provider[],
  allTools: Map<string, Tool>,
): { profiles: Map<string, AgentProfile>; startAgent: string } {
  const byName = new Map<string, Agent>();
  agents.forEach((agent, index) => {
    if (byName.has(agent.name)) throw new InvalidOptionsError(`agents[${index}].name`, 'an agent name no other agent has', agent.name);
    byName.set(agent.name, agent);
  });
  const start = startAgent ?? agents[0]?.name;
  if (start === undefined || !byName.has(start)) {
    throw new InvalidOptionsError('startAgent', `the name of one of the agents (${[...byName.keys()].join(', ')})`, startAgent);
  }
  const profiles = new Map<string, AgentProfile>();
  agents.forEach((agent, index) => {
    const tools = toolsByName(agent.tools, `agents[${index}].tools`, new Map(shared));
    toolsByName([...tools.values()], `agents[${index}].tools`, allTools);
    agent.handoffs.forEach((target, handoffIndex) => {
      const to = byName.get(target);
      if (!to) {
        throw new InvalidOptionsError(
          `agents[${index}].handoffs[${handoffIndex}]`,
          `the name of one of the agents (${[...byName.keys()].join(', ')})`,
          target,
        );
      }
      const tool = handoffTool(to);
      if (tools.has(tool.name))
        throw new InvalidOptionsError(`agents[${index}].tools`, `no tool named ${tool.name} (the handoff tool has that name)`);
      tools.set(tool.name, tool);
      allTools.set(tool.name, allTools.get(tool.name) ?? tool);
    });
    profiles.set(agent.name, singleProfile(agent.name, providerOf(agent, index), agent.system, tools));
  });
  return { profiles, startAgent: start };
}
