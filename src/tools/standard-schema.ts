/**
 * The Standard Schema (https://standardschema.dev) interfaces actorloop reads a tool's schema
 * through, declared here as the spec asks implementers to do, so neither the package nor its types
 * import a schema library: the user's own zod (≥ 4.2), or any other library that implements
 * Standard Schema and Standard JSON Schema, converts and validates its schemas itself.
 */

/** A validation issue. */
export type StandardIssue = {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
};

/** The result of `~standard.validate`. */
export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardIssue> };

/** Options of `~standard.jsonSchema.input`. */
export type StandardJSONSchemaOptions = {
  readonly target: 'draft-2020-12' | 'draft-07' | 'openapi-3.0' | (string & {});
  readonly libraryOptions?: Record<string, unknown> | undefined;
};

/**
 * A schema implementing Standard Schema v1, and optionally Standard JSON Schema v1 (`jsonSchema`),
 * which actorloop needs to describe a tool's arguments to the model.
 *
 * @example
 * ```ts
 * import { z } from 'zod'; // zod ≥ 4.2 implements both
 * const schema: StandardSchemaV1<{ a: number }> = z.object({ a: z.number() });
 * ```
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    readonly jsonSchema?: {
      readonly input: (options: StandardJSONSchemaOptions) => Record<string, unknown>;
      readonly output: (options: StandardJSONSchemaOptions) => Record<string, unknown>;
    };
  };
}

/**
 * The output type of a Standard Schema: what a tool's `execute` receives.
 *
 * @example
 * ```ts
 * type Args = StandardOutput<typeof schema>; // { a: number }
 * ```
 */
export type StandardOutput<TSchema extends StandardSchemaV1> = NonNullable<TSchema['~standard']['types']>['output'];

/** True for a value implementing Standard Schema v1. */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null || !('~standard' in value)) return false;
  const standard: unknown = (value as { '~standard': unknown })['~standard'];
  return (
    typeof standard === 'object' &&
    standard !== null &&
    (standard as { version?: unknown }).version === 1 &&
    typeof (standard as { validate?: unknown }).validate === 'function'
  );
}
