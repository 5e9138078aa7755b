/**
 * A tool's return value (or a stored result) as the text the model sees: strings as they are, anything else as
 * JSON. Values JSON cannot hold (bigint, cycles, functions) are written in a readable form rather
 * than failing the call, because the model should still see what the tool produced.
 *
 * @example
 * ```ts
 * serializeResult('5'); // '5'
 * serializeResult({ sum: 5n }); // '{"sum":"5"}'
 * ```
 */
export function serializeResult(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  const seen = new WeakSet<object>();
  try {
    const text = JSON.stringify(value, (_key, inner: unknown) => {
      if (typeof inner === 'bigint') return inner.toString();
      if (typeof inner === 'function' || typeof inner === 'symbol') return undefined;
      if (typeof inner === 'object' && inner !== null) {
        if (seen.has(inner)) return '[Circular]';
        seen.add(inner);
        if (inner instanceof Map) return Object.fromEntries(inner);
        if (inner instanceof Set) return [...inner];
        if (inner instanceof Error) return { name: inner.name, message: inner.message };
      }
      return inner;
    });
    return text ?? String(value);
  } catch (error) {
    return `[unserializable result: ${error instanceof Error ? error.message : String(error)}]`;
  }
}
