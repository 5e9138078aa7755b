import type { ErrorObject } from 'ajv';
import { compileFunction } from './json-schema/compile-node.js';
import { draft07MetaSchema, draft07MetaSchemaId } from './json-schema/draft-07-meta-schema.js';
import { getSchemaRefs, normalizeId } from './json-schema/schema-id.js';
import { type CompileOptions, type Run, SchemaEnv, type SchemaObject, type Session } from './json-schema/types.js';

/**
 * JSON Schema validation without code generation, for runtimes that refuse `new Function` (Cloudflare
 * workerd), where ajv's compiler cannot run. It is ajv's compiler walked as an interpreter: the draft-07
 * `Ajv` class with `allErrors: true, strict: false` and ajv-formats (full mode, with its keywords),
 * giving the same `ErrorObject`s in the same order, and refusing the schemas ajv refuses with the
 * same messages — including where ajv's generated code has quirks of its own (see the files under
 * json-schema/ for each). test/json-schema-interpreter.test.ts holds it to ajv on random schemas and data.
 */

/** A compiled schema: ajv's errors for the data, or null when the data is valid. */
export type InterpretedValidator = (data: unknown) => ErrorObject[] | null;

const metaSchemaAlias = 'http://json-schema.org/schema';

function newSession(options: CompileOptions, metaSchema: SchemaEnv | undefined): Session {
  const session: Session = {
    schemas: {},
    refs: {},
    compilations: new Set(),
    options,
    compileFunction: (env) => compileFunction(session, env),
  };
  if (metaSchema) {
    session.schemas[draft07MetaSchemaId] = metaSchema;
    session.refs[draft07MetaSchemaId] = metaSchema;
  }
  session.refs[metaSchemaAlias] = draft07MetaSchemaId;
  return session;
}

let metaSchemaEnv: SchemaEnv | undefined;

/** The meta-schema, compiled once as ajv compiles it: with format validation off. */
function metaSchema(): SchemaEnv {
  if (metaSchemaEnv) return metaSchemaEnv;
  const session = newSession({ validateFormats: false }, undefined);
  const localRefs = getSchemaRefs(session, draft07MetaSchema, draft07MetaSchemaId);
  const env = new SchemaEnv({ schema: draft07MetaSchema, baseId: draft07MetaSchemaId, localRefs, meta: true });
  session.schemas[draft07MetaSchemaId] = env;
  session.refs[draft07MetaSchemaId] = env;
  compileFunction(session, env);
  metaSchemaEnv = env;
  return env;
}

function validate(env: SchemaEnv, data: unknown): ErrorObject[] | null {
  const run: Run = { errors: [] };
  (env.validate as NonNullable<SchemaEnv['validate']>)(data, '', run);
  return run.errors.length > 0 ? run.errors : null;
}

/** ajv's errorsText with its defaults. */
function errorsText(errors: ErrorObject[]): string {
  return errors.map((error) => `data${error.instancePath} ${error.message}`).join(', ');
}

/** ajv's validateSchema: the schema checked against the meta-schema its `$schema` names (draft-07 by default). */
function validateSchema(schema: SchemaObject, meta: SchemaEnv): void {
  const declared = schema.$schema;
  if (declared !== undefined && typeof declared !== 'string') throw new Error('$schema must be a string');
  if (declared && ![draft07MetaSchemaId, metaSchemaAlias].includes(normalizeId(declared))) {
    throw new Error(`no schema with key or ref "${declared}"`);
  }
  const errors = validate(meta, schema);
  if (errors) throw new Error(`schema is invalid: ${errorsText(errors)}`);
}

/**
 * Compiles a schema as `ajv.compile` would on a fresh instance: its `$id`s registered, the schema
 * checked against the meta-schema, then compiled; each step throws ajv's error.
 *
 * @example
 * ```ts
 * const check = compileInterpreted({ type: 'object', required: ['q'] });
 * check({}); // [{ instancePath: '', keyword: 'required', message: "must have required property 'q'", … }]
 * ```
 */
export function compileInterpreted(schema: SchemaObject): InterpretedValidator {
  const meta = metaSchema();
  const session = newSession({ validateFormats: true }, meta);
  const baseId = normalizeId(schema.$id);
  const localRefs = getSchemaRefs(session, schema, baseId);
  const env = new SchemaEnv({ schema, baseId, localRefs });
  if (!baseId.startsWith('#')) {
    if (baseId && (session.schemas[baseId] || session.refs[baseId])) throw new Error(`schema with key or id "${baseId}" already exists`);
    session.refs[baseId] = env;
  }
  validateSchema(schema, meta);
  // ajv would compile an asynchronous validator, which returns a promise no tool call can wait for.
  if (env.$async) throw new Error('asynchronous schemas ($async) are not supported');
  compileFunction(session, env);
  return (data) => validate(env, data);
}
