/**
 * How deep plain JSON may nest. `JSON.stringify` recurses and overflows the stack a few thousand
 * levels down (and `structuredClone` sooner), so a deeper value cannot be stored: it is reported
 * here, where the caller still gets a clear error, rather than when the run is written.
 */
export const maxJsonDepth = 1_000;

/**
 * Where a value stops being plain JSON — what must hold for anything kept in a persisted snapshot
 * (`sessionData`, tool arguments): `undefined` when it round-trips through `JSON.stringify` and
 * `JSON.parse` unchanged, otherwise a message naming the path and what was found there. Values
 * nested deeper than {@link maxJsonDepth} levels are refused too (`JSON.stringify` cannot write
 * them). The walk uses its own stack, so any depth is safe to check.
 *
 * @example
 * ```ts
 * findJsonProblem({ userId: 'u1', db: pool }, 'input.sessionData');
 * // 'input.sessionData.db must be plain JSON (null, boolean, number, string, array or plain object), got a Pool instance'
 * ```
 */
export function findJsonProblem(value: unknown, path: string): string | undefined {
  /** The arrays and objects being walked, outermost first, with the key of each one's next child. */
  const stack: Frame[] = [];
  /** Containers on the stack: meeting one again is a cycle; meeting it beside itself is not. */
  const open = new Set<object>();
  const where = (key?: string | number) => pathOf(path, stack, key);

  const enter = (current: unknown, key?: string | number): string | undefined => {
    switch (typeof current) {
      case 'string':
      case 'boolean':
      // An absent value (or an undefined property, which JSON leaves out) is no problem.
      case 'undefined':
        return undefined;
      case 'number':
        return Number.isFinite(current) ? undefined : problem(where(key), String(current));
      case 'object': {
        if (current === null) return undefined;
        if (open.has(current)) return problem(where(key), 'a circular reference');
        const isArray = Array.isArray(current);
        if (!isArray) {
          const prototype: unknown = Object.getPrototypeOf(current);
          if (prototype !== Object.prototype && prototype !== null) {
            const name = (current as { constructor?: { name?: unknown } }).constructor?.name;
            const className = typeof name === 'string' && name !== '' ? name : 'class';
            return problem(where(key), `${/^[aeiou]/i.test(className) ? 'an' : 'a'} ${className} instance`);
          }
        }
        if (stack.length >= maxJsonDepth) return `${where(key)} must be plain JSON nested at most ${maxJsonDepth} levels deep`;
        if (stack.length > 0) (stack[stack.length - 1] as Frame).key = key;
        stack.push({ container: current, keys: isArray ? undefined : Object.keys(current), index: 0, isArray, key: undefined });
        open.add(current);
        return undefined;
      }
      default:
        return problem(where(key), `a ${typeof current}`);
    }
  };

  const found = enter(value);
  if (found) return found;
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame;
    const size = frame.keys ? frame.keys.length : (frame.container as unknown[]).length;
    if (frame.index >= size) {
      stack.pop();
      open.delete(frame.container);
      continue;
    }
    const index = frame.index++;
    const key = frame.keys ? (frame.keys[index] as string) : index;
    const inner = frame.keys ? (frame.container as Record<string, unknown>)[key] : (frame.container as unknown[])[index];
    const problemHere = enter(inner, key);
    if (problemHere) return problemHere;
  }
  return undefined;
}

type Frame = {
  container: object;
  /** An object's own enumerable keys (what `JSON.stringify` writes); `undefined` for an array. */
  keys: string[] | undefined;
  index: number;
  isArray: boolean;
  /** The key under which the next frame on the stack sits in this one. */
  key: string | number | undefined;
};

/** Segments shown at each end of a path deeper than this; the middle is counted, not spelled out. */
const shownSegments = 8;

/** `path.a[0].b`, with the middle of a very deep path left out so that a message stays readable. */
function pathOf(root: string, stack: readonly Frame[], last: string | number | undefined): string {
  const keys: Array<string | number> = [];
  for (let level = 0; level < stack.length - 1; level++) keys.push((stack[level] as Frame).key as string | number);
  if (last !== undefined) keys.push(last);
  const segment = (key: string | number) => (typeof key === 'number' ? `[${key}]` : `.${key}`);
  if (keys.length <= shownSegments * 2) return root + keys.map(segment).join('');
  const head = keys.slice(0, shownSegments).map(segment).join('');
  const tail = keys.slice(-shownSegments).map(segment).join('');
  return `${root}${head}…(${keys.length - shownSegments * 2} levels)…${tail}`;
}

const problem = (where: string, found: string) =>
  `${where} must be plain JSON (null, boolean, number, string, array or plain object), got ${found}`;
