import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import type { RunOutput } from '../machines/names/types.js';
import { isRecord } from '../util/is-record.js';
import { compareTrajectory, differenceOf, toolCallsOf } from './expect-trajectory.js';
import type { TrajectoryMatcher, TrajectoryOptions, TrajectoryStep } from './trajectory-types.js';

/**
 * What a matcher returns, as vitest and Jest read it: `message` is shown when the assertion fails,
 * with or without `.not`, so it says what was found either way.
 *
 * @example
 * ```ts
 * const { pass, message } = matchers.toEndWith(output, 'done');
 * if (!pass) console.error(message());
 * ```
 */
export type MatcherResult = { pass: boolean; message: () => string };

/**
 * The assertions `actorloop/testing/vitest` adds to `expect`, on a `RunOutput` (see
 * {@link matchers}). `R` is what the assertion returns, as vitest declares it.
 *
 * @example
 * ```ts
 * expect(output).toCallTool('weather', { city: 'Paris' });
 * expect(output).toCallTools([{ tool: 'search' }, { tool: 'book' }]);
 * expect(output).toEndWith('halted', 'max_iterations');
 * expect(output).not.toHaveText(/sorry/i);
 * expect(output).toStayUnderTokens(5_000);
 * ```
 */
export interface RunMatchers<R = unknown> {
  /** Some call of the tool `name` (with arguments matching `args`, a subset or a predicate). */
  toCallTool(name: string, args?: TrajectoryMatcher): R;
  /** The run's tool calls are `steps` (see `expectTrajectory`). */
  toCallTools(steps: readonly TrajectoryStep[], options?: TrajectoryOptions): R;
  /** The run ended with `status` (and `reason`, when given). */
  toEndWith(status: RunOutput['status'], reason?: string): R;
  /** The final text is `text`, or matches the pattern. */
  toHaveText(text: string | RegExp): R;
  /** At most `tokens` in all, failed attempts included (as a budget's `maxTotalTokens` counts). */
  toStayUnderTokens(tokens: number): R;
  /** At most `amount` in the price table's currency; the machine needs `prices` (or a model with a built-in price). */
  toCostAtMost(amount: number): R;
}

/**
 * The matcher functions behind {@link RunMatchers}: each takes the received value first, as
 * `expect.extend` calls it, and needs no test framework.
 *
 * @example
 * ```ts
 * const check: RunMatcherFunctions['toEndWith'] = matchers.toEndWith;
 * check(output, 'done').pass;
 * ```
 */
export type RunMatcherFunctions = {
  [Name in keyof RunMatchers]: (received: unknown, ...expected: Parameters<RunMatchers[Name]>) => MatcherResult;
};

/**
 * Matchers on a `RunOutput` for `expect.extend` (vitest, or Jest): `import 'actorloop/testing/vitest'`
 * registers them with vitest and types them. Each supports `.not`. A value that is not a run
 * output throws, so that `.not` never passes on a mistake.
 *
 * @example
 * ```ts
 * import { expect } from 'vitest';
 * import { matchers } from 'actorloop/testing';
 *
 * expect.extend(matchers);
 * ```
 */
export const matchers: RunMatcherFunctions = {
  toCallTool(received, name, args) {
    const calls = toolCallsOf(runOutput(received, 'toCallTool'));
    const named = calls.filter((call) => call.tool === name);
    const found = named.find((call) => args === undefined || differenceOf(args, call.args, 'args') === undefined);
    const wanted = `${JSON.stringify(name)}${args === undefined ? '' : ' with matching arguments'}`;
    return {
      pass: found !== undefined,
      message: () => {
        if (found !== undefined)
          return `expected the run not to call ${wanted}, but call ${calls.indexOf(found) + 1} did: ${preview(found.args)}`;
        const closest =
          named[0] === undefined || args === undefined
            ? ''
            : `; the first of its calls differs: ${differenceOf(args, named[0].args, 'args')}`;
        return `expected the run to call ${wanted}; it called ${listOf(calls.map((call) => call.tool))}${closest}`;
      },
    };
  },

  toCallTools(received, steps, options) {
    const verdict = compareTrajectory(runOutput(received, 'toCallTools'), steps, options);
    return {
      pass: verdict.difference === undefined,
      message: () => (verdict.difference === undefined ? `expected the tool calls not to match, but ${verdict.message}` : verdict.message),
    };
  },

  toEndWith(received, status, reason) {
    const output = runOutput(received, 'toEndWith');
    const pass = output.status === status && (reason === undefined || output.reason === reason);
    const wanted = reason === undefined ? status : `${status} (${reason})`;
    const got = `${output.status}${output.reason === undefined ? '' : ` (${output.reason})`}`;
    const why = output.error === undefined ? '' : `: ${output.error.message}`;
    return {
      pass,
      message: () =>
        pass ? `expected the run not to end ${wanted}, but it did` : `expected the run to end ${wanted}; it ended ${got}${why}`,
    };
  },

  toHaveText(received, text) {
    const output = runOutput(received, 'toHaveText');
    const pass =
      typeof text === 'string' ? output.text === text : new RegExp(text.source, text.flags.replace(/[gy]/g, '')).test(output.text);
    const wanted = typeof text === 'string' ? JSON.stringify(text) : `text matching ${text}`;
    return {
      pass,
      message: () => `expected the final text ${pass ? 'not ' : ''}to be ${wanted}; it is ${JSON.stringify(output.text)}`,
    };
  },

  toStayUnderTokens(received, tokens) {
    const output = runOutput(received, 'toStayUnderTokens');
    const spent = output.usage.totalTokens + (output.failedUsage?.totalTokens ?? 0);
    const failed = output.failedUsage === undefined ? '' : ` (${output.failedUsage.totalTokens} of them by failed attempts)`;
    return {
      pass: spent <= tokens,
      message: () => `expected the run to spend ${spent <= tokens ? 'more than' : 'at most'} ${tokens} tokens; it spent ${spent}${failed}`,
    };
  },

  toCostAtMost(received, amount) {
    const output = runOutput(received, 'toCostAtMost');
    if (output.cost === undefined) {
      throw new InvalidOptionsError(
        'toCostAtMost',
        "a run with a cost: give the machine a `prices` table naming the provider's model",
        'a run without one',
      );
    }
    const { total, unpricedModels } = output.cost;
    const unpriced = unpricedModels.length === 0 ? '' : ` (not counting ${unpricedModels.join(', ')}: no price)`;
    return {
      pass: total <= amount,
      message: () => `expected the run to cost ${total <= amount ? 'more than' : 'at most'} ${amount}; it cost ${total}${unpriced}`,
    };
  },
};

/** The received value as a run output; anything else throws, so that `.not` cannot pass on it. */
function runOutput(received: unknown, matcher: string): RunOutput {
  const looksRight =
    isRecord(received) &&
    typeof received.status === 'string' &&
    typeof received.text === 'string' &&
    Array.isArray(received.messages) &&
    isRecord(received.usage);
  if (!looksRight)
    throw new InvalidOptionsError(`expect(output).${matcher}`, 'a RunOutput (what toPromise(actor) resolves with)', received);
  return received as RunOutput;
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

function listOf(names: readonly string[]): string {
  return names.length === 0 ? 'no tool' : names.map((name) => JSON.stringify(name)).join(', ');
}
