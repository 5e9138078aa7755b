import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';

/**
 * Registered for the quick suite's files: starting a child process fails, naming the file's suite.
 * test/support/test-kinds.ts puts a file in the quick suite when nothing it imports starts a process;
 * this makes that promise hold at run time too, where a helper reached through `src/` could still
 * spawn one.
 */
const names = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;
const module = childProcess as unknown as Record<(typeof names)[number], unknown>;
for (const name of names) {
  module[name] = () => {
    throw new Error(
      `child_process.${name}: this file runs in the quick suite, which starts no process (test/support/test-kinds.ts decides by its imports); import the helper that starts the process, or node:child_process, so it runs in the full suite`,
    );
  };
}
syncBuiltinESMExports();
