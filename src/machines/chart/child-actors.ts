import { createProviderCallLogic } from '../../actors/provider-call.js';
import { createToolExecutionLogic } from '../../actors/tool-execution.js';
import { createGuardrailCheckLogic } from '../../actors/guardrail-check.js';
import { createCompactionLogic } from '../controls/compaction.js';
import { agentSource } from '../rounds/agent-calls.js';
import { agentChildLogic } from '../agents/agent-child.js';
import type { ResolvedOptions } from './options.js';

/** The conversation machine's actors, by the name the chart uses: the provider request and a tool call. */
export function conversationActors(settings: ResolvedOptions) {
  const { output } = settings;
  return {
    providerCall: createProviderCallLogic(
      (agent, index) => {
        const profile = settings.profileOf(agent);
        return { provider: profile.providers[index] ?? profile.provider, tools: profile.toolDescriptions, system: profile.system };
      },
      {
        ...(output && {
          responseFormat: {
            name: output.name,
            schema: output.jsonSchema,
            strict: output.strict,
            ...(output.description === undefined ? {} : { description: output.description }),
          },
        }),
        ...(settings.promptCache && { promptCache: settings.promptCache }),
      },
      settings.requestTimeoutMs,
    ),
    executeTool: createToolExecutionLogic(settings.tools, settings.toolOutputOf),
    guardrailCheck: createGuardrailCheckLogic(settings.guardrails),
    compaction: createCompactionLogic(settings),
    // One source per agent tool, so a persisted child names the machine it restores with.
    ...Object.fromEntries([...settings.agentCalls].map(([name, spec]) => [agentSource(name), agentChildLogic(spec.machine)])),
  };
}
