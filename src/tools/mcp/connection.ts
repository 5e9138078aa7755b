import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { requestFailure } from './call-failure.js';
import { loadClientModule, loadHttpModule, loadStdioModule } from './load-sdk.js';
import { McpToolError } from './mcp-tool-error.js';
import type { ResolvedSource } from './source.js';
import { StdioProcessTransport, stdioEnvironment } from './stdio-process.js';
import { watchEventStreams } from './watch-event-streams.js';

/**
 * The one connection to a server that every conversation using its tools shares. Opened by the
 * first request that needs it; after it is lost (the stdio server exited, an HTTP stream or session
 * broke) the next request opens a new one — nothing reconnects while no one asks.
 */
export interface McpConnection {
  /** The connected client, connecting first when there is none; concurrent callers share one attempt. */
  client(signal?: AbortSignal): Promise<Client>;
  /** The request on `client` showed the connection is gone: drop it, so the next request reconnects. */
  retire(client: Client): void;
  /** Whether a request failed because the server no longer knows the HTTP session (it answered 404). */
  isSessionGone(error: unknown): boolean;
  /** Whether a lost connection is opened again (not for a Client the user passed: it is theirs). */
  readonly reconnects: boolean;
  /** Names the server in error texts, without credentials. */
  readonly label: string;
  readonly closed: boolean;
  /** Ends the connection (stops a stdio server, ends an HTTP session); later requests fail. */
  close(): Promise<void>;
}

export type ConnectionHooks = {
  /** Called for each new client before it connects: install notification handlers here. */
  prepare(client: Client): void;
  /** For a Client the user passed, on close: remove what `prepare` installed. */
  release(client: Client): void;
  /** A connection closed while nothing was waiting on it. */
  lost(error: McpToolError): void;
  connectTimeoutMs: number;
  clientInfo: { name: string; version: string };
};

export function closedError(): McpToolError {
  return new McpToolError('the MCP tool set was closed (close() was called); this tool cannot be called any more', { kind: 'closed' });
}

/** Settles with `promise`, or rejects as soon as `signal` aborts (the promise goes on for others). */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Waits at most `ms` for `promise`, never rejecting: for best-effort goodbyes to a server. */
const atMost = (promise: Promise<unknown>, ms: number) =>
  Promise.race([promise.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, ms).unref())]);

/** A Client the user connected: used as it is, never reconnected or closed by actorloop. */
function borrowedConnection(client: Client, label: string, hooks: ConnectionHooks): McpConnection {
  let closed = false;
  hooks.prepare(client);
  return {
    client: () => (closed ? Promise.reject(closedError()) : Promise.resolve(client)),
    retire: () => undefined,
    isSessionGone: () => false,
    reconnects: false,
    label,
    get closed() {
      return closed;
    },
    async close() {
      if (closed) return;
      closed = true;
      hooks.release(client);
    },
  };
}

type Opened = { client: Client; transport: Transport; retired: boolean; closing?: Promise<void> };

/** A connection actorloop opens from a description, and opens again after it is lost. */
function ownedConnection(source: Exclude<ResolvedSource, { kind: 'client' }>, hooks: ConnectionHooks): McpConnection {
  let closed = false;
  let isSessionGone: (error: unknown) => boolean = () => false;

  const createTransport = async (onBroken: () => void): Promise<Transport> => {
    if (source.kind === 'stdio') {
      const { StdioClientTransport } = await loadStdioModule();
      const { command, args = [], cwd, stderr = 'inherit' } = source.stdio;
      return new StdioProcessTransport(
        new StdioClientTransport({ command, args: [...args], env: stdioEnvironment(source.stdio), ...(cwd ? { cwd } : {}), stderr }),
      );
    }
    const { StreamableHTTPClientTransport, StreamableHTTPError } = await loadHttpModule();
    isSessionGone = (error) => error instanceof StreamableHTTPError && error.code === 404;
    return new StreamableHTTPClientTransport(source.url, {
      requestInit: { headers: source.headers },
      fetch: watchEventStreams((url, init) => fetch(url, init), onBroken),
    });
  };

  /**
   * Ends a connection once; resolves when it is ended (a stdio server stopped). `goodbye` first ends
   * the HTTP session (best effort, bounded) — on close(), not for a connection already broken,
   * whose waiting calls must fail now rather than after a goodbye to a server that may be gone.
   */
  const retire = (opened: Opened, goodbye = false): Promise<void> => {
    opened.retired = true;
    opened.closing ??= (async () => {
      const transport = opened.transport as Transport & { terminateSession?: () => Promise<void> };
      if (goodbye && typeof transport.terminateSession === 'function' && transport.sessionId !== undefined) {
        await atMost(transport.terminateSession(), 2_000);
      }
      await opened.client.close().catch(() => undefined);
    })();
    return opened.closing;
  };

  /** Aborts the connection attempt in progress: close() does not wait out a server that is slow to start. */
  let connecting: AbortController | undefined;

  const open = async (): Promise<Opened> => {
    const attempt = new AbortController();
    connecting = attempt;
    const { Client } = await loadClientModule();
    const client = new Client(hooks.clientInfo, { capabilities: {} });
    const opened: Opened = { client, transport: undefined as unknown as Transport, retired: false };
    opened.transport = await createTransport(() => void retire(opened));
    hooks.prepare(client);
    // Transport errors also reach the request they belong to; a client with no handler would throw them.
    client.onerror = () => undefined;
    let connected = false;
    client.onclose = () => {
      const wasCurrent = !opened.retired;
      opened.retired = true;
      // A connection that never came up is reported by the request that opened it.
      if (wasCurrent && connected && !closed) {
        hooks.lost(new McpToolError(`the connection to the ${source.label} closed; the next call reconnects`, { kind: 'connection' }));
      }
    };
    try {
      await client.connect(opened.transport, { timeout: hooks.connectTimeoutMs, signal: attempt.signal });
    } catch (error) {
      opened.retired = true;
      // Resolves once a stdio server is gone: a server that never answered is stopped, not left behind.
      await client.close().catch(() => undefined);
      const reason = requestFailure(error, 'initialize', hooks.connectTimeoutMs);
      throw new McpToolError(`could not connect to the ${source.label}: ${reason}`, { kind: 'connection', cause: error });
    } finally {
      if (connecting === attempt) connecting = undefined;
    }
    connected = true;
    return opened;
  };

  let pending: Promise<Opened> | undefined;
  let live: Opened | undefined;

  /** The live connection, the attempt in progress, or a new attempt when the last one was lost. */
  const current = (): Promise<Opened> => {
    if (pending && !live?.retired) return pending;
    live = undefined;
    const attempt = open();
    pending = attempt;
    attempt.then(
      (opened) => {
        if (pending === attempt) live = opened;
      },
      // A failed attempt is not kept: the next request tries again.
      () => {
        if (pending === attempt) pending = undefined;
      },
    );
    return attempt;
  };

  return {
    client(signal) {
      if (closed) return Promise.reject(closedError());
      // The common case, on every call: connected, nothing to wait for.
      if (live && !live.retired) return Promise.resolve(live.client);
      return unlessAborted(
        current().then((opened) => opened.client),
        signal,
      );
    },
    retire(client) {
      if (live?.client === client) void retire(live);
    },
    isSessionGone: (error) => isSessionGone(error),
    reconnects: true,
    label: source.label,
    get closed() {
      return closed;
    },
    async close() {
      if (closed) return;
      closed = true;
      const last = pending;
      pending = undefined;
      live = undefined;
      connecting?.abort(closedError());
      const opened = await last?.catch(() => undefined);
      if (opened) await retire(opened, true);
    },
  };
}

/** The connection for a source. */
export function createConnection(source: ResolvedSource, hooks: ConnectionHooks): McpConnection {
  return source.kind === 'client' ? borrowedConnection(source.client, source.label, hooks) : ownedConnection(source, hooks);
}
