import { createProviderCallLogic } from '../actors/provider-call.js';
import { createToolExecutionLogic } from '../actors/tool-execution.js';
import type { ResolvedOptions } from './options.js';

/** The conversation machine's actors, by the name the chart uses: the provider request and a tool call. */
export function conversationActors(settings: ResolvedOptions) {
  const { output } = settings;
  return {
    providerCall: createProviderCallLogic(
      settings.provider,
      settings.toolDescriptions,
      settings.system,
      output && {
        name: output.name,
        schema: output.jsonSchema,
        strict: output.strict,
        ...(output.description === undefined ? {} : { description: output.description }),
      },
      settings.requestTimeoutMs,
    ),
    executeTool: createToolExecutionLogic(settings.tools, settings.capToolResult),
  };
}
