import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import { isRecord } from './is-record.js';

/**
 * A checker for one option: it resolves a value a user passed (defaults applied, shapes
 * normalised) or throws an {@link InvalidOptionsError} naming the option's path, what was
 * expected and what it got. Every options object of actorloop is one of these, built from the
 * combinators of {@link option}, and resolved once, at creation; zod is not needed to use them.
 *
 * @example
 * ```ts
 * const port: OptionSchema<number> = option.integer({ minimum: 0, maximum: 65_535 });
 * port.resolve(8080, 'port'); // 8080
 * port.resolve(-1, 'port'); // throws: Invalid option port: expected an integer from 0 to 65535, got -1
 * ```
 */
export type OptionSchema<T> = {
  /** What a valid value is, in the words an error message uses. */
  readonly expected: string;
  /** The resolved value, or an {@link InvalidOptionsError} naming `path`. */
  readonly resolve: (value: unknown, path: string) => T;
};

/** The type an {@link OptionSchema} resolves to. */
export type ResolvedOption<S> = S extends OptionSchema<infer T> ? T : never;

/** The fields of an object schema, by key. */
export type OptionShape = Record<string, OptionSchema<unknown>>;

/** What an object schema resolves to: each key's resolved value. */
export type ResolvedShape<Shape extends OptionShape> = { [Key in keyof Shape]: ResolvedOption<Shape[Key]> };

/** The largest delay `setTimeout` honours; a larger one fires at once. */
export const maxTimerMs = 2_147_483_647;

const hidden = Symbol('hidden');

function fail(path: string, expected: string, received: unknown): never {
  if (received === hidden) throw new InvalidOptionsError(path, expected);
  throw new InvalidOptionsError(path, expected, received);
}

function schema<T>(expected: string, resolve: (value: unknown, path: string) => T): OptionSchema<T> {
  return { expected, resolve };
}

function test<T>(expected: string, accepts: (value: unknown) => boolean): OptionSchema<T> {
  return schema(expected, (value, path) => (accepts(value) ? (value as T) : fail(path, expected, value)));
}

/** The path of a key under `path`; the top level of an options object has bare keys. */
export function childPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function integer(bounds: { minimum?: number; maximum?: number; expected?: string } = {}): OptionSchema<number> {
  const { minimum = Number.MIN_SAFE_INTEGER, maximum = Number.MAX_SAFE_INTEGER } = bounds;
  const expected =
    bounds.expected ?? (bounds.maximum === undefined ? `an integer ≥ ${minimum}` : `an integer from ${minimum} to ${maximum}`);
  return test(expected, (value) => Number.isInteger(value) && (value as number) >= minimum && (value as number) <= maximum);
}

function number(bounds: { minimum?: number; expected?: string } = {}): OptionSchema<number> {
  const { minimum = Number.NEGATIVE_INFINITY } = bounds;
  const expected = bounds.expected ?? (bounds.minimum === undefined ? 'a finite number' : `a number ≥ ${minimum}`);
  return test(expected, (value) => typeof value === 'number' && Number.isFinite(value) && value >= minimum);
}

function milliseconds(bounds: { minimum?: number } = {}): OptionSchema<number> {
  const { minimum = 1 } = bounds;
  return test(`a number of milliseconds between ${minimum} and ${maxTimerMs}`, (value) =>
    typeof value === 'number' && Number.isFinite(value) && value >= minimum && value <= maxTimerMs);
}

function boolean(): OptionSchema<boolean> {
  return test('a boolean', (value) => typeof value === 'boolean');
}

function string(settings: { nonEmpty?: boolean; expected?: string } = {}): OptionSchema<string> {
  const expected = settings.expected ?? (settings.nonEmpty ? 'a non-empty string' : 'a string');
  return test(expected, (value) => typeof value === 'string' && !(settings.nonEmpty && value === ''));
}

function choice<const T extends string | number | boolean>(values: readonly T[], expected?: string): OptionSchema<T> {
  const allowed = new Set<unknown>(values);
  return test(expected ?? values.map((value) => JSON.stringify(value)).join(' or '), (value) => allowed.has(value));
}

function callable<T extends (...args: never[]) => unknown>(expected: string): OptionSchema<T> {
  return test(expected, (value) => typeof value === 'function');
}

function matching<T>(expected: string, accepts: (value: unknown) => value is T): OptionSchema<T> {
  return test(expected, accepts);
}

function array<T>(item: OptionSchema<T>, expected = `an array of ${item.expected}`): OptionSchema<T[]> {
  return schema(expected, (value, path) => {
    if (!Array.isArray(value)) return fail(path, expected, value);
    return value.map((entry, index) => item.resolve(entry, `${path}[${index}]`));
  });
}

function record<T>(entry: OptionSchema<T>, expected = `an object of ${entry.expected} by name`): OptionSchema<Record<string, T>> {
  return schema(expected, (value, path) => {
    if (!isRecord(value)) return fail(path, expected, value);
    const resolved: Record<string, T> = {};
    for (const [key, item] of Object.entries(value)) resolved[key] = entry.resolve(item, childPath(path, key));
    return resolved;
  });
}

/** How an object schema treats keys it does not declare. */
export type UnknownKeys = 'reject' | 'ignore';

function object<const Shape extends OptionShape>(
  shape: Shape,
  settings: { expected?: string; label?: string; unknownKeys?: UnknownKeys } = {},
): OptionSchema<ResolvedShape<Shape>> {
  const keys = Object.keys(shape);
  const known = new Set(keys);
  const expected = settings.expected ?? `an object { ${keys.join(', ')} }`;
  return schema(expected, (value, path) => {
    if (!isRecord(value)) return fail(settings.label ?? (path === '' ? 'options' : path), expected, value);
    if (settings.unknownKeys !== 'ignore') {
      for (const key of Object.keys(value)) {
        if (!known.has(key) && value[key] !== undefined) throw unknownKey(childPath(path, key), key, keys);
      }
    }
    const resolved: Record<string, unknown> = {};
    for (const key of keys) resolved[key] = (shape[key] as OptionSchema<unknown>).resolve(value[key], childPath(path, key));
    return resolved as ResolvedShape<Shape>;
  });
}

function unknownKey(path: string, key: string, keys: readonly string[]): InvalidOptionsError {
  const near = closestName(key, keys);
  const hint = near === undefined ? '' : `; did you mean ${near}?`;
  return new InvalidOptionsError(path, `a known option (${keys.join(', ')}), not an unknown one${hint}`);
}

/** The known name a typo most likely meant: edit distance ≤ 2 or a third of its length, or one containing the other. */
export function closestName(typed: string, names: readonly string[]): string | undefined {
  const lower = typed.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const candidate = name.toLowerCase();
    const distance = candidate.includes(lower) || lower.includes(candidate) ? 1 : editDistance(lower, candidate);
    if (distance <= Math.max(2, Math.floor(name.length / 3)) && (best === undefined || distance < best.distance)) {
      best = { name, distance };
    }
  }
  return best?.name;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] as number;
}

function optional<T>(inner: OptionSchema<T>): OptionSchema<T | undefined> {
  return schema(inner.expected, (value, path) => (value === undefined ? undefined : inner.resolve(value, path)));
}

function withDefault<T>(inner: OptionSchema<T>, fallback: T): OptionSchema<T> {
  return schema(inner.expected, (value, path) => (value === undefined ? fallback : inner.resolve(value, path)));
}

/**
 * A default computed when the option is left out (`undefined` or `null`): a fresh value each time
 * (a random id, the current tracer), for options whose `??` default has always taken `null` too.
 */
function orElse<T>(inner: OptionSchema<T>, fallback: () => T): OptionSchema<T> {
  return schema(inner.expected, (value, path) => (value === undefined || value === null ? fallback() : inner.resolve(value, path)));
}

/** `inner`, reporting its problems under `path` whatever the option's place: for a name users know it by. */
function at<T>(path: string, inner: OptionSchema<T>): OptionSchema<T> {
  return schema(inner.expected, (value) => inner.resolve(value, path));
}

/** `undefined` read as `raw` (say `{}`), so a nested object's own defaults apply when it is left out. */
function absentAs<T>(inner: OptionSchema<T>, raw: unknown): OptionSchema<T> {
  return schema(inner.expected, (value, path) => inner.resolve(value === undefined ? raw : value, path));
}

/** One of several schemas, chosen by a test of the value, so the error comes from the one that fits best. */
function either<T>(expected: string, branches: ReadonlyArray<readonly [(value: unknown) => boolean, OptionSchema<T>]>): OptionSchema<T> {
  return schema(expected, (value, path) => {
    for (const [applies, branch] of branches) if (applies(value)) return branch.resolve(value, path);
    return fail(path, expected, value);
  });
}

/** `false`, or what `inner` accepts: an option that can be switched off. */
function orFalse<T>(inner: OptionSchema<T>, expected = `${inner.expected} or false`): OptionSchema<T | false> {
  return schema(expected, (value, path) => {
    if (value === false) return false;
    try {
      return inner.resolve(value, path);
    } catch (error) {
      // A problem with the value itself (not one of its fields) names the switched-off form too.
      if (InvalidOptionsError.isInstance(error) && error.option === path) return fail(path, expected, value);
      throw error;
    }
  });
}

/** A value the error message must never echo (an API key): the error names the option only. */
function secret<T>(inner: OptionSchema<T>): OptionSchema<T> {
  return schema(inner.expected, (value, path) => {
    try {
      return inner.resolve(value, path);
    } catch (error) {
      if (InvalidOptionsError.isInstance(error)) return fail(error.option, inner.expected, hidden);
      throw error;
    }
  });
}

/** `inner`'s value, then changed or checked further by `change` (which may throw its own {@link InvalidOptionsError}). */
function transform<T, U>(inner: OptionSchema<T>, change: (value: T, path: string) => U, expected = inner.expected): OptionSchema<U> {
  return schema(expected, (value, path) => change(inner.resolve(value, path), path));
}

/**
 * The combinators of actorloop's option schemas. Each returns an {@link OptionSchema}; compose
 * them into one schema per options object and call {@link resolveOptionsWith} once, at creation.
 *
 * @example
 * ```ts
 * const viewerOptions = option.object({
 *   port: option.withDefault(option.integer({ minimum: 0, maximum: 65_535 }), 0),
 *   title: option.optional(option.string()),
 * });
 * const { port, title } = resolveOptionsWith(viewerOptions, { port: 4000 });
 * ```
 */
export const option = {
  integer,
  number,
  milliseconds,
  boolean,
  string,
  choice,
  callable,
  matching,
  array,
  record,
  object,
  optional,
  withDefault,
  orElse,
  at,
  absentAs,
  either,
  orFalse,
  secret,
  transform,
  /** Fails with `expected` for every value but `undefined`; for options that only one variant has. */
  absent: (expected: string): OptionSchema<undefined> => test(expected, (value) => value === undefined),
  /** Any value, unchecked: for an option another schema checks later, or that is passed through as is. */
  unchecked: <T = unknown>(expected = 'any value'): OptionSchema<T> => schema(expected, (value) => value as T),
};

/**
 * Resolves a whole options object against its schema, reporting problems under `path` (`''` for
 * an options object whose keys are named bare, as `createConversationMachine` does).
 *
 * @example
 * ```ts
 * const resolved = resolveOptionsWith(option.object({ path: option.string({ nonEmpty: true }) }), { path: 'a.db' });
 * ```
 */
export function resolveOptionsWith<T>(schemaOf: OptionSchema<T>, value: unknown, path = ''): T {
  return schemaOf.resolve(value, path);
}
