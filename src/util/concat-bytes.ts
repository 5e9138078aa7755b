/**
 * The byte arrays as one, in order (the array itself when there is one). `size`, when the caller
 * counted it already, saves a pass.
 *
 * @example
 * ```ts
 * concatBytes([new Uint8Array([1, 2]), new Uint8Array([3])]); // Uint8Array [1, 2, 3]
 * ```
 */
export function concatBytes(parts: readonly Uint8Array[], size?: number): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  let total = size ?? 0;
  if (size === undefined) for (const part of parts) total += part.byteLength;
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  return bytes;
}
