import type { KeywordDefinition } from '../types.js';
import { allOfKeyword, anyOfKeyword, ifKeyword, notKeyword, oneOfKeyword, thenElseKeyword } from './applicator.js';
import { additionalItemsKeyword, containsKeyword, itemsKeyword, limitItemsKeyword, uniqueItemsKeyword } from './array.js';
import { commentKeyword, idKeyword, refKeyword } from './core.js';
import { formatKeyword, formatLimitKeyword } from './format.js';
import { limitNumberKeyword, multipleOfKeyword } from './number.js';
import {
  additionalPropertiesKeyword,
  dependenciesKeyword,
  limitPropertiesKeyword,
  patternPropertiesKeyword,
  propertiesKeyword,
  propertyNamesKeyword,
  requiredKeyword,
} from './object.js';
import { limitLengthKeyword, patternKeyword } from './string.js';
import { constKeyword, enumKeyword } from './value.js';

const noCode = (schemaType: KeywordDefinition['schemaType']): KeywordDefinition => ({ schemaType });

/** Every keyword of ajv's RULES (see rules-list.ts for their order). */
export const keywordDefinitions: Readonly<Record<string, KeywordDefinition>> = {
  $comment: commentKeyword,
  id: idKeyword,
  $ref: refKeyword,
  type: noCode(['string', 'array']),
  nullable: noCode(['boolean']),
  const: constKeyword,
  enum: enumKeyword,
  not: notKeyword,
  anyOf: anyOfKeyword,
  oneOf: oneOfKeyword,
  allOf: allOfKeyword,
  if: ifKeyword,
  // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword
  then: thenElseKeyword,
  else: thenElseKeyword,
  maximum: limitNumberKeyword,
  minimum: limitNumberKeyword,
  exclusiveMaximum: limitNumberKeyword,
  exclusiveMinimum: limitNumberKeyword,
  multipleOf: multipleOfKeyword,
  format: formatKeyword,
  maxLength: limitLengthKeyword,
  minLength: limitLengthKeyword,
  pattern: patternKeyword,
  formatMaximum: formatLimitKeyword,
  formatMinimum: formatLimitKeyword,
  formatExclusiveMaximum: formatLimitKeyword,
  formatExclusiveMinimum: formatLimitKeyword,
  maxItems: limitItemsKeyword,
  minItems: limitItemsKeyword,
  additionalItems: additionalItemsKeyword,
  items: itemsKeyword,
  contains: containsKeyword,
  uniqueItems: uniqueItemsKeyword,
  maxProperties: limitPropertiesKeyword,
  minProperties: limitPropertiesKeyword,
  required: requiredKeyword,
  propertyNames: propertyNamesKeyword,
  additionalProperties: additionalPropertiesKeyword,
  dependencies: dependenciesKeyword,
  properties: propertiesKeyword,
  patternProperties: patternPropertiesKeyword,
};
