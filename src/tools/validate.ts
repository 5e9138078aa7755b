import { Ajv, type ErrorObject } from 'ajv';
import { InvalidOptionsError } from '../errors/invalid-options-error.js';
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

// One compiler for the process: compiling is per schema, the instance itself is only a cache.
let ajv: Ajv | undefined;

function formatAjvErrors(errors: ErrorObject[] | null | undefined): string {
  if (!errors || errors.length === 0) return 'does not match the schema';
  return errors
    .map((error) => {
      const where = error.instancePath === '' ? 'arguments' : `arguments${error.instancePath.replaceAll('/', '.')}`;
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
export function compileSchema<T>(parameters: unknown, option: string): CompiledSchema<T> {
  if (isStandardSchema(parameters)) return compileStandardSchema<T>(parameters, option);
  if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) {
    throw new InvalidOptionsError(option, 'a zod (≥ 4.2) or other Standard Schema, or a JSON Schema object', parameters);
  }
  const jsonSchema = { ...(parameters as JSONSchema) };
  if (jsonSchema.type !== 'object') {
    throw new InvalidOptionsError(
      option,
      'a JSON Schema with type "object" (tool arguments are a JSON object)',
      `type ${JSON.stringify(jsonSchema.type)}`,
    );
  }
  delete jsonSchema.$schema;
  ajv ??= new Ajv({ allErrors: true, strict: false });
  let check: ReturnType<Ajv['compile']>;
  try {
    check = ajv.compile(jsonSchema);
  } catch (error) {
    throw new InvalidOptionsError(option, `a valid JSON Schema (${(error as Error).message})`);
  }
  return {
    jsonSchema,
    validate(args) {
      if (check(args)) return { success: true, value: args as T };
      return { success: false, error: formatAjvErrors(check.errors) };
    },
  };
}

/** Where an issue is, as the model reads it: `arguments.items.0.name`. */
function issuePath(issue: StandardIssue): string {
  if (!issue.path || issue.path.length === 0) return 'arguments';
  const keys = issue.path.map((segment) => (typeof segment === 'object' && segment !== null ? segment.key : segment));
  return `arguments.${keys.map(String).join('.')}`;
}

/**
 * A Standard Schema (zod ≥ 4.2, …): the library converts it to JSON Schema and validates with it,
 * so actorloop needs no schema library of its own and never meets a second copy of the user's.
 */
function compileStandardSchema<T>(parameters: StandardSchemaV1, option: string): CompiledSchema<T> {
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
      `an object schema (tool arguments are a JSON object), not a ${standard.vendor} ${String(jsonSchema.type ?? 'non-object')} schema`,
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
      return { success: false, error: result.issues.map((issue) => `${issuePath(issue)}: ${issue.message}`).join('; ') };
    },
  };
}
