/**
 * A real `restate-server` for tests and the benchmark: the binary that `@restatedev/restate-server`
 * ships (its platform package), started directly — not through the package's npm wrapper, which
 * leaves the server running when the wrapper is killed. It listens on 127.0.0.1 only, on free
 * ports, with a fresh `--base-dir` that `stop()` deletes, and a short invocation retry policy so a
 * run whose worker died is retried within half a second (docs/scale-out-restate.md, "Retry policy").
 *
 * @example
 * ```ts
 * const server = await startRestateServer();
 * await server.register('http://127.0.0.1:9080');
 * // … ingress at server.ingressUrl …
 * await server.stop();
 * ```
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type RestateServer = {
  /** `http://127.0.0.1:PORT` of the ingress (where clients call handlers). */
  ingressUrl: string;
  /** `http://127.0.0.1:PORT` of the admin API (health, deployments). */
  adminUrl: string;
  /** The server's data directory (RocksDB, the log): survives `kill()` and `restart()`, deleted by `stop()`. */
  baseDir: string;
  pid: () => number | undefined;
  /** Registers a deployment (the workers' address) and waits until its services are known. */
  register: (deploymentUrl: string) => Promise<void>;
  /** SIGKILL: the process dies at once, mid-write if it was writing. The data directory stays. */
  kill: () => Promise<void>;
  /** Starts the server again on the same ports and data directory, and waits until it is healthy. */
  restart: () => Promise<void>;
  /** Stops the server (SIGTERM, then SIGKILL after a grace period) and deletes its data directory. */
  stop: () => Promise<void>;
  /** The last lines the server logged (for failure messages). */
  logs: () => string;
};

/** The environment that configures a test server; every name is documented in docs/scale-out-restate.md. */
export function restateServerEnvironment(ports: { node: number; admin: number; ingress: number }): Record<string, string> {
  return {
    RESTATE_BIND_IP: '127.0.0.1',
    RESTATE_BIND_PORT: String(ports.node),
    RESTATE_ADMIN__BIND_PORT: String(ports.admin),
    RESTATE_INGRESS__BIND_PORT: String(ports.ingress),
    // TCP only: no unix sockets in the data directory.
    RESTATE_LISTEN_MODE: 'tcp',
    RESTATE_DISABLE_TELEMETRY: 'true',
    // A run whose worker died is tried again soon, and never paused for running out of attempts.
    RESTATE_DEFAULT_RETRY_POLICY__INITIAL_INTERVAL: '100ms',
    RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL: '500ms',
    RESTATE_DEFAULT_RETRY_POLICY__MAX_ATTEMPTS: '100000',
    // Fewer partitions than the default 24: less work for a 2-core machine, same guarantees.
    RESTATE_DEFAULT_NUM_PARTITIONS: '4',
    // Several connections to the workers, so workers sharing one port (node:cluster) all get invocations.
    RESTATE_WORKER__INVOKER__HTTP2_STREAMS_PER_CONNECTION_LIMIT: '8',
    RESTATE_LOG_FILTER: 'warn',
    RESTATE_LOG_DISABLE_ANSI_CODES: 'true',
  };
}

/** The server binary inside the platform package `@restatedev/restate-server` depends on. */
export function restateServerBinary(): string {
  const require = createRequire(import.meta.url);
  return require.resolve(`@restatedev/restate-server-${process.platform}-${process.arch}/bin/restate-server`);
}

/** A port free on 127.0.0.1 right now (the OS picks it; another process could take it before we bind). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port assigned');
  return address.port;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForHealth(adminUrl: string, child: ChildProcess, logs: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`restate-server exited (${child.signalCode ?? child.exitCode}) before it was healthy:\n${logs()}`);
    }
    try {
      const response = await fetch(`${adminUrl}/health`, { signal: AbortSignal.timeout(1_000) });
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  throw new Error(`restate-server was not healthy after ${timeoutMs} ms:\n${logs()}`);
}

/**
 * Starts `restate-server` on 127.0.0.1 with free ports and a fresh data directory, and resolves once
 * its admin API answers `GET /health`.
 */
export async function startRestateServer(options: { startTimeoutMs?: number } = {}): Promise<RestateServer> {
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const baseDir = mkdtempSync(join(tmpdir(), 'actorloop-restate-'));
  const ports = { node: await freePort(), admin: await freePort(), ingress: await freePort() };
  const adminUrl = `http://127.0.0.1:${ports.admin}`;
  const ingressUrl = `http://127.0.0.1:${ports.ingress}`;
  const binary = restateServerBinary();
  const lines: string[] = [];
  const logs = () => lines.join('');
  let child: ChildProcess | undefined;
  let stopped = false;

  const launch = async () => {
    const started = spawn(binary, ['--base-dir', baseDir, '--no-logo'], {
      env: { ...process.env, ...restateServerEnvironment(ports) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    const keep = (chunk: Buffer) => {
      lines.push(chunk.toString('utf8'));
      if (lines.length > 200) lines.splice(0, lines.length - 200);
    };
    started.stdout?.on('data', keep);
    started.stderr?.on('data', keep);
    await waitForHealth(adminUrl, started, logs, startTimeoutMs);
  };

  const exited = (process: ChildProcess) =>
    process.exitCode !== null || process.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => process.once('exit', () => resolve()));

  const kill = async () => {
    const running = child;
    if (!running) return;
    running.kill('SIGKILL');
    await exited(running);
  };
  // A test process that dies leaves no server behind.
  const onExit = () => child?.kill('SIGKILL');
  process.once('exit', onExit);

  await launch();

  return {
    ingressUrl,
    adminUrl,
    baseDir,
    pid: () => child?.pid,
    logs,
    async register(deploymentUrl) {
      const response = await fetch(`${adminUrl}/deployments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ uri: deploymentUrl, force: true }),
      });
      if (!response.ok) throw new Error(`registering ${deploymentUrl} failed: ${response.status} ${await response.text()}`);
    },
    kill,
    async restart() {
      await kill();
      await launch();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      const running = child;
      if (running && running.exitCode === null && running.signalCode === null) {
        running.kill('SIGTERM');
        const timer = setTimeout(() => running.kill('SIGKILL'), 10_000);
        await exited(running);
        clearTimeout(timer);
      }
      process.off('exit', onExit);
      rmSync(baseDir, { recursive: true, force: true });
    },
  };
}
