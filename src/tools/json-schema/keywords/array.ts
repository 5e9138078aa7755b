import { deepEqual } from '../ajv-runtime.js';
import { alwaysValidSchema } from '../always-valid.js';
import { getSchemaTypes, hasDataTypes } from '../data-type.js';
import { memberAt, reportError } from '../report.js';
import type { Check, KeywordCheck, KeywordContext, KeywordDefinition, SchemaObject } from '../types.js';

export const limitItemsKeyword: KeywordDefinition = {
  schemaType: ['number'],
  compile({ it, keyword, schema }: KeywordContext) {
    const limit = schema as number;
    const isMaximum = keyword === 'maxItems';
    const message = `must NOT have ${isMaximum ? 'more' : 'fewer'} than ${limit} items`;
    return (data, at, run) => {
      const { length } = data as unknown[];
      if (!(isMaximum ? length > limit : length < limit)) return true;
      reportError(it, at, run, keyword, { limit }, message);
      return false;
    };
  },
};

/** `additionalItems`: only beside an array of `items`; ajv ignores it (uncompiled) otherwise. */
export const additionalItemsKeyword: KeywordDefinition = {
  schemaType: ['boolean', 'object'],
  compile(keyword: KeywordContext): KeywordCheck | undefined {
    const { it, schema } = keyword;
    const items = keyword.parentSchema.items;
    if (!Array.isArray(items)) return undefined;
    const tupleLength = items.length;
    if (schema === false) {
      return (data, at, run) => {
        if ((data as unknown[]).length <= tupleLength) return true;
        reportError(it, at, run, 'additionalItems', { limit: tupleLength }, `must NOT have more than ${tupleLength} items`);
        return false;
      };
    }
    if (typeof schema !== 'object' || alwaysValidSchema(schema)) return undefined;
    const check = keyword.subschema({ keyword: 'additionalItems' });
    return (data, at, run) => {
      const array = data as unknown[];
      const { length } = array;
      let valid = length <= tupleLength;
      if (!valid) {
        for (let index = tupleLength; index < length; index++) {
          valid = check(array[index], memberAt(at, index), run);
          if (!it.allErrors && !valid) break;
        }
      }
      return valid;
    };
  },
};

export const itemsKeyword: KeywordDefinition = {
  schemaType: ['object', 'array', 'boolean'],
  compile(keyword: KeywordContext): KeywordCheck | undefined {
    const { it, schema } = keyword;
    if (Array.isArray(schema)) return tuple(keyword, schema);
    if (alwaysValidSchema(schema)) return undefined;
    const check = keyword.subschema({ keyword: 'items' });
    return (data, at, run) => {
      const array = data as unknown[];
      const { length } = array;
      let valid = true;
      for (let index = 0; index < length; index++) {
        valid = check(array[index], memberAt(at, index), run);
        if (!it.allErrors && !valid) break;
      }
      return it.allErrors || valid;
    };
  },
};

/**
 * Tuple `items`. One `var valid` serves every position, read after each (allErrors off): when the
 * array is shorter than the first checked position it is still `undefined` (or what an earlier
 * iteration of an enclosing loop left), and ajv skips the rest of the array keywords.
 */
function tuple(keyword: KeywordContext, schemas: unknown[]): KeywordCheck {
  const { it } = keyword;
  const slot = it.frame.slots++;
  const positions: { index: number; check: Check }[] = [];
  for (const [index, schema] of schemas.entries()) {
    if (alwaysValidSchema(schema)) continue;
    positions.push({ index, check: keyword.subschema({ keyword: 'items', schemaProperty: index }) });
  }
  return (data, at, run) => {
    const array = data as unknown[];
    const { length } = array;
    for (const { index, check } of positions) {
      if (length > index) at.slots[slot] = check(array[index], memberAt(at, index), run);
      if (!it.allErrors && !at.slots[slot]) return false;
    }
    return true;
  };
}

/**
 * `contains`: the first passing item ends the search and drops the failing items' errors. Its
 * `var valid` is only assigned inside the loop: for an empty array it keeps what an earlier
 * iteration of an enclosing loop left (ajv lets `{"items": {"contains": …}}` accept `[["a"], []]`).
 */
export const containsKeyword: KeywordDefinition = {
  schemaType: ['object', 'boolean'],
  compile(keyword: KeywordContext): KeywordCheck {
    const { it, schema } = keyword;
    const fail: KeywordCheck = (_data, at, run) => {
      reportError(it, at, run, 'contains', { minContains: 1 }, 'must contain at least 1 valid item(s)');
      return false;
    };
    if (alwaysValidSchema(schema)) return (data, at, run) => (data as unknown[]).length >= 1 || fail(data, at, run);
    const slot = it.frame.slots++;
    const check = keyword.subschema({ keyword: 'contains' });
    return (data, at, run) => {
      const start = run.errors.length;
      const array = data as unknown[];
      const { length } = array;
      for (let index = 0; index < length; index++) {
        at.slots[slot] = check(array[index], memberAt(at, index), run);
        if (at.slots[slot]) break;
      }
      if (!at.slots[slot]) return fail(data, at, run);
      run.errors.length = start;
      return true;
    };
  },
};

/**
 * `uniqueItems`, numbered as ajv numbers it: when `items` gives scalar types, one pass from the end
 * with a map keyed by each item's text (items of other types skipped; a string gets `_` appended
 * when several types are allowed), `j` the later index; otherwise pairwise deep equality, `i` the
 * later index. Either way only the first duplicate found is reported.
 */
export const uniqueItemsKeyword: KeywordDefinition = {
  schemaType: ['boolean'],
  compile({ it, schema, parentSchema }: KeywordContext) {
    if (!schema) return undefined;
    const itemTypes = parentSchema.items ? getSchemaTypes(parentSchema.items as SchemaObject) : [];
    const scalar = itemTypes.length > 0 && !itemTypes.some((type) => type === 'object' || type === 'array');
    const report: (at: Parameters<KeywordCheck>[1], run: Parameters<KeywordCheck>[2], i: number, j: number) => false = (at, run, i, j) => {
      reportError(it, at, run, 'uniqueItems', { i, j }, `must NOT have duplicate items (items ## ${j} and ${i} are identical)`);
      return false;
    };
    if (scalar) {
      return (data, at, run) => {
        const array = data as unknown[];
        let i = array.length;
        if (i <= 1) return true;
        const indices: Record<string, unknown> = {};
        while (i--) {
          let item = array[i];
          if (!hasDataTypes(itemTypes, item)) continue;
          if (itemTypes.length > 1 && typeof item === 'string') item += '_';
          const key = String(item);
          const seen = indices[key];
          if (typeof seen === 'number') return report(at, run, i, seen);
          indices[key] = i;
        }
        return true;
      };
    }
    return (data, at, run) => {
      const array = data as unknown[];
      let i = array.length;
      if (i <= 1) return true;
      while (i--) {
        for (let j = i; j--; ) if (deepEqual(array[i], array[j])) return report(at, run, i, j);
      }
      return true;
    };
  },
};
