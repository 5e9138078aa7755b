/**
 * True for a non-null object that is not an array: a JSON object, an options bag, an error body.
 *
 * @example
 * ```ts
 * if (isRecord(body) && typeof body.message === 'string') console.log(body.message);
 * ```
 */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
