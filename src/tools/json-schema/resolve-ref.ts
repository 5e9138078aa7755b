import { uriResolver } from './ajv-runtime.js';
import { hasRules } from './rules-list.js';
import { fullPathOf, getFullPath, normalizeId, resolveUrl, unescapeFragment } from './schema-id.js';
import { type SchemaObject, SchemaEnv, type Session } from './types.js';

// ajv's reference resolution (compile/index.ts and compile/resolve.ts), kept step for step: which
// `$ref`s resolve, to what, with which base URI, and whether the target is inlined into the caller
// or compiled as a function of its own (which changes the errors' `schemaPath`).

const referenceKeywords = new Set(['$ref', '$recursiveRef', '$recursiveAnchor', '$dynamicRef', '$dynamicAnchor']);

function hasRef(schema: unknown): boolean {
  for (const key in schema as object) {
    if (referenceKeywords.has(key)) return true;
    const child = (schema as SchemaObject)[key];
    if (Array.isArray(child) && child.some(hasRef)) return true;
    if (typeof child === 'object' && hasRef(child)) return true;
  }
  return false;
}

/** ajv's inlineRef with `inlineRefs: true`: a target without references is inlined. */
function inlineRef(schema: unknown): boolean {
  if (typeof schema === 'boolean') return true;
  return !hasRef(schema);
}

/** ajv's schemaHasRulesButRef. */
export function hasRulesButRef(schema: unknown): boolean {
  if (typeof schema === 'boolean') return !schema;
  for (const key in schema as object) if (key !== '$ref' && hasRules(key)) return true;
  return false;
}

/** A schema ajv inlines, or the environment of a function it compiles. */
export type ResolvedRef = { inline: unknown } | { env: SchemaEnv };

/** ajv's resolveRef: `undefined` when the reference cannot be resolved. */
export function resolveRef(session: Session, root: SchemaEnv, baseId: string, reference: string): ResolvedRef | undefined {
  const ref = resolveUrl(baseId, reference);
  const cached = root.refs[ref];
  if (cached) return asResolved(cached);
  let found = resolve(session, root, ref);
  if (found === undefined) {
    const schema = root.localRefs?.[ref];
    if (schema) found = new SchemaEnv({ schema, root, baseId });
  }
  if (found === undefined) return undefined;
  const resolved = inlineOrCompile(session, found);
  root.refs[ref] = resolved;
  return resolved === undefined ? undefined : asResolved(resolved);
}

function asResolved(value: unknown): ResolvedRef {
  return value instanceof SchemaEnv ? { env: value } : { inline: value };
}

// What ajv's registries hold may be a SchemaEnv, an alias string, or (being plain objects looked
// up by any string) something inherited from Object.prototype; ajv reads `.schema` of whatever it is.
function schemaOf(found: unknown): unknown {
  return (found as { schema?: unknown }).schema;
}

function inlineOrCompile(session: Session, found: unknown): unknown {
  const schema = schemaOf(found);
  if (inlineRef(schema)) return schema;
  if (!(found instanceof SchemaEnv)) return found;
  return found.validate ? found : session.compileFunction(found);
}

function resolve(session: Session, root: SchemaEnv, reference: string): unknown {
  let ref = reference;
  let found: unknown;
  // biome-ignore lint/suspicious/noAssignInExpressions: ajv's alias-following loop, kept as written
  while (typeof (found = session.refs[ref]) === 'string') ref = found;
  return found || session.schemas[ref] || resolveSchema(session, root, ref);
}

/** ajv's resolveSchema: a reference into another registered schema, or a JSON pointer into this one. */
function resolveSchema(session: Session, root: SchemaEnv, ref: string): SchemaEnv | undefined {
  const parsed = uriResolver.parse(ref);
  const refPath = fullPathOf(parsed);
  let baseId = getFullPath(root.baseId, undefined);
  if (Object.keys(root.schema as object).length > 0 && refPath === baseId) return getJsonPointer(session, parsed, root);

  const id = normalizeId(refPath);
  const registered = session.refs[id] || session.schemas[id];
  if (typeof registered === 'string') {
    const target = resolveSchema(session, root, registered);
    if (typeof target?.schema !== 'object') return undefined;
    return getJsonPointer(session, parsed, target);
  }
  if (typeof schemaOf(registered ?? {}) !== 'object' || !(registered instanceof SchemaEnv)) return undefined;
  if (!registered.validate) session.compileFunction(registered);
  if (id === normalizeId(ref)) {
    const schema = registered.schema as SchemaObject;
    const schemaId = schema.$id;
    if (schemaId) baseId = resolveUrl(baseId, schemaId);
    return new SchemaEnv({ schema, root, baseId });
  }
  return getJsonPointer(session, parsed, registered);
}

// Keywords whose members are named by the user: an `$id` met there while following a pointer does
// not change the base URI.
const preventScopeChange = new Set(['properties', 'patternProperties', 'enum', 'dependencies', 'definitions']);

function getJsonPointer(session: Session, parsed: { fragment?: string }, env: SchemaEnv): SchemaEnv | undefined {
  const { root } = env;
  let { baseId, schema } = env;
  if (parsed.fragment?.[0] !== '/') return undefined;
  for (const part of parsed.fragment.slice(1).split('/')) {
    if (typeof schema === 'boolean') return undefined;
    const partSchema = (schema as SchemaObject)[unescapeFragment(part)];
    if (partSchema === undefined) return undefined;
    schema = partSchema;
    const schemaId = typeof schema === 'object' && (schema as SchemaObject).$id;
    if (!preventScopeChange.has(part) && schemaId) baseId = resolveUrl(baseId, schemaId);
  }
  let found: SchemaEnv | undefined;
  if (typeof schema !== 'boolean' && (schema as SchemaObject).$ref && !hasRulesButRef(schema)) {
    const ref = resolveUrl(baseId, (schema as SchemaObject).$ref);
    found = resolveSchema(session, root, ref);
  }
  found = found || new SchemaEnv({ schema, root, baseId });
  if (found.schema !== found.root.schema) return found;
  return undefined;
}
