/**
 * The value a JSON text that is still streaming holds so far, best effort: unfinished strings,
 * arrays and objects are closed, a dangling key, comma or half-written literal is dropped. Returns
 * `undefined` when nothing can be read yet. For live display only — the final answer is parsed
 * and validated whole.
 *
 * @example
 * ```ts
 * parsePartialJson('{"city": "Par'); // { city: 'Par' }
 * parsePartialJson('{"items": [1, 2, '); // { items: [1, 2] }
 * ```
 */
export function parsePartialJson(text: string): unknown {
  const start = text.search(/[{[]/);
  if (start < 0) return undefined;
  const body = text.slice(start);
  try {
    return JSON.parse(body) as unknown;
  } catch {
    // Not whole yet: close what is open.
  }
  const closers: string[] = [];
  // Places where the text may be cut and closed: before a comma, after an opening bracket.
  const cuts: Array<{ at: number; closers: string }> = [];
  let inString = false;
  let escaped = false;
  for (let index = 0; index < body.length; index++) {
    const char = body[index];
    if (inString) {
      if (escaped) escaped = false;
      else if (char === '\\') escaped = true;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    else if (char === '{' || char === '[') {
      closers.push(char === '{' ? '}' : ']');
      cuts.push({ at: index + 1, closers: [...closers].reverse().join('') });
    } else if (char === '}' || char === ']') closers.pop();
    else if (char === ',') cuts.push({ at: index, closers: [...closers].reverse().join('') });
  }
  const open = [...closers].reverse().join('');
  const candidates = [inString && !escaped ? `${body}"${open}` : `${body}${open}`];
  // The latest cuts first: the most of the value that reads whole. A few are enough in practice.
  for (let index = cuts.length - 1; index >= 0 && candidates.length < 8; index--) {
    const cut = cuts[index] as { at: number; closers: string };
    candidates.push(body.slice(0, cut.at) + cut.closers);
  }
  for (const candidate of candidates) {
    const value = tryParse(trimDangling(candidate));
    if (value !== undefined) return value;
  }
  return undefined;
}

/** Drops what cannot end a value before the closers: a trailing comma, colon, or key without value. */
function trimDangling(candidate: string): string {
  const match = /^(.*?)([}\]]*)$/s.exec(candidate);
  if (!match) return candidate;
  let head = match[1] ?? '';
  const tail = match[2] ?? '';
  for (;;) {
    const trimmed = head
      .replace(/\s+$/, '')
      .replace(/,$/, '')
      .replace(/"(?:[^"\\]|\\.)*"\s*:$/, '')
      .replace(/:$/, '');
    if (trimmed === head) break;
    head = trimmed;
  }
  return head + tail;
}

function tryParse(candidate: string): unknown {
  try {
    return JSON.parse(candidate) as unknown;
  } catch {
    return undefined;
  }
}
