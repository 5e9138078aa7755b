import type { ErrorObject } from 'ajv';
import { escapeJsonPointer } from './schema-id.js';
import type { At, Run, SchemaContext } from './types.js';

/** ajv's error object, fields in ajv's order; `propertyName` only inside `propertyNames`. */
export function reportError(it: SchemaContext, at: At, run: Run, keyword: string, params: Record<string, unknown>, message: string): void {
  const error: ErrorObject = { instancePath: at.path, schemaPath: `${it.errSchemaPath}/${keyword}`, keyword, params, message };
  if (at.propertyName !== undefined) error.propertyName = at.propertyName;
  run.errors.push(error);
}

/** The place of a member of the data: ajv escapes `~` and `/` of property names in `instancePath`. */
export function memberAt(at: At, member: string | number): At {
  const segment = typeof member === 'number' ? `${member}` : escapeJsonPointer(member);
  return { path: `${at.path}/${segment}`, propertyName: at.propertyName, slots: at.slots };
}

/** A member of the data as ajv's generated code reads it (`data[key]`): inherited names included. */
export function member(data: unknown, key: string | number): unknown {
  return (data as Record<string | number, unknown>)[key];
}
