import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';

/**
 * The repository whose `node_modules/.cache` holds the folders: two levels above this file, or —
 * when this file runs built (`built-tree.ts` compiles it into `node_modules/.cache/actorloop-build/`)
 * — the folder that `node_modules` is in, so a built helper shares the caches of the tests.
 */
function repositoryRoot(): string {
  const here = import.meta.dirname;
  const modules = here.indexOf(`${sep}node_modules${sep}`);
  return modules >= 0 ? here.slice(0, modules) : join(here, '..', '..');
}

/** A filler that has held the lock this long died while filling: its lock is taken over. */
const staleLockMs = 5 * 60 * 1000;
const pauseMs = 50;

/** Blocks this thread for `ms`: the callers are synchronous, and a file waiting for its folder has nothing else to do. */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * `node_modules/.cache/<name>/<version>/`, filled once by `fill` and returned with `file` in it.
 * Test files run in parallel processes and often need the same folder at the same moment (the
 * build, the browser): one of them fills it while the others wait for it, rather than each doing
 * the same minute-long work. The filler holds a lock folder (made atomically), fills a private
 * folder and publishes it with one atomic rename, so none ever sees half a folder; a lock left by
 * a filler that died is taken over after five minutes.
 */
export function cacheFolder(name: string, version: string, file: string, fill: (folder: string, final: string) => void): string {
  const folder = join(repositoryRoot(), 'node_modules', '.cache', name, version);
  const target = join(folder, file);
  const lock = `${folder}.lock`;
  for (;;) {
    if (existsSync(target)) return target;
    mkdirSync(join(folder, '..'), { recursive: true });
    try {
      mkdirSync(lock);
    } catch {
      let heldMs = 0;
      try {
        heldMs = Date.now() - statSync(lock).mtimeMs;
      } catch {
        // Released between the two calls: look again.
      }
      if (heldMs > staleLockMs) rmSync(lock, { recursive: true, force: true });
      else pause(pauseMs);
      continue;
    }
    try {
      if (existsSync(target)) return target;
      const filling = `${folder}.${randomUUID()}`;
      mkdirSync(filling, { recursive: true });
      try {
        fill(filling, folder);
        renameSync(filling, folder);
      } catch (error) {
        rmSync(filling, { recursive: true, force: true });
        if (!existsSync(target)) throw error;
      }
      return target;
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}
