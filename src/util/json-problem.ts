/**
 * Where a value stops being plain JSON — what must hold for anything kept in a persisted snapshot
 * (`sessionData`, tool arguments): `undefined` when it round-trips through `JSON.stringify` and
 * `JSON.parse` unchanged, otherwise a message naming the path and what was found there.
 *
 * @example
 * ```ts
 * findJsonProblem({ userId: 'u1', db: pool }, 'input.sessionData');
 * // 'input.sessionData.db must be plain JSON (null, boolean, number, string, array or plain object), got a Pool instance'
 * ```
 */
export function findJsonProblem(value: unknown, path: string): string | undefined {
  const seen = new Set<object>();
  const visit = (current: unknown, where: string): string | undefined => {
    switch (typeof current) {
      case 'string':
      case 'boolean':
      // An absent value (or an undefined property, which JSON leaves out) is no problem.
      case 'undefined':
        return undefined;
      case 'number':
        return Number.isFinite(current) ? undefined : problem(where, String(current));
      case 'object': {
        if (current === null) return undefined;
        if (seen.has(current)) return problem(where, 'a circular reference');
        const prototype: unknown = Object.getPrototypeOf(current);
        if (Array.isArray(current)) {
          seen.add(current);
          for (let index = 0; index < current.length; index++) {
            const found = visit(current[index], `${where}[${index}]`);
            if (found) return found;
          }
          seen.delete(current);
          return undefined;
        }
        if (prototype !== Object.prototype && prototype !== null) {
          const name = (current as { constructor?: { name?: unknown } }).constructor?.name;
          const className = typeof name === 'string' && name !== '' ? name : 'class';
          return problem(where, `${/^[aeiou]/i.test(className) ? 'an' : 'a'} ${className} instance`);
        }
        seen.add(current);
        for (const [key, inner] of Object.entries(current)) {
          const found = visit(inner, `${where}.${key}`);
          if (found) return found;
        }
        seen.delete(current);
        return undefined;
      }
      default:
        return problem(where, `a ${typeof current}`);
    }
  };
  return visit(value, path);
}

const problem = (where: string, found: string) =>
  `${where} must be plain JSON (null, boolean, number, string, array or plain object), got ${found}`;
