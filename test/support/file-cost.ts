import { readFileSync } from 'node:fs';
import { afterAll } from 'vitest';

/**
 * Registered for every test file: what the file cost in CPU, kept on the file's task for
 * `timing-reporter.ts`. The process's CPU time since the previous file of the same worker ended (or
 * since the worker started, for its first file: so an isolated file's own worker start counts), and
 * the CPU time of the child processes reaped meanwhile (the CLI, npm, tsc, Chromium, restate-server)
 * — which wall time alone would hide: a file that waits and a file that burns both cores look alike
 * on a clock.
 */
export type FileCost = {
  /** CPU seconds of the worker process (user + system). */
  cpuSeconds: number;
  /** CPU seconds of the child processes it waited for, their own children included; Linux only. */
  childCpuSeconds?: number;
};

declare module 'vitest' {
  interface TaskMeta {
    cost?: FileCost;
  }
}

/** Linux reports /proc times in USER_HZ ticks, fixed at 100 a second for user space. */
const ticksPerSecond = 100;

function childCpuSeconds(): number | undefined {
  try {
    // Fields after the command name (which may hold spaces, so split after its closing parenthesis):
    // cutime and cstime are the 14th and 15th of them (fields 16 and 17 of proc(5)).
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / ticksPerSecond;
  } catch {
    return undefined;
  }
}

/** What the process had used when the previous file of this worker ended: a worker may run many files (`isolate: false`). */
const markKey = Symbol.for('actorloop.test.costMark');
const marks = globalThis as { [markKey]?: { cpuSeconds: number; childCpuSeconds?: number } };

// biome-ignore lint/correctness/noEmptyPattern: vitest reads a hook's first parameter as its fixtures, which must be a destructuring pattern.
afterAll(({}, file) => {
  const { user, system } = process.cpuUsage();
  const now = { cpuSeconds: (user + system) / 1e6, childCpuSeconds: childCpuSeconds() };
  const before = marks[markKey] ?? { cpuSeconds: 0, childCpuSeconds: 0 };
  marks[markKey] = now;
  file.meta.cost = {
    cpuSeconds: now.cpuSeconds - before.cpuSeconds,
    ...(now.childCpuSeconds === undefined ? {} : { childCpuSeconds: now.childCpuSeconds - (before.childCpuSeconds ?? 0) }),
  };
});
