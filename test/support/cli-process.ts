/**
 * The `actorloop` command as a process, run as built from the current sources (`built-tree.ts`) with
 * a clean environment: no keys unless given, the offline model without its pauses.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { builtCli } from './built-tree.js';

export const root = join(import.meta.dirname, '..', '..');

export type CliResult = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

/** Where the command runs: `cwd` (default: the repository's root), as a user's project would run it. */
export type CliProcessOptions = { cwd?: string };

/**
 * Runs `actorloop …args`; resolves when the process has exited, with what it wrote. `onSpawn` gets
 * the child, to watch its output or signal it.
 *
 * @example
 * ```ts
 * const { code, stdout } = await actorloop(['run', 'what is 17*23?']);
 * ```
 */
export function actorloop(
  args: string[],
  env: Record<string, string> = {},
  onSpawn?: (child: ChildProcess) => void,
  options: CliProcessOptions = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [builtCli(), ...args], {
      cwd: options.cwd ?? root,
      env: { PATH: process.env.PATH ?? '', ACTORLOOP_OFFLINE_DELAY_MS: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data: Buffer) => {
      stdout += data.toString();
    });
    child.stderr.on('data', (data: Buffer) => {
      stderr += data.toString();
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    onSpawn?.(child);
  });
}

/**
 * Runs `actorloop …args` and presses Ctrl-C (SIGINT) once its stderr shows `line`; `sent` says
 * whether it came to that.
 *
 * @example
 * ```ts
 * const { sent, result } = await actorloopInterrupted(['run', 'wait 30 seconds'], {}, 'tool wait started');
 * ```
 */
export async function actorloopInterrupted(
  args: string[],
  env: Record<string, string>,
  line: string,
  options: CliProcessOptions = {},
): Promise<{ sent: boolean; result: CliResult }> {
  let sent = false;
  const result = await actorloop(
    args,
    env,
    (child) => {
      child.stderr?.on('data', (data: Buffer) => {
        if (!sent && data.toString().includes(line)) {
          sent = true;
          child.kill('SIGINT');
        }
      });
    },
    options,
  );
  return { sent, result };
}

/**
 * An `actorloop` command that listens (`serve`, `view`) started as a process: resolves with the JSON
 * it printed on its first line (`{ url, … }`), its process (to stop it) and its end; rejects when it
 * exits before printing one.
 */
export async function startListening<TPrinted extends { url: string }>(
  args: string[],
  env: Record<string, string> = {},
  options: CliProcessOptions = {},
): Promise<{ printed: TPrinted; child: ChildProcess; done: Promise<CliResult> }> {
  let child: ChildProcess | undefined;
  let done: Promise<CliResult> | undefined;
  const printed = await new Promise<TPrinted>((resolve, reject) => {
    done = actorloop(
      args,
      env,
      (spawned) => {
        child = spawned;
        let out = '';
        spawned.stdout?.on('data', (data: Buffer) => {
          out += data.toString();
          if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0] as string) as TPrinted);
        });
      },
      options,
    );
    done.then((result) => reject(new Error(`${args[0]} exited: ${result.code} ${result.stderr}`)));
  });
  return { printed, child: child as ChildProcess, done: done as Promise<CliResult> };
}

/** `actorloop view --port 0 …args` started as a process, with the address it printed. */
export async function startView(
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<{ url: string; child: ChildProcess; done: Promise<CliResult> }> {
  const { printed, child, done } = await startListening(['view', '--port', '0', ...args], env);
  return { url: printed.url, child, done };
}
