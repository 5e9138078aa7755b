import { Ajv, type ErrorObject } from 'ajv';
import { toJSONSchema, type ZodType } from 'zod';
import { InvalidOptionsError } from '../errors/invalid-options-error.js';

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

/** True for a zod 4 schema (classic or mini): both carry the `_zod` internals. */
export function isZodSchema(value: unknown): value is ZodType {
  return (
    typeof value === 'object' && value !== null && '_zod' in value && typeof (value as { safeParse?: unknown }).safeParse === 'function'
  );
}

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
 * Compiles a tool's `parameters` (a zod 4 schema or a plain JSON Schema with `type: "object"`).
 * `option` names the option in errors, e.g. `tools[0].parameters`.
 */
export function compileSchema<T>(parameters: unknown, option: string): CompiledSchema<T> {
  if (isZodSchema(parameters)) {
    let jsonSchema: JSONSchema;
    try {
      jsonSchema = toJSONSchema(parameters, { io: 'input', unrepresentable: 'any' }) as JSONSchema;
    } catch (error) {
      throw new InvalidOptionsError(option, `a zod schema that converts to JSON Schema (${(error as Error).message})`);
    }
    delete jsonSchema.$schema;
    if (jsonSchema.type !== 'object')
      throw new InvalidOptionsError(
        option,
        'a zod object schema (tool arguments are a JSON object)',
        `a zod ${String(jsonSchema.type ?? 'non-object')} schema`,
      );
    return {
      jsonSchema,
      validate(args) {
        const parsed = parameters.safeParse(args);
        if (parsed.success) return { success: true, value: parsed.data as T };
        const issues = parsed.error.issues.map((issue) => {
          const where = issue.path.length === 0 ? 'arguments' : `arguments.${issue.path.map(String).join('.')}`;
          return `${where}: ${issue.message}`;
        });
        return { success: false, error: issues.join('; ') };
      },
    };
  }
  if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) {
    throw new InvalidOptionsError(option, 'a zod 4 schema or a JSON Schema object', parameters);
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
