/**
 * A tool's return value as the text fed back to the model: strings as they are, anything else as
 * JSON. Values JSON cannot hold (bigint, cycles, functions) are written in a readable form rather
 * than failing the call, because the model should still see what the tool produced.
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

/** The message of anything a tool threw, Error or not. */
export function thrownMessage(thrown: unknown): string {
  if (thrown instanceof Error)
    return thrown.message === '' ? thrown.name : `${thrown.name === 'Error' ? '' : `${thrown.name}: `}${thrown.message}`;
  if (typeof thrown === 'string') return thrown;
  const text = serializeResult(thrown);
  return text === '' ? String(thrown) : text;
}

const encoder = new TextEncoder();

/**
 * Caps a text fed back to the model at `maxBytes` of UTF-8, cutting on a character boundary and
 * saying so, so one runaway tool cannot blow the context window or the process's memory.
 */
export function capText(text: string, maxBytes: number): string {
  // Three bytes per UTF-16 unit is the most UTF-8 needs, so shorter texts cannot be over.
  if (text.length * 3 <= maxBytes) return text;
  const total = Buffer.byteLength(text, 'utf8');
  if (total <= maxBytes) return text;
  const buffer = new Uint8Array(maxBytes);
  const { read } = encoder.encodeInto(text, buffer);
  const kept = text.slice(0, read);
  return `${kept}\n…[truncated: ${total - Buffer.byteLength(kept, 'utf8')} of ${total} bytes not shown]`;
}
