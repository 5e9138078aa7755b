import { ucs2length } from '../ajv-runtime.js';
import { reportError } from '../report.js';
import type { KeywordContext, KeywordDefinition } from '../types.js';

export const limitLengthKeyword: KeywordDefinition = {
  schemaType: ['number'],
  compile({ it, keyword, schema }: KeywordContext) {
    const limit = schema as number;
    const isMaximum = keyword === 'maxLength';
    const message = `must NOT have ${isMaximum ? 'more' : 'fewer'} than ${limit} characters`;
    return (data, at, run) => {
      const length = ucs2length(data as string);
      if (!(isMaximum ? length > limit : length < limit)) return true;
      reportError(it, at, run, keyword, { limit }, message);
      return false;
    };
  },
};

/** ajv's usePattern: patterns are Unicode regular expressions, compiled once. */
export function schemaPattern(pattern: string): RegExp {
  return new RegExp(pattern, 'u');
}

export const patternKeyword: KeywordDefinition = {
  schemaType: ['string'],
  compile({ it, schema }: KeywordContext) {
    const pattern = schema as string;
    const regExp = schemaPattern(pattern);
    return (data, at, run) => {
      if (regExp.test(data as string)) return true;
      reportError(it, at, run, 'pattern', { pattern }, `must match pattern "${pattern}"`);
      return false;
    };
  },
};
