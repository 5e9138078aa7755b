/** Starts and controls the wire server process (bench/wire-server-process.ts). */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { WireConfig, WireControlMessage, WireReply, WireStats } from './wire-server-process.js';

export type { WireConfig, WireStats };

export interface WireServerHandle {
  url: string;
  /** `url + '/v1'`, what the OpenAI client takes as `baseURL`. */
  baseURL: string;
  backlog: number;
  pid: number;
  configure(config: Partial<WireConfig>): Promise<WireConfig>;
  reset(): Promise<void>;
  stats(): Promise<WireStats>;
  close(): Promise<void>;
}

type ControlBody = { type: 'config'; config: Partial<WireConfig> } | { type: 'stats' } | { type: 'reset' };

export async function startWireServerProcess(config: Partial<WireConfig> = {}): Promise<WireServerHandle> {
  const script = fileURLToPath(new URL('./wire-server-process.ts', import.meta.url));
  // Inherits tsx's loader through process.execArgv.
  const child: ChildProcess = fork(script, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = await new Promise<Extract<WireReply, { type: 'ready' }>>((resolve, reject) => {
    const onMessage = (message: WireReply) => {
      if (message.type === 'ready') {
        child.off('message', onMessage);
        resolve(message);
      }
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`wire server exited before it was ready (code ${code})`)));
  });
  let nextId = 1;
  const pending = new Map<number, (reply: WireReply) => void>();
  child.on('message', (message: WireReply) => {
    if (message.type === 'ready') return;
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  const call = (body: ControlBody) =>
    new Promise<WireReply>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      child.send({ ...body, id } as WireControlMessage);
    });
  const handle: WireServerHandle = {
    url: ready.url,
    baseURL: `${ready.url}/v1`,
    backlog: ready.backlog,
    pid: child.pid ?? -1,
    async configure(next) {
      const reply = await call({ type: 'config', config: next });
      if (reply.type !== 'ack') throw new Error('wire server: unexpected reply');
      return reply.config;
    },
    async reset() {
      await call({ type: 'reset' });
    },
    async stats() {
      const reply = await call({ type: 'stats' });
      if (reply.type !== 'stats') throw new Error('wire server: unexpected reply');
      return reply.stats;
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
  await handle.configure(config);
  return handle;
}
