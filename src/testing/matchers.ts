import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import type { RunOutput } from '../machines/names/types.js';
import { isRecord } from '../util/is-record.js';
import { compareTrajectory, describe, differenceOf, toolCallsOf } from './expect-trajectory.js';
import { mediaOf, mediumLine, requestsOf, type SentMedia, type SentMediaSource } from './media-of.js';
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
 * What `toHaveSentMedia` expects of one medium: some of {@link SentMedia}'s keys, each matched as a
 * trajectory step's `args` are — a value, a `RegExp`, a predicate, an asymmetric matcher, an object
 * as a subset (`part: { filename: 'q3.pdf' }`). Keys left out are not checked.
 *
 * @example
 * ```ts
 * const chart: SentMediaExpectation = { role: 'tool', toolName: 'chart', mediaType: /^image\//, byteLength: (n: number) => n < 100_000 };
 * ```
 */
export type SentMediaExpectation = { readonly [Key in keyof SentMedia]?: unknown };

/**
 * The assertions on what reached the model that `actorloop/testing/vitest` adds to `expect`, on a
 * `ScriptedProvider` (all its requests) or one `ProviderRequest`; `R` is what the assertion returns.
 *
 * @example
 * ```ts
 * expect(provider).toHaveSentMedia({ role: 'user', mediaType: 'application/pdf' });
 * expect(provider.requests[1]).toHaveSentMedia([{ role: 'user', type: 'image' }, { role: 'tool', toolName: 'chart' }]);
 * expect(provider.requests[0]).not.toHaveSentMedia();
 * ```
 */
export interface MediaMatchers<R = unknown> {
  /**
   * With nothing: some image or file was sent. With an expectation: some medium matches it. With an
   * array: exactly these media, in the order {@link mediaOf} lists them (`[]`: none).
   */
  toHaveSentMedia(expected?: SentMediaExpectation | readonly SentMediaExpectation[]): R;
}

/**
 * The matcher functions behind {@link MediaMatchers}, for `expect.extend`.
 *
 * @example
 * ```ts
 * const check: MediaMatcherFunctions['toHaveSentMedia'] = matchers.toHaveSentMedia;
 * check(provider, { type: 'image' }).pass;
 * ```
 */
export type MediaMatcherFunctions = {
  [Name in keyof MediaMatchers]: (received: unknown, ...expected: Parameters<MediaMatchers[Name]>) => MatcherResult;
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
export const matchers: RunMatcherFunctions & MediaMatcherFunctions = {
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

  toHaveSentMedia(received, expected) {
    const requests = requestsOf(received, 'expect(received).toHaveSentMedia');
    const checked = mediaExpectation(expected);
    const media = mediaOf(received as SentMediaSource);
    const subject = requests === undefined ? 'the request' : `the provider's ${count(requests.length, 'request')}`;
    const they = requests === undefined ? 'it carries' : 'they carry';
    const listed = (lines: readonly string[]) =>
      media.length === 0 ? `${they} none` : `${they} ${mediaCount(media.length)}:\n${lines.join('\n')}`;
    const plain = () => listed(media.map((medium) => `  ${mediumLine(medium)}`));
    if (checked === undefined) {
      const pass = media.length > 0;
      return {
        pass,
        message: () => `expected ${subject} to carry ${pass ? 'no image or file' : 'an image or a file'}; ${plain()}`,
      };
    }
    if (!Array.isArray(checked)) {
      const differences = media.map((medium, index) => differenceOf(checked, medium, `media[${index}]`));
      const found = differences.indexOf(undefined);
      const wanted = `a medium matching ${describe(checked)}`;
      return {
        pass: found >= 0,
        message: () => {
          if (found >= 0)
            return `expected ${subject} not to carry ${wanted}, but media[${found}] is one:\n  ${mediumLine(media[found] as SentMedia)}`;
          const lines = media.map((medium, index) => `  ✗ ${mediumLine(medium)}\n      ${differences[index]}`);
          return `expected ${subject} to carry ${wanted}; ${listed(lines)}`;
        },
      };
    }
    const difference = differenceOf(checked, media, 'media');
    const wanted = checked.length === 0 ? 'no image or file' : `${mediaCount(checked.length)} as listed, in order`;
    return {
      pass: difference === undefined,
      message: () => {
        if (difference !== undefined) return `expected ${subject} to carry ${wanted}; ${difference}\n${plain()}`;
        if (media.length === 0) return `expected ${subject} to carry an image or a file; ${plain()}`;
        return `expected ${subject} not to carry exactly these media; ${plain()}`;
      },
    };
  },
};

/** What `toHaveSentMedia` was given: nothing, one expectation, or a list of them; anything else throws. */
function mediaExpectation(expected: unknown): SentMediaExpectation | readonly SentMediaExpectation[] | undefined {
  const isExpectation = (value: unknown) => isRecord(value) && !Array.isArray(value);
  if (expected === undefined || isExpectation(expected)) return expected as SentMediaExpectation | undefined;
  if (Array.isArray(expected) && expected.every(isExpectation)) return expected as SentMediaExpectation[];
  throw new InvalidOptionsError(
    'toHaveSentMedia(expected)',
    'nothing, an expectation { type?, mediaType?, role?, toolName?, kind?, byteLength?, … }, or an array of them',
    expected,
  );
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function mediaCount(n: number): string {
  return `${n} ${n === 1 ? 'medium' : 'media'}`;
}

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
