import { describe, expect, it } from 'vitest';
import { concatBytes } from '../src/util/concat-bytes.js';

describe('concatBytes', () => {
  it('joins the parts in order, with or without the size counted', () => {
    const parts = [new Uint8Array([1, 2]), new Uint8Array([]), new Uint8Array([3, 4, 5])];
    expect([...concatBytes(parts)]).toEqual([1, 2, 3, 4, 5]);
    expect([...concatBytes(parts, 5)]).toEqual([1, 2, 3, 4, 5]);
  });

  it('hands back a single part as it is, and none as an empty array', () => {
    const only = new Uint8Array([7]);
    expect(concatBytes([only])).toBe(only);
    expect(concatBytes([]).byteLength).toBe(0);
  });
});
