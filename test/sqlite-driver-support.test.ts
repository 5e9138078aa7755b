import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { unsupportedDriverProblem } from '../src/stores/sqlite/sqlite-store.js';

describe('which better-sqlite3 runs on which Node', () => {
  it('refuses better-sqlite3 13 on Node 20 (it would crash the process), naming both versions and the fix', () => {
    const problem = unsupportedDriverProblem('13.2.0', '20.20.2');
    expect(problem).toContain('better-sqlite3 13.2.0 needs Node 22 or newer');
    expect(problem).toContain('Node 20.20.2');
    expect(problem).toContain('npm install better-sqlite3@12');
  });

  it('accepts 12 on every supported Node and 13 on Node 22 and 24', () => {
    for (const node of ['20.19.0', '22.12.0', '24.22.3']) expect(unsupportedDriverProblem('12.10.0', node)).toBeUndefined();
    for (const node of ['22.12.0', '24.22.3']) expect(unsupportedDriverProblem('13.2.0', node)).toBeUndefined();
  });

  it('refuses a driver older than 12', () => {
    expect(unsupportedDriverProblem('11.10.0', '22.12.0')).toContain('too old');
  });
});

describe('sqliteStore with an installed driver it must not load', () => {
  // A project of its own: actorloop's sources beside a stand-in better-sqlite3 whose code throws if
  // it is ever loaded, so the version check is seen to run before the import.
  const project = mkdtempSync(join(tmpdir(), 'actorloop-driver-'));
  cpSync(join(import.meta.dirname, '..', 'src'), join(project, 'src'), { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module' }));
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  const openWith = (driverVersion: string) => {
    const driver = join(project, 'node_modules', 'better-sqlite3');
    mkdirSync(driver, { recursive: true });
    writeFileSync(join(driver, 'package.json'), JSON.stringify({ name: 'better-sqlite3', version: driverVersion, main: 'index.js' }));
    writeFileSync(join(driver, 'index.js'), "throw new Error('the stand-in driver was loaded');\n");
    writeFileSync(
      join(project, 'open.ts'),
      `import { sqliteStore } from './src/stores/sqlite/index.ts';
       const store = sqliteStore({ path: ${JSON.stringify(join(project, 'c.db'))} });
       try { await store.load('c-1'); console.log(JSON.stringify({ opened: true })); }
       catch (error) { console.log(JSON.stringify({ code: error.code, message: error.message })); }`,
    );
    const tsx = join(import.meta.dirname, '..', 'node_modules', '.bin', 'tsx');
    return JSON.parse(execFileSync(tsx, [join(project, 'open.ts')], { cwd: project, encoding: 'utf8' }).trim()) as {
      code?: string;
      message?: string;
    };
  };

  it('refuses 13 on Node < 22 without loading it; on Node 22+ it is loaded (and the stand-in fails as a missing driver)', () => {
    const result = openWith('13.0.0');
    if (Number.parseInt(process.versions.node, 10) < 22) {
      expect(result.code).toBe('driver_unsupported');
      expect(result.message).toContain(`better-sqlite3 13.0.0 needs Node 22 or newer, and this is Node ${process.versions.node}`);
    } else {
      expect(result.code).toBe('driver_missing');
    }
  });

  it('refuses 11 on every Node without loading it', () => {
    const result = openWith('11.10.0');
    expect(result.code).toBe('driver_unsupported');
    expect(result.message).toContain('better-sqlite3 11.10.0 is too old');
  });
});
