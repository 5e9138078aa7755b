import { reportError } from '../report.js';
import type { KeywordContext, KeywordDefinition } from '../types.js';

type Comparison = '<=' | '>=' | '<' | '>';

/** A bound keyword: the comparison its message states, and when the data fails it. */
const bounds: Record<string, { comparison: Comparison; fails: (data: number, limit: number) => boolean }> = {
  maximum: { comparison: '<=', fails: (data, limit) => data > limit },
  minimum: { comparison: '>=', fails: (data, limit) => data < limit },
  exclusiveMaximum: { comparison: '<', fails: (data, limit) => data >= limit },
  exclusiveMinimum: { comparison: '>', fails: (data, limit) => data <= limit },
};

export const limitNumberKeyword: KeywordDefinition = {
  schemaType: ['number'],
  compile({ it, keyword, schema }: KeywordContext) {
    const limit = schema as number;
    const { comparison, fails } = bounds[keyword] as (typeof bounds)[string];
    return (data, at, run) => {
      const value = data as number;
      if (!fails(value, limit) && !Number.isNaN(value)) return true;
      reportError(it, at, run, keyword, { comparison, limit }, `must be ${comparison} ${limit}`);
      return false;
    };
  },
};

export const multipleOfKeyword: KeywordDefinition = {
  schemaType: ['number'],
  compile({ it, schema }: KeywordContext) {
    const divisor = schema as number;
    return (data, at, run) => {
      // ajv's test, parseInt of the quotient's text included (so 1e21 is no multiple of 1). A number's
      // text never starts with 0x, so radix 10 is what ajv's radix-less parseInt reads too.
      const quotient = (data as number) / divisor;
      if (!(divisor === 0 || quotient !== Number.parseInt(String(quotient), 10))) return true;
      reportError(it, at, run, 'multipleOf', { multipleOf: divisor }, `must be multiple of ${divisor}`);
      return false;
    };
  },
};
