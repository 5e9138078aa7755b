/**
 * Inspection events as plain JSON, and the default sanitizer. XState hands inspectors live objects
 * (snapshots holding actor refs, events holding errors); these become JSON with no cycles, and by
 * default the conversation's content is dropped before anything leaves the process.
 */

/**
 * Plain JSON: what a Stately inspection event is turned into before it is sanitized and sent.
 *
 * @example
 * ```ts
 * const sanitize = (event: InspectableJson): InspectableJson => redactContent(event);
 * ```
 */
export type InspectableJson = null | boolean | number | string | InspectableJson[] | { [key: string]: InspectableJson };

const maxDepth = 24;

/** Anything as plain JSON: `toJSON()` honoured (snapshots, actor refs), errors as `{ name, message }`, functions and cycles dropped. */
export function toInspectable(value: unknown, depth = 0, seen: Set<object> = new Set()): InspectableJson | undefined {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object') return undefined;
  if (depth > maxDepth) return '[too deep]';
  if (seen.has(value)) return '[circular]';
  if (value instanceof Error) return { name: value.name, message: value.message };
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    const converted: unknown = toJSON.call(value);
    if (converted !== value) {
      seen.add(value);
      try {
        return toInspectable(converted, depth + 1, seen);
      } finally {
        seen.delete(value);
      }
    }
  }
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => toInspectable(item, depth + 1, seen) ?? null);
    if (value instanceof Map) return toInspectable(Object.fromEntries(value), depth + 1, seen);
    if (value instanceof Set) return toInspectable([...value], depth + 1, seen);
    const out: { [key: string]: InspectableJson } = {};
    for (const [key, inner] of Object.entries(value)) {
      const converted = toInspectable(inner, depth + 1, seen);
      if (converted !== undefined) out[key] = converted;
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/**
 * What the default sanitizer puts in place of what it drops.
 *
 * @example
 * ```ts
 * redactContent({ content: 'secret' }); // { content: redacted }
 * ```
 */
export const redacted = '[redacted]';

/**
 * Keys whose values are conversation content: message and part content (`content`, `text`,
 * `delta`, reasoning `signature` / `data`), tool arguments (`args`, `argsText`, `argsDelta`, `arguments`), tool
 * results (`result`), text derived from them (`finalText`, `notice`, `pendingNotice`), structured
 * answers (`answerText`, `lastPartialJson`, `object`, `problem`), Responses reasoning
 * (`encryptedContent`, `summary`) and the run's `sessionData`.
 */
const contentKeys = new Set([
  'content',
  'text',
  'delta',
  'signature',
  'data',
  'args',
  'argsText',
  'argsDelta',
  'arguments',
  'result',
  'finalText',
  'notice',
  'pendingNotice',
  'sessionData',
  // Structured answers (streamed text, partial and final objects, what a repair quotes back) and
  // the Responses API's reasoning.
  'answerText',
  'lastPartialJson',
  'object',
  'problem',
  'encryptedContent',
  'summary',
]);

/**
 * The default sanitizer: the same JSON with every value under a content key replaced by
 * `[redacted]` (`null` and `''` stay, so "no content" still reads as such), wherever it sits —
 * messages in a snapshot's context or output, an event's payload, a child actor's input. A list of
 * content parts keeps each part's type, tool name and call id.
 *
 * @example
 * ```ts
 * redactContent({ messages: [{ role: 'user', content: 'my password is …' }] });
 * // { messages: [{ role: 'user', content: '[redacted]' }] }
 * ```
 */
export function redactContent(value: InspectableJson): InspectableJson {
  if (Array.isArray(value)) return value.map(redactContent);
  if (value === null || typeof value !== 'object') return value;
  const out: { [key: string]: InspectableJson } = {};
  for (const [key, inner] of Object.entries(value)) {
    // A list of content parts keeps its parts' types, tool names and ids; what they say goes.
    const parts = key === 'content' && Array.isArray(inner);
    out[key] = contentKeys.has(key) && !parts && inner !== null && inner !== '' ? redacted : redactContent(inner);
  }
  return out;
}
