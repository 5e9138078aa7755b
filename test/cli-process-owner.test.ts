/**
 * How the CLI tells a run whose process died (`interrupted`) from one a live process holds: the
 * owner id `<hostname>:<pid>:<mark>` (docs/cli.md, "A killed run"), checked against real
 * processes; and the one-conversation view of a store that `resume` and `cancel` recover through.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { oneConversationStore } from '../src/cli/one-conversation-store.js';
import { cliHostId, ownerLiveness } from '../src/cli/process-owner.js';
import { shownStatusOf } from '../src/cli/stored-conversation.js';
import type { StoredConversation } from '../src/host/conversation-store.js';
import { memoryStore } from '../src/host/memory-store.js';

/** A process that runs until killed, and its pid. */
async function liveProcess(): Promise<ChildProcess & { pid: number }> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('spawn', resolve));
  return child as ChildProcess & { pid: number };
}

async function ended(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise((resolve) => child.once('exit', resolve));
}

const linux = existsSync('/proc/self/stat');

describe('ownerLiveness', () => {
  it("this process's own host id is alive; another id with its pid is an earlier process, dead", () => {
    const own = cliHostId();
    expect(own.startsWith(`${hostname()}:${process.pid}:`)).toBe(true);
    expect(cliHostId()).toBe(own);
    expect(ownerLiveness(own)).toEqual({ state: 'alive', host: hostname(), pid: process.pid });
    expect(ownerLiveness(`${hostname()}:${process.pid}:a1b2c3d4`).state).toBe('dead');
  });

  it('a process on this machine: alive while it runs, dead once it has exited', async () => {
    const child = await liveProcess();
    const owner = `${hostname()}:${child.pid}:a1b2c3d4`;
    expect(ownerLiveness(owner)).toEqual({ state: 'alive', host: hostname(), pid: child.pid });
    child.kill('SIGKILL');
    await ended(child);
    expect(ownerLiveness(owner)).toEqual({ state: 'dead', host: hostname(), pid: child.pid });
  });

  it.runIf(linux)('Linux: a live pid with another start mark is a reused pid, so the owner is dead', async () => {
    const child = await liveProcess();
    try {
      expect(ownerLiveness(`${hostname()}:${child.pid}:start-00000000-1`).state).toBe('dead');
      // This process's own mark, on a pid it shares: the mark decides, not the pid.
      const mark = cliHostId().split(':')[2] as string;
      expect(mark).toMatch(/^start-[0-9a-f]{8}-\d+$/);
      expect(ownerLiveness(`${hostname()}:${child.pid}:${mark}`).state).toBe('dead');
    } finally {
      child.kill('SIGKILL');
      await ended(child);
    }
  });

  it('another machine, or an id that names no process, cannot be checked: unknown', () => {
    expect(ownerLiveness('far-away:4242:x1')).toEqual({ state: 'unknown', host: 'far-away', pid: 4242 });
    for (const owner of ['web-1', 'test-process', '', `${hostname()}:0:x`, `${hostname()}:-3:x`, `${hostname()}:12x:y`]) {
      expect(ownerLiveness(owner).state).toBe('unknown');
    }
  });

  it('a stored running run shows interrupted when its owner is dead; any other status is shown as stored', () => {
    expect(shownStatusOf({ status: 'running', owner: `${hostname()}:${process.pid}:gone` }).status).toBe('interrupted');
    expect(shownStatusOf({ status: 'running', owner: cliHostId() }).status).toBe('running');
    expect(shownStatusOf({ status: 'running', owner: 'far-away:1:x' }).status).toBe('running');
    expect(shownStatusOf({ status: 'done', owner: `${hostname()}:${process.pid}:gone` })).toEqual({ status: 'done' });
  });
});

describe('oneConversationStore', () => {
  const stored = (id: string, status: StoredConversation['status']): StoredConversation => ({
    id,
    schemaVersion: 1,
    machineId: 'conversation',
    status,
    snapshot: '{}',
    revision: 1,
    owner: 'test',
    updatedAt: 1,
  });

  it('lists the one conversation only, by the filters of list; every other method is the store', async () => {
    const store = memoryStore();
    for (const [id, status] of [
      ['a', 'running'],
      ['b', 'running'],
      ['c', 'done'],
    ] as const)
      await store.save(stored(id, status));
    const onlyB = oneConversationStore(store, 'b');
    expect(await onlyB.list({ status: 'running' })).toEqual([{ id: 'b', status: 'running', revision: 1, owner: 'test', updatedAt: 1 }]);
    expect(await onlyB.list()).toHaveLength(1);
    expect(await onlyB.list({ status: ['done', 'halted'] })).toEqual([]);
    expect(await onlyB.list({ after: 'a' })).toHaveLength(1);
    expect(await onlyB.list({ after: 'b' })).toEqual([]);
    expect(await oneConversationStore(store, 'zz').list()).toEqual([]);
    await onlyB.save({ ...stored('a', 'done'), revision: 2 });
    expect((await store.load('a'))?.status).toBe('done');
    expect(await onlyB.load('c')).toEqual(stored('c', 'done'));
  });
});
