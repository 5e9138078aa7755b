import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** `test/support/timings.json`: each file's wall seconds in a measured run, by project. */
export type CommittedTimings = {
  measured: string;
  files: Array<{ project: string; file: string; wallSeconds: number; cpuSeconds?: number }>;
};

export const timingsPath = new URL('./timings.json', import.meta.url);

export function readTimings(): CommittedTimings {
  return JSON.parse(readFileSync(timingsPath, 'utf8')) as CommittedTimings;
}

/** A file expected to take at least this long (wall seconds, as committed) starts by its length; the others by project. */
export const longSeconds = 10;

/**
 * The order a run's files enter the workers. A file not yet measured first (it may be long), then
 * the long ones, longest first, by the committed measurement — so they start at once and the short
 * ones fill in around them, and the run does not end waiting on one long file that started last.
 * Then the short ones, project by project (the project with the most time first), longest first in
 * each: a worker that finishes a file takes the next one in the same process only when it is of the
 * same project (vitest's `isolate: false`), and a new process imports `src/` and its libraries
 * again. Vitest's own order needs durations from an earlier run on the same machine, which a clean
 * clone (CI) never has; there it would start the largest files first, and size says little of time.
 */
export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const wall = new Map(readTimings().files.map((entry) => [`${entry.project}:${entry.file}`, entry.wallSeconds]));
    const expected = (spec: TestSpecification) =>
      wall.get(`${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`) ?? Number.POSITIVE_INFINITY;
    const longestFirst = (a: TestSpecification, b: TestSpecification) => expected(b) - expected(a);
    const long = files.filter((spec) => expected(spec) >= longSeconds).sort(longestFirst);
    const byProject = new Map<string, TestSpecification[]>();
    for (const spec of files.filter((file) => expected(file) < longSeconds)) {
      byProject.set(spec.project.name, [...(byProject.get(spec.project.name) ?? []), spec]);
    }
    const total = (specs: TestSpecification[]) => specs.reduce((sum, spec) => sum + expected(spec), 0);
    const short = [...byProject.values()].sort((a, b) => total(b) - total(a)).flatMap((specs) => specs.sort(longestFirst));
    return [...long, ...short];
  }
}
