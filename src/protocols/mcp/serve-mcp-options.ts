import type { McpResumability } from './event-store.js';

/**
 * A JSON Schema of an object, as MCP lists a tool's input (`type: 'object'` at its root).
 *
 * @example
 * ```ts
 * const inputSchema: McpObjectSchema = { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] };
 * ```
 */
export type McpObjectSchema = { type: 'object'; [keyword: string]: unknown };

/**
 * The one MCP tool a served conversation or workflow is: how clients see it.
 *
 * @example
 * ```ts
 * const tool: McpServedTool = { name: 'ask_support', description: 'Ask the support agent; a second call in the session continues the conversation.' };
 * ```
 */
export type McpServedTool = {
  /** Default `ask` for a conversation, `run` for a workflow. */
  name?: string;
  title?: string;
  /** Default: says what it runs and that calls of one session continue one conversation. */
  description?: string;
  /**
   * The arguments' JSON Schema. A conversation always takes `{ message: string }` (this schema
   * replaces only what clients are shown); a workflow takes its input, default any object.
   */
  inputSchema?: McpObjectSchema;
};

/**
 * Who may use the Streamable HTTP endpoint: `true` lets the request through, `false` answers 401
 * (like `authorize` of `actorloop/http`). A throw counts as `false`.
 *
 * @example
 * ```ts
 * const authorize: McpAuthorize = (request) => request.headers.get('authorization') === `Bearer ${process.env.MCP_TOKEN}`;
 * ```
 */
export type McpAuthorize = (request: Request) => boolean | Promise<boolean>;

/**
 * The MCP session a conversation id is chosen for (`conversationId` as a function): its transport
 * and, over Streamable HTTP, its `Mcp-Session-Id`.
 *
 * @example
 * ```ts
 * const session: McpSessionInfo = { transport: 'http', sessionId: '5f0c2d1e-…' };
 * ```
 */
export type McpSessionInfo = { transport: 'stdio' | 'http'; sessionId?: string };

/**
 * Options of `serveMcp`.
 *
 * @example
 * ```ts
 * const options: ServeMcpOptions = { name: 'support-agent', version: '1.0.0', tool: { name: 'ask_support' } };
 * ```
 */
export type ServeMcpOptions = {
  /** The server's name, as `initialize` tells clients. */
  name: string;
  /** The server's version, as `initialize` tells clients. */
  version: string;
  /** Told to clients at `initialize`: how to use this server. */
  instructions?: string;
  tool?: McpServedTool;
  /**
   * Each MCP session's conversation id is this prefix and a random id (default `mcp-`): sessions
   * never share a conversation, and the host's other conversations are told apart.
   */
  idPrefix?: string;
  /**
   * The conversation a session talks to, instead of a new one per session: a fixed id (every session
   * continues that one conversation — what keeps an MCP client's conversation across restarts of a
   * stdio server over a store), or a function of the session. Sessions that share a conversation
   * take turns: see `waitForRunMs`.
   */
  conversationId?: string | ((session: McpSessionInfo) => string);
  /**
   * A call that arrives while its conversation's run is still going (a recovered run, a call of
   * another session on the same conversation, two calls at once) waits for that run to end, at most
   * this long, then sends its message; past it the call answers `isError` saying the conversation is
   * still running. The client may cancel the wait. `0` refuses such a call at once. Default 60,000.
   */
  waitForRunMs?: number;
  /** Streamable HTTP: who may connect. Without it every request is let through: bind to 127.0.0.1 or put one. */
  authorize?: McpAuthorize;
  /**
   * Streamable HTTP: the web origins (`https://app.example.com`) whose pages may call the server. A
   * request with an `Origin` header not listed is refused (403): MCP requires servers to check it,
   * so a web page cannot reach a local server through DNS rebinding. Clients that are not browsers
   * send no `Origin` and are not concerned. Default: none.
   */
  allowedOrigins?: string[];
  /** Streamable HTTP: the path served (default `/mcp`); other paths answer 404. */
  path?: string;
  /** Streamable HTTP: the largest request body, in bytes (default 1,000,000); larger answers 413. */
  maxBodyBytes?: number;
  /** Streamable HTTP: the most sessions open at once (default 1,000); past it `initialize` answers 503. */
  maxSessions?: number;
  /**
   * Streamable HTTP: a session without a request for this long, and no call running, is closed
   * (default 30 minutes): clients that leave without `DELETE` do not hold sessions for ever.
   */
  sessionIdleMs?: number;
  /**
   * Streamable HTTP: resumable streams. Each session keeps the events of its SSE streams (progress,
   * elicitations, the call's result) in memory, within these bounds, and sends each with an SSE
   * `id`; a client whose connection dropped reconnects with `Last-Event-ID` and is sent what it
   * missed (the SDK client does so on its own). A dropped connection never cancels the call: its run
   * goes on. `false` keeps nothing (a dropped stream's remaining messages are lost). Default on:
   * 1,000 events per stream, 5 minutes.
   */
  resumability?: McpResumability | false;
  /** How long an approval asked by elicitation may wait for the client's answer (default 10 minutes). */
  approvalTimeoutMs?: number;
  /** Where failures no client is told of go (a session's transport error). Default `console.error`. */
  onError?: (error: unknown) => void;
};
