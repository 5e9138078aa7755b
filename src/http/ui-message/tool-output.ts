/**
 * A tool result as a UI shows it: results are kept as the text the model saw, so a result that is
 * a JSON object or array becomes that value again (`part.output.sum`); any other text stays text.
 *
 * @example
 * ```ts
 * toolOutputOf('{"sum":5}'); // { sum: 5 }
 * toolOutputOf('paid');      // 'paid'
 * ```
 */
export function toolOutputOf(result: unknown): unknown {
  if (typeof result !== 'string') return result;
  const first = result.trimStart()[0];
  if (first !== '{' && first !== '[') return result;
  try {
    return JSON.parse(result) as unknown;
  } catch {
    return result;
  }
}
