import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `node_modules/.cache/<name>/<version>/`, filled once by `fill` and returned with `file` in it.
 * Test files run in parallel processes: each fills a private folder and one atomic rename
 * publishes it, so none ever sees half a folder, and a second filler keeps the first one's.
 */
export function cacheFolder(name: string, version: string, file: string, fill: (folder: string, final: string) => void): string {
  const folder = join(import.meta.dirname, '..', '..', 'node_modules', '.cache', name, version);
  const target = join(folder, file);
  if (existsSync(target)) return target;
  const filling = `${folder}.${randomUUID()}`;
  mkdirSync(filling, { recursive: true });
  try {
    fill(filling, folder);
  } catch (error) {
    rmSync(filling, { recursive: true, force: true });
    throw error;
  }
  try {
    renameSync(filling, folder);
  } catch (error) {
    rmSync(filling, { recursive: true, force: true });
    if (!existsSync(target)) throw error;
  }
  return target;
}
