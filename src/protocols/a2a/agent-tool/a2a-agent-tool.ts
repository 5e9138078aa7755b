import { createTool, type Tool, type ToolExecuteContext } from '../../../tools/define-tool.js';
import { HaltError } from '../../../tools/halt-error.js';
import type { JSONSchema } from '../../../tools/validate.js';
import { A2AAgentError } from './a2a-agent-error.js';
import { connectAgent, type A2AConnection } from './connect.js';
import { resolveOptions, type A2AAgentToolOptions } from './options.js';
import type { A2AAgentProgress } from './progress.js';
import { remoteCall } from './remote-call.js';

/**
 * The arguments of an A2A agent call: one message for the remote agent.
 *
 * @example
 * ```ts
 * const args: A2AAgentToolArgs = { message: 'Find three recent papers on speculative decoding.' };
 * ```
 */
export type A2AAgentToolArgs = { message: string };

/**
 * A remote A2A agent as a tool: its `execute` is a generator whose yields are the call's progress
 * (`tool.progress` events) and whose return value is the remote agent's answer.
 *
 * @example
 * ```ts
 * const research: A2AAgentTool = a2aAgentTool('https://agents.example.com/research');
 * ```
 */
export type A2AAgentTool = Tool<A2AAgentToolArgs, AsyncGenerator<A2AAgentProgress, string, undefined>>;

const messageParameters = {
  type: 'object',
  properties: {
    message: { type: 'string', minLength: 1, description: 'What to ask the agent, in full: it sees nothing of this conversation.' },
  },
  required: ['message'],
  additionalProperties: false,
} as const satisfies JSONSchema;

/** A card's name as a tool name: snake case, within the 64 characters a tool name may have. */
function toolNameOf(cardName: string): string {
  const name = cardName
    .normalize('NFKD')
    .replace(/[^a-zA-Z0-9_-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase()
    .slice(0, 64);
  return name === '' ? 'remote_agent' : name;
}

/** The card's description and skills, which tell the parent's model what to ask this agent. */
function descriptionOf(connection: A2AConnection): string {
  const { card } = connection;
  const skills = card.skills.map((skill) => `- ${skill.name}${skill.description ? `: ${skill.description}` : ''}`);
  const text = [card.description || `The remote agent "${card.name}".`, skills.length > 0 ? `Skills:\n${skills.join('\n')}` : '']
    .filter((part) => part !== '')
    .join('\n');
  // A card is someone else's text: a long one would crowd every request of the parent.
  return text.length > 2_000 ? `${text.slice(0, 1_999)}…` : text;
}

/** A name for the agent at `url` when neither options nor a card give one: its last path segment, else its host. */
function toolNameOfUrl(url: URL): string {
  const segment = url.pathname
    .split('/')
    .filter((part) => part !== '' && part !== '.well-known' && !part.endsWith('.json'))
    .at(-1);
  return toolNameOf(segment ?? url.hostname);
}

/**
 * A remote agent that speaks A2A (Agent2Agent) as a tool of an actorloop conversation. Each call
 * sends the model's `message` to the agent with streaming: the remote task's status changes and
 * artifact chunks arrive as the call's `tool.progress` events ({@link A2AAgentProgress}), and the
 * task's artifacts (else its final message) are the call's result.
 *
 * - **Card.** `url` is the agent's base URL (card at `/.well-known/agent-card.json`) or its card's
 *   URL. The card is read on the first call (an agent down when your service starts fails calls —
 *   error results the model reads — not start-up; a failed read is tried again on the next call).
 *   The tool's `name` defaults to the URL's last path segment and its `description` to a line
 *   naming the agent: give both, or use {@link a2aAgentToolFromCard} to take them from the card.
 * - **Failure.** A task that ends `failed`, `rejected`, `canceled` by the agent, `auth-required`, or
 *   `input-required` without an `onInputRequired` answer, a network error or an answer that is not
 *   A2A: an error result naming the agent and what it said — or, with `onFailure: 'halt'`, the
 *   parent ends `halted` with that text.
 * - **Cancel and timeout.** The parent's `cancel`, the call's `timeoutMs` (or the parent's
 *   `toolTimeoutMs`) and a halt send `cancelTask` for the remote task and close the stream.
 * - **Budget.** The remote agent's spend is its own: A2A has no standard usage report, so nothing it
 *   spends counts toward the parent's `budget` (the call's time does, through its timeout).
 *
 * Needs the optional peer `@a2a-js/sdk` (`npm install @a2a-js/sdk`).
 *
 * @example
 * ```ts
 * import { createConversationMachine, openaiProvider } from 'actorloop';
 * import { a2aAgentTool } from 'actorloop/a2a';
 *
 * const research = a2aAgentTool('https://agents.example.com/research', {
 *   description: 'Finds and summarises sources on a topic.',
 *   timeoutMs: 120_000,
 *   headers: { authorization: `Bearer ${process.env.RESEARCH_TOKEN}` },
 * });
 * const machine = createConversationMachine({ provider: openaiProvider({ model: 'gpt-4o-mini' }), tools: [research] });
 * ```
 */
export function a2aAgentTool(url: string | URL, options?: A2AAgentToolOptions): A2AAgentTool {
  const { url: agentUrl, options: resolved } = resolveOptions(url, options);
  const description =
    resolved.description ?? `The remote agent (A2A) at ${agentUrl.href}. It sees nothing of this conversation: send it the whole request.`;
  return remoteAgentTool(agentUrl, resolved, resolved.name ?? toolNameOfUrl(agentUrl), description);
}

/**
 * {@link a2aAgentTool}, named and described from the agent's card, read now: `name` defaults to the
 * card's name in snake case, `description` to its description and skills (what the parent's model
 * reads to decide when to call it). Rejects with an {@link A2AAgentError} of kind `card` when the
 * card cannot be read.
 *
 * @example
 * ```ts
 * import { a2aAgentToolFromCard } from 'actorloop/a2a';
 *
 * const research = await a2aAgentToolFromCard('https://agents.example.com/research', { timeoutMs: 120_000 });
 * console.log(research.name); // e.g. research_agent, from the card
 * ```
 */
export async function a2aAgentToolFromCard(url: string | URL, options?: A2AAgentToolOptions): Promise<A2AAgentTool> {
  const { url: agentUrl, options: resolved } = resolveOptions(url, options);
  const connection = await connectAgent(agentUrl, resolved);
  return remoteAgentTool(
    agentUrl,
    resolved,
    resolved.name ?? toolNameOf(connection.card.name),
    resolved.description ?? descriptionOf(connection),
    connection,
  );
}

/** The tool over one remote agent: the connection (the card read, the client made) is made once, on first need. */
function remoteAgentTool(
  agentUrl: URL,
  resolved: ReturnType<typeof resolveOptions>['options'],
  name: string,
  description: string,
  ready?: A2AConnection,
): A2AAgentTool {
  let connection: Promise<A2AConnection> | undefined = ready && Promise.resolve(ready);
  const connected = () => {
    // A failed connection is forgotten, so the next call tries again (the agent may be back).
    connection ??= connectAgent(agentUrl, resolved).catch((error: unknown) => {
      connection = undefined;
      throw error;
    });
    return connection;
  };
  async function* execute(args: A2AAgentToolArgs, context: ToolExecuteContext): AsyncGenerator<A2AAgentProgress, string, undefined> {
    let current: A2AConnection;
    try {
      current = await connected();
    } catch (error) {
      if (resolved.onFailure === 'halt' && A2AAgentError.isInstance(error)) throw new HaltError(error.message, { cause: error });
      throw error;
    }
    return yield* remoteCall(current, args.message, context, resolved);
  }
  return createTool(
    {
      name,
      description,
      parameters: messageParameters,
      execute: execute as (
        args: Record<string, unknown>,
        context: ToolExecuteContext,
      ) => AsyncGenerator<A2AAgentProgress, string, undefined>,
      ...(resolved.timeoutMs === undefined ? {} : { timeoutMs: resolved.timeoutMs }),
    },
    'a2aAgentTool',
  ) as A2AAgentTool;
}
