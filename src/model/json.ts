/**
 * A plain JSON value: what a persisted snapshot can hold and give back unchanged, and so the type
 * of anything a wire keeps on a message (`providerMetadata`).
 *
 * @example
 * ```ts
 * const kept: JsonValue = { itemId: 'rs_06d3…', summary: ['Need a sum.'] };
 * ```
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

/**
 * A plain JSON object.
 *
 * @example
 * ```ts
 * const kept: JsonObject = { responseId: 'resp_0216a3dd…' };
 * ```
 */
export type JsonObject = { [key: string]: JsonValue };

export { findJsonProblem } from '../util/json-problem.js';
