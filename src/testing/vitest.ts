/**
 * `actorloop/testing/vitest`: the run matchers, and `toHaveSentMedia` on a scripted provider or a
 * request, registered with vitest's `expect`, and typed. Import it once, in a setup file
 * (`test.setupFiles`) or at the top of a test file.
 *
 * @example
 * ```ts
 * import 'actorloop/testing/vitest';
 *
 * expect(output).toCallTool('weather', { city: 'Paris' });
 * expect(output).toEndWith('done');
 * expect(provider).toHaveSentMedia({ role: 'tool', toolName: 'chart', mediaType: 'image/png' });
 * ```
 * @packageDocumentation
 */
import { expect } from 'vitest';
import { type MediaMatchers, matchers, type RunMatchers } from './matchers.js';

expect.extend(matchers);

export { matchers };

declare module 'vitest' {
  interface Assertion<T> extends RunMatchers<T>, MediaMatchers<T> {}
  interface AsymmetricMatchersContaining extends RunMatchers, MediaMatchers {}
}
