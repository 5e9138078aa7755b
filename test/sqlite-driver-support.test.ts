/**
 * Which SQLite driver `sqliteStore` takes on which Node: the choice itself (a pure function), then
 * end to end in projects of their own — better-sqlite3 absent, or a stand-in that throws if loaded —
 * on the Node running the tests. On Node 20 these give the creation errors, on Node 22.13+/24 node:sqlite.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { unsupportedDriverProblem } from '../src/stores/sqlite/drivers/better-sqlite3.js';
import { chooseDriver, type DriverFacts } from '../src/stores/sqlite/drivers/choose-driver.js';
import { nodeHasSqlite } from './support/sqlite-drivers.js';

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

describe('chooseDriver', () => {
  const node20 = { nodeVersion: '20.20.2', hasNodeSqlite: () => false };
  const node24 = { nodeVersion: '24.22.3', hasNodeSqlite: () => true };
  const choose = (facts: Partial<DriverFacts> & Pick<DriverFacts, 'nodeVersion' | 'hasNodeSqlite'>) =>
    chooseDriver({ requested: undefined, betterSqlite3Version: undefined, ...facts });

  it('by default: better-sqlite3 when it is installed and runs here, else node:sqlite', () => {
    expect(choose({ ...node24, betterSqlite3Version: '12.10.0' })).toEqual({ driver: 'better-sqlite3' });
    expect(choose({ ...node20, betterSqlite3Version: '12.10.0' })).toEqual({ driver: 'better-sqlite3' });
    expect(choose(node24)).toEqual({ driver: 'node:sqlite' });
    // An installed better-sqlite3 that must not be loaded here is passed over for node:sqlite.
    expect(choose({ ...node24, betterSqlite3Version: '11.10.0' })).toEqual({ driver: 'node:sqlite' });
  });

  it('does not load node:sqlite when better-sqlite3 is taken', () => {
    const hasNodeSqlite = () => {
      throw new Error('node:sqlite was asked for');
    };
    expect(choose({ nodeVersion: '24.22.3', hasNodeSqlite, betterSqlite3Version: '12.10.0' })).toEqual({ driver: 'better-sqlite3' });
    expect(choose({ nodeVersion: '24.22.3', hasNodeSqlite, betterSqlite3Version: '12.10.0', requested: 'better-sqlite3' })).toEqual({
      driver: 'better-sqlite3',
    });
  });

  it('by default with neither: driver_missing naming the Node version and both ways out', () => {
    const choice = choose(node20);
    expect(choice).toMatchObject({ code: 'driver_missing' });
    const { problem } = choice as { problem: string };
    expect(problem).toContain('Node 20.20.2');
    expect(problem).toContain('npm install better-sqlite3');
    expect(problem).toContain('Node 22.13 or newer, which has node:sqlite built in');
  });

  it('by default with only an unsupported better-sqlite3: driver_unsupported, saying why and that node:sqlite is not here either', () => {
    const choice = choose({ ...node20, betterSqlite3Version: '13.0.0' });
    expect(choice).toMatchObject({ code: 'driver_unsupported' });
    expect((choice as { problem: string }).problem).toMatch(
      /^better-sqlite3 13\.0\.0 needs Node 22 or newer, .*; the other driver, node:sqlite, is not available on Node 20\.20\.2/,
    );
  });

  it("driver 'node:sqlite': taken where Node has it, refused elsewhere naming the Node version, Node 22.13 and better-sqlite3", () => {
    expect(choose({ ...node24, requested: 'node:sqlite', betterSqlite3Version: '12.10.0' })).toEqual({ driver: 'node:sqlite' });
    for (const nodeVersion of ['20.20.2', '22.12.0']) {
      const choice = choose({ nodeVersion, hasNodeSqlite: () => false, requested: 'node:sqlite', betterSqlite3Version: '12.10.0' });
      expect(choice).toMatchObject({ code: 'driver_unsupported' });
      const { problem } = choice as { problem: string };
      expect(problem).toContain(`driver 'node:sqlite' is not available on Node ${nodeVersion}`);
      expect(problem).toContain('22.5–22.12 only with --experimental-sqlite');
      expect(problem).toContain(
        "Run on Node 22.13 or newer, or install better-sqlite3 (npm install better-sqlite3) and use driver 'better-sqlite3'",
      );
    }
  });

  it("driver 'better-sqlite3': never node:sqlite instead", () => {
    const missing = choose({ ...node24, requested: 'better-sqlite3' });
    expect(missing).toMatchObject({ code: 'driver_missing' });
    expect((missing as { problem: string }).problem).toBe(
      "driver 'better-sqlite3' needs the better-sqlite3 package (12.x, or 13.x on Node 22+): npm install better-sqlite3, or use driver 'node:sqlite', built into this Node",
    );
    expect((choose({ ...node20, requested: 'better-sqlite3' }) as { problem: string }).problem).not.toContain('node:sqlite');
    expect(choose({ ...node24, requested: 'better-sqlite3', betterSqlite3Version: '11.0.0' })).toMatchObject({
      code: 'driver_unsupported',
    });
  });
});

describe('sqliteStore in a project of its own', () => {
  // actorloop's sources in a project with no better-sqlite3, or with a stand-in one whose code
  // throws if it is ever loaded (so a version check is seen to run before the import).
  const projects = mkdtempSync(join(tmpdir(), 'actorloop-driver-'));
  afterAll(() => rmSync(projects, { recursive: true, force: true }));
  let count = 0;
  const withSqlite = nodeHasSqlite();

  type Outcome = { created: boolean; opened?: boolean; code?: string; message?: string; driverLoaded?: boolean; stderr: string };

  const openIn = (betterSqlite3Version: string | undefined, options = ''): Outcome => {
    const project = join(projects, `p${++count}`);
    cpSync(join(import.meta.dirname, '..', 'src'), join(project, 'src'), { recursive: true });
    writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module' }));
    if (betterSqlite3Version !== undefined) {
      const driver = join(project, 'node_modules', 'better-sqlite3');
      mkdirSync(driver, { recursive: true });
      writeFileSync(
        join(driver, 'package.json'),
        JSON.stringify({ name: 'better-sqlite3', version: betterSqlite3Version, main: 'index.js' }),
      );
      writeFileSync(join(driver, 'index.js'), "throw new Error('the stand-in driver was loaded');\n");
    }
    writeFileSync(
      join(project, 'open.ts'),
      `import { sqliteStore } from './src/stores/sqlite/index.ts';
       const report = (outcome) => console.log(JSON.stringify(outcome));
       let store;
       try { store = sqliteStore({ path: ${JSON.stringify(join(project, 'c.db'))}${options} }); }
       catch (error) { report({ created: false, code: error.code, message: error.message }); process.exit(0); }
       try {
         await store.save({ id: 'c-1', schemaVersion: 1, machineId: 'm', status: 'done', snapshot: '{}', revision: 1, owner: 'o', updatedAt: 1 });
         report({ created: true, opened: (await store.load('c-1'))?.revision === 1 });
       } catch (error) { report({ created: true, code: error.code, message: error.message }); }
       // Only the SQLite warning is held back while node:sqlite loads: this one is printed.
       process.emitWarning('another experiment', 'ExperimentalWarning');`,
    );
    const tsx = join(import.meta.dirname, '..', 'node_modules', '.bin', 'tsx');
    const child = spawnSync(tsx, [join(project, 'open.ts')], { cwd: project, encoding: 'utf8' });
    expect(child.status, child.stderr).toBe(0);
    return { ...(JSON.parse(child.stdout.trim()) as Omit<Outcome, 'stderr'>), stderr: child.stderr };
  };

  const expectNodeSqliteWorked = (outcome: Outcome) => {
    expect(outcome).toMatchObject({ created: true, opened: true });
    // Node 22 warns "SQLite is an experimental feature" when node:sqlite loads: not printed by the store.
    expect(outcome.stderr).not.toContain('SQLite is an experimental feature');
    expect(outcome.stderr).toContain('ExperimentalWarning: another experiment');
  };

  it(`without better-sqlite3: ${withSqlite ? 'uses node:sqlite' : 'refused at creation, naming both drivers'}`, () => {
    const outcome = openIn(undefined);
    if (withSqlite) expectNodeSqliteWorked(outcome);
    else {
      expect(outcome).toMatchObject({ created: false, code: 'driver_missing' });
      expect(outcome.message).toContain(`finds none on Node ${process.versions.node}: install better-sqlite3`);
      expect(outcome.message).toContain('Node 22.13 or newer, which has node:sqlite built in');
    }
  });

  it(`driver 'node:sqlite': ${withSqlite ? 'used' : 'refused at creation, naming the Node version and both ways out'}`, () => {
    const outcome = openIn(undefined, ", driver: 'node:sqlite'");
    if (withSqlite) expectNodeSqliteWorked(outcome);
    else {
      expect(outcome).toMatchObject({ created: false, code: 'driver_unsupported' });
      expect(outcome.message).toContain(`driver 'node:sqlite' is not available on Node ${process.versions.node}`);
      expect(outcome.message).toContain('npm install better-sqlite3');
    }
  });

  it("driver 'better-sqlite3' without it: refused at creation", () => {
    const outcome = openIn(undefined, ", driver: 'better-sqlite3'");
    expect(outcome).toMatchObject({ created: false, code: 'driver_missing' });
    expect(outcome.message).toContain('npm install better-sqlite3');
  });

  it('better-sqlite3 13: refused at creation on Node < 22 without loading it; on Node 22+ loaded at first use (the stand-in fails to load)', () => {
    const outcome = openIn('13.0.0');
    if (Number.parseInt(process.versions.node, 10) < 22) {
      expect(outcome).toMatchObject({ created: false, code: 'driver_unsupported' });
      expect(outcome.message).toContain(`better-sqlite3 13.0.0 needs Node 22 or newer, and this is Node ${process.versions.node}`);
    } else {
      expect(outcome).toMatchObject({ created: true, code: 'driver_missing' });
      expect(outcome.message).toContain('better-sqlite3 is installed but does not load');
    }
  });

  it(`better-sqlite3 11: never loaded; ${withSqlite ? 'node:sqlite instead' : 'refused at creation'}`, () => {
    const outcome = openIn('11.10.0');
    if (withSqlite) expectNodeSqliteWorked(outcome);
    else {
      expect(outcome).toMatchObject({ created: false, code: 'driver_unsupported' });
      expect(outcome.message).toContain('better-sqlite3 11.10.0 is too old');
    }
    expect(openIn('11.10.0', ", driver: 'better-sqlite3'")).toMatchObject({ created: false, code: 'driver_unsupported' });
  });
});
