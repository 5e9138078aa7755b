/**
 * The length of `text` in UTF-8 bytes, counted without encoding it: `Buffer.byteLength` where the
 * runtime has Node's `Buffer` (native, fastest), else one pass over the UTF-16 units (workerd and
 * browsers have no `Buffer`). A lone surrogate counts 3 bytes, as the encoder writes U+FFFD for it.
 *
 * @example
 * ```ts
 * utf8Length('é'); // 2
 * ```
 */
export function utf8Length(text: string): number {
  const buffer = (globalThis as { Buffer?: { byteLength(text: string, encoding: 'utf8'): number } }).Buffer;
  if (buffer) return buffer.byteLength(text, 'utf8');
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        index++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}
