import { Ajv, type ErrorObject } from 'ajv';
import formatsModule, { type FormatsPlugin } from 'ajv-formats';
import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import { compileInterpreted } from './json-schema-interpreter.js';
import { isStandardSchema, type StandardIssue, type StandardSchemaV1 } from './standard-schema.js';

/**
 * A plain JSON Schema object describing a tool's arguments.
 *
 * @example
 * ```ts
 * const parameters: JSONSchema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
 * ```
 */
export type JSONSchema = Record<string, unknown>;

/**
 * The outcome of checking a tool call's arguments. `error` is written for the model, which gets it
 * as the call's result and can correct the call.
 *
 * @example
 * ```ts
 * const checked: ValidationResult<unknown> = add.validate({ a: 2, b: 'three' });
 * if (!checked.success) console.error(checked.error);
 * ```
 */
export type ValidationResult<T> = { success: true; value: T } | { success: false; error: string };

/** A schema turned into what the engine needs: JSON Schema for the model, a validator for calls. */
export type CompiledSchema<T> = {
  jsonSchema: JSONSchema;
  validate(args: unknown): ValidationResult<T>;
};

// ajv-formats is CommonJS with a `default` property: under Node's ESM the default import is the
// plugin itself, while TypeScript (NodeNext) types it as the module object.
const addFormats: FormatsPlugin =
  (formatsModule as unknown as { default?: FormatsPlugin }).default ?? (formatsModule as unknown as FormatsPlugin);

// One compiler for the process: compiling is per schema, the instance itself is only a cache.
let ajv: Ajv | undefined;

/**
 * The compiler: the standard `format`s (uri, email, date-time, uuid, …) enforced in ajv-formats'
 * full mode. A library must not write to the host's stderr, so ajv's logger is off; with it off, a
 * format ajv does not know (a custom one, meaningful to the model or another validator) is accepted
 * unchecked and without a warning rather than refused — refusing would make tools written for other
 * validators, and MCP servers' schemas, unusable.
 */
function compiler(): Ajv {
  if (ajv) return ajv;
  ajv = new Ajv({ allErrors: true, strict: false, logger: false });
  addFormats(ajv, { mode: 'full', keywords: true });
  return ajv;
}

/**
 * ajv keeps every schema it compiled, and each `$id` in it, in the instance: a second tool with the
 * same `$id` would be refused ("already exists"), and a `$ref` could resolve into another tool's
 * schema. Each compile starts from the instance as it was made, and leaves it so.
 */
function compileIsolated(instance: Ajv, schema: JSONSchema): ReturnType<Ajv['compile']> {
  const refs = { ...instance.refs };
  const schemas = { ...instance.schemas };
  try {
    return instance.compile(schema);
  } finally {
    instance.removeSchema(schema);
    restore(instance.refs, refs);
    restore(instance.schemas, schemas);
  }
}

function restore(target: Record<string, unknown>, saved: Record<string, unknown>): void {
  for (const key of Object.keys(target)) if (!Object.hasOwn(saved, key)) delete target[key];
  Object.assign(target, saved);
}

/**
 * What compiles JSON Schemas: ajv generates a function's source and runs `new Function` on it, which
 * Cloudflare workerd (and any host with code generation off) refuses; there the interpreter
 * (./json-schema-interpreter.ts) does the same checks with the same errors. ajv stays the choice
 * where it can run: its functions validate about five times faster (the interpreter compiles faster;
 * both take microseconds a call). `auto` asks the runtime once.
 */
export type SchemaEngine = 'ajv' | 'interpreter';

let engineSetting: SchemaEngine | 'auto' = 'auto';
let codeGeneration: boolean | undefined;

/**
 * Chooses the JSON Schema engine (`auto` by default); for tests, which run both on Node. Internal:
 * not exported from the package.
 *
 * @example
 * ```ts
 * setSchemaEngine('interpreter');
 * ```
 */
export function setSchemaEngine(engine: SchemaEngine | 'auto'): void {
  engineSetting = engine;
}

function codeGenerationWorks(): boolean {
  if (codeGeneration === undefined) {
    try {
      codeGeneration = new Function('return true')() === true;
    } catch {
      codeGeneration = false;
    }
  }
  return codeGeneration;
}

/** The engine `compileSchema` uses now. */
export function schemaEngine(): SchemaEngine {
  if (engineSetting !== 'auto') return engineSetting;
  return codeGenerationWorks() ? 'ajv' : 'interpreter';
}

/**
 * Compiles a JSON Schema to a function returning ajv's errors for a value (null when it is valid);
 * throws ajv's error for a schema ajv refuses. The same errors from either engine.
 *
 * @example
 * ```ts
 * const errors = compileJsonSchema({ type: 'object', required: ['q'] })({});
 * ```
 */
export function compileJsonSchema(schema: JSONSchema, engine: SchemaEngine = schemaEngine()): (data: unknown) => ErrorObject[] | null {
  if (engine === 'interpreter') return compileInterpreted(schema);
  const check = compileIsolated(compiler(), schema);
  return (data) => (check(data) ? null : (check.errors ?? []));
}

/**
 * What a schema checks, as messages name it: a tool's `arguments`, or a structured `answer`. Both
 * must be JSON objects (tool arguments are; the wires' structured-output modes require it).
 */
export type SchemaSubject = 'arguments' | 'answer';

const objectReason: Record<SchemaSubject, string> = {
  arguments: 'tool arguments are a JSON object',
  answer: 'a structured answer is a JSON object',
};

function formatAjvErrors(errors: ErrorObject[] | null | undefined, subject: SchemaSubject): string {
  if (!errors || errors.length === 0) return 'does not match the schema';
  return errors
    .map((error) => {
      const where = error.instancePath === '' ? subject : `${subject}${error.instancePath.replaceAll('/', '.')}`;
      const extra =
        error.keyword === 'additionalProperties' && typeof error.params.additionalProperty === 'string'
          ? ` (${error.params.additionalProperty})`
          : '';
      return `${where} ${error.message ?? 'is invalid'}${extra}`;
    })
    .join('; ');
}

/**
 * Compiles a tool's `parameters` (a zod ≥ 4.2 or other Standard Schema, or a plain JSON Schema with
 * `type: "object"`).
 * `option` names the option in errors, e.g. `tools[0].parameters`.
 */
export function compileSchema<T>(parameters: unknown, option: string, subject: SchemaSubject = 'arguments'): CompiledSchema<T> {
  if (isStandardSchema(parameters)) return compileStandardSchema<T>(parameters, option, subject);
  if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) {
    throw new InvalidOptionsError(option, 'a zod (≥ 4.2) or other Standard Schema, or a JSON Schema object', parameters);
  }
  const jsonSchema = { ...(parameters as JSONSchema) };
  if (jsonSchema.type !== 'object') {
    throw new InvalidOptionsError(
      option,
      `a JSON Schema with type "object" (${objectReason[subject]})`,
      `type ${JSON.stringify(jsonSchema.type)}`,
    );
  }
  delete jsonSchema.$schema;
  if (jsonSchema.$async) {
    // ajv would validate in a promise, which a call's validation cannot wait for: every call would pass.
    throw new InvalidOptionsError(option, 'a JSON Schema without "$async" (actorloop validates synchronously)', jsonSchema.$async);
  }
  let check: (data: unknown) => ErrorObject[] | null;
  try {
    check = compileJsonSchema(jsonSchema);
  } catch (error) {
    throw new InvalidOptionsError(option, `a valid JSON Schema (${(error as Error).message})`);
  }
  return {
    jsonSchema,
    validate(args) {
      const errors = check(args);
      if (!errors) return { success: true, value: args as T };
      return { success: false, error: formatAjvErrors(errors, subject) };
    },
  };
}

/** Where an issue is, as the model reads it: `arguments.items.0.name`. */
function issuePath(issue: StandardIssue, subject: SchemaSubject): string {
  if (!issue.path || issue.path.length === 0) return subject;
  const keys = issue.path.map((segment) => (typeof segment === 'object' && segment !== null ? segment.key : segment));
  return `${subject}.${keys.map(String).join('.')}`;
}

/**
 * A Standard Schema (zod ≥ 4.2, …): the library converts it to JSON Schema and validates with it,
 * so actorloop needs no schema library of its own and never meets a second copy of the user's.
 */
function compileStandardSchema<T>(parameters: StandardSchemaV1, option: string, subject: SchemaSubject): CompiledSchema<T> {
  const standard = parameters['~standard'];
  if (!standard.jsonSchema) {
    throw new InvalidOptionsError(
      option,
      'a schema that converts itself to JSON Schema (Standard JSON Schema: zod ≥ 4.2) or a plain JSON Schema; ' +
        `this ${standard.vendor} schema has no ~standard.jsonSchema (with zod 4.0 or 4.1: upgrade, or pass z.toJSONSchema(schema))`,
    );
  }
  let jsonSchema: JSONSchema;
  try {
    // `unrepresentable: 'any'` is zod's: a date or a transform becomes `{}` rather than an error.
    jsonSchema = { ...standard.jsonSchema.input({ target: 'draft-2020-12', libraryOptions: { unrepresentable: 'any' } }) };
  } catch (error) {
    throw new InvalidOptionsError(option, `a schema that converts to JSON Schema (${(error as Error).message})`);
  }
  delete jsonSchema.$schema;
  if (jsonSchema.type !== 'object') {
    throw new InvalidOptionsError(
      option,
      `an object schema (${objectReason[subject]}), not a ${standard.vendor} ${String(jsonSchema.type ?? 'non-object')} schema`,
    );
  }
  return {
    jsonSchema,
    validate(args) {
      const result = standard.validate(args);
      if (result instanceof Promise) {
        // An async refinement cannot run inside a transition; the call is refused, never left hanging.
        result.catch(() => undefined);
        return { success: false, error: "the tool's schema validates asynchronously, which actorloop does not support" };
      }
      if (!result.issues) return { success: true, value: result.value as T };
      return { success: false, error: result.issues.map((issue) => `${issuePath(issue, subject)}: ${issue.message}`).join('; ') };
    },
  };
}
