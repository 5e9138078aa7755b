import { deepEqual, uriResolver } from './ajv-runtime.js';
import type { SchemaObject, Session } from './types.js';

// ajv's URI handling (compile/resolve.ts), kept line for line: `$ref`s resolve exactly where ajv's do.

const trailingSlashHash = /#\/?$/;

/** ajv's normalizeId. A non-string `$id` fails as ajv's `id.replace(…)` does, with its message. */
export function normalizeId(id: unknown): string {
  if (!id) return '';
  if (typeof id !== 'string') throw new TypeError('id.replace is not a function');
  return id.replace(trailingSlashHash, '');
}

export function fullPathOf(components: { fragment?: string }): string {
  return `${uriResolver.serialize(components).split('#')[0]}#`;
}

/** ajv's getFullPath: the URI without its fragment, ending in `#`. */
export function getFullPath(id = '', normalize?: boolean): string {
  return fullPathOf(uriResolver.parse(normalize !== false ? normalizeId(id) : id));
}

/** ajv's resolveUrl. */
export function resolveUrl(baseId: string, id: unknown): string {
  return uriResolver.resolve(baseId, normalizeId(id));
}

export function escapeJsonPointer(text: string): string {
  return text.replace(/~/g, '~0').replace(/\//g, '~1');
}

function unescapeJsonPointer(text: string): string {
  return text.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** How ajv writes a schema property into an error's `schemaPath`. */
export function escapeFragment(text: string | number): string {
  return encodeURIComponent(typeof text === 'number' ? `${text}` : escapeJsonPointer(text));
}

export function unescapeFragment(text: string): string {
  return unescapeJsonPointer(decodeURIComponent(text));
}

// json-schema-traverse's keyword tables, as plain objects: it tests them with `in`, so inherited
// names (`constructor`, …) count too, and the walk must agree with it on which objects are schemas.
const traverseKeywords: Record<string, true> = {
  additionalItems: true,
  items: true,
  contains: true,
  additionalProperties: true,
  propertyNames: true,
  not: true,
  if: true,
  // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword
  then: true,
  else: true,
};
const traverseArrayKeywords: Record<string, true> = { items: true, allOf: true, anyOf: true, oneOf: true };
const traversePropsKeywords: Record<string, true> = {
  $defs: true,
  definitions: true,
  properties: true,
  patternProperties: true,
  dependencies: true,
};
const traverseSkipKeywords: Record<string, true> = {
  default: true,
  enum: true,
  const: true,
  required: true,
  maximum: true,
  minimum: true,
  exclusiveMaximum: true,
  exclusiveMinimum: true,
  multipleOf: true,
  maxLength: true,
  minLength: true,
  pattern: true,
  format: true,
  maxItems: true,
  minItems: true,
  uniqueItems: true,
  maxProperties: true,
  minProperties: true,
};

type Visit = (schema: SchemaObject, jsonPointer: string, parentJsonPointer: string | undefined) => void;

/** json-schema-traverse with `allKeys: true`, pre-order. */
function traverse(schema: unknown, jsonPointer: string, parentJsonPointer: string | undefined, visit: Visit): void {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return;
  const object = schema as SchemaObject;
  visit(object, jsonPointer, parentJsonPointer);
  for (const key in object) {
    const child = object[key];
    if (Array.isArray(child)) {
      if (key in traverseArrayKeywords) {
        for (let index = 0; index < child.length; index++) traverse(child[index], `${jsonPointer}/${key}/${index}`, jsonPointer, visit);
      }
    } else if (key in traversePropsKeywords) {
      if (child && typeof child === 'object') {
        for (const property in child) {
          traverse((child as SchemaObject)[property], `${jsonPointer}/${key}/${escapeJsonPointer(property)}`, jsonPointer, visit);
        }
      }
    } else if (key in traverseKeywords || !(key in traverseSkipKeywords)) {
      traverse(child, `${jsonPointer}/${key}`, jsonPointer, visit);
    }
  }
}

const anchorPattern = /^[a-z_][-a-z0-9._]*$/i;

/**
 * ajv's getSchemaRefs: registers each subschema's `$id` (and `$anchor`) in the session, and returns
 * the fragment-only ones (`#foo`), which resolve within this root.
 */
export function getSchemaRefs(session: Session, schema: unknown, baseId: string): Record<string, unknown> {
  if (typeof schema === 'boolean') return {};
  const schemaId = normalizeId((schema as SchemaObject | null)?.$id || baseId);
  const baseIds: Record<string, string> = { '': schemaId };
  const pathPrefix = getFullPath(schemaId, false);
  const localRefs: Record<string, unknown> = {};
  const schemaRefs = new Set<string>();

  traverse(schema, '', undefined, (subschema, jsonPointer, parentJsonPointer) => {
    if (parentJsonPointer === undefined) return;
    const fullPath = pathPrefix + jsonPointer;
    let innerBaseId = baseIds[parentJsonPointer];
    const addRef = (id: string): string => {
      const ref = normalizeId(innerBaseId ? uriResolver.resolve(innerBaseId, id) : id);
      if (schemaRefs.has(ref)) throw ambiguous(ref);
      schemaRefs.add(ref);
      let registered = session.refs[ref];
      if (typeof registered === 'string') registered = session.refs[registered];
      if (typeof registered === 'object') {
        checkAmbiguous(subschema, (registered as { schema?: unknown }).schema, ref);
      } else if (ref !== normalizeId(fullPath)) {
        if (ref[0] === '#') {
          checkAmbiguous(subschema, localRefs[ref], ref);
          localRefs[ref] = subschema;
        } else {
          session.refs[ref] = fullPath;
        }
      }
      return ref;
    };
    const addAnchor = (anchor: unknown): void => {
      if (typeof anchor !== 'string') return;
      if (!anchorPattern.test(anchor)) throw new Error(`invalid anchor "${anchor}"`);
      addRef(`#${anchor}`);
    };
    if (typeof subschema.$id === 'string') innerBaseId = addRef(subschema.$id);
    addAnchor(subschema.$anchor);
    addAnchor(subschema.$dynamicAnchor);
    baseIds[jsonPointer] = innerBaseId as string;
  });
  return localRefs;
}

function checkAmbiguous(first: unknown, second: unknown, ref: string): void {
  if (second !== undefined && !deepEqual(first, second)) throw ambiguous(ref);
}

function ambiguous(ref: string): Error {
  return new Error(`reference "${ref}" resolves to more than one schema`);
}
