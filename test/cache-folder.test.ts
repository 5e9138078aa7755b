/**
 * test/support/cache-folder.ts, which the suites' parallel files share for the build, Chromium and
 * Mermaid: one of them fills a folder while the others wait for it, a filler that failed leaves
 * nothing behind, and a lock left by a filler that died is taken over.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { supportScript } from './support/built-tree.js';
import { cacheFolder } from './support/cache-folder.js';

const name = `actorloop-test-cache-${randomUUID()}`;
const cache = join(import.meta.dirname, '..', 'node_modules', '.cache', name);
const work = mkdtempSync(join(tmpdir(), 'actorloop-cache-folder-'));
afterAll(() => {
  rmSync(cache, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

describe('cacheFolder', () => {
  it('is filled once when three processes ask for it at the same moment; each gets the same file', async () => {
    const log = join(work, 'fills.log');
    const script = supportScript('cache-filler.ts');
    const asked = await Promise.all(
      [1, 2, 3].map(() => promisify(execFile)(process.execPath, [script, name, 'v1', log, '300'], { encoding: 'utf8' })),
    );
    const fillers = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    expect(fillers).toHaveLength(1);
    expect(new Set(asked.map(({ stdout }) => stdout))).toEqual(new Set([join(cache, 'v1', 'filled')]));
    expect(readFileSync(join(cache, 'v1', 'filled'), 'utf8')).toBe(fillers[0]);
    expect(existsSync(join(cache, 'v1.lock'))).toBe(false);
  });

  it('leaves neither a folder nor a lock when the fill throws, and says why', () => {
    expect(() =>
      cacheFolder(name, 'v2', 'file', () => {
        throw new Error('no space left');
      }),
    ).toThrow('no space left');
    expect(existsSync(join(cache, 'v2'))).toBe(false);
    expect(existsSync(join(cache, 'v2.lock'))).toBe(false);
  });

  it('takes over a lock its filler left more than five minutes ago', () => {
    mkdirSync(join(cache, 'v3.lock'), { recursive: true });
    const old = new Date(Date.now() - 6 * 60 * 1000);
    utimesSync(join(cache, 'v3.lock'), old, old);
    const file = cacheFolder(name, 'v3', 'file', (folder) => {
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'file'), 'filled');
    });
    expect(readFileSync(file, 'utf8')).toBe('filled');
    expect(existsSync(join(cache, 'v3.lock'))).toBe(false);
  });
});
