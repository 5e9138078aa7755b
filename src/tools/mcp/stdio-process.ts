import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpStdioSource } from './source.js';

/**
 * The variables of this process a stdio server gets besides the SDK's own few (see
 * {@link McpStdioSource.env}): how to reach the network — proxies and the certificate authorities to
 * trust — which a server behind a corporate proxy cannot work without, and which are not
 * credentials of any service. Not `NODE_OPTIONS`: it carries `--require`/`--import` hooks and
 * inspector flags meant for this process (a debugger's, a test runner's); its proxy and CA
 * switches have the variables below. Not `NODE_TLS_REJECT_UNAUTHORIZED`: turning verification
 * off for a server is a choice to make with `env`, not one to inherit.
 */
export const inheritedNetworkEnv: readonly string[] = [
  'HTTP_PROXY',
  'http_proxy',
  'HTTPS_PROXY',
  'https_proxy',
  'NO_PROXY',
  'no_proxy',
  'ALL_PROXY',
  'all_proxy',
  'NODE_USE_ENV_PROXY',
  'NODE_EXTRA_CA_CERTS',
  'NODE_USE_SYSTEM_CA',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'REQUESTS_CA_BUNDLE',
  'CURL_CA_BUNDLE',
];

/**
 * What actorloop hands the SDK as the server's `env`; the SDK adds its own safe default (PATH,
 * HOME, …) underneath, which no option removes. The source's `env` wins over inherited values.
 */
export function stdioEnvironment(source: McpStdioSource, from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  if (source.inheritNetworkEnv !== false) {
    const wanted = new Set(inheritedNetworkEnv);
    // Keys as this process has them: on Windows, where names ignore case, one entry per variable.
    for (const [name, value] of Object.entries(from)) {
      if (wanted.has(name) && value !== undefined) env[name] = value;
    }
  }
  return { ...env, ...source.env };
}

/**
 * After stdin closes, how long a server gets to exit on its own before SIGTERM. The MCP spec's
 * shutdown is stdin, then SIGTERM, then SIGKILL, each after "a reasonable time"; the SDK waits 2 s
 * at each step, which close() and everything waiting on it paid whenever the server did not exit
 * on EOF (one with a call still running never does). A server that exits on EOF needs a few ms.
 */
const eofGraceMs = 200;
/** After SIGTERM, how long before SIGKILL. */
const termGraceMs = 1_000;
/** After SIGKILL, how long to wait for the exit to be seen (it is not when a grandchild holds the pipes). */
const killWaitMs = 1_000;

/** What is used of the SDK's StdioClientTransport (typed as a Transport: its own onmessage type differs between SDK versions). */
type StdioTransport = Transport & Pick<StdioClientTransport, 'pid'>;

/**
 * The SDK's stdio transport with a prompt close(): stdin closed, then SIGTERM and SIGKILL after
 * short graces, resolving once the server process is gone. Everything else is the SDK's.
 */
export class StdioProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  private exited = false;
  private markExited!: () => void;
  private readonly exit = new Promise<void>((resolve) => {
    this.markExited = resolve;
  });
  private closing: Promise<void> | undefined;

  constructor(private readonly inner: StdioTransport) {
    // The SDK calls onclose when the process and its pipes have closed, also after its own close().
    inner.onclose = () => {
      this.exited = true;
      this.markExited();
      this.onclose?.();
    };
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => this.onmessage?.(message, extra);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(...args: Parameters<Transport['send']>): Promise<void> {
    return this.inner.send(...args);
  }

  /** Once: the SDK's Client closes its transport again after a failed initialize, and each caller waits for the same exit. */
  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  private async stop(): Promise<void> {
    // Read before the SDK's close(), which forgets the process.
    const pid = this.inner.pid;
    // Ends stdin (the spec's first step). Its own escalation, 2 s apart, goes on unawaited on
    // unref'd timers and finds the process already gone.
    const sdkClose = this.inner.close().catch(() => undefined);
    if (pid === null || this.exited) {
      await sdkClose;
      return;
    }
    if (await this.exitsWithin(eofGraceMs)) return;
    signal(pid, 'SIGTERM');
    if (await this.exitsWithin(termGraceMs)) return;
    signal(pid, 'SIGKILL');
    await this.exitsWithin(killWaitMs);
  }

  private exitsWithin(ms: number): Promise<boolean> {
    if (this.exited) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      void this.exit.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

/**
 * Signals by pid (the SDK keeps the ChildProcess private). Only while no exit was seen, so the pid
 * is still this server's — unless it exited while a grandchild holds its pipes open; pids are
 * handed out in turn, so not to another process within the second this takes.
 */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // ESRCH: it is gone already.
  }
}
