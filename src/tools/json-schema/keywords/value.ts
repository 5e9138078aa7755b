import { deepEqual } from '../ajv-runtime.js';
import { reportError } from '../report.js';
import type { KeywordContext, KeywordDefinition } from '../types.js';

// `const` and `enum` compare objects deeply and anything else with `===`, as ajv's generated code does.

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null;
}

export const constKeyword: KeywordDefinition = {
  schemaType: [],
  compile({ it, schema }: KeywordContext) {
    const equal = isObject(schema) ? (data: unknown) => deepEqual(data, schema) : (data: unknown) => data === schema;
    return (data, at, run) => {
      if (equal(data)) return true;
      reportError(it, at, run, 'const', { allowedValue: schema }, 'must be equal to constant');
      return false;
    };
  },
};

export const enumKeyword: KeywordDefinition = {
  schemaType: ['array'],
  compile({ it, schema }: KeywordContext) {
    const allowed = schema as unknown[];
    if (allowed.length === 0) throw new Error('enum must have non-empty array');
    const matches = allowed.map((value) =>
      isObject(value) ? (data: unknown) => deepEqual(data, value) : (data: unknown) => data === value,
    );
    return (data, at, run) => {
      if (matches.some((match) => match(data))) return true;
      reportError(it, at, run, 'enum', { allowedValues: allowed }, 'must be equal to one of the allowed values');
      return false;
    };
  },
};
