import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AnyConversationHost } from '../../host/conversation-host.js';
import { isRecord } from '../../util/is-record.js';
import { approvalPrompt } from './approval-prompt.js';
import { loadServerModule, loadServerTypesModule } from './load-server-sdk.js';
import { runServedCall } from './run-served-call.js';
import type { McpObjectSchema, ServeMcpOptions } from './serve-mcp-options.js';

/** What every session of one `serveMcp` shares: the host, what it runs, the options. */
export type ServedTarget = {
  host: AnyConversationHost;
  workflow: boolean;
  options: ServeMcpOptions;
};

/** One MCP session: its SDK server (one per transport), its conversation, and the signal that stops its calls. */
export type McpSession = {
  server: Server;
  conversationId: string;
  /** Whether a call of this session is running now (an idle session is one without). */
  busy(): boolean;
  /** Stops the calls in progress (their runs are cancelled) and closes the SDK server. */
  close(): Promise<void>;
};

const conversationSchema: McpObjectSchema = {
  type: 'object',
  properties: {
    message: { type: 'string', description: 'What to tell the agent (a later call in this session continues the conversation)' },
  },
  required: ['message'],
};
const workflowSchema: McpObjectSchema = { type: 'object', additionalProperties: true };

/** The tool's name: the option's, else `ask` (a conversation) or `run` (a workflow). */
export function toolNameOf(target: ServedTarget): string {
  return target.options.tool?.name ?? (target.workflow ? 'run' : 'ask');
}

/**
 * An SDK server for one MCP session whose one tool runs the session's conversation `conversationId`
 * in the host. Arguments that do not fit the tool and unknown tools are JSON-RPC errors
 * (`InvalidParams`); anything the run does is the call's result.
 *
 * @example
 * ```ts
 * const session = await createSession(target, 'mcp-5f0c…');
 * await session.server.connect(transport);
 * ```
 */
export async function createSession(target: ServedTarget, conversationId: string): Promise<McpSession> {
  const [{ Server }, { CallToolRequestSchema, ListToolsRequestSchema, McpError, ErrorCode }] = await Promise.all([
    loadServerModule(),
    loadServerTypesModule(),
  ]);
  const { options, host, workflow } = target;
  const name = toolNameOf(target);
  const server = new Server(
    { name: options.name, version: options.version },
    { capabilities: { tools: {} }, ...(options.instructions === undefined ? {} : { instructions: options.instructions }) },
  );
  const ending = new AbortController();
  let running = 0;
  const tool = {
    name,
    ...(options.tool?.title === undefined ? {} : { title: options.tool.title }),
    description:
      options.tool?.description ??
      (workflow
        ? `Runs the workflow "${host.machine.id}" with the arguments as its input and answers its output.`
        : `Talks to the agent "${host.machine.id}": answers its reply. Calls in one session continue one conversation.`),
    inputSchema: options.tool?.inputSchema ?? (workflow ? workflowSchema : conversationSchema),
  };

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [tool] }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    if (request.params.name !== name) {
      throw new McpError(ErrorCode.InvalidParams, `unknown tool "${request.params.name}": this server has one tool, "${name}"`);
    }
    const args: unknown = request.params.arguments ?? {};
    if (!isRecord(args)) throw new McpError(ErrorCode.InvalidParams, `arguments: expected an object`);
    const message = args.message;
    if (!workflow && (typeof message !== 'string' || message.trim() === '')) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `arguments: expected { message: string } with a non-empty message, got ${describe(message)} as message`,
      );
    }
    const token = request.params._meta?.progressToken;
    let progress = 0;
    const signal = AbortSignal.any([extra.signal, ending.signal]);
    running++;
    return runServedCall({
      host,
      workflow,
      conversationId,
      ...(workflow ? { input: args } : { message: message as string }),
      signal,
      waitForRunMs: options.waitForRunMs ?? 60_000,
      ...(token === undefined
        ? {}
        : {
            progress: (text: string) => {
              // A notification the transport cannot send (the client left) changes nothing in the run.
              extra
                .sendNotification({
                  method: 'notifications/progress',
                  params: { progressToken: token, progress: ++progress, message: text },
                })
                .catch(() => undefined);
            },
          }),
      ...(server.getClientCapabilities()?.elicitation === undefined
        ? {}
        : {
            elicit: (approval) =>
              server.elicitInput(approvalPrompt(approval), {
                relatedRequestId: extra.requestId,
                signal,
                timeout: options.approvalTimeoutMs ?? 600_000,
              }),
          }),
    }).finally(() => {
      running--;
    });
  });

  // Once: closing the server closes its transport, whose `onclose` closes the session again.
  let closing: Promise<void> | undefined;
  return {
    server,
    conversationId,
    busy: () => running > 0,
    close: () => {
      closing ??= (async () => {
        ending.abort();
        await server.close().catch(() => undefined);
      })();
      return closing;
    },
  };
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return 'an empty string';
  return value === null ? 'null' : `a ${Array.isArray(value) ? 'array' : typeof value}`;
}
