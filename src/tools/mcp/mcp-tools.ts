import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { isRecord } from '../../util/is-record.js';
import { createTool, type Tool } from '../define-tool.js';
import { classifyCallFailure } from './call-failure.js';
import { closedError, createConnection, type McpConnection } from './connection.js';
import { listAllTools } from './list-tools.js';
import { loadClientModule, loadTypesModule } from './load-sdk.js';
import { McpToolError } from './mcp-tool-error.js';
import type { McpCallToolResult, McpToolDefinition } from './mcp-types.js';
import { type McpToolsOptions, type ResolvedMcpOptions, resolveMcpOptions } from './options.js';
import { mcpResultContent, mcpResultText } from './result-text.js';
import { type McpSource, resolveSource } from './source.js';
import { modelToolNames } from './tool-names.js';

/**
 * An actorloop tool that calls a tool of an MCP server. Its `execute` sends `tools/call` on the
 * set's shared connection; `definition` is the server's own description of the tool.
 *
 * @example
 * ```ts
 * const destructive = github.tools.filter((tool: McpTool) => tool.definition.annotations?.destructiveHint);
 * ```
 */
export type McpTool = Tool<Record<string, unknown>, unknown> & { readonly definition: McpToolDefinition };

/**
 * The tools of one MCP server, and the connection they share. A machine's tools are fixed when it
 * is created: pass `tools` to it, and when the server's list changes (`onToolsChanged`) create the
 * machine again for later runs.
 *
 * @example
 * ```ts
 * const files = await mcpTools({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'] });
 * let machine = createConversationMachine({ provider, tools: files.tools });
 * files.onToolsChanged((tools) => { machine = createConversationMachine({ provider, tools }); });
 * // … runs: createActor(machine, { input }) …
 * await files.close();
 * ```
 */
export interface McpToolSet {
  /**
   * The server's tools as of the last listing, filtered and named by the options. Replaced by a
   * new array when the list changes, never changed in place.
   */
  readonly tools: ReadonlyArray<McpTool>;
  /** Lists the server's tools again now (connecting if needed) and resolves with the new `tools`. */
  refresh(): Promise<ReadonlyArray<McpTool>>;
  /**
   * Calls `listener` with the new `tools` whenever a listing finds a different list — after the
   * server's `notifications/tools/list_changed`, a reconnect, or `refresh()`. Returns an unsubscribe.
   */
  onToolsChanged(listener: (tools: ReadonlyArray<McpTool>) => void): () => void;
  /**
   * Ends the connection. Calls still running get an error result at once (the server is sent
   * `notifications/cancelled` for them), without waiting for the server; later calls get one too.
   * Then a stdio server is stopped — stdin closed, `SIGTERM` if it has not exited 200 ms later,
   * `SIGKILL` 1 s after that — and close() resolves once it has exited; an HTTP session is ended
   * with `DELETE`. A connection still being opened is given up. A Client you passed in is left
   * open (it is yours): the set only stops using it. Safe to call more than once.
   */
  close(): Promise<void>;
}

const requiresTask = (tool: McpToolDefinition) => isRecord(tool.execution) && tool.execution.taskSupport === 'required';

/**
 * The schema without its `$id`: ajv registers a schema's `$id` once per process, so a second set
 * on the same server (or a changed tool) would be refused; a tool's schema needs no identity.
 */
function withoutId(schema: McpToolDefinition['inputSchema']): McpToolDefinition['inputSchema'] {
  const { $id: _id, ...rest } = schema;
  return rest as McpToolDefinition['inputSchema'];
}

/** setTimeout's longest delay: the machine, not the SDK, times tool calls out. */
const noSdkTimeout = 2_147_483_647;

class ToolSet implements McpToolSet {
  tools: ReadonlyArray<McpTool> = [];
  /** Everything the server listed last, before filtering. */
  offered: McpToolDefinition[] = [];
  /** The client the current list came from: a call on another (a reconnect) lists again. */
  private listedFrom: Client | undefined;
  private signature = '';
  /** The tools built from the current list, by name and definition: an unchanged tool is kept as it is. */
  private built = new Map<string, McpTool>();
  private readonly listeners = new Set<(tools: ReadonlyArray<McpTool>) => void>();
  private refreshing: Promise<void> | undefined;
  private stale = false;
  private closing: Promise<void> | undefined;
  /** One per call in progress: close() aborts them, so they end now rather than when the transport has closed. */
  private readonly inFlight = new Set<AbortController>();
  readonly connection: McpConnection;

  constructor(
    source: ReturnType<typeof resolveSource>,
    private readonly options: ResolvedMcpOptions,
    listChanged: Awaited<ReturnType<typeof loadTypesModule>>['ToolListChangedNotificationSchema'],
  ) {
    this.connection = createConnection(source, {
      prepare: (client) => client.setNotificationHandler(listChanged, () => this.refreshInBackground()),
      release: (client) => client.removeNotificationHandler('notifications/tools/list_changed'),
      lost: (error) => this.report(error),
      connectTimeoutMs: options.connectTimeoutMs,
      clientInfo: options.clientInfo,
    });
  }

  refresh(): Promise<ReadonlyArray<McpTool>> {
    if (this.connection.closed) return Promise.reject(closedError());
    // Listings run one at a time; a request during one is answered by the next, which sees the newest list.
    this.stale = true;
    this.refreshing ??= this.listUntilCurrent().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing.then(() => this.tools);
  }

  onToolsChanged(listener: (tools: ReadonlyArray<McpTool>) => void): () => void {
    if (typeof listener !== 'function') throw new InvalidOptionsError('listener', 'a function (tools) => void', listener);
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): Promise<void> {
    this.listeners.clear();
    if (this.closing) return this.closing;
    // The calls first: each gets its error result at once (the SDK sends the server
    // notifications/cancelled), then the transport closes, which may take a stdio server a moment.
    const reason = closedError();
    for (const call of this.inFlight) call.abort(reason);
    this.closing = this.connection.close();
    return this.closing;
  }

  private async listUntilCurrent(): Promise<void> {
    while (this.stale) {
      this.stale = false;
      const client = await this.connection.client();
      const offered = await listAllTools(client, this.options.connectTimeoutMs, this.connection.label);
      if (this.connection.closed) return;
      this.apply(offered, client);
    }
  }

  private apply(offered: McpToolDefinition[], client: Client): void {
    // A tool the server runs only as an MCP task cannot be called with tools/call: never offered.
    const chosen = offered.filter((tool) => !requiresTask(tool) && this.options.offers(tool) === true);
    this.offered = offered;
    this.listedFrom = client;
    const signature = JSON.stringify(chosen);
    if (signature === this.signature) return;
    const names = modelToolNames(
      chosen.map((tool) => tool.name),
      this.options.prefix,
    );
    const built = new Map<string, McpTool>();
    this.tools = chosen.map((definition, index) => {
      const name = names[index] as string;
      const key = `${name} ${JSON.stringify(definition)}`;
      const tool = this.built.get(key) ?? this.toTool(definition, name);
      built.set(key, tool);
      return tool;
    });
    this.built = built;
    this.signature = signature;
    for (const listener of [...this.listeners]) {
      try {
        listener(this.tools);
      } catch (error) {
        this.report(error);
      }
    }
  }

  private toTool(definition: McpToolDefinition, name: string): McpTool {
    const timeoutMs = this.options.timeoutMs(definition);
    let tool: Tool<Record<string, unknown>, unknown>;
    try {
      tool = createTool(
        {
          name,
          description: definition.description ?? definition.title ?? definition.annotations?.title ?? '',
          parameters: withoutId(definition.inputSchema),
          execute: (args, { signal }) => this.call(definition, args, signal),
          needsApproval: this.options.needsApproval(definition),
          idempotent: this.options.idempotent(definition),
          ...(timeoutMs === undefined ? {} : { timeoutMs }),
        },
        `MCP tool "${definition.name}"`,
      );
    } catch (error) {
      throw new McpToolError(
        `the ${this.connection.label} offers the tool "${definition.name}", which cannot be used (${(error as Error).message}); ` +
          `leave it out with exclude: [${JSON.stringify(definition.name)}]`,
        { kind: 'server', cause: error },
      );
    }
    return { ...tool, definition };
  }

  /** One `tools/call`: its result for the model, or an McpToolError the machine turns into an error result. */
  private async call(definition: McpToolDefinition, args: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    if (this.closing) throw closedError();
    // The machine's signal (timeout, cancel) or close(), whichever comes first.
    const call = new AbortController();
    const onAbort = () => call.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    this.inFlight.add(call);
    try {
      return await this.callOnce(definition, args, call.signal, signal);
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.inFlight.delete(call);
    }
  }

  private async callOnce(
    definition: McpToolDefinition,
    args: Record<string, unknown>,
    signal: AbortSignal,
    machineSignal: AbortSignal,
  ): Promise<unknown> {
    let client = await this.connection.client(signal);
    let result: McpCallToolResult;
    try {
      result = await this.send(client, definition, args, signal);
    } catch (thrown) {
      if (signal.aborted || this.connection.closed || !this.connection.isSessionGone(thrown)) {
        throw this.failure(thrown, client, machineSignal);
      }
      // The server no longer knows the session (it restarted) and so did not run the call: the
      // MCP spec has the client start a new session, where the call is sent once more.
      this.connection.retire(client);
      client = await this.connection.client(signal);
      try {
        result = await this.send(client, definition, args, signal);
      } catch (again) {
        throw this.failure(again, client, machineSignal);
      }
    }
    if (result.isError === true) {
      throw new McpToolError(mcpResultText(result) || `the tool "${definition.name}" failed without saying why`, { kind: 'tool' });
    }
    return this.options.mapResult ? this.options.mapResult(result, definition) : mcpResultContent(result);
  }

  private async send(client: Client, definition: McpToolDefinition, args: Record<string, unknown>, signal: AbortSignal) {
    // A new connection may be to a restarted server with another list.
    if (client !== this.listedFrom) this.refreshInBackground();
    return (await client.callTool({ name: definition.name, arguments: args }, undefined, {
      signal,
      timeout: noSdkTimeout,
    })) as McpCallToolResult;
  }

  /** What a failed call throws; a lost connection is dropped so the next call reconnects. */
  private failure(thrown: unknown, client: Client, machineSignal: AbortSignal): unknown {
    // Cancelled or timed out by the machine: the SDK sent notifications/cancelled; no one reads this.
    if (machineSignal.aborted) return thrown;
    if (this.closing) return closedError();
    const { error, connectionLost } = classifyCallFailure(thrown, this.connection);
    if (connectionLost) this.connection.retire(client);
    return error;
  }

  private refreshInBackground(): void {
    if (this.connection.closed) return;
    this.refresh().catch((error: unknown) => this.report(error));
  }

  private report(error: unknown): void {
    if (this.connection.closed) return;
    try {
      this.options.onError(error instanceof Error ? error : new Error(String(error)));
    } catch {
      // A failing onError has nowhere left to report to.
    }
  }
}

/**
 * The tools of a Model Context Protocol server as actorloop tools, with the guarantees of any
 * tool: arguments validated against the server's `inputSchema` before the server sees them, the
 * machine's timeout, cancellation (`notifications/cancelled` on timeout or cancel), and exactly
 * one result per call — `isError` answers, JSON-RPC errors and a lost connection become error
 * results the model reads.
 *
 * Resolves once the server's tools are listed (every page): the machine needs their names and
 * schemas when it is created. The connection is shared by every conversation using the tools;
 * after a stdio server crashes, or an HTTP session is lost, the next call starts a new one.
 *
 * Text content reaches the model as it is; images, audio and binary resources as image and file
 * parts, each wire in its own shape (see `mcpResultContent`, and `mapResult` to do otherwise).
 *
 * @example
 * ```ts
 * import { mcpTools } from 'actorloop/mcp';
 *
 * const github = await mcpTools(
 *   { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'], env: { GITHUB_TOKEN: token } },
 *   { prefix: 'github_', exclude: ['delete_repository'], needsApproval: ['create_issue'] },
 * );
 * const machine = createConversationMachine({ provider: openaiProvider({ model: 'gpt-4o-mini' }), tools: github.tools });
 * // … run conversations …
 * await github.close();
 * ```
 */
export async function mcpTools(source: McpSource, options?: McpToolsOptions): Promise<McpToolSet> {
  const resolvedSource = resolveSource(source);
  const resolvedOptions = resolveMcpOptions(options);
  const [{ ToolListChangedNotificationSchema }] = await Promise.all([loadTypesModule(), loadClientModule()]);
  if (resolvedSource.kind === 'client' && resolvedSource.client.transport === undefined) {
    throw new InvalidOptionsError('source', 'a connected Client (await client.connect(transport) first)', 'a Client with no transport');
  }
  const set = new ToolSet(resolvedSource, resolvedOptions, ToolListChangedNotificationSchema);
  try {
    await set.refresh();
    // A misspelt name would silently leave a tool unguarded (needsApproval) or missing (include).
    const offered = new Set(set.offered.map((tool) => tool.name));
    for (const [option, names] of resolvedOptions.named) {
      const unknown = [...names].filter((name) => !offered.has(name));
      if (unknown.length > 0) {
        throw new InvalidOptionsError(
          option,
          `names of tools the server offers (${[...offered].join(', ') || 'none'}; for tools that come and go, use a function)`,
          unknown.join(', '),
        );
      }
    }
  } catch (error) {
    await set.close();
    throw error;
  }
  return set;
}
