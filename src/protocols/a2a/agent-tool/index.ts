/**
 * Remote A2A (Agent2Agent) agents as tools of an actorloop conversation. Needs the optional peer
 * `@a2a-js/sdk`; this module loads without it and asks for it on first use.
 *
 * @example
 * ```ts
 * import { a2aAgentTool } from 'actorloop/a2a';
 * const research = a2aAgentTool('https://agents.example.com/research', { description: 'Finds sources on a topic.' });
 * ```
 * @packageDocumentation
 */
export { a2aAgentTool, a2aAgentToolFromCard, type A2AAgentTool, type A2AAgentToolArgs } from './a2a-agent-tool.js';
export type { A2AAgentToolOptions } from './options.js';
export type { A2AAgentProgress, A2AInputRequest, A2ATaskStateName } from './progress.js';
export { A2AAgentError, type A2AAgentErrorKind } from './a2a-agent-error.js';
