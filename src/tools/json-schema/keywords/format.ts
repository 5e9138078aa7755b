import { formats } from '../ajv-runtime.js';
import { reportError } from '../report.js';
import type { KeywordContext, KeywordDefinition } from '../types.js';

type FormatValidate = RegExp | ((data: never) => unknown);
type FormatObject = { type?: string; validate?: FormatValidate; compare?: (data: string, limit: string) => number | undefined };

// ajv keeps its formats in an Object.create(null) map: only ajv-formats' own names are formats.
function formatDefinition(name: string): unknown {
  return Object.hasOwn(formats, name) ? formats[name] : undefined;
}

function isFormatObject(definition: unknown): definition is FormatObject {
  return typeof definition === 'object' && definition !== null && !(definition instanceof RegExp);
}

/**
 * `format`, in both the number group and the string group: a format checks the data of its own type
 * (ajv-formats' int32, int64, float and double are number formats). An unknown format passes, as
 * ajv with `strict: false` lets it.
 */
export const formatKeyword: KeywordDefinition = {
  schemaType: ['string'],
  compile({ it, schema, ruleType }: KeywordContext) {
    if (!it.session.options.validateFormats) return undefined;
    const name = schema as string;
    const definition = formatDefinition(name);
    if (!definition || definition === true) return undefined;
    const [type, validate] = isFormatObject(definition)
      ? [definition.type || 'string', definition.validate]
      : ['string', definition as FormatValidate];
    if (type !== ruleType) return undefined;
    const test =
      typeof validate === 'function'
        ? (data: unknown) => (validate as (data: unknown) => unknown)(data)
        : (data: unknown) => (validate as RegExp).test(data as string);
    return (data, at, run) => {
      if (test(data)) return true;
      reportError(it, at, run, 'format', { format: name }, `must match format "${name}"`);
      return false;
    };
  },
};

type Comparison = '<=' | '>=' | '<' | '>';

const formatBounds: Record<string, { comparison: Comparison; fails: (order: number | undefined) => boolean }> = {
  // `order` is the format's compare result, undefined when a side is not comparable: no comparison fails then.
  formatMaximum: { comparison: '<=', fails: (order) => (order as number) > 0 },
  formatMinimum: { comparison: '>=', fails: (order) => (order as number) < 0 },
  formatExclusiveMaximum: { comparison: '<', fails: (order) => (order as number) >= 0 },
  formatExclusiveMinimum: { comparison: '>', fails: (order) => (order as number) <= 0 },
};

/** ajv-formats' formatMaximum, formatMinimum, formatExclusiveMaximum and formatExclusiveMinimum. */
export const formatLimitKeyword: KeywordDefinition = {
  schemaType: ['string'],
  dependencies: ['format'],
  compile({ it, keyword, schema, parentSchema }: KeywordContext) {
    if (!it.session.options.validateFormats) return undefined;
    const format = parentSchema.format;
    if (typeof format !== 'string') throw new Error('format value must be ["string"]');
    const definition = formatDefinition(format);
    if (!definition || definition === true) return undefined;
    if (!isFormatObject(definition) || typeof definition.compare !== 'function') {
      throw new Error(`"${keyword}": format "${format}" does not define "compare" function`);
    }
    const compare = definition.compare;
    const limit = schema as string;
    const { comparison, fails } = formatBounds[keyword] as (typeof formatBounds)[string];
    return (data, at, run) => {
      if (!fails(compare(data as string, limit))) return true;
      reportError(it, at, run, keyword, { comparison, limit }, `should be ${comparison} ${limit}`);
      return false;
    };
  },
};
