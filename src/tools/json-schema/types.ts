import type { ErrorObject } from 'ajv';

/** A JSON Schema `type` name. */
export type JSONType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'object' | 'array';

/** A schema object, as parsed from JSON. Subschemas may be anything: only the meta-schema's places are checked. */
export type SchemaObject = { [keyword: string]: unknown };

/** One validation: the errors so far, in order (ajv's `vErrors`). */
export type Run = { errors: ErrorObject[] };

/** Where the checked data sits. Made per subschema call; cheap, and it keeps the checks pure. */
export type At = {
  /** JSON pointer of the data: the `instancePath` of the errors reported here. */
  path: string;
  /** Inside `propertyNames`: the name being checked, which ajv adds to each error as `propertyName`. */
  propertyName: string | undefined;
  /**
   * The `var`s of the generated function this code belongs to. ajv declares some `valid` flags with
   * `var`, so they keep their value from an earlier loop iteration, or are `undefined` before the
   * first; three keywords read them where that shows (`contains`, tuple `items`, `propertyNames`).
   */
  slots: unknown[];
};

/** A compiled subschema: appends its errors and returns whether it added none (ajv's `valid`). */
export type Check = (data: unknown, at: At, run: Run) => boolean;

/**
 * A compiled keyword: appends its errors. The result matters only with `allErrors` off (inside
 * `not` and `if`): false where ajv's generated code skips the group's remaining keywords.
 */
export type KeywordCheck = (data: unknown, at: At, run: Run) => boolean;

/** A compiled function of ajv's: the root schema or a `$ref` target too big to inline. */
export type CompiledFunction = (data: unknown, path: string, run: Run) => boolean;

/** The generated function being built: how many `var` slots its code uses. */
export type FunctionFrame = { slots: number };

/** Options that differ between compiles: ajv compiles the meta-schema with format validation off. */
export type CompileOptions = { validateFormats: boolean };

/** ajv's SchemaEnv: a schema with the root it belongs to and the base URI its `$ref`s resolve from. */
export class SchemaEnv {
  readonly schema: unknown;
  readonly root: SchemaEnv;
  readonly baseId: string;
  readonly localRefs: Record<string, unknown> | undefined;
  readonly meta: boolean;
  /** Resolved references of this root (ajv's `refs`): a plain object, so lookups behave as ajv's do. */
  readonly refs: Record<string, unknown> = {};
  validate: CompiledFunction | undefined;
  readonly $async: unknown;

  constructor(options: { schema: unknown; root?: SchemaEnv; baseId: string; localRefs?: Record<string, unknown>; meta?: boolean }) {
    this.schema = options.schema;
    this.root = options.root ?? this;
    this.baseId = options.baseId;
    this.localRefs = options.localRefs;
    this.meta = options.meta ?? false;
    this.$async = typeof options.schema === 'object' && options.schema !== null ? (options.schema as SchemaObject).$async : undefined;
  }
}

/**
 * One compile (ajv's instance state for its duration): the registry of schemas by URI, the
 * functions being compiled (so recursive references end), and the options in force.
 */
export type Session = {
  /** ajv's `schemas`: added schemas by key, here only the meta-schema. */
  schemas: Record<string, unknown>;
  /** ajv's `refs`: schemas and aliases by URI (`$id`s found in the schema, the root's own id). */
  refs: Record<string, unknown>;
  compilations: Set<SchemaEnv>;
  options: CompileOptions;
  compileFunction(env: SchemaEnv): SchemaEnv;
};

/** The compile-time context of a subschema (ajv's SchemaCxt). */
export type SchemaContext = {
  schema: unknown;
  env: SchemaEnv;
  /** Base URI for `$ref`s here: the root's, changed by each `$id` on the way. */
  baseId: string;
  /** The schema path of errors reported here (`#/properties/a`). */
  errSchemaPath: string;
  allErrors: boolean;
  session: Session;
  frame: FunctionFrame;
};

export type ObjectSchemaContext = SchemaContext & { schema: SchemaObject };

/** How a keyword names the subschema it applies (ajv's subschema arguments). */
export type SubschemaArguments =
  | { keyword: string; schemaProperty?: string | number; allErrors?: boolean }
  | { schema: unknown; errSchemaPath: string };

/** A keyword being compiled (ajv's KeywordCxt). */
export type KeywordContext = {
  it: ObjectSchemaContext;
  keyword: string;
  /** The keyword's value. */
  schema: unknown;
  parentSchema: SchemaObject;
  /** The data type of the rule group the keyword runs in (`format` runs in two). */
  ruleType: JSONType | undefined;
  subschema(args: SubschemaArguments): Check;
};

export type KeywordDefinition = {
  /** The types the keyword's value may have; an empty list allows any. */
  schemaType: readonly JSONType[];
  /** Keywords the parent schema must have beside this one (`formatMaximum` needs `format`). */
  dependencies?: readonly string[];
  allowUndefined?: boolean;
  /** Compiles the keyword; `undefined` when it checks nothing. */
  compile?: (keyword: KeywordContext) => KeywordCheck | undefined;
};
