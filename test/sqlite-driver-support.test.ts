import { describe, expect, it } from 'vitest';
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
