import type { Message } from '../model/messages.js';

/**
 * What an expected value is matched with: a predicate; a `RegExp` (for a string); an object that
 * matches when each of its keys matches (keys it leaves out are not checked), at any depth; an
 * array that matches element by element, with the same length; a vitest asymmetric matcher
 * (`expect.any(String)`); or a value compared with `Object.is`.
 *
 * @example
 * ```ts
 * const city: TrajectoryMatcher = { city: 'Paris' };
 * const cheap: TrajectoryMatcher = (args: { maxPrice: number }) => args.maxPrice < 100;
 * const nested: TrajectoryMatcher = { query: /hotel/i, dates: [(from: unknown) => typeof from === 'string', '2025-06-02'] };
 * ```
 */
export type TrajectoryMatcher =
  | TrajectoryPredicate
  | RegExp
  | string
  | number
  | boolean
  | null
  | readonly unknown[]
  | { readonly [key: string]: unknown };

/**
 * A predicate on a value of a run: its arguments, a result, or a value inside them. Written as a
 * method's type, so a predicate whose parameter names the shape it expects (`(args: { city:
 * string }) => …`) is accepted, as it is for a method.
 *
 * @example
 * ```ts
 * const inParis: TrajectoryPredicate = (args: { city: string }) => args.city === 'Paris';
 * ```
 */
export type TrajectoryPredicate = { check(value: unknown): boolean }['check'];

/**
 * One step a run is expected to take: a call of `tool`, with arguments matching `args` and a
 * result matching `result` when they are given. A result that is JSON text is matched parsed when
 * `result` is an object or an array.
 *
 * @example
 * ```ts
 * const steps: TrajectoryStep[] = [
 *   { tool: 'search', args: { query: /hotels/ } },
 *   { tool: 'book', args: { hotel: 'Ritz' }, result: (text) => String(text).startsWith('Booked') },
 * ];
 * ```
 */
export type TrajectoryStep = { tool: string; args?: TrajectoryMatcher; result?: TrajectoryMatcher };

/**
 * How steps are held against the calls. `exact` (default `true`): the same calls, as many, in that
 * order; `false`: the steps appear in that order among the calls, other calls in between allowed.
 *
 * @example
 * ```ts
 * expectTrajectory(output, [{ tool: 'book' }], { exact: false }); // booked at some point
 * ```
 */
export type TrajectoryOptions = { exact?: boolean };

/**
 * One tool call of a run, with its result when the history has it.
 *
 * @example
 * ```ts
 * const [first]: TrajectoryCall[] = toolCallsOf(output);
 * console.log(first?.tool, first?.args, first?.result);
 * ```
 */
export type TrajectoryCall = {
  tool: string;
  /** The parsed arguments (the raw text when the model wrote invalid JSON). */
  args: unknown;
  toolCallId: string;
  /** The result the model got back, when the history has one. */
  result?: unknown;
  /** Set when the result is an error result (a tool that threw, invalid arguments, a denied call). */
  isError?: boolean;
};

/**
 * What tool calls are read from: a `RunOutput`, or anything with its history.
 *
 * @example
 * ```ts
 * const source: TrajectorySource = { messages: host.get('c-42').messages };
 * ```
 */
export type TrajectorySource = { readonly messages: readonly Message[] };
