import type { JSONType } from './data-type.js';

/**
 * ajv's RULES for the draft-07 `Ajv` class with ajv-formats' keywords: the groups in the order the
 * generated code checks them, each with its keywords in vocabulary order (`additionalItems`, `items`
 * and `contains` go before `uniqueItems`, as their definitions ask). The untyped group runs for any
 * data; a typed group only for data of its type.
 */
export const ruleGroups: readonly { type: JSONType | undefined; keywords: readonly string[] }[] = [
  {
    type: undefined,
    keywords: ['$comment', 'id', '$ref', 'type', 'nullable', 'const', 'enum', 'not', 'anyOf', 'oneOf', 'allOf', 'if', 'then', 'else'],
  },
  { type: 'number', keywords: ['maximum', 'minimum', 'exclusiveMaximum', 'exclusiveMinimum', 'multipleOf', 'format'] },
  {
    type: 'string',
    keywords: [
      'maxLength',
      'minLength',
      'pattern',
      'format',
      'formatMaximum',
      'formatMinimum',
      'formatExclusiveMaximum',
      'formatExclusiveMinimum',
    ],
  },
  { type: 'array', keywords: ['maxItems', 'minItems', 'additionalItems', 'items', 'contains', 'uniqueItems'] },
  {
    type: 'object',
    keywords: [
      'maxProperties',
      'minProperties',
      'required',
      'propertyNames',
      'additionalProperties',
      'dependencies',
      'properties',
      'patternProperties',
    ],
  },
];

// ajv's RULES.all is a plain object looked up by any key, so an inherited name (`constructor`)
// counts as a rule: a schema `{"constructor": 1}` is not "always valid" to ajv. Kept so.
const allRules: Record<string, unknown> = {};
for (const group of ruleGroups) for (const keyword of group.keywords) allRules[keyword] = true;

/** Whether ajv counts the key as a rule (its `RULES.all[key]`). */
export function hasRules(key: string): boolean {
  return Boolean(allRules[key]);
}
