import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Whether the process that last wrote a conversation (its stored `owner`) still runs: `alive`,
 * `dead`, or `unknown` — an owner on another machine, or one whose id names no process.
 */
export type OwnerLiveness = { state: 'alive' | 'dead' | 'unknown'; host?: string; pid?: number };

/** Linux only: which boot, and when in it, a process started — what a reused pid does not share with the process it replaces. */
function startMarkOf(pid: number): string | undefined {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim().slice(0, 8);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (starttime, clock ticks since boot), counted after the command name, which may hold spaces and parentheses.
    const ticks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return boot !== '' && ticks !== undefined && /^\d+$/.test(ticks) ? `start-${boot}-${ticks}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The host id of the CLI's durable host, what it stores as `owner`: `<hostname>:<pid>:<mark>`, the
 * mark being the process's boot and start time on Linux (a random tag elsewhere). The host's own
 * default, `<hostname>:<pid>:<random>`, has the same first two parts, so runs of other programs
 * on the file are told apart the same way.
 *
 * @example
 * ```ts
 * cliHostId(); // 'build-7:41233:start-3f2a9c1e-918273'
 * ```
 */
export function cliHostId(): string {
  return `${hostname()}:${process.pid}:${startMarkOf(process.pid) ?? randomUUID().slice(0, 8)}`;
}

/**
 * Whether the owner of a stored run is alive. The rule: an owner `<hostname>:<pid>:…` on this
 * machine (same hostname) is dead when no process has that pid — or, with a Linux start mark,
 * when the process with that pid started at another time (the pid was reused) — and alive
 * otherwise (a process of another user counts: it exists). An owner on another machine, or not of that form, is `unknown`. Asked before this
 * process writes anything, so an owner with this process's own pid is an earlier process.
 *
 * @example
 * ```ts
 * if (ownerLiveness(stored.owner).state === 'dead') console.log(`${stored.id} was interrupted`);
 * ```
 */
export function ownerLiveness(owner: string): OwnerLiveness {
  const match = /^([^:]+):(\d+):(.*)$/s.exec(owner);
  if (!match) return { state: 'unknown' };
  const [, host = '', pidText = '', mark = ''] = match;
  const pid = Number(pidText);
  if (host !== hostname() || !Number.isSafeInteger(pid) || pid <= 0) return { state: 'unknown', host, pid };
  const found = (state: OwnerLiveness['state']): OwnerLiveness => ({ state, host, pid });
  if (pid === process.pid) return found(owner === cliHostId() ? 'alive' : 'dead');
  // A mark that cannot be read now (no such pid, no /proc, a /proc that hides other users' processes) leaves it to the pid.
  const now = mark.startsWith('start-') ? startMarkOf(pid) : undefined;
  if (now !== undefined) return found(now === mark ? 'alive' : 'dead');
  try {
    process.kill(pid, 0);
    return found('alive');
  } catch (error) {
    // EPERM: the process exists, under another user.
    return found((error as NodeJS.ErrnoException).code === 'ESRCH' ? 'dead' : 'alive');
  }
}

/** The owner in words, for messages: `process 4123 on this machine`, `process 88 on build-7`, or the id itself. */
export function describeOwner(owner: string, liveness: OwnerLiveness): string {
  if (liveness.pid === undefined || liveness.host === undefined) return `host ${JSON.stringify(owner)}`;
  return `process ${liveness.pid} on ${liveness.host === hostname() ? 'this machine' : liveness.host}`;
}
