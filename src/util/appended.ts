/**
 * A new array: `list` followed by `items`, allocated at exactly their length. `[...list, item]`
 * leaves V8 room to grow (about twenty slots), which a history kept in a parked conversation's
 * snapshot holds for as long as the conversation lives; `concat` allocates only what it needs.
 *
 * @example
 * ```ts
 * appended([{ role: 'user', content: 'Hi' }], { role: 'user', content: 'Still there?' }); // two messages
 * ```
 */
export function appended<T>(list: readonly T[], ...items: T[]): T[] {
  return list.concat(items);
}
