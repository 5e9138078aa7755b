import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import type { AnyStateMachine } from 'xstate';
import { type AnyConversationHost, createConversationHost } from '../../host/conversation-host.js';
import { memoryStore } from '../../host/memory-store.js';
import { toNodeListener } from '../../http/node-listener.js';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { isConversationMachine } from '../../machines/hostable.js';
import { isRecord } from '../../util/is-record.js';
import { loadServerStdioModule } from './load-server-sdk.js';
import { conversationIdOf, isConversationId } from './conversation-id.js';
import type { ServeMcpOptions } from './serve-mcp-options.js';
import { createSession, type McpSession, type ServedTarget } from './session-server.js';
import { streamableHttpHandler } from './streamable-http-handler.js';

/**
 * Where `listen` binds (default `127.0.0.1` and a free port).
 *
 * @example
 * ```ts
 * const options: McpListenOptions = { port: 8931, host: '0.0.0.0' };
 * ```
 */
export type McpListenOptions = { port?: number; host?: string };

/**
 * The stdio session `connectStdio` opened: its conversation id, and `closed`, which resolves when
 * the client goes (stdin ends) or the server closes.
 *
 * @example
 * ```ts
 * const { closed } = await served.connectStdio();
 * await closed;
 * await served.close();
 * ```
 */
export type McpStdioSession = { conversationId: string; closed: Promise<void> };

/**
 * A conversation or workflow served as an MCP server (see `serveMcp`).
 *
 * @example
 * ```ts
 * const served: ServedMcp = serveMcp(host, { name: 'support', version: '1.0.0' });
 * const { url } = await served.listen({ port: 8931 });
 * ```
 */
export type ServedMcp = {
  /** The host the calls run in: the one given, or the one `serveMcp` made for a machine. */
  readonly host: AnyConversationHost;
  /**
   * Streamable HTTP as a Fetch API handler (mount it in any server that speaks `Request`/`Response`);
   * it answers only `options.path` (default `/mcp`). Needs an MCP SDK with the web-standard transport
   * (newer than 1.24); without one it answers 500 saying so.
   */
  fetch(request: Request): Promise<Response>;
  /** `fetch` on a `node:http` server; resolves with the endpoint's URL (`http://127.0.0.1:8931/mcp`). */
  listen(options?: McpListenOptions): Promise<{ url: string }>;
  /** Serves one MCP session over stdin/stdout (default the process's): the stdio connection is the session. */
  connectStdio(options?: { stdin?: Readable; stdout?: Writable }): Promise<McpStdioSession>;
  /**
   * Stops everything: the HTTP server and its sessions, the stdio session, the calls in progress
   * (their runs are cancelled), and the host when `serveMcp` made it (a host you gave stays open).
   */
  close(): Promise<void>;
};

/**
 * Serves a conversation — or a workflow — as an MCP server with one tool. A conversation's tool
 * takes `{ message }` and answers the agent's reply; each MCP session (a Streamable HTTP session, the
 * stdio connection) is one conversation in the host, so a second call continues it. A workflow's
 * tool takes its input and answers its output (as JSON text and `structuredContent`). While a call
 * runs, a request with a `progressToken` gets `notifications/progress` (rounds, tool calls); the
 * client's cancel cancels the run; a tool call that needs approval is asked by elicitation when the
 * client supports it, else the call fails naming it. A run that fails, halts or is cancelled answers
 * `isError`. Given a machine, it is hosted in a memory store. `conversationId` pins the conversation
 * sessions talk to (kept across restarts over a store); a call that comes while its conversation's
 * run still goes waits for it (`waitForRunMs`). Over Streamable HTTP, a client whose SSE stream
 * dropped reconnects with `Last-Event-ID` and is sent what it missed (`resumability`); a dropped
 * connection never cancels the run.
 *
 * The MCP SDK (`@modelcontextprotocol/sdk`, an optional peer) is loaded on first use.
 *
 * @example
 * ```ts
 * import { createConversationMachine } from 'actorloop';
 * import { openaiProvider } from 'actorloop/openai';
 * import { serveMcp } from 'actorloop/mcp';
 *
 * const machine = createConversationMachine({ provider: openaiProvider({ model: 'gpt-4o-mini' }), tools });
 * const served = serveMcp(machine, { name: 'support-agent', version: '1.0.0', tool: { name: 'ask_support' } });
 * await served.connectStdio();
 * ```
 */
export function serveMcp(target: AnyConversationHost | AnyStateMachine, options: ServeMcpOptions): ServedMcp {
  checkOptions(options);
  const given = isHost(target);
  const host: AnyConversationHost = given ? target : createConversationHost({ machine: target, store: memoryStore() });
  const served: ServedTarget = { host, workflow: !isConversationMachine(host.machine), options };
  const http = streamableHttpHandler(served);
  const stdioSessions = new Set<McpSession>();
  const servers = new Set<HttpServer>();
  const onError = options.onError ?? ((error: unknown) => console.error('actorloop/mcp:', error));
  let closing: Promise<void> | undefined;

  const fetch = async (request: Request): Promise<Response> => {
    try {
      return await http.handle(request);
    } catch (error) {
      onError(error);
      const message = error instanceof Error ? error.message : String(error);
      return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: `internal error: ${message}` }, id: null }), {
        status: 500,
        headers: { 'content-type': 'application/json' },
      });
    }
  };

  return {
    host,
    fetch,
    async listen({ port = 0, host: hostname = '127.0.0.1' } = {}) {
      const server = createServer(toNodeListener(fetch, { onError }));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, hostname, () => {
          server.off('error', reject);
          resolve();
        });
      });
      servers.add(server);
      const { port: bound } = server.address() as AddressInfo;
      return { url: `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${bound}${options.path ?? '/mcp'}` };
    },
    async connectStdio({ stdin = process.stdin, stdout = process.stdout } = {}) {
      const { StdioServerTransport } = await loadServerStdioModule();
      const session = await createSession(served, conversationIdOf(options, { transport: 'stdio' }));
      const transport = new StdioServerTransport(stdin, stdout);
      let ended!: () => void;
      const closed = new Promise<void>((resolve) => {
        ended = resolve;
      });
      // The client went: the session ends (its calls' runs are cancelled), the host stays for `close`.
      let ending = false;
      const end = () => {
        if (ending) return;
        ending = true;
        stdin.off('end', end);
        stdioSessions.delete(session);
        void session.close().then(ended);
      };
      transport.onclose = end;
      transport.onerror = (error) => onError(error);
      stdin.once('end', end);
      stdioSessions.add(session);
      await session.server.connect(transport);
      return { conversationId: session.conversationId, closed };
    },
    close() {
      closing ??= (async () => {
        for (const server of servers) server.close();
        await Promise.all([http.close(), ...[...stdioSessions].map((session) => session.close())]);
        for (const server of servers) server.closeAllConnections();
        if (!given) await host.close();
      })();
      return closing;
    },
  };
}

function isHost(target: AnyConversationHost | AnyStateMachine): target is AnyConversationHost {
  return isRecord(target) && typeof target.hostId === 'string' && typeof target.send === 'function' && typeof target.result === 'function';
}

function checkOptions(options: ServeMcpOptions): void {
  if (!isRecord(options)) throw new InvalidOptionsError('options', 'an object { name, version, ... }', options);
  for (const key of ['name', 'version'] as const) {
    if (typeof options[key] !== 'string' || options[key] === '') throw new InvalidOptionsError(key, 'a non-empty string', options[key]);
  }
  if (options.maxBodyBytes !== undefined && !(Number.isInteger(options.maxBodyBytes) && options.maxBodyBytes > 0)) {
    throw new InvalidOptionsError('maxBodyBytes', 'a positive integer', options.maxBodyBytes);
  }
  for (const key of ['maxSessions', 'sessionIdleMs', 'approvalTimeoutMs'] as const) {
    const value = options[key];
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) throw new InvalidOptionsError(key, 'a positive integer', value);
  }
  if (options.waitForRunMs !== undefined && !(Number.isInteger(options.waitForRunMs) && options.waitForRunMs >= 0)) {
    throw new InvalidOptionsError('waitForRunMs', 'a non-negative integer (0: refuse at once)', options.waitForRunMs);
  }
  const pinned = options.conversationId;
  if (pinned !== undefined && typeof pinned !== 'function' && !isConversationId(pinned)) {
    throw new InvalidOptionsError(
      'conversationId',
      'a non-empty string without surrounding spaces or control characters, or a function',
      pinned,
    );
  }
  if (options.resumability !== undefined && options.resumability !== false) {
    if (!isRecord(options.resumability)) {
      throw new InvalidOptionsError('resumability', 'false or an object { maxEventsPerStream?, retentionMs? }', options.resumability);
    }
    for (const key of ['maxEventsPerStream', 'retentionMs'] as const) {
      const value = options.resumability[key];
      if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
        throw new InvalidOptionsError(`resumability.${key}`, 'a positive integer', value);
      }
    }
  }
  if (options.path !== undefined && !options.path.startsWith('/'))
    throw new InvalidOptionsError('path', 'a path starting with /', options.path);
}
