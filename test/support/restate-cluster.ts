/**
 * The primary of a node:cluster of Restate workers (test/support/restate-worker.ts) sharing one
 * port on 127.0.0.1: forks `count` workers, forks a replacement for each that dies, and takes
 * orders from its parent over IPC — kill a worker (SIGKILL), restart them all, stop. Worker
 * messages go up to the parent as they are.
 *
 * argv: <port> <count> <executions side file> <journaled side file> <wire server url>
 */
import cluster, { type Worker } from 'node:cluster';
import { join } from 'node:path';

export type ClusterOrder = { type: 'kill'; pid: number } | { type: 'restartAll' } | { type: 'stop' };
export type ClusterMessage = { type: 'exited'; pid: number; signal: string | null } | { type: 'stopped' };

const [port, count, ...rest] = process.argv.slice(2);
if (!port || !count || rest.length !== 3) throw new Error('usage: restate-cluster.ts <port> <count> <executions> <journaled> <wire url>');
// Built (test/support/built-tree.ts), the workers are built JavaScript too; run from source, they go through tsx.
const built = import.meta.url.endsWith('.js');
cluster.setupPrimary({
  exec: join(import.meta.dirname, built ? 'restate-worker.js' : 'restate-worker.ts'),
  execArgv: built ? [] : ['--import', 'tsx'],
  args: [port, ...rest],
});

let stopping = false;
let replacing = true;
const workers = new Set<Worker>();
const fork = () => {
  const worker = cluster.fork({ RESTATE_LOGGING: process.env.RESTATE_LOGGING ?? 'ERROR' });
  workers.add(worker);
  worker.on('message', (message) => process.send?.(message));
  worker.on('exit', (_code, signal) => {
    workers.delete(worker);
    process.send?.({ type: 'exited', pid: worker.process.pid ?? 0, signal } satisfies ClusterMessage);
    if (!stopping && replacing) fork();
    if (stopping && workers.size === 0) {
      process.send?.({ type: 'stopped' } satisfies ClusterMessage);
      process.exit(0);
    }
  });
};
for (let index = 0; index < Number(count); index++) fork();

process.on('message', (order: ClusterOrder) => {
  if (order.type === 'kill') {
    for (const worker of workers) if (worker.process.pid === order.pid) worker.process.kill('SIGKILL');
  } else if (order.type === 'restartAll') {
    // All at once: no worker is left to serve until the new ones listen.
    replacing = false;
    const old = [...workers];
    let left = old.length;
    for (const worker of old) {
      worker.once('exit', () => {
        if (--left > 0) return;
        replacing = true;
        for (let index = 0; index < Number(count); index++) fork();
      });
      worker.process.kill('SIGKILL');
    }
  } else if (order.type === 'stop') {
    stopping = true;
    if (workers.size === 0) process.exit(0);
    for (const worker of workers) worker.process.kill('SIGKILL');
  }
});
process.on('disconnect', () => {
  stopping = true;
  for (const worker of workers) worker.process.kill('SIGKILL');
});
