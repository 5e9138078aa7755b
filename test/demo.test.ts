import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('npm run demo', () => {
  it('runs a whole tool loop offline as a process and prints states, tool calls and the answer', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/demo.ts'], { cwd: root, timeout: 60_000 });
    expect(stdout).toContain('the model is SCRIPTED');
    expect(stdout).toContain('[state] {"executingTools":"running"}');
    expect(stdout).toContain('[tool.result] calculate → 459');
    expect(stdout).toMatch(/\[tool\.result\] list_files → \[.*"conversation\.ts"/);
    expect(stdout).toContain('[output] status=done iterations=1');
    expect(stdout).toContain('[answer] 17 × (23 + 4) = 459.');
  });
});
