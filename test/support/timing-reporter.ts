import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule, TestProject } from 'vitest/node';
import type { FileCost } from './file-cost.js';

/** One test file as the run saw it; `ACTORLOOP_TEST_TIMINGS=path` writes every one to `path` as JSON. */
export type FileTiming = {
  file: string;
  project: string;
  tests: number;
  /** Seconds from the worker's start to the file's end, on the main process's clock. */
  wallSeconds: number;
  /** Seconds from the run's start to the file's start: where it sat in the schedule. */
  startedAtSeconds: number;
  /** The file's CPU seconds, its reaped child processes included (see `file-cost.ts`). */
  cpuSeconds?: number;
  /** cpuSeconds ÷ wallSeconds: near 0 the file waits (timers, sockets, processes), near 1 or more it burns CPU. */
  busy?: number;
};

/** The whole run: wall time, the machine's CPU over it, the worker cap per project. */
export type RunTiming = {
  wallSeconds: number;
  /** CPU seconds every process on the machine used during the run (Linux /proc/stat), and the cores there are. */
  machineCpuSeconds?: number;
  cores?: number;
  maxWorkers: Record<string, number>;
  files: FileTiming[];
};

function machineCpuSeconds(): { seconds: number; cores: number } | undefined {
  try {
    const lines = readFileSync('/proc/stat', 'utf8').split('\n');
    const total = lines[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: busy is all but idle and iowait, in USER_HZ (100/s) ticks.
    const busy = total.reduce((sum, value, index) => (index === 3 || index === 4 ? sum : index < 8 ? sum + value : sum), 0);
    return { seconds: busy / 100, cores: lines.filter((line) => /^cpu\d/.test(line)).length };
  } catch {
    return undefined;
  }
}

const seconds = (milliseconds: number) => Math.round(milliseconds) / 1000;

/**
 * Times every test file (wall and CPU, from `file-cost.ts`) and prints the slowest at the end of
 * the run, so a suite that grows slow is seen where it is added. CONTRIBUTING.md's table of where
 * the suite's time goes is made from its JSON (`ACTORLOOP_TEST_TIMINGS=timings.json npm test`).
 */
export default class TimingReporter implements Reporter {
  private runStart = 0;
  private machineAtStart: ReturnType<typeof machineCpuSeconds>;
  private readonly started = new Map<string, number>();
  private readonly files: FileTiming[] = [];
  private projects: TestProject[] = [];

  onInit(vitest: { projects: TestProject[] }): void {
    this.projects = vitest.projects;
  }

  onTestRunStart(): void {
    this.runStart = performance.now();
    this.machineAtStart = machineCpuSeconds();
  }

  // A worker reports a file queued as it takes it up, before importing it: the file's wall time counts its import.
  onTestModuleQueued(testModule: TestModule): void {
    this.started.set(testModule.moduleId, performance.now());
  }

  onTestModuleStart(testModule: TestModule): void {
    if (!this.started.has(testModule.moduleId)) this.started.set(testModule.moduleId, performance.now());
  }

  onTestModuleEnd(testModule: TestModule): void {
    const end = performance.now();
    const start = this.started.get(testModule.moduleId) ?? end;
    const cost: FileCost | undefined = testModule.meta().cost;
    const wallSeconds = seconds(end - start);
    const cpuSeconds = cost === undefined ? undefined : Math.round((cost.cpuSeconds + (cost.childCpuSeconds ?? 0)) * 100) / 100;
    this.files.push({
      file: relative(process.cwd(), testModule.moduleId),
      project: testModule.project.name,
      tests: [...testModule.children.allTests()].length,
      wallSeconds,
      startedAtSeconds: seconds(start - this.runStart),
      ...(cpuSeconds === undefined ? {} : { cpuSeconds, busy: wallSeconds > 0 ? Math.round((cpuSeconds / wallSeconds) * 100) / 100 : 0 }),
    });
  }

  onTestRunEnd(): void {
    const machine = machineCpuSeconds();
    const run: RunTiming = {
      wallSeconds: seconds(performance.now() - this.runStart),
      ...(machine && this.machineAtStart
        ? { machineCpuSeconds: Math.round((machine.seconds - this.machineAtStart.seconds) * 100) / 100, cores: machine.cores }
        : {}),
      maxWorkers: Object.fromEntries(this.projects.map((project) => [project.name || 'default', project.config.maxWorkers])),
      files: [...this.files].sort((a, b) => b.wallSeconds - a.wallSeconds),
    };
    const path = process.env.ACTORLOOP_TEST_TIMINGS;
    if (path) writeFileSync(path, `${JSON.stringify(run, null, 2)}\n`);
    if (this.files.length < 2) return;
    const slowest = run.files.slice(0, 6).map((file) => `${file.file} ${file.wallSeconds.toFixed(0)} s`);
    const cpu =
      run.machineCpuSeconds === undefined ? '' : `, the machine's CPU ${run.machineCpuSeconds.toFixed(0)} s on ${run.cores} cores`;
    process.stdout.write(`\nTimings: ${run.files.length} files in ${run.wallSeconds.toFixed(0)} s${cpu}; slowest: ${slowest.join(', ')}\n`);
  }
}
