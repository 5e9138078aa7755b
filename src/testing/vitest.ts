/**
 * `actorloop/testing/vitest`: the run matchers registered with vitest's `expect`, and typed. Import
 * it once, in a setup file (`test.setupFiles`) or at the top of a test file.
 *
 * @example
 * ```ts
 * import 'actorloop/testing/vitest';
 *
 * expect(output).toCallTool('weather', { city: 'Paris' });
 * expect(output).toEndWith('done');
 * ```
 * @packageDocumentation
 */
import { expect } from 'vitest';
import { matchers, type RunMatchers } from './matchers.js';

expect.extend(matchers);

export { matchers };

declare module 'vitest' {
  interface Assertion<T> extends RunMatchers<T> {}
  interface AsymmetricMatchersContaining extends RunMatchers {}
}
