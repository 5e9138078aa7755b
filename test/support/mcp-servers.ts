/**
 * Starts the real MCP test server (test/support/mcp-server.ts) for a test: described as a stdio
 * source (actorloop spawns it), or spawned here and reached over streamable HTTP on 127.0.0.1.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { McpHttpSource, McpStdioSource, McpTool } from '../../src/tools/mcp/index.js';
import { supportScript } from './built-tree.js';
import { callContext } from './call-context.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

export type ServerLog = {
  pid: number;
  sessions: number;
  calls: Array<{ name: string; args: unknown }>;
  cancellations: Array<{ name: string; reason: string }>;
  headers: string[];
  client: unknown;
};

/** A file each server start appends its pid to, so a test can count starts. */
export function startLog() {
  const directory = mkdtempSync(join(tmpdir(), 'actorloop-mcp-'));
  const path = join(directory, 'starts.log');
  return {
    path,
    /** Pids of the server processes started so far. */
    starts(): number[] {
      try {
        return readFileSync(path, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => Number(line.split(' ')[0]));
      } catch {
        return [];
      }
    },
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}

/**
 * A stdio source that starts the test server (`--paged` for the paging one; `flags` are the
 * server's other options); `env` and `inheritNetworkEnv` go to the source as they are.
 */
export function stdioSource(
  options: {
    paged?: boolean;
    startLog?: string;
    flags?: readonly string[];
    env?: Record<string, string>;
    inheritNetworkEnv?: boolean;
  } = {},
): McpStdioSource {
  return {
    command: process.execPath,
    args: [supportScript('mcp-server.ts'), 'stdio', ...(options.paged ? ['--paged'] : []), ...(options.flags ?? [])],
    cwd: root,
    env: { ...(options.startLog ? { MCP_TEST_START_LOG: options.startLog } : {}), ...options.env },
    ...(options.inheritNetworkEnv === undefined ? {} : { inheritNetworkEnv: options.inheritNetworkEnv }),
  };
}

/** A stdio source whose server never answers (`mute-mcp-server.mjs`), logging its start to `startLog`. */
export function muteStdioSource(startLog: string): McpStdioSource {
  return { command: process.execPath, args: ['test/support/mute-mcp-server.mjs'], cwd: root, env: { MCP_TEST_START_LOG: startLog } };
}

export type HttpServer = { source: McpHttpSource; port: number; process: ChildProcess; stop(): Promise<void> };

/** Spawns the test server in http mode (on `port`, or a free one) and waits until it listens. */
export async function startHttpServer(
  options: { paged?: boolean; startLog?: string; port?: number; noGetStream?: boolean } = {},
): Promise<HttpServer> {
  const child = spawn(
    process.execPath,
    [
      supportScript('mcp-server.ts'),
      'http',
      ...(options.paged ? ['--paged'] : []),
      ...(options.port ? [`--port=${options.port}`] : []),
      ...(options.noGetStream ? ['--no-get-stream'] : []),
    ],
    {
      cwd: root,
      env: { ...process.env, ...(options.startLog ? { MCP_TEST_START_LOG: options.startLog } : {}) },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      const match = /listening (\d+)/.exec(seen);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the MCP test server exited (${code}) before listening: ${seen}`)));
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  return {
    source: { url: `http://127.0.0.1:${port}/mcp` },
    port,
    process: child,
    async stop() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** What the server process saw, from its `server_log` tool, called directly on the set's connection. */
export async function serverLog(tools: ReadonlyArray<McpTool>): Promise<ServerLog> {
  const tool = tools.find((candidate) => candidate.definition.name === 'server_log');
  if (!tool) throw new Error('the tool set has no server_log tool');
  return JSON.parse(String(await tool.execute({}, callContext()))) as ServerLog;
}

/** Whether a process is still running. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `check` until it holds (or fails the test after `timeoutMs`). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
