/**
 * `{ ...source, ...fields }`, made with `Object.assign`: for a copy that adds a field `source` does
 * not have, on a path that runs every round.
 *
 * Why not the spread: Node 20's V8 (11.3) gives an object made by spreading a non-empty object a
 * hidden class that shares no transitions, so every property added after the spread makes a new
 * one — about 1 µs per copy against 70 ns for this function, and a map, descriptor array and
 * property array of its own for as long as the copy lives. Node 22 and 24 spread in about 20 ns
 * (this function: 50 ns). A spread that only overwrites fields its source has is fast on every
 * line and stays a spread; so does an object literal that starts with its own fields.
 *
 * @example
 * ```ts
 * const running = withFields(call, { state: 'running' as const, deadline: now + timeoutMs });
 * ```
 */
export function withFields<TSource extends object, TFields extends object>(
  source: TSource,
  fields: TFields,
): Omit<TSource, keyof TFields> & TFields {
  return Object.assign({}, source, fields);
}
