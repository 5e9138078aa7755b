type NodeBuffer = {
  from(data: ArrayBufferLike, offset: number, length: number): { toString(encoding: 'base64'): string };
  from(text: string, encoding: 'base64'): Uint8Array;
};

/** Node's (and Bun's) `Buffer`, when the runtime has one: read from the global, so the root imports nothing of Node. */
function nodeBuffer(): NodeBuffer | undefined {
  return (globalThis as { Buffer?: NodeBuffer }).Buffer;
}

/** Bytes per `String.fromCharCode` call: large enough to be quick, small enough for any engine's argument limit. */
const chunkBytes = 0x8000;

/**
 * The bytes as standard base64 (with padding): natively where the runtime can (`toBase64`, or
 * Node's and Bun's `Buffer`), else through the `btoa` every runtime has — Deno and Workers alike —
 * so the root needs no `Buffer`.
 *
 * @example
 * ```ts
 * base64FromBytes(new Uint8Array([104, 105])); // 'aGk='
 * ```
 */
export function base64FromBytes(bytes: Uint8Array): string {
  // Native where the runtime has it: a megabyte in about a millisecond instead of a hundred.
  const native = bytes as Uint8Array & { toBase64?: () => string };
  if (typeof native.toBase64 === 'function') return native.toBase64();
  const buffer = nodeBuffer();
  if (buffer) return buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  let binary = '';
  for (let offset = 0; offset < bytes.length; offset += chunkBytes) {
    binary += String.fromCharCode(...bytes.subarray(offset, offset + chunkBytes));
  }
  return btoa(binary);
}

/**
 * The bytes a standard base64 string stands for (one checked by {@link base64Problem}).
 *
 * @example
 * ```ts
 * bytesFromBase64('aGk='); // Uint8Array [104, 105]
 * ```
 */
export function bytesFromBase64(base64: string): Uint8Array {
  const fromBase64 = (Uint8Array as unknown as { fromBase64?: (text: string) => Uint8Array }).fromBase64;
  if (typeof fromBase64 === 'function') return fromBase64(base64);
  const buffer = nodeBuffer();
  if (buffer) {
    const decoded = buffer.from(base64, 'base64');
    return new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength);
  }
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

/** How many bytes a well-formed base64 string decodes to, without decoding it. */
export function base64ByteLength(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return (base64.length / 4) * 3 - padding;
}

/**
 * Why a string is not standard base64 (the alphabet `A–Z a–z 0–9 + /`, padded with `=` to a
 * multiple of four), or `undefined` when it is.
 *
 * @example
 * ```ts
 * base64Problem('aGk'); // 'its length, 3, is not a multiple of 4 (standard base64 is padded with =)'
 * ```
 */
export function base64Problem(text: string): string | undefined {
  if (text.length % 4 !== 0) return `its length, ${text.length}, is not a multiple of 4 (standard base64 is padded with =)`;
  const bad = /[^A-Za-z0-9+/=]/.exec(text);
  if (bad) return `it holds ${JSON.stringify(bad[0])} at ${bad.index}, which is not in the base64 alphabet (A–Z, a–z, 0–9, +, /)`;
  const padding = text.indexOf('=');
  if (padding !== -1 && padding < text.length - 2) return `it has = at ${padding}, before its last two characters`;
  if (padding !== -1 && !/^=+$/.test(text.slice(padding))) return `it has a character after its = padding`;
  return undefined;
}
