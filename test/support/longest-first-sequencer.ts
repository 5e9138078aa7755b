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

/**
 * The order a run's files enter the workers: a file not yet measured first (it may be long), then the
 * longest first, by the committed measurement — so the long files start at once and the short ones
 * fill in around them, and the run does not end waiting on one long file that started last.
 * Vitest's own order needs durations from an earlier run on the same machine, which a clean clone
 * (CI) never has; there it would start the largest files first, and size says little of time.
 */
export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const wall = new Map(readTimings().files.map((entry) => [`${entry.project}:${entry.file}`, entry.wallSeconds]));
    const expected = (spec: TestSpecification) =>
      wall.get(`${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`) ?? Number.POSITIVE_INFINITY;
    return [...files].sort((a, b) => expected(b) - expected(a));
  }
}
