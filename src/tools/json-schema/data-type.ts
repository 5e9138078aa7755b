import type { JSONType, SchemaObject } from './types.js';

export type { JSONType } from './types.js';

const jsonTypes: readonly JSONType[] = ['string', 'number', 'integer', 'boolean', 'null', 'object', 'array'];

function isJSONType(value: unknown): value is JSONType {
  return typeof value === 'string' && (jsonTypes as readonly string[]).includes(value);
}

/** ajv's getJSONTypes: the `type` keyword as a list. */
function getJSONTypes(type: unknown): JSONType[] {
  const types: unknown[] = Array.isArray(type) ? [...type] : type ? [type] : [];
  if (types.every(isJSONType)) return types;
  throw new Error(`type must be JSONType or JSONType[]: ${types.join(',')}`);
}

/**
 * ajv's getSchemaTypes: the types a schema allows, with `nullable: true` adding `null`. ajv pushes
 * that `null` into the schema's own `type` array (the error message shows it); the interpreter does
 * not write into the caller's schema, and `typeValue` gives what ajv's message would show.
 */
export function getSchemaTypes(schema: SchemaObject): JSONType[] {
  const types = getJSONTypes(schema.type);
  if (types.includes('null')) {
    if (schema.nullable === false) throw new Error('type: null contradicts nullable: false');
  } else {
    if (types.length === 0 && schema.nullable !== undefined) throw new Error('"nullable" cannot be used without "type"');
    if (schema.nullable === true) types.push('null');
  }
  return types;
}

/** The `type` value as ajv reports it: an array gets the `null` that `nullable` added to it. */
export function typeValue(schema: SchemaObject, types: JSONType[]): unknown {
  return Array.isArray(schema.type) ? types : schema.type;
}

/** ajv's checkDataType, with strictNumbers off (as `strict: false` sets it): NaN is a number. */
export function hasDataType(type: JSONType, data: unknown): boolean {
  switch (type) {
    case 'null':
      return data === null;
    case 'array':
      return Array.isArray(data);
    case 'object':
      return typeof data === 'object' && data !== null && !Array.isArray(data);
    case 'integer':
      return typeof data === 'number' && !(data % 1) && !Number.isNaN(data);
    case 'number':
      return typeof data === 'number';
    default:
      return typeof data === type;
  }
}

/** ajv's checkDataTypes: whether the data has one of the types. */
export function hasDataTypes(types: readonly JSONType[], data: unknown): boolean {
  return types.some((type) => hasDataType(type, data));
}
