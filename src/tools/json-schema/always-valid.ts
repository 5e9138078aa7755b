import { hasRules } from './rules-list.js';

/** ajv's schemaCxtHasRules: whether a schema has any rule to compile. */
export function schemaHasRules(schema: unknown): boolean {
  if (typeof schema === 'boolean') return !schema;
  for (const key in schema as object) if (hasRules(key)) return true;
  return false;
}

/**
 * ajv's alwaysValidSchema: a schema that can add no error. ajv skips such subschemas without
 * compiling them, which decides whether a compile error further in is met at all.
 */
export function alwaysValidSchema(schema: unknown): boolean {
  if (typeof schema === 'boolean') return schema;
  if (Object.keys(schema as object).length === 0) return true;
  return !schemaHasRules(schema);
}
