import type { Reporter, TestModule } from 'vitest/node';

/**
 * In CI (`CI=true`) a skipped test fails the run: a suite that skips because its browser, its
 * recorded fixtures or its Node feature is missing proves nothing, and a green run would hide it.
 * Each skipped test is named.
 */
export default class FailOnSkipReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const skipped: string[] = [];
    for (const testModule of testModules) {
      for (const test of testModule.children.allTests()) {
        if (test.result().state === 'skipped') skipped.push(`${testModule.moduleId.replace(`${process.cwd()}/`, '')} > ${test.fullName}`);
      }
    }
    if (skipped.length === 0) return;
    process.stderr.write(
      `\n${skipped.length} test(s) skipped, which CI does not allow:\n${skipped.map((name) => `  - ${name}`).join('\n')}\n`,
    );
    process.exitCode = 1;
  }
}
