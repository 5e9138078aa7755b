import { nodeBuiltin, runtimeName } from '../util/runtime.js';

/**
 * `<hostname>:<pid>:<random>`: who wrote a stored conversation, readable in a lease conflict.
 * Off Node (workerd has no host name or process id) the runtime's name and `-` stand in, and the
 * random part alone keeps two isolates apart.
 */
export function defaultHostId(): string {
  const machine = nodeBuiltin<typeof import('node:os')>('node:os')?.hostname() || runtimeName();
  const pid = (globalThis as { process?: { pid?: number } }).process?.pid;
  return `${machine}:${pid ?? '-'}:${crypto.randomUUID().slice(0, 8)}`;
}
