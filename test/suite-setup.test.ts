/**
 * The suite's own machinery (CONTRIBUTING.md, "Where the suite's time goes"): which files the quick
 * suite takes, the order files start in, and what the timings script keeps of a run.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestSpecification } from 'vitest/node';
import { afterAll, describe, expect, it } from 'vitest';
import { committedTimings, timingsTable, withTable } from '../scripts/test-timings.js';
import config from '../vitest.config.js';
import LongestFirstSequencer, { readTimings } from './support/longest-first-sequencer.js';
import { outsideReach, quickTestFiles } from './support/test-kinds.js';
import type { RunTiming } from './support/timing-reporter.js';

const root = join(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'actorloop-suite-setup-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A throwaway repository: `files` by path, written under a fresh root with `src/` and `test/`. */
function tree(files: Record<string, string>): string {
  const folder = mkdtempSync(join(work, 'tree-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(folder, path, '..'), { recursive: true });
    writeFileSync(join(folder, path), text);
  }
  return folder;
}

describe('which files the quick suite takes', () => {
  it('follows relative imports through the helpers, not into src/, and names what a file reaches', () => {
    const folder = tree({
      'test/plain.test.ts': "import { it } from 'vitest';\nimport { model } from './support/model.js';\nimport '../src/cli/spawns.js';\n",
      'test/support/model.ts': 'export const model = 1;\n',
      'src/cli/spawns.ts': "import { spawn } from 'node:child_process';\n",
      'test/process.test.ts': "import { run } from './support/run.js';\n",
      'test/support/run.ts': "export { later } from './later.js';\n",
      'test/support/later.ts': "import { spawn } from 'node:child_process';\nexport const later = spawn;\n",
      'test/browser.test.ts': "const page = await import('playwright-core');\n",
      'test/database.test.ts': "import { testPool } from './support/postgres.js';\n",
      'test/support/postgres.ts': 'export const testPool = 1;\n',
      'test/cycle.test.ts': "import './support/a.js';\n",
      'test/support/a.ts': "import './b.js';\n",
      'test/support/b.ts': "import './a.js';\nimport cluster from 'node:cluster';\n",
    });
    const reach = (file: string) => outsideReach(join(folder, file), folder);
    expect(reach('test/plain.test.ts')).toEqual([]);
    expect(reach('test/process.test.ts')).toEqual(['processes']);
    expect(reach('test/browser.test.ts')).toEqual(['browser']);
    expect(reach('test/database.test.ts')).toEqual(['database']);
    expect(reach('test/cycle.test.ts')).toEqual(['processes']);
    expect(quickTestFiles(folder)).toEqual(['test/plain.test.ts']);
  });

  it("sorts this repository's files as their imports say", () => {
    const reach = (file: string) => outsideReach(join(root, file), root);
    expect(reach('test/conversation.test.ts')).toEqual([]);
    expect(reach('test/cli.test.ts')).toEqual(['processes']);
    expect(reach('test/postgres-store.test.ts')).toEqual(['database']);
    expect(reach('test/viewer-page.test.ts')).toEqual(['browser', 'processes']);
    expect(quickTestFiles(root)).toContain('test/suite-setup.test.ts');
  });

  it('gives the quick files to the quick project and every other file to the full one', () => {
    const projects = (config.test?.projects ?? []) as Array<{ test: { name: string; include: string[]; exclude?: string[] } }>;
    const byName = new Map(projects.map((project) => [project.test.name, project.test]));
    expect([...byName.keys()]).toEqual(['quick', 'full', 'floor']);
    expect(byName.get('quick')?.include).toEqual(quickTestFiles(root));
    expect(byName.get('full')).toMatchObject({ include: ['test/**/*.test.ts'], exclude: quickTestFiles(root) });
  });
});

describe('the order files start in', () => {
  const spec = (project: string, file: string) =>
    ({ project: { name: project }, moduleId: join(root, file) }) as unknown as TestSpecification;

  it('starts a file not yet measured first, then the longest first, by project', async () => {
    const measured = readTimings().files;
    const longest = measured[0]!;
    const shortest = measured.at(-1)!;
    const sequencer = new LongestFirstSequencer({ config: { root } } as never);
    const files = [spec(shortest.project, shortest.file), spec('full', 'test/not-measured.test.ts'), spec(longest.project, longest.file)];
    const sorted = await sequencer.sort(files);
    expect(sorted.map((file) => `${file.project.name}:${file.moduleId.slice(root.length + 1)}`)).toEqual([
      'full:test/not-measured.test.ts',
      `${longest.project}:${longest.file}`,
      `${shortest.project}:${shortest.file}`,
    ]);
  });
});

describe('what the timings script keeps of a run', () => {
  const run: RunTiming = {
    wallSeconds: 100.4,
    machineCpuSeconds: 190,
    cores: 2,
    maxWorkers: { quick: 4, full: 4 },
    files: [
      { file: 'test/a.test.ts', project: 'quick', tests: 3, wallSeconds: 2.04, startedAtSeconds: 0, cpuSeconds: 9.96, busy: 4.9 },
      { file: 'test/b.test.ts', project: 'full', tests: 1, wallSeconds: 50.25, startedAtSeconds: 0, cpuSeconds: 1.2, busy: 0.02 },
      { file: 'test/c.test.ts', project: 'full', tests: 2, wallSeconds: 3, startedAtSeconds: 1 },
    ],
  };

  it('commits files longest first, rounded to a tenth of a second', () => {
    expect(committedTimings(run, 'today')).toEqual({
      measured: 'today',
      files: [
        { project: 'full', file: 'test/b.test.ts', wallSeconds: 50.3, cpuSeconds: 1.2 },
        { project: 'full', file: 'test/c.test.ts', wallSeconds: 3 },
        { project: 'quick', file: 'test/a.test.ts', wallSeconds: 2, cpuSeconds: 10 },
      ],
    });
  });

  it('tables the files that cost the most CPU, with what each reaches', () => {
    const table = timingsTable(run, 'today', (file) => (file === 'test/b.test.ts' ? ['processes'] : []));
    expect(table.split('\n')).toEqual([
      "Measured today: 3 files, 6 tests, 100 s, the machine's CPU 190 s on 2 cores.",
      '',
      '| file | project | tests | wall s | CPU s | reaches |',
      '| --- | --- | --- | --- | --- | --- |',
      '| `test/a.test.ts` | quick | 3 | 2.0 | 10.0 | its own process |',
      '| `test/b.test.ts` | full | 1 | 50.3 | 1.2 | processes |',
      '| `test/c.test.ts` | full | 2 | 3.0 | — | its own process |',
      '| the other 0 files | | 0 | | 0.0 | |',
    ]);
  });

  it('writes the table between its markers and refuses a text without them', () => {
    const text = 'before\n<!-- test-timings:start -->\nold\n<!-- test-timings:end -->\nafter\n';
    expect(withTable(text, 'new')).toBe('before\n<!-- test-timings:start -->\nnew\n<!-- test-timings:end -->\nafter\n');
    expect(() => withTable('no markers', 'new')).toThrow(
      'CONTRIBUTING.md has no <!-- test-timings:start --> … <!-- test-timings:end --> section',
    );
  });
});
